"""Edges across repositories (issue 35, deliverable 2): what a bundle's interface.json
says, the links between members that manifests make, and impact and callers across them."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.builder.pipeline.interface import interface
from oracl.core.errors import ConfigError, QueryError
from oracl.core.members import WorkspaceFile, add
from oracl.core.vault import INTERFACE_FILE, Vault
from oracl.read.crossrepo import callers_workspace, impact_workspace, links_workspace, member_of
from oracl.read.snapshot import Snapshot

from .conftest import run_cli, write_tree

LIB_AUTH = {
    "pyproject.toml": '[project]\nname = "lib-auth"\nversion = "1.0"\ndependencies = []\n',
    "src/libauth/__init__.py": "from libauth.tokens import sign_token, verify_token\n",
    "src/libauth/tokens.py": ("import hmac\n\n\ndef _digest(text):\n    return hmac.new(b'k', text.encode(), 'sha256').hexdigest()\n\n\n"
                              "def sign_token(user):\n    return user + '.' + _digest(user)\n\n\n"
                              "def verify_token(token):\n    return token.endswith(_digest(token.split('.')[0]))\n"),
    "tests/test_tokens.py": "from libauth.tokens import sign_token\n\n\ndef test_sign():\n    assert sign_token('a')\n",
}
SVC_A = {
    "pyproject.toml": '[project]\nname = "svc-a"\nversion = "1.0"\ndependencies = [\n    "Lib_Auth>=1.0",\n    "requests",\n]\n',
    "svc_a/__init__.py": "",
    "svc_a/api.py": ("import libauth\nfrom libauth import sign_token as sign\n\n\ndef login(user):\n    return sign(user)\n\n\n"
                     "def check(token):\n    return libauth.verify_token(token)\n"),
    "svc_a/views.py": "from svc_a.api import login\n\n\ndef handler(request):\n    return login(request)\n",
    "svc_a/settings.py": "import libauth.tokens\n\nTOKENS = libauth.tokens\n",  # imported, nothing called
    "tests/test_api.py": "from svc_a.api import login\n\n\ndef test_login():\n    assert login('u')\n",
}
SVC_GATEWAY = {
    "pyproject.toml": '[project]\nname = "svc-gateway"\ndependencies = ["svc-a"]\n',
    "gateway/__init__.py": "",
    "gateway/routes.py": "from svc_a.views import handler\n\n\ndef route(request):\n    return handler(request)\n",
    "gateway/health.py": "from svc_a.api import check\n\n\ndef ping(token):\n    return check(token)\n",
}


def _repo(root: Path, files: dict[str, str]) -> Path:
    write_tree(root, files)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


def _iface(root: Path) -> dict:
    with Snapshot.open(root) as snap:
        return orjson.loads((snap.bundle / INTERFACE_FILE).read_bytes())


@pytest.fixture
def org(tmp_path: Path) -> Path:
    for name, files in (("lib-auth", LIB_AUTH), ("svc-a", SVC_A), ("svc-gateway", SVC_GATEWAY)):
        _repo(tmp_path / name, files)
    add(tmp_path / "ws.toml", [tmp_path / "lib-auth", tmp_path / "svc-a", tmp_path / "svc-gateway"])
    return tmp_path


def test_the_interface_of_a_build_by_hand(org: Path) -> None:
    lib, svc = _iface(org / "lib-auth"), _iface(org / "svc-a")
    assert lib["packages"] == [{"ecosystem": "python", "name": "lib-auth", "folder": "", "manifest": "pyproject.toml",
                                "prefixes": ["libauth"]}]
    # `import hmac` is outside the repository (the standard library is not told apart: only
    # a package a member provides is ever linked)
    assert lib["requires"] == [] and lib["files"] == {
        "src/libauth/tokens.py": {"imports": [["hmac", [], 1]], "calls": [["hmac.new", 5, 0]]}}
    assert svc["requires"] == [{"ecosystem": "python", "name": "Lib_Auth", "manifest": "pyproject.toml", "line": 5},
                               {"ecosystem": "python", "name": "requests", "manifest": "pyproject.toml", "line": 6}]
    assert svc["files"] == {"svc_a/api.py": {
        "imports": [["libauth", [], 1], ["libauth", ["sign_token"], 2]],
        "calls": [["sign", 6, 1], ["libauth.verify_token", 10, 0]]},
        "svc_a/settings.py": {"imports": [["libauth.tokens", [], 1]], "calls": []}}
    # the repository's own modules (svc_a.api in views.py and the test) are not outside code


def test_links_compare_names_as_the_ecosystem_does(org: Path) -> None:
    out = links_workspace(WorkspaceFile.load(org / "ws.toml"))
    assert [(x["consumer"], x["provider"], x["package"], x["line"], x["files"]) for x in out["links"]] == [
        ("svc-a", "lib-auth", "lib-auth", 5, 2), ("svc-gateway", "svc-a", "svc-a", 3, 2)]
    assert out["notices"] == []


def test_impact_crosses_two_repository_boundaries(org: Path) -> None:
    ws = WorkspaceFile.load(org / "ws.toml")
    out = impact_workspace(ws, "lib-auth", ["_digest"], k=50)
    assert [(s["repository"], s["hop"], s["via"]) for s in out["repositories"]] == [
        ("lib-auth", 0, ""), ("svc-a", 1, "lib-auth"), ("svc-gateway", 2, "svc-a")]
    a = out["repositories"][1]
    # _digest ← sign_token, verify_token (lib-auth) ← svc-a's two call sites, each naming one reached definition
    assert [(e["path"], e["line"], e["uses"], e["qualified"], e["confidence"]) for e in a["entries"]] == [
        ("svc_a/api.py", 6, "sign", "sign_token", 0.9), ("svc_a/api.py", 10, "libauth.verify_token", "verify_token", 0.9),
        ("svc_a/settings.py", 1, "import libauth.tokens", "", 0.5)]
    files = {f["path"]: f for f in a["files"]}
    assert files["svc_a/api.py"]["score"] == 0.9  # its own impact's 1.0 × the entry's 0.9
    assert files["svc_a/api.py"]["reasons"][0] == "uses sign (lib-auth: src/libauth/tokens.py:8)"
    # an import alone does not start svc-a's impact; the file is listed at the import's 0.5
    assert (files["svc_a/settings.py"]["score"], files["svc_a/settings.py"]["reasons"]) == (
        0.5, ["uses import libauth.tokens (lib-auth: src/libauth/tokens.py)"])
    assert "svc_a/views.py" in files and [t["path"] for t in a["tests"]] == ["tests/test_api.py"]
    g = out["repositories"][2]
    assert sorted((e["path"], e["uses"], e["qualified"]) for e in g["entries"]) == [
        ("gateway/health.py", "check", "check"), ("gateway/routes.py", "handler", "handler")]
    assert out["reached_repositories"] == 2 and out["notices"] == []


def test_impact_stops_at_hops_and_says_so(org: Path) -> None:
    out = impact_workspace(WorkspaceFile.load(org / "ws.toml"), "lib-auth", ["_digest"], hops=1)
    assert [s["repository"] for s in out["repositories"]] == ["lib-auth", "svc-a"]
    assert out["notices"] == ["stopped after 1 hop(s) (--hops): svc-gateway further downstream not followed"]


def test_a_change_nothing_outside_uses_stays_home(org: Path) -> None:
    # svc-a imports libauth and calls sign_token and verify_token: a new helper reaches neither
    write_tree(org / "lib-auth", {"src/libauth/extra.py": "def unused_helper():\n    return 1\n"})
    report = build(org / "lib-auth", buffer_pool_bytes=64 << 20, workers=1)
    assert report.mode.startswith("incremental")
    out = impact_workspace(WorkspaceFile.load(org / "ws.toml"), "lib-auth", ["src/libauth/extra.py"])
    assert [s["repository"] for s in out["repositories"]] == ["lib-auth"] and out["reached_files"] == 0
    selective = _iface(org / "lib-auth")
    build(org / "lib-auth", buffer_pool_bytes=64 << 20, workers=1, full=True)
    assert _iface(org / "lib-auth") == selective  # a selective build's interface is a full build's


def test_callers_across_members(org: Path) -> None:
    out = callers_workspace(WorkspaceFile.load(org / "ws.toml"), "sign_token")
    across = [(c["repository"], c["qualified"], c["lines"], c["calls"], c["across"], c["confidence"])
              for c in out["callers"] if c["across"]]
    assert across == [("svc-a", "login", [6], ["sign"], "lib-auth (lib-auth)", 0.9)]
    assert [d["repository"] for d in out["definitions"]] == ["lib-auth"]
    assert {(c["repository"], c["qualified"]) for c in out["callers"] if not c["across"]} == {("lib-auth", "test_sign")}


def test_cli_impact_diff_and_callers_across_members(org: Path) -> None:
    from .conftest import git

    lib = org / "lib-auth"
    git(lib, "init", "-q")
    git(lib, "add", "-A")
    git(lib, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
    text = (lib / "src/libauth/tokens.py").read_text()
    (lib / "src/libauth/tokens.py").write_text(text.replace("return token.endswith", "return bool(token) and token.endswith"))
    r = run_cli("impact", "--diff", "--workspace", str(org / "ws.toml"), "--json", cwd=lib)
    assert r.returncode == 0, r.stderr
    out = orjson.loads(r.stdout)
    assert out["member"] == "lib-auth" and out["changed"] == ["src/libauth/tokens.py"]
    a = next(s for s in out["repositories"] if s["repository"] == "svc-a")
    # not sign: unchanged; settings.py imports the changed module and calls nothing of it
    assert [(e["path"], e["line"], e["uses"]) for e in a["entries"]] == [
        ("svc_a/api.py", 10, "libauth.verify_token"), ("svc_a/settings.py", 1, "import libauth.tokens")]
    g = next(s for s in out["repositories"] if s["repository"] == "svc-gateway")
    assert [e["path"] for e in g["entries"]] == ["gateway/health.py"]
    plain = run_cli("callers", "verify_token", "--workspace", str(org / "ws.toml"), cwd=lib)
    assert plain.returncode == 0
    assert "caller\tsvc-a\tcheck\tsvc_a/api.py:10\t0.90\tthrough lib-auth (lib-auth): libauth.verify_token" in plain.stdout
    links = run_cli("workspace", "links", "--workspace", str(org / "ws.toml"))
    assert links.stdout.splitlines() == ["link\tsvc-a\tlib-auth\tlib-auth (python)\tpyproject.toml:5\t2",
                                         "link\tsvc-gateway\tsvc-a\tsvc-a (python)\tpyproject.toml:3\t2"]
    outside = run_cli("impact", "x.py", "--workspace", str(org / "ws.toml"), cwd=org)
    assert outside.returncode == 2 and "inside no member" in outside.stderr and outside.stderr.count("\n") == 1
    with pytest.raises(ConfigError, match="no member named 'nope'"):
        impact_workspace(WorkspaceFile.load(org / "ws.toml"), "nope", ["x"])
    assert member_of(WorkspaceFile.load(org / "ws.toml"), lib / "src") == "lib-auth"


def test_a_dependency_cycle_across_repositories_is_named_and_ends(tmp_path: Path) -> None:
    ping = _repo(tmp_path / "ping", {"pyproject.toml": '[project]\nname = "ping"\ndependencies = ["pong"]\n',
                                      "ping/__init__.py": "from pong import pong\n\n\ndef ping(n):\n    return pong(n - 1)\n"})
    pong = _repo(tmp_path / "pong", {"pyproject.toml": '[project]\nname = "pong"\ndependencies = ["ping"]\n',
                                      "pong/__init__.py": "from ping import ping\n\n\ndef pong(n):\n    return ping(n - 1)\n"})
    add(tmp_path / "ws.toml", [ping, pong])
    out = impact_workspace(WorkspaceFile.load(tmp_path / "ws.toml"), "ping", ["ping"], hops=5)
    assert [(s["repository"], s["hop"]) for s in out["repositories"]] == [("ping", 0), ("pong", 1)]
    assert [n for n in out["notices"] if "→" in n] == [
        "pong → ping: ping is already reached (a dependency cycle across repositories, or a second path); "
        "not followed again"]


def test_two_members_providing_one_package_are_both_linked_and_named(tmp_path: Path) -> None:
    lib = {"pyproject.toml": '[project]\nname = "lib-auth"\n', **{k: v for k, v in LIB_AUTH.items() if k != "pyproject.toml"}}
    a = _repo(tmp_path / "lib-auth", lib)
    fork = _repo(tmp_path / "lib-auth-fork", lib)
    svc = _repo(tmp_path / "svc-a", SVC_A)
    add(tmp_path / "ws.toml", [a, fork, svc])
    ws = WorkspaceFile.load(tmp_path / "ws.toml")
    out = links_workspace(ws)
    assert [(x["provider"], x["shared_with"]) for x in out["links"]] == [("lib-auth", ["lib-auth-fork"]),
                                                                         ("lib-auth-fork", ["lib-auth"])]
    assert out["notices"] == ["package lib-auth (python) is provided by 2 members: lib-auth, lib-auth-fork; "
                              "what imports it is linked to each"]
    hit = impact_workspace(ws, "lib-auth-fork", ["sign_token"])
    assert [s["repository"] for s in hit["repositories"]] == ["lib-auth-fork", "svc-a"]


def test_a_member_mid_build_answers_from_its_last_build(org: Path) -> None:
    lib = org / "lib-auth"
    before = Vault(lib).read_latest()["build_id"]
    # a build killed after its first phase (the changed file read, nothing published) …
    write_tree(lib, {"src/libauth/tokens.py": LIB_AUTH["src/libauth/tokens.py"] + "\n\ndef rotate():\n    return 2\n"})
    crashed = run_cli("build", str(lib), "-q", env={**os.environ, "ORACL_FAULT": "after read"})
    assert crashed.returncode == -9
    # … and another one running (its lock held) while the workspace is asked
    fd = os.open(Vault(lib).dir / "build.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out = impact_workspace(WorkspaceFile.load(org / "ws.toml"), "lib-auth", ["_digest"])
    finally:
        os.close(fd)
    assert out["members"][0]["build_id"] == before and all(m["ok"] for m in out["members"])
    assert [s["repository"] for s in out["repositories"]] == ["lib-auth", "svc-a", "svc-gateway"]


def test_a_member_without_an_interface_is_named_and_still_answers_alone(org: Path) -> None:
    with Snapshot.open(org / "svc-a") as snap:
        (snap.bundle / INTERFACE_FILE).write_bytes(b'{"format": 1, "packages": [], "requires": [], "files": {}}')
    out = impact_workspace(WorkspaceFile.load(org / "ws.toml"), "lib-auth", ["_digest"])
    assert [s["repository"] for s in out["repositories"]] == ["lib-auth"]
    assert out["notices"] == ["member svc-a is not linked to the others: its interface.json does not match the "
                              "bundle's manifest"]


ECOSYSTEMS = {
    "npm": ({"package.json": '{"name": "@org/client", "main": "index.js"}',
             "index.js": "export function fetchUser(id) {\n  return id;\n}\n"},
            {"package.json": '{"name": "web", "dependencies": {"@org/client": "^1.0.0"}}',
             "app.js": 'import { fetchUser } from "@org/client";\n\nexport function page() {\n  return fetchUser(1);\n}\n'},
            "fetchUser", ("app.js", 4, "fetchUser")),
    "go": ({"go.mod": "module example.com/geo\n\ngo 1.21\n",
            "geo/geo.go": "package geo\n\nfunc Distance(a int) int {\n\treturn a\n}\n"},
           {"go.mod": "module example.com/app\n\ngo 1.21\n\nrequire (\n\texample.com/geo v1.0.0\n)\n",
            "main.go": 'package main\n\nimport "example.com/geo/geo"\n\nfunc main() {\n\tgeo.Distance(1)\n}\n'},
           "Distance", ("main.go", 6, "geo.Distance")),
    "rust": ({"Cargo.toml": '[package]\nname = "lib-num"\nversion = "1.0.0"\n',
              "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"},
             {"Cargo.toml": '[package]\nname = "calc"\nversion = "1.0.0"\n\n[dependencies]\nlib-num = "1"\n',
              "src/main.rs": "use lib_num::add;\n\nfn main() {\n    add(1, 2);\n}\n"},
             "add", ("src/main.rs", 4, "add")),
    "maven": ({"pom.xml": "<project><groupId>com.acme</groupId><artifactId>money</artifactId></project>\n",
               "src/main/java/com/acme/money/Money.java": ("package com.acme.money;\n\npublic class Money {\n"
                                                           "    public static Money of(int x) {\n        return new Money();\n    }\n}\n")},
              {"pom.xml": ("<project><groupId>com.shop</groupId><artifactId>shop</artifactId><dependencies>\n"
                           "<dependency><groupId>com.acme</groupId><artifactId>money</artifactId></dependency>\n"
                           "</dependencies></project>\n"),
               "src/main/java/com/shop/Shop.java": ("package com.shop;\n\nimport com.acme.money.Money;\n\nclass Shop {\n"
                                                    "    void buy() {\n        Money.of(1);\n    }\n}\n")},
              "of", ("src/main/java/com/shop/Shop.java", 7, "Money.of")),
}


@pytest.mark.parametrize("eco", sorted(ECOSYSTEMS))
def test_each_ecosystem_links_its_manifests(tmp_path: Path, eco: str) -> None:
    provider, consumer, changed, entry = ECOSYSTEMS[eco]
    p = _repo(tmp_path / "provider", provider)
    c = _repo(tmp_path / "consumer", consumer)
    add(tmp_path / "ws.toml", [p, c])
    ws = WorkspaceFile.load(tmp_path / "ws.toml")
    assert [(x["consumer"], x["provider"], x["files"]) for x in links_workspace(ws)["links"]] == [
        ("consumer", "provider", 1)]
    out = impact_workspace(ws, "provider", [changed])
    assert [s["repository"] for s in out["repositories"]] == ["provider", "consumer"]
    assert [(e["path"], e["line"], e["uses"]) for e in out["repositories"][1]["entries"]] == [entry]


def test_interface_of_a_monorepo_and_hostile_manifests(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "mono", {
        "package.json": '{"name": "mono", "workspaces": ["packages/*"]}',
        "packages/a/package.json": '{"name": "@m/a", "dependencies": {"left-pad": "1"}}',
        "packages/b/package.json": '{"name": "@m/b", "dependencies": {"@m/a": "*"}}',
        "pyproject.toml": "[project\nname = broken",  # malformed: declares nothing, fails nothing
        "Cargo.toml": "",
        "packages/a/Cargo.toml": 'target = [1]\n[package]\nname = "odd"\n',  # valid TOML of an unexpected shape
        "packages/b/pyproject.toml": '[project]\nname = "b"\noptional-dependencies = ["x"]\n',
    })
    (root / "go.mod").symlink_to("/etc/hostname")  # a link is never read as a manifest
    doc = interface(root, [])
    assert [(p["ecosystem"], p["name"], p["folder"]) for p in doc["packages"]] == [
        ("npm", "mono", ""), ("npm", "@m/a", "packages/a"), ("npm", "@m/b", "packages/b")]
    # (packages/b's pyproject and packages/a's Cargo.toml are of an unexpected shape: skipped whole)
    assert [(r["name"], r["manifest"]) for r in doc["requires"]] == [("left-pad", "packages/a/package.json"),
                                                                      ("@m/a", "packages/b/package.json")]


def test_a_bundle_from_ci_is_a_member_verified_with_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import oracl
    from oracl.core.sign import keygen

    priv, pub = keygen(tmp_path / "keys")
    monkeypatch.setenv("ORACL_ED25519_PRIVATE_KEY", priv.read_text())
    ci = _repo(tmp_path / "ci-checkout" / "lib-auth", LIB_AUTH)  # the library's CI builds and signs …
    monkeypatch.delenv("ORACL_ED25519_PRIVATE_KEY")
    shutil.copytree(ci / ".oracl", tmp_path / "lib-auth" / ".oracl")  # … and its bundle is all that is shipped
    svc = _repo(tmp_path / "svc-a", SVC_A)
    add(tmp_path / "ws.toml", [tmp_path / "lib-auth"], public_key=pub)
    add(tmp_path / "ws.toml", [svc])
    ws = oracl.Workspace.open(tmp_path / "ws.toml")
    out = ws.impact("lib-auth", "sign_token")
    assert out["members"][0]["checked"] == "signature: ed25519, valid"
    assert [s["repository"] for s in out["repositories"]] == ["lib-auth", "svc-a"]
    assert [c["repository"] for c in ws.callers("sign_token")["callers"] if c["across"]] == ["svc-a"]
    assert [x["provider"] for x in ws.links()["links"]] == ["lib-auth"]
    # the shipped interface edited: its digest no longer matches the signed manifest
    with Snapshot.open(tmp_path / "lib-auth") as snap:
        path = snap.bundle / INTERFACE_FILE
        path.write_bytes(path.read_bytes().replace(b'"libauth"', b'"libauth2"'))
    out = ws.impact("svc-a", "login")
    assert out["notices"][-1] == ("member lib-auth is not linked to the others: its interface.json does not match "
                                  "the bundle's manifest")


def test_callees_across_members_and_a_qualified_name_is_not_another_members(org: Path) -> None:
    from oracl.read.crossrepo import callees_workspace

    ws = WorkspaceFile.load(org / "ws.toml")
    out = callees_workspace(ws, "check")
    assert [(c["repository"], c["qualified"], c["path"], c["lines"], c["call_sites"], c["across"])
            for c in out["callees"] if c["across"]] == [
        ("lib-auth", "verify_token", "src/libauth/tokens.py", [12], [10], "lib-auth (lib-auth)")]
    # gateway's ping calls svc-a's check: two boundaries are two answers, one level each
    assert [(c["repository"], c["qualified"]) for c in callees_workspace(ws, "ping")["callees"]] == [("svc-a", "check")]
    with pytest.raises(QueryError, match="no member defines 'Gateway.check'"):
        callees_workspace(ws, "Gateway.check")  # svc-a's `check` is not a method of Gateway


def test_status_across_members(org: Path) -> None:
    import shutil

    wsf = org / "ws.toml"
    r = run_cli("status", "--workspace", str(wsf), "--check")
    assert r.returncode == 0 and [line.split("\t")[2] for line in r.stdout.splitlines()] == ["fresh"] * 3
    (org / "svc-a" / "svc_a" / "new.py").write_text("x = 1\n")
    shutil.copytree(org / "lib-auth" / ".oracl", org / "lib-shipped" / ".oracl")
    add(wsf, [org / "lib-shipped"])
    r = run_cli("status", "--workspace", str(wsf), "--check")
    assert r.returncode == 20
    rows = {line.split("\t")[0]: line.split("\t")[2:] for line in r.stdout.splitlines()}
    assert rows["svc-a"][:2] == ["stale", "+1 ~0 -0"]
    assert rows["lib-shipped"] == ["fresh", "", "a bundle alone (no tree to compare with)"]


def test_a_malformed_interface_is_refused_not_a_crash(org: Path) -> None:
    from oracl.read.crossrepo import _well_formed

    good = _iface(org / "svc-a")
    assert _well_formed(good)
    bad = [{**good, "packages": {}}, {**good, "requires": [{"ecosystem": "python", "name": 1, "manifest": "m", "line": 1}]},
           {**good, "files": {"a.py": {"imports": [["m", "x", 1]], "calls": []}}},
           {**good, "files": {"a.py": {"imports": [], "calls": [["f", "1", 0]]}}},
           {**good, "packages": [{"ecosystem": "python", "name": "x", "folder": "", "manifest": "m", "prefixes": [1]}]}]
    assert [_well_formed(b) for b in bad] == [False] * 5


def test_one_repository_readers_on_a_member(org: Path) -> None:
    wsf = str(org / "ws.toml")
    shown = orjson.loads(run_cli("show", "svc-a:svc_a/api.py", "--workspace", wsf, "--json").stdout)
    assert shown["repository"] == "svc-a" and shown["artifact"]["path"] == "svc_a/api.py"
    quoted = run_cli("fragment", "lib-auth:src/libauth/tokens.py#L8-9", "--workspace", wsf)
    assert quoted.stdout == "def sign_token(user):\n    return user + '.' + _digest(user)\n"
    tree = orjson.loads(run_cli("trace", "svc-a:svc_a/views.py", "--workspace", wsf, "--json").stdout)
    assert tree["repository"] == "svc-a" and "svc_a/api.py" in orjson.dumps(tree).decode()
    near = orjson.loads(run_cli("related", "svc-gateway:gateway/routes.py", "--workspace", wsf, "--json").stdout)
    assert near["repository"] == "svc-gateway"
    for bad in ("svc_a/api.py", "nope:svc_a/api.py"):
        r = run_cli("show", bad, "--workspace", wsf)
        assert r.returncode == 8 and r.stderr.count("\n") == 1
        assert "name it as MEMBER:" in r.stderr and "(members: lib-auth, svc-a, svc-gateway)" in r.stderr


def test_verify_every_member(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oracl.core.sign import keygen

    priv, pub = keygen(tmp_path / "keys")
    monkeypatch.setenv("ORACL_ED25519_PRIVATE_KEY", priv.read_text())
    lib = _repo(tmp_path / "lib-auth", LIB_AUTH)
    monkeypatch.delenv("ORACL_ED25519_PRIVATE_KEY")
    svc = _repo(tmp_path / "svc-a", SVC_A)
    wsf = tmp_path / "ws.toml"
    add(wsf, [lib], public_key=pub)
    add(wsf, [svc])
    r = run_cli("verify", "--workspace", str(wsf))
    assert r.returncode == 0 and [line.split("\t")[:2] for line in r.stdout.splitlines()] == [
        ["lib-auth", "verified"], ["svc-a", "verified"]]
    with Snapshot.open(svc) as snap:  # one member's bundle changed after its build
        (snap.bundle / INTERFACE_FILE).write_bytes(b'{"format": 1}')
    r = run_cli("verify", "--workspace", str(wsf), "--json")
    out = orjson.loads(r.stdout)
    assert [m["verified"] for m in out["members"]] == [True, False] and r.returncode == out["members"][1]["exit_code"]
    assert "interface.json" in out["members"][1]["error"]
    # a member whose workspace entry names a key its builds are not signed with
    add(wsf, [_repo(tmp_path / "svc-b", SVC_A)], name="svc-signed", public_key=pub)
    r = run_cli("verify", "--workspace", str(wsf))
    assert r.returncode != 0 and r.stdout.splitlines()[2].startswith("svc-signed\tFAILED\t")


def test_an_npm_subpath_resolves_through_the_exports_map(tmp_path: Path) -> None:
    p = _repo(tmp_path / "provider", {
        "package.json": '{"name": "@org/client", "exports": {".": "./index.js", "./json": {"require": "./lib/types/json.js"}}}',
        "index.js": "export function fetchUser(id) {\n  return id;\n}\n",
        "lib/types/json.js": "export function parseJson(text) {\n  return text;\n}\n",
        "json.js": "// not what ./json names\n"})
    c = _repo(tmp_path / "consumer", {
        "package.json": '{"name": "web", "dependencies": {"@org/client": "1"}}',
        "app.js": 'const json = require("@org/client/json");\n\nmodule.exports = json;\n'})
    add(tmp_path / "ws.toml", [p, c])
    out = impact_workspace(WorkspaceFile.load(tmp_path / "ws.toml"), "provider", ["lib/types/json.js"])
    assert [(e["path"], e["uses"], e["defined"]) for e in out["repositories"][1]["entries"]] == [
        ("app.js", "import @org/client/json", "lib/types/json.js")]
    assert _iface(p)["packages"][0]["entries"] == {".": "index.js", "./json": "lib/types/json.js"}


TYPED = {
    "go": ({"go.mod": "module example.com/geo\n\ngo 1.21\n",
            "geo/point.go": "package geo\n\ntype Point struct{ X int }\n\nfunc (p *Point) Dist() int {\n\treturn p.X\n}\n"},
           {"go.mod": "module example.com/app\n\ngo 1.21\n\nrequire example.com/geo v1.0.0\n",
            "main.go": ('package main\n\nimport "example.com/geo/geo"\n\nfunc far(p *geo.Point) int {\n'
                        '\treturn p.Dist()\n}\n')},
           "Point.Dist", ("main.go", 6, "Point.Dist"), "far"),
    "python": ({"pyproject.toml": '[project]\nname = "lib-auth"\n',
                "src/libauth/__init__.py": "",
                "src/libauth/session.py": "class Session:\n    def close(self):\n        return 1\n"},
               {"pyproject.toml": '[project]\nname = "svc"\ndependencies = ["lib-auth"]\n',
                "svc/__init__.py": "",
                "svc/handler.py": ("import libauth.session\n\n\ndef done(s: libauth.session.Session):\n"
                                   "    return s.close()\n")},
               "Session.close", ("svc/handler.py", 5, "Session.close"), "done"),
}


@pytest.mark.parametrize("eco", sorted(TYPED))
def test_a_method_called_on_a_value_of_the_providers_type_crosses(tmp_path: Path, eco: str) -> None:
    from oracl.read.crossrepo import ENTRY_TYPED, callees_workspace

    provider, consumer, changed, entry, caller = TYPED[eco]
    add(tmp_path / "ws.toml", [_repo(tmp_path / "provider", provider), _repo(tmp_path / "consumer", consumer)])
    ws = WorkspaceFile.load(tmp_path / "ws.toml")
    out = impact_workspace(ws, "provider", [changed])
    assert [(e["path"], e["line"], e["uses"], e["kind"], e["confidence"]) for e in out["repositories"][1]["entries"]] \
        == [(*entry, "typed", ENTRY_TYPED)]
    across = [(c["qualified"], c["resolution"], c["confidence"]) for c in callers_workspace(ws, changed)["callers"]
              if c["across"]]
    assert across == [(caller, "typed", ENTRY_TYPED)]
    assert [(c["qualified"], c["call_sites"]) for c in callees_workspace(ws, caller)["callees"] if c["across"]] == [
        (changed, [entry[1]])]


def test_a_context_pack_across_members_interleaves_and_keeps_the_budget(org: Path) -> None:
    from oracl.read.fanout import context_workspace
    from oracl.read.memory import Memory, estimate_tokens

    ws = WorkspaceFile.load(org / "ws.toml")
    q = "sign token login handler"
    out = context_workspace(ws, q, budget_tokens=4000)
    own = {}
    for name in ("lib-auth", "svc-a", "svc-gateway"):
        with Memory.open(org / name, withhold_sensitive=True) as mem:
            own[name] = mem.context(q, budget_tokens=4000).to_json()["items"]
    # every member's first file comes before any member's second (rank 1 is 1/61 in each)
    firsts = {n: items[0]["path"] for n, items in own.items() if items}
    ranks = [(i["repository"], i["path"]) for i in out["items"]]
    assert set(ranks[:len(firsts)]) == set(firsts.items())
    header = estimate_tokens(f"# context for: {q} across 3 repositories")
    assert out["used_tokens"] == header + sum(i["tokens"] for i in out["items"]) <= 4000
    import oracl

    assert oracl.Workspace.open(org / "ws.toml").context(q)["items"] == out["items"]
    small = context_workspace(ws, q, budget_tokens=120)
    assert small["used_tokens"] <= 120 and small["truncated"] and len(small["items"]) < len(out["items"])
