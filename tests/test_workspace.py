"""Many repositories as one memory (issue 35): the signed workspace file and a query that
fans out to every member and merges the answers by rank."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.core.errors import ConfigError, SignatureError
from oracl.core.members import WorkspaceFile, add, remove
from oracl.core.sign import keygen
from oracl.read.fanout import K, merge, search_workspace

from .conftest import run_cli, write_tree


def _repo(root: Path, files: dict[str, str], env: dict[str, str] | None = None,
          monkeypatch: pytest.MonkeyPatch | None = None) -> Path:
    write_tree(root, files)
    if env and monkeypatch:
        for k, v in env.items():
            monkeypatch.setenv(k, v)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    if env and monkeypatch:
        for k in env:
            monkeypatch.delenv(k)
    return root


def test_the_merge_by_rank_by_hand() -> None:
    from oracl.core.members import Member

    a, b = Member("a", "/a"), Member("b", "/b")
    rows_a = [{"path": "x.py", "score": 50.0, "rank": 1}, {"path": "y.py", "score": 40.0, "rank": 2}]
    rows_b = [{"path": "z.py", "score": 0.5, "rank": 1}]
    out = merge([(a, rows_a), (b, rows_b)], 10)
    # x and z both rank 1 in their member: 1/61 each, share 1.0 each, then by repository name
    assert [(r["repository"], r["path"], r["fused"]) for r in out] == [
        ("a", "x.py", round(1 / (K + 1), 6)), ("b", "z.py", round(1 / (K + 1), 6)), ("a", "y.py", round(1 / (K + 2), 6))]
    assert out[2]["share_of_best"] == 0.8 and [r["rank"] for r in out] == [1, 2, 3]


def test_a_huge_repository_does_not_drown_a_small_one(tmp_path: Path) -> None:
    # 1,500 files that all say "ledger balance" a little, beside a 3-file repository whose
    # one file is exactly about it: raw scores favour the big one's vocabulary statistics
    big = {f"svc/mod{i}/ledger_{i}.py": f'"""ledger balance helper {i}"""\n\ndef ledger_balance_{i}(x):\n    return x\n'
           for i in range(1500)}
    huge = _repo(tmp_path / "huge", big)
    small = _repo(tmp_path / "small", {"billing/ledger.py": "def ledger_balance(account):\n    return account.total\n",
                                       "README.md": "# small\n", "util.py": "X = 1\n"})
    wsf = tmp_path / "ws.toml"
    add(wsf, [huge, small])
    out = search_workspace(WorkspaceFile.load(wsf), "ledger balance", k=10)
    top = [(r["repository"], r["path"]) for r in out["results"][:2]]
    assert ("small", "billing/ledger.py") in top
    assert {r["repository"] for r in out["results"]} == {"huge", "small"}
    assert all(m["ok"] for m in out["members"])


def test_a_member_that_fails_is_named_and_the_rest_still_answer(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    priv, pub = keygen(tmp_path / "keys")
    _, other_pub = keygen(tmp_path / "other")
    signed = _repo(tmp_path / "signed", {"a/sign.py": "def sign_token(t):\n    return t\n"},
                   {"ORACL_ED25519_PRIVATE_KEY": priv.read_text()}, monkeypatch)
    plain = _repo(tmp_path / "plain", {"b/token.py": "def token_sign(t):\n    return t\n"})
    gone = _repo(tmp_path / "gone", {"c.py": "x = 1\n"})
    wsf = tmp_path / "ws.toml"
    add(wsf, [signed], public_key=pub)
    add(wsf, [plain])
    add(wsf, [gone])
    import shutil

    shutil.rmtree(gone / ".oracl")  # a member whose vault went away
    ws = WorkspaceFile.load(wsf)
    out = search_workspace(ws, "sign token", k=5)
    assert {m["name"]: m["ok"] for m in out["members"]} == {"signed": True, "plain": True, "gone": False}
    assert out["members"][0]["checked"] == "signature: ed25519, valid"
    assert {r["repository"] for r in out["results"]} == {"signed", "plain"}
    assert out["notices"] == [f"member gone did not answer: {out['members'][2]['error']}"]
    # a member whose manifest is not signed by the key the workspace names: refused, named
    ws.members[0] = type(ws.members[0])("signed", str(signed), str(other_pub))
    out = search_workspace(ws, "sign token", k=5)
    assert out["members"][0] == {"name": "signed", "root": str(signed), "ok": False,
                                 "error": "the Ed25519 signature does not match member signed's manifest"}
    assert {r["repository"] for r in out["results"]} == {"plain"}


def test_the_workspace_file_is_signed_and_refuses_edits_and_duplicates(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    a = _repo(tmp_path / "svc", {"x.py": "x = 1\n"})
    b = _repo(tmp_path / "other" / "svc", {"y.py": "y = 1\n"})
    wsf = tmp_path / "ws.toml"
    add(wsf, [a])
    with pytest.raises(ConfigError, match="two members are named 'svc'"):
        add(wsf, [b])  # the same package name twice
    add(wsf, [b], name="svc2")
    with pytest.raises(ConfigError, match=f"{a} is a member twice"):
        add(wsf, [a], name="again")
    text = wsf.read_text()
    wsf.write_text(text.replace('name = "svc2"', 'name = "svc3"'))
    with pytest.raises(SignatureError, match="does not match its digest: it was changed outside"):
        WorkspaceFile.load(wsf)
    wsf.write_text(text)
    assert [m.name for m in remove(wsf, ["svc"]).members] == ["svc2"]
    with pytest.raises(ConfigError, match="holds no build"):
        add(wsf, [tmp_path])
    # with a signing key the file is Ed25519-signed, and checked with the public key
    priv, pub = keygen(tmp_path / "keys")
    monkeypatch.setenv("ORACL_ED25519_PRIVATE_KEY", priv.read_text())
    add(wsf, [a], name="svc")
    assert WorkspaceFile.load(wsf).signature.startswith("ed25519:")
    monkeypatch.delenv("ORACL_ED25519_PRIVATE_KEY")
    with pytest.raises(SignatureError, match="Ed25519-signed but no public key"):
        WorkspaceFile.load(wsf)
    monkeypatch.setenv("ORACL_ED25519_PUBLIC_KEY", pub.read_text())
    assert len(WorkspaceFile.load(wsf).members) == 2


def test_cli_workspace_and_query_across_members(tmp_path: Path) -> None:
    a = _repo(tmp_path / "auth", {"lib/jwt.py": "def verify_jwt(token):\n    return token\n"})
    b = _repo(tmp_path / "api", {"handlers/login.py": "def login(request):\n    return verify_jwt(request)\n"})
    wsf = tmp_path / "ws.toml"
    r = run_cli("workspace", "add", str(a), str(b), "--workspace", str(wsf), env={**os.environ})
    assert r.returncode == 0 and r.stdout == f"{wsf}: 2 member(s), signed sha256\n"
    listed = run_cli("workspace", "list", "--workspace", str(wsf)).stdout.splitlines()
    assert listed[0] == f"{wsf}: digest: sha256 (no signing key: integrity only)" and len(listed) == 3
    q = orjson.loads(run_cli("query", "verify jwt", "--workspace", str(wsf), "--json").stdout)
    assert [(x["repository"], x["path"]) for x in q["results"][:2]] == [("auth", "lib/jwt.py"), ("api", "handlers/login.py")]
    missing = run_cli("query", "x", "--workspace", str(tmp_path / "none.toml"))
    assert missing.returncode == 2 and "no workspace file" in missing.stderr


def test_symbols_across_members_and_the_python_api(tmp_path: Path) -> None:
    import oracl

    lib = _repo(tmp_path / "lib", {"auth/tokens.py": "def issue_token(user):\n    return user\n"})
    svc = _repo(tmp_path / "svc", {"api/views.py": "def issue_tokens(users):\n    return users\n",
                                   "api/other.py": "def issue_token(user):\n    return None\n"})
    wsf = tmp_path / "ws.toml"
    add(wsf, [lib, svc])
    ws = oracl.Workspace.open(wsf)
    out = ws.symbols("issue_token")
    assert [(d["repository"], d["path"], d["match"]) for d in out["definitions"]] == [
        ("lib", "auth/tokens.py", "exact"), ("svc", "api/other.py", "exact")]
    assert [m.name for m in ws.members] == ["lib", "svc"]
    assert ws.search("issue token", k=5)["results"][0]["repository"] in ("lib", "svc")
    r = run_cli("symbols", "issue_token", "--workspace", str(wsf))
    assert r.returncode == 0 and r.stdout.splitlines() == [
        "lib\tfunction\tissue_token\tauth/tokens.py:1-2\texact", "svc\tfunction\tissue_token\tapi/other.py:1-2\texact"]
