"""Secrets never leave the build: a repository holding AWS keys, an API token, a private
key saved as a .txt file and a .env file is built, searched, queried through the CLI and
the MCP server; no secret value is in any vault file, any log or any answer."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key

from oracl.core.secrets import Redactor, is_secret_file, redact_text
from tests.conftest import ORACL, run_cli, write_tree

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e"
DB_PASSWORD = "hunter2hunter2"
GH_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _pem() -> str:
    key = generate_private_key(public_exponent=65537, key_size=1024)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    from oracl.builder.orchestrator import build

    pem = _pem()
    root = write_tree(tmp_path_factory.mktemp("secrets") / "repo", {
        "secrets.yaml": f"aws_access_key_id: {AWS_ID}\naws_secret_access_key: {AWS_SECRET}\nregion: eu-west-1\n",
        "config.py": f'"""Settings."""\nAPI_KEY = "{API_KEY}"\nGITHUB = "{GH_TOKEN}"\nTIMEOUT = 30\n',
        "docs/key.txt": "The deploy key:\n" + pem,
        ".env": f"DATABASE_PASSWORD={DB_PASSWORD}\nDEBUG=1\n",
        "pkg/__init__.py": "",
        "pkg/client.py": "import config\n\ndef connect():\n    return config.API_KEY\n",
        "pkg/ssh.py": '_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_END = b"-----END OPENSSH PRIVATE KEY-----"\n'
                      "def load_deploy_key(data):\n    return data\n",
        "README.md": "# Demo\nSee config.py and docs/key.txt.\n",
    })
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root, pem


def _values(pem: str) -> list[bytes]:
    body = [line for line in pem.splitlines() if line and not line.startswith("-----")]
    out = [AWS_ID, AWS_SECRET, API_KEY, DB_PASSWORD, GH_TOKEN, body[3], body[-2]]
    return [v.encode() for v in out] + [v.lower().encode() for v in out]


def _leaks(root: Path, pem: str) -> list[str]:
    found = []
    for path in sorted((root / ".oracl").rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if path.name == "search_history.jsonl":  # a bare password typed as a query matches no rule
                data = data.replace(DB_PASSWORD.encode(), b"")
            found += [f"{path.relative_to(root)}: {v[:12]!r}" for v in _values(pem) if v in data]
    return found


def test_no_vault_file_holds_a_secret_value(vault: tuple[Path, str]) -> None:
    root, pem = vault
    assert _leaks(root, pem) == []
    show = orjson.loads(run_cli("show", "config.py", "-r", str(root), "--json").stdout)
    assert show["artifact"]["tags"]["secrets"] == ["api-token", "github-token"]
    env = orjson.loads(run_cli("show", ".env", "-r", str(root), "--json").stdout)
    assert env["artifact"]["parse_status"] == "secret_file" and env["artifact"]["tags"]["sensitive"] == "key_material"
    key = orjson.loads(run_cli("show", "docs/key.txt", "-r", str(root), "--json").stdout)
    assert key["artifact"]["tags"]["sensitive"] == "key_material"
    assert key["priority"]["sensitivity"] == "high"
    code = orjson.loads(run_cli("show", "pkg/ssh.py", "-r", str(root), "--json").stdout)  # names the markers only
    assert "sensitive" not in code["artifact"]["tags"] and "secrets" not in code["artifact"]["tags"]


def test_searching_for_a_secret_value_finds_nothing_and_logs_nothing(vault: tuple[Path, str]) -> None:
    root, pem = vault
    for value in (AWS_ID, API_KEY, DB_PASSWORD, GH_TOKEN):
        r = run_cli("query", value, "-r", str(root), "--json")
        assert r.returncode == 0, r.stderr
        assert orjson.loads(r.stdout)["results"] == [], value
        if value != DB_PASSWORD:  # the answer's echo of the query is redacted too (in any case)
            assert value.lower() not in r.stdout.lower() and "«redacted:" in r.stdout
    assert _leaks(root, pem) == []  # the query log holds the markers, not the values
    log = (root / ".oracl" / "logs" / "search_history.jsonl").read_text()
    assert "«redacted:api-token»" in log and "«redacted:github-token»" in log


def test_fragments_show_markers(vault: tuple[Path, str]) -> None:
    root, _ = vault
    r = run_cli("fragment", "config.py#L2-3", "-r", str(root), "--json")
    assert orjson.loads(r.stdout)["lines"] == ['API_KEY = "«redacted:api-token»"', 'GITHUB = "«redacted:github-token»"']
    r = run_cli("fragment", "secrets.yaml", "-r", str(root), "--json")
    assert orjson.loads(r.stdout)["lines"] == ["aws_access_key_id: «redacted:aws-access-key-id»",
                                              "aws_secret_access_key: «redacted:aws-secret-key»",
                                              "region: eu-west-1"]
    lines = orjson.loads(run_cli("fragment", "docs/key.txt#L5-6", "-r", str(root), "--json").stdout)["lines"]
    assert lines == ["«redacted:private-key»"] * 2  # inside the block, far from its BEGIN line


async def _mcp(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, dict[str, Any]]]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=ORACL, args=["mcp", str(root)], env={"ORACL_HOME": os.environ["ORACL_HOME"]})
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        out = []
        for name, args in calls:
            res = await s.call_tool(name, args)
            out.append((res.isError, orjson.loads(res.content[0].text)))
        return out


def test_mcp_answers_hold_no_secret_and_withhold_key_files(vault: tuple[Path, str]) -> None:
    pytest.importorskip("mcp")
    root, pem = vault
    calls = [
        ("oracl_agent_context", {"query": "aws access key api key deploy key private key password", "budget_tokens": 4000}),
        ("oracl_search", {"query": "deploy key", "k": 20}),
        ("oracl_fragment", {"locator": "docs/key.txt#L1-3"}),
        ("oracl_show", {"path": ".env"}),
        ("oracl_fragment", {"locator": "config.py#L2-2"}),
        ("oracl_related", {"path": "README.md"}),
    ]
    answers = asyncio.run(asyncio.wait_for(_mcp(root, calls), timeout=120))
    text = orjson.dumps([a for _, a in answers])
    assert not [v for v in _values(pem) if v in text]
    (_, ctx), (_, search), (kerr, key), (eerr, env), (_, cfg), (_, rel) = answers
    paths = {i["path"] for i in ctx["items"]} | {r["path"] for r in search["results"]}
    assert "docs/key.txt" not in paths and ".env" not in paths and "secrets.yaml" in paths
    assert "pkg/ssh.py" in paths  # code that names the key markers is not withheld
    assert kerr and key["error"].startswith("docs/key.txt is withheld: it holds key material")
    assert eerr and env["error"].startswith(".env is withheld")
    assert cfg["lines"] == ['API_KEY = "«redacted:api-token»"']
    assert "docs/key.txt" not in {n["path"] for n in rel["neighbours"]}


def test_the_owner_can_share_key_files_with_agents_still_redacted(vault: tuple[Path, str], tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import shutil

    root, pem = vault
    copy = tmp_path / "shared"
    shutil.copytree(root, copy, symlinks=True)
    (copy / ".oracl.toml").write_text("share_sensitive = true\n")
    [(err, key)] = asyncio.run(asyncio.wait_for(_mcp(copy, [("oracl_fragment", {"locator": "docs/key.txt#L1-3"})]), 120))
    assert not err and key["lines"] == ["The deploy key:", "-----BEGIN PRIVATE KEY-----", "«redacted:private-key»"]


@pytest.mark.parametrize(("line", "fmt", "expected"), [
    ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "", "aws_access_key_id = «redacted:aws-access-key-id»"),
    ('token: "xoxb-1234567890-abcdefghij"', "yaml", 'token: "«redacted:slack-token»"'),
    ("url = 'postgres://app:s3cr3tpw@db/x'", "py", "url = 'postgres://app:«redacted:url-password»@db/x'"),
    ("Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "", "Authorization: «redacted:jwt»"),
    ('password = "correct horse 9"', "py", 'password = "«redacted:password-assignment»"'),
    ('password = "hunter"', "py", 'password = "hunter"'),        # letters only: not told from a word
    ("PASSWORD=letmein99", "env", "PASSWORD=«redacted:password-assignment»"),
    ("PASSWORD=letmein99", "py", "PASSWORD=letmein99"),           # bare values count in config formats only
    ('seed = "aB3dE5fG7hJ9kL1mN3pQ5rS7"', "py", 'seed = "«redacted:high-entropy-literal»"'),
    # what must stay: references, placeholders, hashes, code
    ("token = get_token()", "py", "token = get_token()"),
    ("password = os.environ['DB_PASSWORD']", "py", "password = os.environ['DB_PASSWORD']"),
    ('password: "${DB_PASSWORD}"', "yaml", 'password: "${DB_PASSWORD}"'),
    ('digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"', "py",
     'digest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"'),
    ("def check_password(password):", "py", "def check_password(password):"),
])
def test_rules(line: str, fmt: str, expected: str) -> None:
    assert Redactor(fmt).line(line)[0] == expected


BODY = "MHcCAQEEIBzcJeTMSAcg4dDAWjWPEAgUeBxIlgNmL4z9xVQ1"


def test_a_key_block_keeps_its_line_count_and_an_unterminated_one_runs_to_the_end() -> None:
    text = f"a\n-----BEGIN EC PRIVATE KEY-----\n{BODY}\nxyz\n-----END EC PRIVATE KEY-----\nb\n"
    assert redact_text(text) == ("a\n-----BEGIN EC PRIVATE KEY-----\n" + "«redacted:private-key»\n" * 2
                                 + "«redacted:private-key»-----END EC PRIVATE KEY-----\nb\n")
    assert redact_text(f"-----BEGIN PRIVATE KEY-----\n{BODY}\n{BODY}") == (
        "-----BEGIN PRIVATE KEY-----\n«redacted:private-key»\n«redacted:private-key»")


def test_code_that_names_the_markers_is_not_a_key() -> None:
    code = 'START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\nEND = b"-----END OPENSSH PRIVATE KEY-----"\nrun()\n'
    assert redact_text(code) == code
    one_line = f'K = "-----BEGIN RSA PRIVATE KEY-----\\n{BODY}\\n-----END RSA PRIVATE KEY-----"'
    assert redact_text(one_line) == 'K = "-----BEGIN RSA PRIVATE KEY-----«redacted:private-key»-----END RSA PRIVATE KEY-----"'


@pytest.mark.parametrize("line", [
    'token.type = "text"', "Token: '#d8dee9',", "_TOKEN_REF = r'[A-Z]\\w*'", 'TOKEN_PATH = "/token"',
    'token_endpoint_auth_method = "client_secret_post"', 'url = f"s3://{access_key}:{secret_key}@bucket/x"',
    "'id': 'BSD-2-Clause-pkgconf-disclaimer'", '_SK = b"sk-ecdsa-sha2-nistp256@openssh.com"',
    'ExtensionOID.PRIVATE_KEY_USAGE_PERIOD: "privateKeyUsagePeriod"',
])
def test_code_that_only_looks_like_a_secret_stays(line: str) -> None:
    assert Redactor("py").line(line) == (line, ())


@pytest.mark.parametrize(("path", "secret"), [
    (".env", True), (".env.production", True), ("deploy/prod.env", True), (".env.example", False),
    ("certs/server.key", True), ("certs/server.pem", True), ("id_ed25519", True), ("id_ed25519.pub", False),
    ("config.py", False), ("docs/keys.md", False),
])
def test_secret_files(path: str, secret: bool) -> None:
    assert is_secret_file(path) is secret


# -- the ten forms the adversarial probe planted that leaked ---------------------------------
BEARER = "abcDEF123456ghiJKL789mnoPQR"
BASIC = "dXNlcjpwYXNzd29yZDEyMw=="
URL_KEY = "9f8e7d6c5b4a3210fedcba98"
MAILGUN = "3ax6xnjp29jd6fds4gc373sgvjxteol0"
SPLIT_A, SPLIT_B = "ghp_Z9y8X7w6V5u4T3s2", "R1q0P9o8N7m6L5k4J3i2"  # one token, two literals, one line
SPLIT_C, SPLIT_D = "ghp_Q1w2E3r4T5y6U7i8", "O9p0A1s2D3f4G5h6J7k8"  # … over two lines
DOC_PW = "Tr0ub4dor&3x"
MYSQL_PW = "S3cretPass!9"
NETRC_PW = "n3trcPassw0rd"
NAME_TOKEN = "ghp_" + "N4m3d5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
LEAKED = [BEARER, BASIC, URL_KEY, MAILGUN, SPLIT_A, SPLIT_B, SPLIT_C, SPLIT_D, SPLIT_A + SPLIT_B,
          SPLIT_C + SPLIT_D, DOC_PW, MYSQL_PW, NETRC_PW, NAME_TOKEN]
PROBE_TREE = {
    "pkg/api.py": (
        '"""The client."""\n'
        "import requests\n\n"
        f'HEADERS = {{"Authorization": "Bearer {BEARER}"}}\n'
        f"BASIC = {{'Authorization': 'Basic {BASIC}'}}\n"
        f'URL = "https://api.example.com/v1/items?api_key={URL_KEY}&limit=5"\n'
        f'MAILGUN_KEY = "key-{MAILGUN}"\n'
        f'DEPLOY = "{SPLIT_A}" "{SPLIT_B}"\n'
        f'BACKUP = ("{SPLIT_C}"\n'
        f'          "{SPLIT_D}")\n\n'
        "def fetch():\n    return requests.get(URL, headers=HEADERS)\n"),
    "pkg/db.py": f'def connect():\n    """The admin password is {DOC_PW} until it is rotated."""\n    return 1\n',
    "deploy/backup.sh": f"#!/bin/sh\nmysqldump -u root -p{MYSQL_PW} shop > /backup/shop.sql\n",
    ".netrc": f"machine api.example.com login alice password {NETRC_PW}\n",
    f"notes/{NAME_TOKEN}.txt": "a file named after a token\n",
    "README.md": "# Probe\nSee pkg/api.py.\n",
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from oracl.builder.orchestrator import build

    root = write_tree(tmp_path_factory.mktemp("probe") / "repo", PROBE_TREE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


def _probe_leaks(blob: bytes) -> list[str]:
    return [v for v in LEAKED if v.encode() in blob or v.lower().encode() in blob.lower()]


def test_the_ten_leaked_forms_are_in_no_vault_file_in_any_case(probe: Path) -> None:
    """Every vault file – the database (its full-text table lower-cases), the export, the
    JSON-lines files, the logs – holds none of the values, in any case."""
    found = [f"{p.relative_to(probe)}: {v[:8]}" for p in sorted((probe / ".oracl").rglob("*")) if p.is_file()
             for v in _probe_leaks(p.read_bytes())]
    assert found == []
    stats = orjson.loads(run_cli("stats", "-r", str(probe), "--json").stdout)
    assert NAME_TOKEN not in orjson.dumps(stats).decode()


@pytest.mark.parametrize(("locator", "expected"), [
    ("pkg/api.py#L4-11", [
        'HEADERS = {"Authorization": "Bearer «redacted:authorization-header»"}',
        "BASIC = {'Authorization': 'Basic «redacted:authorization-header»'}",
        'URL = "https://api.example.com/v1/items?api_key=«redacted:url-secret-parameter»&limit=5"',
        'MAILGUN_KEY = "key-«redacted:mailgun-key»"',
        'DEPLOY = "«redacted:github-token»" "«redacted:github-token»"',
        'BACKUP = ("«redacted:github-token»"',
        '          "«redacted:github-token»")', ""]),
    ("pkg/api.py#L10-10", ['          "«redacted:github-token»")']),  # the range starts on the second half
    ("pkg/db.py#L2-2", ['    """The admin password is «redacted:prose-password» until it is rotated."""']),
    ("deploy/backup.sh#L2-2", ["mysqldump -u root -p«redacted:command-line-password» shop > /backup/shop.sql"]),
    (".netrc", ["machine api.example.com login alice password «redacted:netrc-password»"]),
])
def test_every_reader_serves_the_leaked_forms_as_markers(probe: Path, locator: str, expected: list[str]) -> None:
    r = run_cli("fragment", locator, "-r", str(probe), "--json")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["lines"] == expected
    from oracl.read.memory import Memory

    with Memory.open(probe) as mem:  # the library (MCP and the web view read through it)
        assert mem.fragment(locator)["lines"] == expected


def test_a_file_named_after_a_token_is_left_out_by_the_walk(probe: Path) -> None:
    r = run_cli("query", "file named after a token", "-r", str(probe), "--json")
    assert r.returncode == 0 and NAME_TOKEN not in r.stdout
    assert not [p for p in (probe / ".oracl").rglob("*") if NAME_TOKEN in p.name]


def test_a_typed_secret_is_echoed_as_its_marker_on_every_surface(probe: Path) -> None:
    from oracl.face import pages
    from oracl.read.memory import Memory

    typed = f"fetch items Authorization: Bearer {BEARER} api_key={URL_KEY}"
    for args in (("--json", "--explain"), ("--explain",), ()):
        r = run_cli("query", typed, "-r", str(probe), *args, env={**__import__("os").environ, "COLUMNS": "200"})
        assert r.returncode == 0, r.stderr
        assert _probe_leaks((r.stdout + r.stderr).encode()) == [], args
    doc = orjson.loads(run_cli("query", typed, "-r", str(probe), "--json", "--explain").stdout)
    assert "«redacted:authorization-header»" in doc["query"]["raw"]
    assert doc["results"][0]["path"] == "pkg/api.py"  # the rest of the query still searches
    with Memory.open(probe) as mem:  # what /search and /api/search answer
        page = pages.search(mem, typed)
    assert _probe_leaks(orjson.dumps(page)) == [] and "«redacted:" in page["q"]
    from oracl.face.webpage import search_page

    assert _probe_leaks(search_page(page).encode()) == []
    log = b"".join(p.read_bytes() for p in (probe / ".oracl" / "logs").glob("*.jsonl"))
    assert _probe_leaks(log) == []


PGP_BODY = ["lQVYBGXk1Z4BDADF0q2mV8hH3n5xYwq7Lk2pR9sT4uV6wX8yZ0aB1cD2eF3gH4iJ",
            "5kL6mN7oP8qR9sT0uV1wX2yZ3aB4cD5eF6gH7iJ8kL9mN0oP1qR2sT3uV4wX5yZ6",
            "=x9Yz"]


@pytest.mark.parametrize("headers", [["Version: GnuPG v2", "Comment: backup", ""], [""], ["Version: Keybase OpenPGP", ""]])
def test_an_armored_pgp_private_key_block_is_withheld_and_redacted(tmp_path: Path, headers: list[str]) -> None:
    """Issue 48: the standard armored form (headers, then a blank line, then the body) was
    served verbatim by every surface."""
    block = "\n".join(["-----BEGIN PGP PRIVATE KEY BLOCK-----", *headers, *PGP_BODY,
                       "-----END PGP PRIVATE KEY BLOCK-----"]) + "\n"
    assert PGP_BODY[0] not in redact_text(block) and PGP_BODY[1] not in redact_text(block)
    root = write_tree(tmp_path / "repo", {"docs/backup.txt": "Restore with:\n" + block, "a.py": "x = 1\n"})
    assert run_cli("build", str(root), "-q").returncode == 0
    frag = run_cli("fragment", f"docs/backup.txt#L1-{len(headers) + 6}", "-r", str(root))  # the owner's own terminal
    assert frag.returncode == 0 and "«redacted:private-key»" in frag.stdout and PGP_BODY[0] not in frag.stdout
    shown = orjson.loads(run_cli("show", "docs/backup.txt", "-r", str(root), "--json").stdout)
    assert shown["artifact"]["tags"]["sensitive"] == "key_material"  # so agents are never served it
    found = run_cli("query", "restore backup", "-r", str(root), "--json")
    assert found.returncode == 0 and PGP_BODY[0] not in found.stdout
    for path in (root / ".oracl").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert PGP_BODY[0].encode() not in data and PGP_BODY[1].encode() not in data, path


def test_a_text_read_again_is_what_the_file_holds_now_redacted(tmp_path: Path) -> None:
    """A reader keeps the texts it redacted by the file's stat (``workspace._REDACTED``):
    the same file unchanged gives the same text without a read, and a file rewritten with
    the same size and its mtime put back (only its ctime moved) is read again and redacted
    again: a secret written there never comes back as the plain text kept before."""
    from oracl.core.workspace import Workspace

    root = tmp_path / "r"
    root.mkdir()
    f = root / "a.py"
    plain = 'token = "' + "x" * len(GH_TOKEN) + '"\n'
    f.write_text(plain)
    ws = Workspace(root)
    first = ws.read_text("a.py", 1024)
    assert first == plain
    assert ws.read_text("a.py", 1024) is first  # (kept: the same file, unchanged)
    st = f.stat()
    secret = f'token = "{GH_TOKEN}"\n'
    assert len(secret) == len(plain)
    f.write_text(secret)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    while f.stat().st_ctime_ns == st.st_ctime_ns:  # (a coarse clock: the ctime moves on the next tick)
        time.sleep(0.005)
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    again = ws.read_text("a.py", 1024)
    assert GH_TOKEN not in again and again == 'token = "«redacted:github-token»"\n'
    assert ws.read_text("a.py", 8) == 'token = '  # (another limit: its own text)
