"""Selective rebuilds: after any sequence of edits, the export of an incremental build is
the export a full build of the same tree makes, and only the changed files were read."""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from oracl.builder.incremental import load_previous
from oracl.builder.orchestrator import BuildReport, build
from oracl.core.export import unpack_symbols
from oracl.core.vault import FACTS_FILE, Vault
from oracl.read.query import run
from tests.conftest import export_of

from .conftest import on_latest, write_learned, write_tree

KW = {"buffer_pool_bytes": 64 << 20, "workers": 1}
OLD = 1_760_000_000 * 10**9  # 2025-10-09: edits are dated in the past (never "racily clean"), the same every run
DOMAINS = ("pkg", "pkg/sub", "docs", "tests", "scripts", "archive", "configs")


def search(root, text, **kw):  # type: ignore[no-untyped-def]
    return on_latest(run.search, root, text, **kw)


def _py(i: int, rng: random.Random, names: list[str]) -> str:
    others = [n for n in names if n.endswith(".py") and n.startswith("pkg/")]
    lines = [f'"""Module {i}: handles {rng.choice(["signing", "export", "parsing", "cache"])}."""']
    for target in rng.sample(others, min(len(others), rng.randint(0, 2))):
        lines.append(f"import {target[:-3].replace('/', '.')}")
    # calls by name into other modules (resolved or not, depending on which files exist),
    # a class with a method called through self: the symbol graph changes with the edits
    lines.append(f"\ndef work_{i}(x):\n    \"\"\"Work {i}.\"\"\"\n    # see {rng.choice(names) if names else 'README.md'}\n"
                 f"    work_{rng.randint(0, 40)}(x)\n    return x + {i}\n\n\nclass Job{i}(Job{rng.randint(0, 40)}):\n"
                 f"    def run(self):\n        return self.step() + work_{rng.randint(0, 40)}(1)\n")
    return "\n".join(lines)


def _md(i: int, rng: random.Random, names: list[str]) -> str:
    links = " ".join(f"[{n}](/{n})" for n in rng.sample(names, min(len(names), 2)))
    return f"# Note {i}\n\nAbout the {rng.choice(['signer', 'exporter', 'parser'])}. {links}\n## Usage\nrun it\n"


def _content(path: str, i: int, rng: random.Random, names: list[str]) -> str | bytes:
    if path.endswith(".md"):
        return _md(i, rng, names)
    if path.endswith(".yaml"):
        return f"entry: {rng.choice(names) if names else 'x'}\nlevel: {i}\n"
    if path.endswith(".bin.py"):
        return b"\0\x01binary"
    return _py(i, rng, names)


def _new_path(rng: random.Random, i: int) -> str:
    domain = rng.choice(DOMAINS)
    if domain == "docs":
        return f"docs/note_{i}.md"
    if domain == "configs":
        return f"configs/conf_{i}.yaml"
    if domain == "tests":
        return f"tests/test_mod_{i}.py"
    return f"{domain}/mod_{i}.py"


def _stamp(path: Path, step: int) -> None:
    t = OLD + step * 10**9
    os.utime(path, ns=(t, t))


def _canonical(root: Path) -> dict:
    """The latest build's export, its build id and time left out, with its interface.json
    (``interface``: what a workspace's readers join members through) and its stat.bin's
    rows (``stat``: what the next build compares the tree with)."""
    from oracl.core.vault import INTERFACE_FILE
    from oracl.read.snapshot import Snapshot

    doc = orjson.loads(export_of(root))
    for key in ("build_id", "generated_at"):
        doc["schema"].pop(key)
    from oracl.core.parts import stat_files
    from oracl.core.vault import STAT_FILE

    with Snapshot.open(root) as snap:
        doc["interface"] = orjson.loads((snap.bundle / INTERFACE_FILE).read_bytes())
        doc["stat"] = stat_files((snap.bundle / STAT_FILE).read_bytes(), root / ".oracl")[1]  # (each file's row)
    return doc


def _first_difference(a: dict, b: dict) -> str:
    for part in ("schema", "nodes", "edges", "symbols", "interface", "stat"):
        if a.get(part) == b.get(part):
            continue
        if part == "schema":
            return f"schema: {sorted(k for k in a[part] if a[part][k] != b[part].get(k))}"
        if part == "stat":
            return f"stat.bin: {sorted(k for k in {*a[part], *b[part]} if a[part].get(k) != b[part].get(k))[:3]}"
        if part == "interface":
            files_a, files_b = a[part].get("files", {}), b[part].get("files", {})
            return f"interface.json: {sorted(k for k in {*files_a, *files_b} if files_a.get(k) != files_b.get(k))[:3]}"
        if part == "symbols":
            for sub in ("nodes", "edges"):
                extra = [x for x in a[part][sub] if x not in b[part][sub]][:2]
                gone = [x for x in b[part][sub] if x not in a[part][sub]][:2]
                if extra or gone:
                    return f"symbol {sub}: incremental only {extra}, full only {gone}"
        if len(a[part]) != len(b[part]):
            return f"{part}: {len(a[part])} vs {len(b[part])} rows"
        for x, y in zip(a[part], b[part], strict=True):
            if x != y:
                keys = sorted(k for k in x if x[k] != y.get(k))
                return f"{part}: {x.get('path', x.get('id'))} differs in {keys}: {[x[k] for k in keys]} vs {[y[k] for k in keys]}"
    return ""


def _full_beside(root: Path, now: datetime, **overrides: object) -> tuple[dict, list[tuple[str, float]]]:
    """A full build of the same tree, its vault then put back: (export, search answer)."""
    vault = root / ".oracl"
    saved = root.parent / "saved-vault"
    shutil.copytree(vault, saved, symlinks=True)
    report = build(root, full=True, now=now, **{**KW, **overrides})
    assert report.mode == "full: requested"
    out = _canonical(root), _answer(root)
    shutil.rmtree(vault)
    saved.rename(vault)
    return out


def _answer(root: Path) -> list[tuple[str, float]]:
    return [(r["path"], r["score"]) for r in search(root, "signing export parser module", limit=8, log=False).results]


def _edit(root: Path, rng: random.Random, step: int, names: list[str]) -> set[str]:
    """One random edit; returns the paths a selective rebuild has to read."""
    kind = rng.choice(("add", "modify", "modify", "delete", "rename", "move"))
    if kind == "add" or len(names) < 8:
        rel = _new_path(rng, 1000 + step)
        if rng.random() < 0.1:
            rel = rel.rsplit("/", 1)[0] + f"/blob_{step}.bin.py"
        write_tree(root, {rel: _content(rel, step, rng, names)})
        _stamp(root / rel, step)
        names.append(rel)
        return {rel}
    rel = rng.choice(sorted(names))
    if kind == "modify":
        path = root / rel
        if rng.random() < 0.3:  # same size, new bytes: only the mtime tells
            data = bytearray(path.read_bytes())
            data[0:1] = b"#" if data[:1] != b"#" else b"%"
            path.write_bytes(bytes(data))
        else:
            write_tree(root, {rel: _content(rel, step, rng, names)})
        _stamp(path, step)
        return {rel}
    names.remove(rel)
    if kind == "delete":
        (root / rel).unlink()
        return set()
    name = rel.rsplit("/", 1)[1]
    if kind == "rename":
        dst = rel.rsplit("/", 1)[0] + f"/renamed_{step}_{name}"
    else:  # move across domains, keeping the bytes and the mtime
        dst = f"{rng.choice([d for d in DOMAINS if not rel.startswith(d + '/')])}/{name}"
        if dst in names or (root / dst).exists():
            dst = dst.rsplit("/", 1)[0] + f"/moved_{step}_{name}"
    (root / dst).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).rename(root / dst)
    names.append(dst)
    return {dst}


def _shards_whole(root: Path, carry: Any, tmp: Path) -> None:
    """The facts and edge shards the latest bundle lists (a long-lived builder's: most of
    them linked from the bundle before, the others written from the groups it keeps) are
    those its carry's facts and edges give when every shard is written again."""
    from oracl.builder.edge_shards import write_edges
    from oracl.builder.incremental import write_facts
    from oracl.core.vault import atomic_write

    bundle = Vault(root).bundle(Vault(root).read_latest()["bundle"])
    head = orjson.loads((bundle / FACTS_FILE).read_bytes())
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    facts = list(carry.facts.values())
    write_facts(tmp, facts, {}, None, set(), atomic_write)
    assert orjson.loads((tmp / FACTS_FILE).read_bytes())["shards"] == head["shards"]
    reads = carry.edge_reads
    digests, _ = write_edges(tmp, facts, carry.edges, carry.merged, None, None, atomic_write,
                             lambda p: sorted(reads[p]) if p in reads else None)
    assert digests == head["edge_shards"]


def _entries(root: Path) -> dict[str, tuple[int, ...]]:
    """Every entry under ``root`` but the vault, with what a file event would see move."""
    out: dict[str, tuple[int, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [n for n in dirnames if not (dirpath == str(root) and n == ".oracl")]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            out[os.path.relpath(full, root).replace(os.sep, "/")] = (st.st_mode, st.st_size, st.st_mtime_ns,
                                                                     st.st_ctime_ns)
    return out


@pytest.mark.parametrize(("seed", "carried"), [(1, False), (2, False), (3, False), (1, True), (4, "hinted"),
                                               (4, "warmed")])
def test_incremental_equals_full_on_random_edits(tmp_path: Path, seed: int, carried: bool | str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``carried``: the builds keep their facts in a Carry, as ``oracl watch`` does, so
    that facts.bin is decoded only by the first build: the exports are the same.
    ``"hinted"``: also given the paths file events would name (every entry that came, went
    or moved), as ``oracl watch`` gives them: the walk is the last build's with those
    taken in, or a walk where they ask for one; the exports are the same. ``"warmed"``: the
    first build is a one-shot build's (no carry), the carry filled from it by
    ``orchestrator.warm`` (as ``oracl watch`` does when it starts), then as ``"hinted"``. Each
    update holds no superseded full-text row (``FTS_SUPERSEDED_MIN`` 0: its index is made
    again whenever it would hold one), so the full-text answers equal a full build's to the
    last digit; rows held below the bound move BM25's counts (``oracl status`` says how
    many: tests/test_change_faults.py)."""
    from oracl.builder import incremental, orchestrator
    from oracl.core import derive

    monkeypatch.setattr(derive, "FTS_SUPERSEDED_MIN", 0)
    decoded: list[int] = []
    decode = incremental.read_facts

    def counted(bundle: Path, head: dict, *rest):  # type: ignore[no-untyped-def]
        decoded.append(len(head["shards"]))
        return decode(bundle, head, *rest)

    monkeypatch.setattr(incremental, "read_facts", counted)
    carry = incremental.Carry() if carried else None
    rng = random.Random(seed)
    root = tmp_path / "repo"
    names: list[str] = []
    files: dict[str, str | bytes] = {}
    for i in range(40):
        rel = _new_path(rng, i)
        files[rel] = _content(rel, i, rng, names)
        names.append(rel)
    files["pkg/broken.py"] = "def broken(:\n"
    names.append("pkg/broken.py")
    write_tree(root, files)
    for rel in names:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    first = build(root, now=t0, carry=carry if carried != "warmed" else None, **KW)
    assert first.mode == "full: no previous build"
    if carried == "warmed":  # (after a one-shot rebuild: the standby differs from the latest in the rows it recorded)
        write_tree(root, {names[0]: _content(names[0], 99, rng, names)})
        _stamp(root / names[0], 1)
        assert build(root, now=t0 + timedelta(minutes=1), **KW).mode.startswith("incremental")
        assert orchestrator.warm(root, carry, **KW).startswith("warmed in ")
        assert carry is not None and carry.bundle is not None and carry.graph is not None
        assert len(decoded) == 2  # (the rebuild and the warming decoded facts.bin; no build after them does)
        decoded.clear()
    walked: list[bool] = []
    real_walk = orchestrator.walk
    monkeypatch.setattr(orchestrator, "walk", lambda *a, **k: walked.append(True) or real_walk(*a, **k))
    kept_index: list[int] = []  # the steps after which a carry's edge index was checked
    looked: list[str] = []  # the files whose stat a build compared with the previous build's
    real_reusable = incremental.Previous.reusable
    monkeypatch.setattr(incremental.Previous, "reusable",
                        lambda self, rel, st: looked.append(rel) or real_reusable(self, rel, st))
    for step in range(1, 9):
        touched: set[str] = set()
        before = _entries(root)
        for _ in range(rng.randint(1, 3)):
            touched |= _edit(root, rng, step, names)
        touched &= set(names)  # a file added then removed in the same step is not read
        after = _entries(root)
        events = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
        looked.clear()
        report = build(root, now=t0 + timedelta(minutes=2 * step), carry=carry,
                       changed=events if carried in ("hinted", "warmed") else None, **KW)
        if carry is not None and carry.edge_targets is not None:  # (kept up to date, never made again whole)
            from oracl.builder.resident import edge_targets
            assert carry.edges is not None and carry.edge_targets == edge_targets(carry.edges), step
            kept_index.append(step)
        if report.walk != "walked":  # (the events' paths and the files the last build read or checked)
            assert len(looked) <= len(events) + 6 and len(looked) < len(names) // 2, (len(looked), len(events))
        assert report.mode.startswith("incremental"), report.mode
        assert len(decoded) == (0 if carried else step), decoded  # (the full builds beside read every file)
        assert report.files_read == len(touched), (report.mode, sorted(touched))
        incremental = _canonical(root), _answer(root)
        # (the standby's symbol tables and artifact graph, patched in place)
        rows = (_symbol_rows(root), _graph_rows(root)) if carried else None
        if carried:
            _shards_whole(root, carry, tmp_path / "shards")
            _, *full_rows = _full_rows_beside(root, t0 + timedelta(minutes=2 * step + 1), graph=True)
            assert rows is not None and rows[0] == full_rows[0], f"step {step}: the symbol tables differ from a full build's"
            assert rows[1] == full_rows[1], f"step {step}: the graph's rows differ from a full build's"
        full = _full_beside(root, t0 + timedelta(minutes=2 * step + 1))
        assert incremental[0] == full[0], f"step {step}: {_first_difference(incremental[0], full[0])}"
        edges = unpack_symbols(full[0])[1]
        calls = [e for e in edges if e["relation"] == "calls"]
        assert len(calls) >= 10 and any(e["relation"] == "inherits" for e in edges)
        assert incremental[1] == full[1], f"step {step}: the full-text answers differ: {incremental[1]} vs {full[1]}"
    if carried:
        assert len(kept_index) >= 4, kept_index
    if carried in ("hinted", "warmed"):  # (the hinted builds walked only where their events asked for it)
        assert 16 < len(walked) < 24, walked  # (16 full builds beside, 8 hinted ones)


def _one_file_repo(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "r", {"pkg/a.py": "x = 1\n", "pkg/b.py": "import pkg.a\n", "README.md": "# R\n"})
    for rel in ("pkg/a.py", "pkg/b.py", "README.md"):
        _stamp(root / rel, 0)
    return root


def _vault_files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file of the vault but its lock: (size, mtime_ns)."""
    vault = root / ".oracl"
    return {str(p.relative_to(vault)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(vault.rglob("*")) if p.is_file() and p.name != "build.lock"}


def test_warming_fills_the_carry_from_the_latest_and_writes_nothing(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``orchestrator.warm`` (what ``oracl watch`` runs when it starts on a tree that is up to
    date) fills a Carry as if the builder had made the latest build: no file of the vault is
    written, added or removed, facts.bin is decoded once, and the next build reweighs the kept
    graph and updates the standby in place through only the rows the latest recorded against
    it and the rows this build moved (``resident.standby_reach``): its rows equal a full
    build's. A tree that moved since the latest build is not warmed (the carry stays empty)."""
    from oracl.builder import incremental, orchestrator, resident

    decoded: list[int] = []
    decode = incremental.read_facts
    monkeypatch.setattr(incremental, "read_facts", lambda bundle, head, *rest: decoded.append(1) or decode(bundle, head, *rest))
    reaches: list[object] = []
    reach_of = resident.standby_reach
    monkeypatch.setattr(orchestrator, "standby_reach", lambda *a: reaches.append(reach_of(*a)) or reaches[-1])
    files = {**CALLERS, **{f"pkg/extra_{i}.py": f"def extra_{i}(x):\n    return x + {i}\n" for i in range(4)}}
    root = write_tree(tmp_path / "r", files)
    for rel in files:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    (root / "pkg" / "base.py").write_text(CALLERS["pkg/base.py"] + "\n\ndef helper_two(y):\n    return helper(y)\n")
    _stamp(root / "pkg" / "base.py", 1)
    assert build(root, now=t0 + timedelta(minutes=1), **KW).mode.startswith("incremental")  # (a one-shot rebuild)
    vault = Vault(root)
    latest = vault.read_latest()["build_id"]
    before, decoded[:] = _vault_files(root), []
    carry = incremental.Carry()
    said = orchestrator.warm(root, carry, **KW)
    assert said.startswith("warmed in ") and said.endswith(f"{len(files):,} files' facts, edges and rows kept")
    assert _vault_files(root) == before and vault.read_latest()["build_id"] == latest
    assert carry.bundle == vault.bundle(latest) and decoded == [1]
    assert carry.graph is not None and carry.export is not None and carry.edge_targets is not None
    assert carry.discovery is not None and carry.symbol_table is not None and carry.types is not None
    # (what the standby — the bundle the latest started from — holds otherwise: base.py's old bytes)
    base = orjson.loads((vault.bundle(latest) / "manifest.json").read_bytes())["lineage"]["base"]
    assert carry.delta is not None and carry.delta[0] == base and list(carry.delta[1]) == ["pkg/base.py"]

    (root / "pkg" / "shop.py").write_text(CALLERS["pkg/shop.py"] + "# a comment\n")
    _stamp(root / "pkg" / "shop.py", 2)
    report = build(root, now=t0 + timedelta(minutes=2), carry=carry, changed={"pkg/shop.py"}, **KW)
    assert report.mode == f"incremental: {len(files) - 1:,} reused, 1 read, 0 removed" and decoded == [1]
    assert report.walk.startswith("the last build's walk") and report.weigh_mode.startswith("weigh: the kept graph's")
    assert report.database_mode == ("database: the standby updated in place (1 more file caught up, known to the "
                                     "builder)"), report.database_mode  # (base.py: the standby's bytes are older)
    reach = reaches[-1]
    assert reach is not None and "pkg/base.py" in reach.nodes and "pkg/shop.py" in reach.nodes  # type: ignore[attr-defined]
    rows = _canonical(root), _symbol_rows(root), _graph_rows(root)
    full = _full_rows_beside(root, t0 + timedelta(minutes=3), graph=True)
    assert (orjson.dumps(rows[0], option=orjson.OPT_SORT_KEYS), rows[1]) == full[:2]
    assert rows[2] == full[2]

    (root / "pkg" / "cart.py").write_text(CALLERS["pkg/cart.py"] + "# moved\n")
    before = _vault_files(root)
    other = incremental.Carry()
    assert orchestrator.warm(root, other, **KW) == "not warmed: the tree changed since the latest build"
    assert other.bundle is None and other.graph is None and _vault_files(root) == before


def test_a_carry_is_used_only_while_its_build_is_the_latest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Carry stands in for facts.bin only while LATEST names the bundle it kept and that
    bundle's manifest lists the digest it kept; another build, another digest or a failed
    build and facts.bin is read again. The records of unchanged files are the ones it kept,
    until the settings they were made under (the config, the learned tags) change."""
    from oracl.builder import incremental, orchestrator
    from oracl.core.errors import OraclError

    decoded: list[int] = []
    decode = incremental.read_facts
    monkeypatch.setattr(incremental, "read_facts", lambda bundle, head, *rest: decoded.append(1) or decode(bundle, head, *rest))
    root = _one_file_repo(tmp_path)
    vault = Vault(root)
    carry = incremental.Carry()

    def edit(step: int, **kw: object) -> str:
        (root / "pkg" / "a.py").write_text(f"x = {step}\n")
        _stamp(root / "pkg" / "a.py", step)
        return build(root, **{**KW, **kw}).mode

    assert build(root, carry=carry, **KW).mode == "full: no previous build"
    latest = vault.bundle(vault.read_latest()["bundle"])
    assert carry.bundle == latest and sorted(carry.facts) == ["README.md", "pkg/a.py", "pkg/b.py"]
    assert carry.facts_sha256 == orjson.loads((latest / "manifest.json").read_bytes())["files"][FACTS_FILE]
    record_b = carry.records["pkg/b.py"][1]
    assert (edit(1, carry=carry), decoded) == ("incremental: 2 reused, 1 read, 0 removed", [])
    assert carry.records["pkg/b.py"][1] is record_b  # an unchanged file's record is the one kept
    write_learned(vault.dir / "learned_tags.json", '{"pkg/b.py": {"review_status": "reviewed"}}')
    assert edit(11, carry=carry) == "incremental: 2 reused, 1 read, 0 removed"
    assert carry.records["pkg/b.py"][1] is not record_b  # other learned tags: every record made again
    assert carry.records["pkg/b.py"][1].review_status == "reviewed"
    (vault.dir / "learned_tags.json").unlink()
    assert edit(2) == "incremental: 2 reused, 1 read, 0 removed"  # a build without the carry: LATEST moves
    assert decoded == [1]
    assert (edit(3, carry=carry), decoded) == ("incremental: 2 reused, 1 read, 0 removed", [1, 1])
    assert (edit(4, carry=carry), decoded) == ("incremental: 2 reused, 1 read, 0 removed", [1, 1])
    carry.facts_sha256 = "0" * 64  # not what the manifest lists
    assert (edit(5, carry=carry), decoded) == ("incremental: 2 reused, 1 read, 0 removed", [1, 1, 1])

    def broken(*args: object) -> None:
        raise OraclError("the weighing failed")

    monkeypatch.setattr(orchestrator, "weigh_graph", broken)
    with pytest.raises(OraclError, match="the weighing failed"):
        edit(6, carry=carry)
    assert carry.bundle is None and carry.facts == {}


def test_a_racily_clean_file_is_read_again(tmp_path: Path) -> None:
    """Same size and same mtime, written just before the previous build: read again."""
    root = _one_file_repo(tmp_path)
    recent = root / "pkg" / "a.py"
    now = time.time_ns()
    os.utime(recent, ns=(now, now))
    build(root, **KW)
    recent.write_text("y = 2\n")
    os.utime(recent, ns=(now, now))
    report = build(root, **KW)
    assert report.mode.startswith("incremental") and report.files_read == 1, report.mode
    row = next(n for n in orjson.loads(export_of(root))["nodes"] if n.get("path") == "pkg/a.py")
    assert row["checksum"] == hashlib.sha256(b"y = 2\n").hexdigest()


def test_files_written_just_before_a_build_are_checked_by_digest_not_read_again(tmp_path: Path) -> None:
    """Issue 49, step 5: a fresh clone writes every file just before the first build, so
    the next build found every file racily clean and read, hashed and parsed all of them
    again. It now hashes them and reuses the facts of those whose bytes are unchanged."""
    files = {f"pkg/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(80)}
    root = write_tree(tmp_path / "r", files)
    now = time.time_ns()
    for rel in files:
        os.utime(root / rel, ns=(now, now))  # written "just now", as a clone writes
    first = build(root, **KW)
    assert first.mode == "full: no previous build"
    second = build(root, **KW)  # nothing changed: the bytes checked, nothing read or written
    assert second.files_read == 0
    assert second.mode == (f"up to date: nothing changed since build {first.build_id} "
                           "(80 written just before it, their bytes checked)")
    (root / "pkg/m0.py").write_text("def f0():\n    return 100\n")
    os.utime(root / "pkg/m0.py", ns=(OLD, OLD))
    third = build(root, **KW)  # one edit: the others still within two seconds: checked again, still not read
    assert third.files_read == 1
    assert third.mode == ("incremental: 79 reused (79 written just before the last build, their bytes checked), "
                          "1 read, 0 removed")
    assert export_of(root).count(b'"kind":"artifact"') == 80


def test_a_rebuild_with_nothing_read_reuses_every_symbol_row_and_equals_a_full_build(tmp_path: Path) -> None:
    """Nothing read again (a rebuild after a clone whose files were all checked by digest, or
    after a touch): the symbol rows came from a whole pass (6.7 s of 18 s at 20k files); now
    every segment is reused, and the build still equals a full one."""
    files = {f"pkg/m{i}.py": f"from pkg.m{(i + 1) % 30} import f{(i + 1) % 30}\n\n\ndef f{i}():\n"
                             f"    return f{(i + 1) % 30}()\n" for i in range(30)}
    root = write_tree(tmp_path / "repo", files)
    for rel in files:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    # (a weight moved: a real build, no file read; with nothing moved the build would be up to date)
    again = build(root, now=t0 + timedelta(minutes=1), alpha=0.5, **KW)
    assert again.mode == "incremental: 30 reused, 0 read, 0 removed"
    assert again.symbols_mode == "symbols: the rows of 0 changed files made again, the others reused"
    verified = subprocess.run([sys.executable, "-c", "from oracl.face.launch import main; import sys; "
                               "sys.argv = ['oracl', 'verify', sys.argv[1]]; main()", str(root)],
                              capture_output=True, text=True)
    assert verified.returncode == 0, verified.stderr  # what readers serve is the export's
    full = _full_beside(root, t0 + timedelta(minutes=2), alpha=0.5)
    assert _canonical(root) == full[0], _first_difference(_canonical(root), full[0])


def test_the_digest_check_takes_only_the_same_bytes(tmp_path: Path) -> None:
    """New bytes under a stat that did not move (size, mtime and ctime within one tick of a
    coarse clock) are what the racy check exists for: their facts are never reused."""
    from dataclasses import replace

    from oracl.builder.incremental import decode_head, read_facts, same_bytes

    files = {f"m{i}.py": f"x = {i}\n" for i in range(70)}
    root = write_tree(tmp_path / "r", files)
    build(root, **KW)
    bundle = Vault(root).bundle(Vault(root).read_latest()["build_id"])
    facts = read_facts(bundle, decode_head((bundle / FACTS_FILE).read_bytes()))
    candidates = [(rel, facts[rel]) for rel in sorted(files)]
    candidates[3] = (candidates[3][0], replace(candidates[3][1], checksum=hashlib.sha256(b"x = 99\n").hexdigest()))
    (root / "m5.py").write_text("x = 7\n")  # new bytes and a new stat: refused on the stat
    got = same_bytes(os.path.realpath(root), candidates)
    assert got == set(files) - {candidates[3][0], "m5.py"}


def test_new_bytes_under_the_old_mtime_and_size_are_read(tmp_path: Path) -> None:
    """`cp -p` / `rsync -t` / `tar x`: same size, old mtime, new bytes – ctime tells."""
    from oracl.read.status import status

    root = _one_file_repo(tmp_path)
    build(root, **KW)
    target = root / "pkg" / "a.py"
    before = target.stat()
    target.write_text("x = 9\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    assert status(root)["modified"] == ["pkg/a.py"]
    report = build(root, **KW)
    assert report.mode == "incremental: 2 reused, 1 read, 0 removed"
    row = next(n for n in orjson.loads(export_of(root))["nodes"] if n.get("path") == "pkg/a.py")
    assert row["checksum"] == hashlib.sha256(b"x = 9\n").hexdigest()


def test_an_unreadable_file_is_retried_even_with_its_old_stat(tmp_path: Path) -> None:
    """chmod changes no mtime: a file that could not be read is read again every build."""
    from .test_cli import _without_dac_override

    root = _one_file_repo(tmp_path)
    target = root / "pkg" / "a.py"
    target.chmod(0)
    code = ("import sys, orjson; from oracl.builder.orchestrator import build; "
            "r = build(sys.argv[1], workers=1, buffer_pool_bytes=64 << 20); "
            "print(orjson.dumps(r.parse_status).decode())")
    r = subprocess.run([*_without_dac_override(), sys.executable, "-c", code, str(root)],
                       capture_output=True, text=True, timeout=120)
    target.chmod(0o644)
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout.strip().splitlines()[-1]) == {"ok": 2, "unreadable": 1}
    report = build(root, **KW)
    assert report.mode == "incremental: 2 reused, 1 read, 0 removed" and report.parse_status == {"ok": 3}


def test_when_the_previous_build_cannot_be_used_the_build_is_full(tmp_path: Path) -> None:
    root = _one_file_repo(tmp_path)
    first = build(root, **KW)
    assert build(root, **KW).mode == f"up to date: nothing changed since build {first.build_id}"
    assert build(root, full=True, **KW).mode == "full: requested"
    # a weight acts after reading: still selective, and still what a full build makes
    assert build(root, **{**KW, "alpha": 0.5}).mode == "incremental: 3 reused, 0 read, 0 removed"
    assert _canonical(root) == _full_beside(root, datetime.now(UTC), alpha=0.5)[0]
    assert build(root, **{**KW, "max_read_bytes": 1000}).mode == \
        "full: settings that change how files are read changed since the previous build"
    assert build(root, skip=("fts",), **{**KW, "max_read_bytes": 1000}).mode == \
        "full: the full-text setting changed since the previous build"
    build(root, **KW)
    vault = Vault(root)
    bundle = vault.bundle(vault.read_latest()["bundle"])
    cache = bundle / FACTS_FILE
    cache.chmod(0o644)
    data = bytearray(cache.read_bytes())
    data[len(data) // 2] ^= 1  # one flipped bit
    cache.write_bytes(bytes(data))
    assert load_previous(vault, "x", True)[1] == "full: the facts cache does not match its manifest"
    assert build(root, **KW).mode == "full: the facts cache does not match its manifest"
    latest = vault.bundle(vault.read_latest()["bundle"])
    (latest / FACTS_FILE).unlink()
    assert build(root, **KW).mode == "full: the previous build has no facts cache"


def test_too_many_changes_make_a_full_build(tmp_path: Path) -> None:
    """Over a quarter of the files and more than 64 changed: reading them all is cheaper."""
    root = write_tree(tmp_path / "r", {f"pkg/m{i}.py": f"x = {i}\n" for i in range(100)})
    for i in range(100):
        _stamp(root / f"pkg/m{i}.py", 0)
    build(root, **KW)
    for i in range(64):
        (root / f"pkg/m{i}.py").write_text(f"y = {i}\n")
        _stamp(root / f"pkg/m{i}.py", 5)
    assert build(root, **KW).mode == "incremental: 36 reused, 64 read, 0 removed"
    for i in range(65):
        (root / f"pkg/m{i}.py").write_text(f"z = {i}\n")
        _stamp(root / f"pkg/m{i}.py", 6)
    assert build(root, **KW).mode == "full: 65 files to read and 0 removed, against 100 in the previous build"


def test_watch_rebuilds_once_changes_settle(tmp_path: Path) -> None:
    """A real `oracl watch --poll` process: fresh at start (its carry warmed), one edit, one
    selective rebuild line."""
    from .conftest import ORACL

    root = _one_file_repo(tmp_path)
    build(root)  # the settings the CLI will use
    proc = subprocess.Popen([ORACL, "watch", str(root), "--poll", "--interval", "0.2", "--settle", "0.4",
                             "--max-builds", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "250"})
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.rstrip().endswith(f"watching {root} (fresh: the build matches the working tree; polling every 0.2 s)"), \
        first
    warmed = proc.stdout.readline()  # (up to date: the carry filled from the latest before any change)
    assert " warmed in " in warmed and warmed.rstrip().endswith("3 files' facts, edges and rows kept"), warmed
    (root / "pkg" / "c.py").write_text("import pkg.b\n")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1 and "incremental: 3 reused, 1 read, 0 removed" in lines[0] and "(1 file changed)" in lines[0]
    assert Vault(root).read_latest()["build_id"] in lines[0]


def _scripted(*steps: object, idle: float = 0.0):  # type: ignore[no-untyped-def]
    """A ``sleep`` for ``watch`` that runs one scripted step per call, then idles."""
    pending = iter(steps)

    def sleep(_: float) -> None:
        step = next(pending, None)
        if step is not None:
            step()  # type: ignore[operator]
        elif idle:
            time.sleep(idle)

    return sleep


def test_watch_polls_until_quiet_then_builds_what_it_saw(tmp_path: Path) -> None:
    """In-process, with a scripted clock of edits: a burst of edits is one rebuild."""
    from oracl.face.watch import watch

    root = _one_file_repo(tmp_path)
    build(root, **KW)
    sleep = _scripted(lambda: (root / "pkg" / "a.py").write_text("x = 2\n"),
                      lambda: (root / "pkg" / "d.py").write_text("y = 1\n"),
                      lambda: (root / "README.md").unlink(), idle=0.05)

    lines: list[str] = []
    assert watch(root, emit=lines.append, settle=0.0, interval=0.01, max_builds=1, sleep=sleep, poll=True) == 1
    # (the seconds are the machine's: a loaded one took 0.1 s to warm 3 files)
    assert len(lines) == 3 and re.search(r" warmed in \d+\.\d s: 3 files' facts, edges and rows kept$", lines[1]), lines
    assert "(3 files changed)" in lines[2] and "incremental: 1 reused, 2 read, 1 removed" in lines[2]


def test_a_long_lived_builders_objects_go_to_the_oldest_generation_and_the_idle_watch_collects(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a build that carries its objects (``oracl watch``'s, its helpers forked), what
    it carries is in the collector's oldest generation, not frozen: the young generations'
    passes do not scan it and a full pass still can. The watch runs that full pass when it
    is idle, once ``GC_EVERY_BUILDS`` builds ran since the last, never inside a build."""
    import gc

    from oracl.builder.incremental import Carry
    from oracl.face import watch as watch_mod

    root = _one_file_repo(tmp_path)
    build(root, **KW)
    carry = Carry()
    (root / "pkg" / "a.py").write_text("x = 3\n")
    assert gc.isenabled()
    build(root, carry=carry, executor_kind="processes")
    assert gc.isenabled() and gc.get_freeze_count() == 0
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(carry.facts) in oldest and all(id(f) in oldest for f in carry.facts.values()
                                             if gc.is_tracked(f))
    collected: list[int] = []
    monkeypatch.setattr(watch_mod, "GC_EVERY_BUILDS", 1)
    monkeypatch.setattr(watch_mod.gc, "collect", lambda *a: collected.append(1) or 0)
    sleep = _scripted(lambda: (root / "pkg" / "a.py").write_text("x = 4\n"), lambda: None, lambda: None,
                      lambda: (root / "pkg" / "a.py").write_text("x = 5\n"), idle=0.05)
    lines: list[str] = []
    assert watch_mod.watch(root, emit=lines.append, settle=0.0, interval=0.01, max_builds=2, sleep=sleep,
                           poll=True) == 2
    assert collected == [1]  # (idle once after the first build; the loop ends with the second)


def _cli_watch(root: Path, builds: int) -> subprocess.Popen[str]:
    """``oracl watch`` of ``root`` on file events, stopping after ``builds`` rebuilds."""
    from .conftest import ORACL

    return subprocess.Popen([ORACL, "watch", "-r", str(root), "--settle", "0.2", "--max-builds", str(builds)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "250"})


def test_watch_wakes_on_a_file_event_and_builds_what_changed(tmp_path: Path) -> None:
    """The CLI's watch, on real file events (inotify here): it says it waits on them, and
    one edit made after it started is one rebuild that reads that file."""

    root = _one_file_repo(tmp_path)
    build(root)  # the settings the CLI will use
    proc = _cli_watch(root, 1)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.rstrip().endswith("(fresh: the build matches the working tree; file events)"), first
        assert " warmed in " in proc.stdout.readline()
        (root / "pkg" / "a.py").write_text("x = 2  # edited\n")
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert len(lines) == 1 and "(1 file changed)" in lines[0], out
    assert "incremental: 2 reused, 1 read, 0 removed" in lines[0]


def test_a_watchs_second_build_takes_the_paths_its_file_events_named_into_the_last_walk(tmp_path: Path) -> None:
    """The CLI's watch on real file events: it warms its carry at start (the walk is
    recorded); a rebuild after its first look at the whole tree lists the files as the last
    build's walk with the paths its events named taken in (the health history says which),
    and reads the file edited."""

    root = _one_file_repo(tmp_path)
    build(root)
    proc = _cli_watch(root, 2)
    try:
        assert proc.stdout is not None
        assert "file events" in proc.stdout.readline()
        assert " warmed in " in proc.stdout.readline()
        (root / "pkg" / "a.py").write_text("x = 2  # edited\n")
        assert "(1 file changed)" in proc.stdout.readline()
        (root / "pkg" / "a.py").write_text("x = 3  # edited again\n")
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, err
    assert "incremental: 2 reused, 1 read, 0 removed" in out and "(1 file changed)" in out, out
    health = [orjson.loads(line) for line in (root / ".oracl" / "graph_health_history.jsonl").read_text().splitlines()]
    # (the first rebuild walks when the edit came before the watch's first look at the whole tree)
    assert health[0]["walk"] == "walked" and health[1]["walk"] in ("walked", "the last build's walk, 1 path taken in")
    assert health[2]["walk"] == "the last build's walk, 1 path taken in", health


def test_watch_events_ignore_the_vault_and_git_and_fall_back_to_polling(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """What may wake the watch, by path; and where file events cannot be had, it polls and
    its first line says why."""
    from oracl.face import watch as watching

    top = str(tmp_path / "r")
    assert [watching.ignored(top, f"{top}/{rel}") for rel in (
        "pkg/a.py", ".oracl/mirror/x.tmp/graph.kuzu", ".git/index", "pkg/.git/HEAD", ".gitignore", "docs/.oracle",
        "pkg/.git", ".git")] == [False, True, True, True, False, False, False, True]
    assert watching.ignored(top, str(tmp_path / "elsewhere.py")) and watching.ignored(top, str(tmp_path / "r2" / "a.py"))

    def no_events(root: Path, wake: float):  # type: ignore[no-untyped-def]
        raise OSError("OS file watch limit reached")
        yield True

    monkeypatch.setattr(watching, "_events", no_events)
    root = _one_file_repo(tmp_path)
    build(root, **KW)
    lines: list[str] = []
    sleep = _scripted(lambda: (root / "pkg" / "a.py").write_text("x = 5\n"), idle=0.01)
    assert watching.watch(root, emit=lines.append, settle=0.0, interval=0.01, max_builds=1, sleep=sleep) == 1
    assert lines[0].endswith("(fresh: the build matches the working tree; polling every 0.01 s: "
                             "file events unavailable (OS file watch limit reached))"), lines[0]
    assert " warmed in " in lines[1] and "(1 file changed)" in lines[2]


def test_ranks_from_the_second_process_are_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Large graphs rank their edges in a forked child: the export does not change."""
    from oracl.builder import orchestrator as builder

    root = _one_file_repo(tmp_path)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, full=True, now=t0, **KW)
    here = _canonical(root)
    monkeypatch.setattr(builder, "RANK_FORK_MIN_EDGES", 0)
    build(root, full=True, now=t0 + timedelta(seconds=1), **KW)
    assert _canonical(root) == here
    ranks = [e["association_rank"] for e in here["edges"]]
    assert len(ranks) == 4 and len(set(ranks)) == 4  # b→a imports, and three hub memberships


def test_watch_builds_a_tree_without_a_build_and_survives_a_failed_one(tmp_path: Path) -> None:
    from oracl.face.watch import watch

    root = _one_file_repo(tmp_path)
    sleep = _scripted(lambda: (root / "pyproject.toml").write_text("[tool.oracl]\nalpha = 'high'\n"),
                      lambda: None,
                      lambda: (root / "pyproject.toml").write_text("[tool.oracl]\nalpha = 0.4\n"))

    lines: list[str] = []
    assert watch(root, emit=lines.append, settle=0.0, interval=0.01, max_builds=3, sleep=sleep, poll=True) == 3
    assert lines[0].endswith("(no build yet; polling every 0.01 s)") and "full: no previous build" in lines[1]
    assert "build failed (1 file changed): " in lines[2] and "alpha" in lines[2]
    assert "incremental: 3 reused, 1 read, 0 removed" in lines[3]  # pyproject.toml itself
    assert len(lines) == 4


def test_watch_waits_for_a_build_it_cannot_lock_then_builds(tmp_path: Path) -> None:
    """Another build holds the lock: the watch says so, keeps the change, builds after."""
    from contextlib import ExitStack

    from oracl.bundle import provenance
    from oracl.face.watch import watch

    root = _one_file_repo(tmp_path)
    build(root, **KW)
    held = ExitStack()
    held.enter_context(provenance.build_lock(Vault(root)))
    sleep = _scripted(lambda: (root / "pkg" / "a.py").write_text("x = 3\n"), lambda: None, held.close)

    lines: list[str] = []
    assert watch(root, emit=lines.append, settle=0.0, interval=0.01, max_builds=1, sleep=sleep, poll=True) == 1
    assert "another build is running; trying again after it" in lines[1]
    assert "(1 file changed)" in lines[-1] and "1 read" in lines[-1]


SYMBOL_ROWS = {
    "Symbol": "MATCH (s:Symbol) RETURN s.id, s.name, s.qualified, s.kind, s.language, s.path, s.start_line, "
              "s.end_line, s.signature, s.doc, s.exported",
    "Defines": "MATCH (a:Artifact)-[:Defines]->(s:Symbol) RETURN a.path, s.id",
    "Contains": "MATCH (a:Symbol)-[:Contains]->(b:Symbol) RETURN a.id, b.id",
    "Calls": "MATCH (a:Symbol)-[e:Calls]->(b:Symbol) RETURN a.id, b.id, e.confidence, e.resolution, e.candidates, "
             "e.lines",
    "Inherits": "MATCH (a:Symbol)-[e:Inherits]->(b:Symbol) RETURN a.id, b.id, e.relation, e.confidence, "
                "e.resolution, e.candidates, e.line",
    "References": "MATCH (a:Symbol)-[e:References]->(b:Symbol) RETURN a.id, b.id, e.confidence, e.resolution, "
                  "e.candidates, e.line",
}


def _symbol_rows(root: Path) -> dict[str, list[str]]:
    """Every row of the symbol tables, and the name lookup as readers see it: every key
    SymbolName or SymbolNameDelta holds, with the ids ``symbol_ids`` finds by it."""
    from oracl.read.callgraph import symbol_ids
    from oracl.read.snapshot import Snapshot

    with Snapshot.open(root) as snap:
        out = {t: sorted(orjson.dumps(list(r.values())).decode() for r in snap.store.rows(q))
               for t, q in SYMBOL_ROWS.items()}
        keys = [r["key"] for r in snap.store.rows("MATCH (n:SymbolName) RETURN n.key AS key UNION "
                                                  "MATCH (d:SymbolNameDelta) RETURN d.key AS key")]
        out["SymbolName"] = sorted(orjson.dumps([k, ids]).decode() for k, ids in symbol_ids(snap, keys).items())
        return out


GRAPH_ROWS = {
    # (the ArtifactText row readers join, without its number: a patch appends rows, a full build numbers them 0)
    "Artifact": "MATCH (n:Artifact) RETURN n",
    "ArtifactText": "MATCH (a:Artifact) MATCH (n:ArtifactText {path: a.path}) WHERE n.n = a.text_n "
                    "RETURN n.path, n.id, n.checksum, n.tags, n.symbols, n.headings, n.detail, n.history",
    "Hub": "MATCH (n:Hub) RETURN n",
    # (the live rows: an update supersedes a full-text row, never deletes it)
    "History": "MATCH (n:History) WHERE n.live RETURN n.path, n.text",
    "Link": "MATCH (a:Artifact)-[e:Link]->(b:Artifact) RETURN a.path AS a, b.path AS b, e",
    "BelongsTo": "MATCH (a:Artifact)-[e:BelongsTo]->(b:Hub) RETURN a.path AS a, b.id AS b, e",
}


def _graph_rows(root: Path) -> dict[str, list[str]]:
    """Every row of the artifact graph's tables, every property (the engine's own ids left out)."""
    from oracl.read.snapshot import Snapshot

    def plain(v: object) -> object:
        return {k: plain(x) for k, x in v.items() if not k.startswith("_") and k != "text_n"} \
            if isinstance(v, dict) else v

    with Snapshot.open(root) as snap:
        return {t: sorted(orjson.dumps(plain(dict(r)), option=orjson.OPT_SORT_KEYS, default=str).decode()
                          for r in snap.store.rows(q)) for t, q in GRAPH_ROWS.items()}


def _full_rows_beside(root: Path, now: datetime, answer: bool = False, graph: bool = False) -> tuple[Any, ...]:
    """A full build of the same tree: (its export minus build id and time, its symbol
    tables' rows[, its full-text answer][, its artifact graph's rows]); the vault is then put back."""
    vault = root / ".oracl"
    saved = root.parent / "saved-vault"
    shutil.copytree(vault, saved, symlinks=True)
    build(root, full=True, now=now, **KW)
    out: tuple[Any, ...] = (orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root))
    if answer:
        out += (_answer(root),)
    if graph:
        out += (_graph_rows(root),)
    shutil.rmtree(vault)
    saved.rename(vault)
    return out


CALLERS = {
    "pkg/base.py": "class Base:\n    def total(self):\n        return 1\n\n\ndef helper(x):\n    return x\n",
    "pkg/cart.py": ("from pkg.base import Base, helper\n\n\nclass Cart(Base):\n    def add(self, x):\n"
                    "        return helper(x) + self.total()\n\n\ndef make_cart() -> Cart:\n    return Cart()\n"),
    "pkg/shop.py": ("from pkg.cart import make_cart\nfrom pkg.base import helper\n\n\ndef run(n):\n"
                    "    c = make_cart()\n    return c.add(n)\n"),
    "README.md": "# Shop\n",
}


def test_a_patch_writes_only_what_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A comment added after a file's last call moves no edge: the patch writes no edge and
    sets only the end line of the symbol whose lines grew (the module: only the columns that
    moved are set); a line added inside ``run`` (and the
    comment gone: the module is as long as before) sets ``run`` and updates the lines of the
    one call below it in place; a new call on a line that was there creates one edge and
    nothing else; a docstring added to ``run`` sets its doc and the lines of ``run`` and the
    module, and moves the calls below it; the docstring's words changed set the doc alone
    (a string column is set only when it changed: any SET of one grows the database file).
    Each build's rows equal a full build's. One bundle is kept, so each build patches a
    copy of the one before (with a standby, what is written is what moved since the
    standby's build: ``test_a_standby_is_updated_in_place``)."""
    from oracl.bundle import database
    from oracl.core import store
    from oracl.core.resources import query

    made = [f"symbols_patch_{op}{t}" for op in ("", "unlink_", "delete_") for t in database.PATCH_RELS]
    names = {query(n): n for n in (*(n for n in database.PATCH_SETS if n != database.LINES), *made,
                                   "symbols_patch_update_calls", "symbols_patch_update_inherits",
                                   "symbols_patch_update_references")}
    written: list[str] = []
    execute = store.Store.execute
    lines = "MATCH (n:Symbol {id: $id}) SET "  # (the lines that moved: ``database._set_numbers``)

    def spy(self: store.Store, statement: str, params: dict | None = None) -> object:
        if statement in names:
            written.append(names[statement])
        elif statement.startswith(lines):
            written.append("set " + ",".join(c.split(" = ")[0][2:] for c in statement[len(lines):].split(", ")))
        return execute(self, statement, params)

    monkeypatch.setattr(store.Store, "execute", spy)
    root = write_tree(tmp_path / "repo", CALLERS)
    for rel in CALLERS:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, keep_bundles=1, **KW)
    shop = CALLERS["pkg/shop.py"]
    longer = shop.replace("    c = make_cart()\n", "    c = make_cart()\n    n = n + 1\n")
    called = longer.replace("return c.add(n)", "return c.add(n) + c.total()")
    documented = called.replace("def run(n):\n", 'def run(n):\n    """Run the shop."""\n')
    edits = [(shop + "# the end\n", ["set end_line"]),
             (longer, ["set end_line", "symbols_patch_update_calls"]),
             (called, ["symbols_patch_calls"]),
             (documented, ["set end_line", "set end_line", "symbols_patch_set_doc",
                           "symbols_patch_update_calls", "symbols_patch_update_calls", "symbols_patch_update_calls"]),
             (documented.replace("Run the shop.", "Run the shop once."), ["symbols_patch_set_doc"])]
    for step, (text, said) in enumerate(edits, 1):
        (root / "pkg/shop.py").write_text(text)
        _stamp(root / "pkg/shop.py", step)
        written.clear()
        now = t0 + timedelta(minutes=2 * step)
        # (the full build kept the name tables: every rebuild reads them back)
        assert build(root, now=now, keep_bundles=1, **KW).symbols_mode == \
            "symbols: the rows of 1 changed file made again, the others reused; the name tables read back"
        assert sorted(written) == said, (step, written)
        rows = _symbol_rows(root)
        written.clear()
        assert rows == _full_rows_beside(root, now + timedelta(minutes=1))[1], step


def _db_bytes(root: Path) -> int:
    from oracl.core.vault import DB_FILE

    vault = Vault(root)
    return (vault.bundle(vault.read_latest()["bundle"]) / DB_FILE).stat().st_size


def _facts_header(root: Path) -> dict:
    vault = Vault(root)
    doc = orjson.loads((vault.bundle(vault.read_latest()["bundle"]) / FACTS_FILE).read_bytes())
    return {k: v for k, v in doc.items() if k != "facts"}


def test_a_database_that_outgrew_its_chain_makes_the_next_build_full(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Each incremental build records the size its chain's database had after the chain's
    full build; a previous database past ``MAX_GROWTH`` × that size (and ``MIN_GROWTH_BYTES``
    more) makes the build full, and the mode says why."""
    from oracl.builder import incremental

    root = write_tree(tmp_path / "repo", CALLERS)
    for rel in CALLERS:
        _stamp(root / rel, 0)
    build(root, **KW)
    full = _db_bytes(root)
    assert _facts_header(root)["chain"] == 0 and _facts_header(root)["base_db_bytes"] == 0

    def edit(step: int) -> str:
        (root / "pkg/shop.py").write_text(CALLERS["pkg/shop.py"] + f"# step {step}\n")
        _stamp(root / "pkg/shop.py", step)
        return build(root, **KW).mode

    assert edit(1) == "incremental: 3 reused, 1 read, 0 removed"
    assert (_facts_header(root)["chain"], _facts_header(root)["base_db_bytes"]) == (1, full)
    assert edit(2) == "incremental: 3 reused, 1 read, 0 removed"
    assert (_facts_header(root)["chain"], _facts_header(root)["base_db_bytes"]) == (2, full)
    now = _db_bytes(root)
    monkeypatch.setattr(incremental, "MAX_GROWTH", 0.5)
    monkeypatch.setattr(incremental, "MIN_GROWTH_BYTES", 0)
    assert edit(3) == (f"full: the database grew to {now / 2**20:,.0f} MB, {now / full:.2f} × its "
                       f"{full / 2**20:,.0f} MB after the last full build; rebuilt to reclaim the space")
    assert _facts_header(root)["chain"] == 0
    monkeypatch.setattr(incremental, "MAX_GROWTH", 1.5)
    rebuilt = _db_bytes(root)
    assert edit(4) == "incremental: 3 reused, 1 read, 0 removed"
    assert _facts_header(root)["base_db_bytes"] == rebuilt


@pytest.mark.parametrize("copy_min", [1500, 0])
def test_a_body_edit_patches_the_symbol_graph_and_equals_a_full_build(tmp_path: Path, copy_min: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Edits that keep every changed file's interface remake only those files' symbol rows
    (and patch the engine's symbol tables in place, edge by edge or, ``copy_min`` 0, by
    appending COPYs): the export, byte for byte, and every symbol table's rows equal a full
    build's, edit after edit; an edit that changes what other files' names resolve to, or a
    damaged symbols.seg, makes the pass whole."""
    from oracl.bundle import database

    monkeypatch.setattr(database, "PATCH_COPY_MIN", copy_min)
    root = write_tree(tmp_path / "repo", CALLERS)
    for rel in CALLERS:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    assert build(root, now=t0, **KW).symbols_mode == "symbols: whole (no previous build)"
    edits = [  # (file, new text, what the build says of its symbols)
        ("pkg/shop.py", CALLERS["pkg/shop.py"] + "    # and again\n    return helper(c.add(n))\n",
         "symbols: the rows of 1 changed file made again, the others reused; the name tables read back"),
        ("pkg/base.py", "class Base:\n\n    def total(self):\n        return helper(2)\n\n\n"
                        "def helper(x):\n    \"\"\"Now documented.\"\"\"\n    return x * 2\n",
         "symbols: the rows of 1 changed file made again, the others reused; the name tables read back"),
        ("pkg/cart.py", CALLERS["pkg/cart.py"] + "\n\ndef extra():\n    return make_cart()\n",
         "symbols: the name tables patched for 1 file that came, went or changed their interface; "
         "2 files' rows made again, 1 moved and 0 gone written (pkg/cart.py changed what other files' names "
         "resolve to)"),  # (cart.py; base.py, the standby's catch-up; not shop.py, which looks up no name
        # cart.py moved: ``moved_names``)
        ("pkg/shop.py", CALLERS["pkg/shop.py"].replace("c.add(n)", "c.total()"),  # (the tables the step
         "symbols: the rows of 1 changed file made again, the others reused; the name tables read back"),  # before patched)
        ("pkg/shop.py", '"""The shop."""\n' + CALLERS["pkg/shop.py"].replace("c.add(n)", "c.total()"),
         "symbols: the rows of 1 changed file made again, the others reused; the name tables read back"),  # its imports moved down
    ]
    for step, (rel, text, said) in enumerate(edits, 1):
        (root / rel).write_text(text)
        _stamp(root / rel, step)
        now = t0 + timedelta(minutes=2 * step)
        report = build(root, now=now, **KW)
        assert report.mode == "incremental: 3 reused, 1 read, 0 removed" and report.symbols_mode == said
        export, rows = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root)
        full_export, full_rows = _full_rows_beside(root, now + timedelta(minutes=1))
        assert export == full_export, f"step {step}: {_first_difference(orjson.loads(export), orjson.loads(full_export))}"
        assert rows == full_rows, f"step {step}: {[t for t in rows if rows[t] != full_rows[t]]}"
    calls = {tuple(orjson.loads(r)[:2]) for r in rows["Calls"]}
    assert ("pkg/shop.py#run", "pkg/base.py#Base.total") in calls and ("pkg/base.py#Base.total", "pkg/base.py#helper") in calls
    # a damaged symbols.seg: the pass is whole, and says why
    bundle = Vault(root).bundle(str(Vault(root).read_latest()["build_id"]))
    with open(bundle / "symbols.seg", "r+b") as fh:
        fh.seek(-3, os.SEEK_END)
        fh.write(b"!!!")
    (root / "pkg/shop.py").write_text(CALLERS["pkg/shop.py"])
    _stamp(root / "pkg/shop.py", 9)
    report = build(root, now=t0 + timedelta(minutes=30), **KW)
    assert report.symbols_mode == "symbols: whole (symbols.seg does not match its manifest)"
    assert orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS) == \
        _full_rows_beside(root, t0 + timedelta(minutes=31))[0]


# ---- the long run: 200 steps on a larger polyglot tree in git ------------------------------

POLY_DOMAINS = ("pkg", "pkg/sub", "web", "svc", "core", "docs", "tests", "configs")


def _poly_path(rng: random.Random, i: int) -> str:
    domain = rng.choice(POLY_DOMAINS)
    if domain == "docs":
        return f"docs/note_{i}.md"
    if domain == "configs":
        return f"configs/conf_{i}.yaml"
    if domain == "tests":
        return f"tests/test_mod_{i}.py"
    if domain == "web":
        return f"web/mod_{i}.{rng.choice(['js', 'ts'])}"
    if domain == "svc":
        return f"svc/mod_{i}.go"
    if domain == "core":
        return f"core/mod_{i}.{rng.choice(['rs', 'java'])}"
    return f"{domain}/mod_{i}.py"


def _poly_content(path: str, i: int, rng: random.Random, names: list[str]) -> str | bytes:
    """Each language's files define a function and call two others by name (resolved or
    not, depending on which files exist), and import a sibling module."""
    ext = path.rsplit(".", 1)[1]
    a, b = rng.randint(0, 60), rng.randint(0, 60)
    same = [n for n in names if n.endswith("." + ext) and n != path]
    other = rng.choice(same) if same else ""
    stem = other.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if ext in ("js", "ts"):
        imp = f"import {{ run_{a} }} from './{stem}';\n" if other else ""
        return f"{imp}// handles signing\nexport function run_{i}(x) {{\n  return run_{a}(x) + run_{b}(x);\n}}\n"
    if ext == "go":
        return (f"package svc\n\n// Run{i} handles export.\nfunc Run{i}(x int) int {{\n"
                f"\treturn Run{a}(x) + Run{b}(x)\n}}\n")
    if ext == "rs":
        use = f"use crate::{stem}::run_{a};\n\n" if other else ""
        return f"{use}/// Parses {i}.\npub fn run_{i}(x: i32) -> i32 {{\n    run_{a}(x) + run_{b}(x)\n}}\n"
    if ext == "java":
        return (f"package core;\n\n/** Cache {i}. */\npublic class Mod{i} {{\n    public int run(int x) {{\n"
                f"        return new Mod{a}().run(x) + Mod{b}.helper(x);\n    }}\n\n"
                f"    public static int helper(int x) {{\n        return x;\n    }}\n}}\n")
    return _content(path, i, rng, names)


def _poly_edit(root: Path, rng: random.Random, step: int, names: list[str]) -> set[str]:
    kind = rng.choice(("add", "modify", "modify", "modify", "delete", "rename", "move"))
    if kind == "add" or len(names) < 30:
        rel = _poly_path(rng, 1000 + step)
        write_tree(root, {rel: _poly_content(rel, step, rng, names)})
        _stamp(root / rel, step)
        names.append(rel)
        return {rel}
    rel = rng.choice(sorted(names))
    if kind == "modify":
        write_tree(root, {rel: _poly_content(rel, step, rng, names)})
        _stamp(root / rel, step)
        return {rel}
    names.remove(rel)
    if kind == "delete":
        (root / rel).unlink()
        return set()
    directory, name = rel.rsplit("/", 1)
    dst = f"{directory}/renamed_{step}_{name}"  # (a move keeps the extension's language)
    (root / rel).rename(root / dst)
    names.append(dst)
    return {dst}


def _commit(root: Path, step: int) -> None:
    stamp = f"@{1_767_225_600 + 3600 * step} +0000"  # commits an hour apart from 2026-01-01
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    for args in (["add", "-A", "--", ".", ":(exclude).oracl"], ["commit", "-q", "--allow-empty", "-m", f"step {step}: fix the signer"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


POLY_PACKAGE_INIT = "pkg/sub/__init__.py"
POLY_PACKAGE_STEPS = (20, 33, 40, 90, 100, 151, 160, 180)  # (outside the random choices: the run's edits stay its own)


def test_incremental_equals_full_over_200_steps_of_a_polyglot_tree_in_git(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """200 steps of one to three edits (adds, edits, deletes, renames; Python, JavaScript,
    TypeScript, Go, Rust, Java, Markdown, YAML, a language the tree did not have yet; a
    package's ``__init__.py`` coming and going, checked on the steps it does) with a
    commit every few steps and two branch switches (many files at once): every step reads
    only what changed; the first step, every 20th and the last, the export, the full-text
    answer and every symbol table equal a full build's and verify passes. Most builds take
    over the standby in place (design §7b), and no chain of incremental builds forces a
    full one. (The full-text indexes are made again whenever an update would hold a
    superseded row, as in the random-edits test, so the answers' scores are exact.)"""
    from oracl.bundle.verify import verify
    from oracl.core import derive

    monkeypatch.setattr(derive, "FTS_SUPERSEDED_MIN", 0)

    rng = random.Random(29)
    root = tmp_path / "repo"
    names: list[str] = []
    files: dict[str, str | bytes] = {}
    for i in range(120):
        rel = _poly_path(rng, i)
        if rel.startswith("core/"):  # Rust and Java arrive later: new languages mid-run
            rel = f"pkg/mod_{i}.py"
        files[rel] = _poly_content(rel, i, rng, names)
        names.append(rel)
    write_tree(root, files)
    for rel in names:
        _stamp(root / rel, 0)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, capture_output=True)
    _commit(root, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    languages_seen: set[str] = set()
    checked = 0
    modes: list[str] = []
    for step in range(1, 201):
        touched: set[str] | None = set()
        if step == 50:
            subprocess.run(["git", "-C", str(root), "branch", "side"], check=True, capture_output=True)
        if step in (60, 70):  # to the side branch (the tree of step 50) and back: many files at once
            _commit(root, step)
            subprocess.run(["git", "-C", str(root), "checkout", "-q", "side" if step == 60 else "main"], check=True,
                           capture_output=True)
            names[:] = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                              if p.is_file() and not {".git", ".oracl"} & set(p.relative_to(root).parts))
            touched = None
        else:
            for _ in range(rng.randint(1, 3)):
                touched |= _poly_edit(root, rng, step, names)
            touched &= set(names)
            if step in POLY_PACKAGE_STEPS:  # (a package's __init__.py comes or goes, beside the step's edits)
                init = root / POLY_PACKAGE_INIT
                if init.exists():
                    init.unlink()
                    names[:] = [n for n in names if n != POLY_PACKAGE_INIT]
                    touched.discard(POLY_PACKAGE_INIT)
                else:
                    write_tree(root, {POLY_PACKAGE_INIT: ""})
                    _stamp(init, step)
                    touched.add(POLY_PACKAGE_INIT)
        if step % 3 == 0:
            _commit(root, step)
        now = t0 + timedelta(minutes=2 * step)
        report = build(root, now=now, **KW)
        # the one full build allowed: the database past its growth bound (Kùzu 0.11.3 reuses
        # few freed pages: this 20 MB database grows ~0.35 MB a build), rebuilt to give it back
        compacted = report.mode.startswith("full: the database grew to ")
        assert report.mode.startswith("incremental") or compacted, (step, report.mode)
        assert touched is None or compacted or report.files_read == len(touched), (step, report.mode)
        modes.append(report.database_mode)
        languages_seen |= set(report.languages)
        if step % 20 and step != 200 and step != 1:
            continue
        checked += 1
        export, rows, answer = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root), _answer(root)
        full_export, full_rows, full_answer = _full_rows_beside(root, now + timedelta(minutes=1), answer=True)
        assert export == full_export, f"step {step}: {_first_difference(orjson.loads(export), orjson.loads(full_export))}"
        assert rows == full_rows, f"step {step}: {[(t, sorted(set(rows[t]) ^ set(full_rows[t]))[:6]) for t in rows if rows[t] != full_rows[t]]}"
        assert answer == full_answer, f"step {step}: the full-text answers differ: {answer} vs {full_answer}"
        assert verify(root)[0].startswith("latest: ")
    assert checked == 11
    assert {"python", "javascript", "typescript", "go", "rust", "java", "markdown", "yaml"} <= languages_seen, languages_seen
    assert sum(m.startswith("database: the standby updated in place") for m in modes) > 150, sorted(set(modes))
    doc = _canonical(root)
    count = subprocess.run(["git", "-C", str(root), "rev-list", "--count", "HEAD"], check=True, capture_output=True,
                           text=True).stdout
    assert doc["schema"]["history"]["commits"] == int(count) > 50  # (the side branch's commits are not on main)
    assert any(e["relation"] == "co_change" for e in doc["edges"])


def test_a_commit_moves_only_the_rows_and_runs_of_the_files_it_changed(tmp_path: Path) -> None:
    """A commit moves the history of the files it changed (their commit messages, the
    co-change edges among them) and nothing else while HEAD's time stays in the same 30
    days: the next build weighs around that move — no pass over every node's structure,
    no ranking of every edge — and equals a full build. So do a rename (the history's
    edges of the file and its partners move) and an edit on top of a commit. When the
    latest's history cannot be had again (its kept log and the history it parsed it into
    both damaged), every node is weighed, and the build still equals a full one."""
    from oracl.builder import orchestrator
    from oracl.core.parts import store_of

    files = {f"pkg/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(8)}  # (no edges between them)
    # (and enough other files that the export's groups of rows are not all one with a hub's,
    # which is always written again)
    others = {f"lib/u{i}.py": f"U{i} = {i}\n" for i in range(48)}
    root = write_tree(tmp_path / "repo", {**files, **others, "README.md": "# pkg\n"})
    for rel in (*files, *others, "README.md"):
        _stamp(root / rel, 0)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, capture_output=True)
    _commit(root, 0)
    for step, pair in ((1, (1, 2)), (2, (1, 2)), (3, (3, 4)), (4, (3, 4)), (5, (3, 5))):  # co-change pairs
        for i in pair:
            (root / f"pkg/m{i}.py").write_text(files[f"pkg/m{i}.py"] + f"# {step}\n")
            _stamp(root / f"pkg/m{i}.py", step)
        _commit(root, step)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    co = [e for e in _canonical(root)["edges"] if e["relation"] == "co_change"]
    assert len(co) == 4  # (m1 ↔ m2, m3 ↔ m4: the first commit is a sweep, m3 ↔ m5 one commit)

    def step(n: int, change: Callable[[], None], commit: bool) -> BuildReport:
        change()
        if commit:
            _commit(root, n)
        report = build(root, now=t0 + timedelta(minutes=n), **KW)
        assert report.mode.startswith("incremental"), report.mode
        export, graph = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _graph_rows(root)
        full, _, full_graph = _full_rows_beside(root, t0 + timedelta(minutes=n, seconds=30), graph=True)
        assert export == full, f"step {n}: {_first_difference(orjson.loads(export), orjson.loads(full))}"
        assert graph == full_graph, f"step {n}: the database's rows differ"
        return report

    def edit(*names: str) -> Callable[[], None]:
        def change() -> None:
            for rel in names:
                with open(root / rel, "a") as fh:
                    fh.write("# more\n")
        return change

    # a commit of an edit the latest build already read: only m6's messages move
    step(6, edit("pkg/m6.py"), commit=False)
    r = step(7, lambda: None, commit=True)
    assert r.weigh_mode == "weigh: the structure is the latest's, 0 files' edges compared", r.weigh_mode
    assert [n["history"] for n in _canonical(root)["nodes"] if n.get("path") == "pkg/m6.py"][0].startswith("step 7: ")
    # a second commit of m3 and m5 (and m7), of edits built before: their pair reaches
    # MIN_SUPPORT, an edge each way, in files not read again; m7's messages move, not its edges
    step(8, edit("pkg/m3.py", "pkg/m5.py", "pkg/m7.py"), commit=False)
    r = step(9, lambda: None, commit=True)
    assert r.weigh_mode == ("weigh: around the move: 2 files' edges moved; 3 nodes' structure and 3 files' edge "
                            "ranks made again (the history's edges of 2 files moved)"), r.weigh_mode
    # a rename, not committed: m4 leaves the history (its pair with m3 goes), m4b has none
    r = step(10, lambda: (root / "pkg/m4.py").rename(root / "pkg/m4b.py"), commit=False)
    assert r.weigh_mode.startswith("weigh: around the move:") and "1 came and 1 went" in r.weigh_mode, r.weigh_mode

    def damage(entry: str) -> None:  # (a byte flipped in the part the latest's stat.bin names under entry)
        stat = orjson.loads((Vault(root).bundle(Vault(root).read_latest()["bundle"]) / "stat.bin").read_bytes())
        part = store_of(root / ".oracl").path(stat[entry][0])
        data = bytearray(part.read_bytes())
        data[len(data) // 2] ^= 1
        part.write_bytes(bytes(data))

    # the latest's kept log damaged: its history is read back from what it parsed it into
    damage(orchestrator.GIT_LOG)
    r = step(11, edit("pkg/m6.py"), commit=True)
    assert r.weigh_mode == "weigh: the structure is the latest's, 1 file's edges compared", r.weigh_mode
    # both damaged: the latest's history cannot be had again, every node is weighed
    damage(orchestrator.GIT_LOG)
    damage(orchestrator.HISTORY_PART)
    r = step(12, edit("pkg/m6.py"), commit=True)
    assert r.weigh_mode.startswith("weigh: every node's structure worked out") \
        and "(the history moved and the latest's could not be had again)" in r.weigh_mode, r.weigh_mode


def test_an_artifacts_moving_strings_are_appended_never_set_nor_deleted(tmp_path: Path) -> None:
    """A changed file's strings (id, checksum, tags, symbols, …) go into a new ArtifactText
    row numbered one past the database's largest, and the artifact's ``text_n`` points at
    it; the old row stays (a SET of a string rewrites its whole column at the checkpoint,
    and deletes disturbed a rel's list property in Kùzu 0.11.3). Each of the two databases
    numbers its own rows: the third build brings the first build's database up to date."""
    from oracl.read.snapshot import Snapshot

    root = write_tree(tmp_path / "repo", CALLERS)
    for rel in CALLERS:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)

    def held() -> tuple[list[str], dict[str, int], str]:
        with Snapshot.open(root) as snap:
            keys = [r["k"] for r in snap.store.rows("MATCH (t:ArtifactText) RETURN t.key AS k ORDER BY k")]
            numbers = {r["p"]: r["n"] for r in snap.store.rows("MATCH (a:Artifact) RETURN a.path AS p, a.text_n AS n")}
            served = snap.named("artifact_by_path", {"path": "pkg/shop.py"})[0]
            return keys, numbers, served["checksum"]

    def edit(step: int, text: str) -> str:
        (root / "pkg/shop.py").write_text(text)
        _stamp(root / "pkg/shop.py", step)
        build(root, now=t0 + timedelta(minutes=2 * step), **KW)
        return hashlib.sha256(text.encode()).hexdigest()

    base = ["README.md|0", "pkg/base.py|0", "pkg/cart.py|0", "pkg/shop.py|0"]
    assert held()[:2] == (base, dict.fromkeys(CALLERS, 0))
    shop = CALLERS["pkg/shop.py"]
    first = edit(1, shop.replace("return c.add(n)", "return c.add(n) + c.total()"))
    assert held() == (base + ["pkg/shop.py|1"], {**dict.fromkeys(CALLERS, 0), "pkg/shop.py": 1}, first)
    second = edit(2, shop + "\n# a comment\n")  # (the first build's database, behind by the edit before)
    assert held() == (base + ["pkg/shop.py|1"], {**dict.fromkeys(CALLERS, 0), "pkg/shop.py": 1}, second)
    assert first != second


def test_a_standby_is_updated_in_place(tmp_path: Path) -> None:
    """The first rebuild takes over the full build's spare copy of its database; the second
    the bundle the latest build started from (the standby): its database moves into the
    new bundle, nothing is copied, and the file the
    standby is behind on (edited by the build before) is caught up with the one just
    edited: the export, the symbol rows and the full-text answer equal a full build's, and
    verify passes. A reader holding the standby, or a standby whose database is not the one
    its manifest seals, makes the build patch a copy of the latest instead."""
    import fcntl

    from oracl.bundle.verify import verify
    from oracl.core.vault import DB_FILE, READERS_LOCK

    root = write_tree(tmp_path / "repo", CALLERS)
    for rel in CALLERS:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    vault = Vault(root)
    first = build(root, now=t0, **KW)
    assert first.database_mode == "database: made from scratch"

    def edit(step: int, rel: str, text: str) -> Any:
        (root / rel).write_text(text)
        _stamp(root / rel, step)
        return build(root, now=t0 + timedelta(minutes=2 * step), **KW)

    shop = CALLERS["pkg/shop.py"]
    # the full build left a copy of its database beside it (its spare): the first rebuild
    # brings it up to date in place, nothing to catch up, and the spare's folder goes
    spare = Path(first.bundle_path + "-spare")
    spare_inode = (spare / DB_FILE).stat().st_ino
    one = edit(1, "pkg/shop.py", shop.replace("return c.add(n)", "return c.add(n) + c.total()"))
    assert one.database_mode == "database: the standby updated in place (0 more files caught up)", one.database_mode
    assert not spare.exists() and (Path(one.bundle_path) / DB_FILE).stat().st_ino == spare_inode
    standby = Path(first.bundle_path)
    inode = (standby / DB_FILE).stat().st_ino
    two = edit(2, "pkg/base.py", CALLERS["pkg/base.py"].replace("return x", '"""Twice."""\n    return x * 2'))
    assert two.database_mode == ("database: the standby updated in place (1 more file caught up, known to the "
                                 "latest build)"), two.database_mode
    assert two.mode == "incremental: 3 reused, 1 read, 0 removed"
    assert not standby.exists() and (Path(two.bundle_path) / DB_FILE).stat().st_ino == inode  # moved, not copied
    assert Path(one.bundle_path).is_dir()  # the latest build's bundle is only read
    now = t0 + timedelta(minutes=5)
    export, rows, answer = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root), _answer(root)
    assert (export, rows, answer) == _full_rows_beside(root, now, answer=True)
    assert verify(root)[0].startswith("latest: ")
    # a reader holding the standby (the bundle of build one): a copy of the latest
    held = os.open(Path(one.bundle_path) / READERS_LOCK, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_SH)
        three = edit(3, "pkg/shop.py", shop + "# three\n")
    finally:
        os.close(held)
    assert three.database_mode == "database: a copy of the latest (a reader holds the standby)"
    # a standby whose database moved after it was sealed (the bundle of build two)
    os.utime(Path(two.bundle_path) / DB_FILE, ns=(1, 1))
    four = edit(4, "pkg/shop.py", shop + "# four\n")
    assert four.database_mode == ("database: a copy of the latest (the standby's database is not the one its "
                                  "manifest seals)")
    five = edit(5, "pkg/cart.py", CALLERS["pkg/cart.py"] + "# five\n")
    assert five.database_mode == ("database: the standby updated in place (1 more file caught up, known to the "
                                  "latest build)")
    export, rows, answer = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root), _answer(root)
    assert (export, rows, answer) == _full_rows_beside(root, t0 + timedelta(minutes=11), answer=True)
    assert verify(root)[0].startswith("latest: ")
    assert len([p for p in vault.mirror.iterdir() if p.is_dir()]) == 2


def test_a_one_file_change_writes_one_facts_shard(tmp_path: Path) -> None:
    """The facts are kept in shards by path: an edit writes the edited file's shard and
    the head, and hard-links every other shard from the bundle before (the manifest takes
    their digests as that build checked them); a shard with one flipped bit makes the
    next build full, and says why."""
    from oracl.builder.incremental import SHARDS, shard_name

    files = {f"pkg/m{i}.py": f"x = {i}\n" for i in range(80)}
    root = write_tree(tmp_path / "r", files)
    for rel in files:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    first = Path(build(root, now=t0, **KW).bundle_path)
    shards = sorted(p.name for p in first.glob("facts.*.bin"))
    assert shards == sorted({shard_name(rel) for rel in files}) and 30 < len(shards) <= SHARDS
    (root / "pkg/m7.py").write_text("x = 700\n")
    _stamp(root / "pkg/m7.py", 1)
    second = Path(build(root, now=t0 + timedelta(minutes=2), **KW).bundle_path)
    moved = [n for n in shards if (second / n).stat().st_ino != (first / n).stat().st_ino]
    assert moved == [shard_name("pkg/m7.py")]
    manifest = orjson.loads((second / "manifest.json").read_bytes())["files"]
    assert all(manifest[n] == hashlib.sha256((second / n).read_bytes()).hexdigest() for n in shards)
    data = bytearray((second / moved[0]).read_bytes())
    data[len(data) // 2] ^= 1
    (second / moved[0]).write_bytes(bytes(data))
    (root / "pkg/m8.py").write_text("x = 800\n")  # (with nothing changed the build is up to date: no shard read)
    _stamp(root / "pkg/m8.py", 2)
    assert build(root, now=t0 + timedelta(minutes=4), **KW).mode == "full: the facts cache does not match its manifest"



def test_the_call_sites_and_symbol_details_are_decoded_only_when_read(tmp_path: Path) -> None:
    """``incremental.LazyFacts``: a shard row holds a file's stat, ids, language and tags;
    its other fields and its call sites and symbol details are two JSON documents after
    the rows, left as bytes until one of their fields is read. The facts read back equal
    what reading the file gives (both ways round), survive pickling and
    ``dataclasses.replace``, encode to the very bytes of their shard, and a row that
    points outside its shard is refused."""
    import dataclasses
    import pickle

    from oracl.builder.incremental import (
        LazyFacts,
        decode_head,
        decode_shard,
        encode_shard,
        read_facts,
        shard_name,
    )
    from oracl.builder.pipeline.discover import read_one
    from oracl.core.config import Config

    files = {"pkg/calls.py": "import os\n\n\ndef run(x):\n    return os.path.join(x, helper(x))\n\n\n"
                             "def helper(x):\n    return x\n",
             "README.md": "# nothing to call\n", "empty.txt": ""}
    root = write_tree(tmp_path / "r", files)
    bundle = Path(build(root, **KW).bundle_path)
    facts = read_facts(bundle, decode_head((bundle / FACTS_FILE).read_bytes()))
    lazy, readme, plain = facts["pkg/calls.py"], facts["README.md"], facts["empty.txt"]
    assert type(lazy) is LazyFacts and type(readme) is LazyFacts and type(plain) is not LazyFacts  # (nothing lazy)
    for name in ("calls", "symbols", "imports", "line_count"):
        with pytest.raises(AttributeError):
            object.__getattribute__(lazy, name)  # not decoded yet
    assert object.__getattribute__(lazy, "checksum") == lazy.checksum  # (a row's field: decoded)
    assert readme.headings == (("nothing to call", 1, 1, 1),) and readme.line_count == 1
    with pytest.raises(AttributeError):
        object.__getattribute__(readme, "symbol_details")  # (one document read, not the other)
    assert lazy.imports == (("os", (), 0, 1, 1),) and isinstance(lazy.symbols[0], tuple)
    fresh, _ = read_one(os.path.realpath(root), "pkg/calls.py", Config())
    assert fresh.calls == (("helper", 5), ("path.join", 5)) and lazy.calls == fresh.calls
    assert [d[0] for d in lazy.symbol_details] == ["run", "helper"]
    assert lazy == fresh and fresh == lazy and not lazy != fresh
    shard = (bundle / shard_name("pkg/calls.py")).read_bytes()
    again = decode_shard(shard)
    assert encode_shard(list(again.values())) == shard  # (the undecoded bytes written back as read)
    assert pickle.loads(pickle.dumps(again["pkg/calls.py"])) == fresh
    moved = dataclasses.replace(decode_shard(shard)["pkg/calls.py"], line_count=99)
    assert moved.calls == fresh.calls and moved.line_count == 99 and moved != fresh
    rows, _, blob = shard.partition(b"\n")
    for i, value in ((-1, len(blob) + 1), (-3, len(blob) + 1), (-2, -1), (-4, 0.5), (-1, "1")):
        bad = orjson.loads(rows)  # (past the end, before the start, an offset that is no int)
        bad[0][i] = value
        with pytest.raises(ValueError, match="outside its shard"):
            decode_shard(orjson.dumps(bad) + b"\n" + blob)
    with pytest.raises(ValueError, match="another layout"):  # (a row short of its offsets)
        decode_shard(orjson.dumps([orjson.loads(rows)[0][:-1]]) + b"\n" + blob)


def test_a_long_lived_builders_interface_document_is_patched_for_the_files_read_again(tmp_path: Path) -> None:
    """``interface.interface_again``: the last document patched for the files read again
    equals the one ``interface`` makes of every file, when a file gains and loses uses of
    outside code; a file that came, a type name that came or went, or a manifest that now
    declares a package leaves it to ``interface`` (None)."""
    from oracl.builder.pipeline.discover import read_one
    from oracl.builder.pipeline.interface import interface, interface_again, type_counts
    from oracl.core.config import Config

    root = write_tree(tmp_path / "r", {
        "pkg/a.py": "import requests\n\n\ndef get(u):\n    return requests.get(u)\n",
        "pkg/b.py": "class Model:\n    pass\n",
        "pkg/c.py": "from pkg.b import Model\n\n\ndef make():\n    return Model()\n"})
    real = os.path.realpath(root)

    def facts_of(*paths: str) -> dict[str, Any]:
        return {p: read_one(real, p, Config())[0] for p in paths}

    before = facts_of("pkg/a.py", "pkg/b.py", "pkg/c.py")
    memo: dict[str, Any] = {}
    first = interface(root, list(before.values()), memo, type_counts(list(before.values())))
    assert list(first["files"]) == ["pkg/a.py"]
    # c.py gains a use of outside code, a.py loses its own
    (root / "pkg/c.py").write_text("import click\n\n\ndef make():\n    click.echo('x')\n")
    (root / "pkg/a.py").write_text("def get(u):\n    return u\n")
    now = {**before, **facts_of("pkg/a.py", "pkg/c.py")}
    types = type_counts(list(now.values()))
    again = interface_again(root, memo, ["pkg/a.py", "pkg/c.py"], [], now, before, types)
    assert again is not None
    assert again == interface(root, list(now.values()), None, types)
    assert list(again["files"]) == ["pkg/c.py"] and again["files"]["pkg/c.py"]["calls"] == [["click.echo", 5, 0]]
    # a type name that goes: the document is made by ``interface``
    (root / "pkg/b.py").write_text("def model():\n    return 1\n")
    later = {**now, **facts_of("pkg/b.py")}
    assert interface_again(root, memo, ["pkg/b.py"], [], later, now, type_counts(list(later.values()))) is None
    # a file that came, and a file gone
    assert interface_again(root, memo, ["pkg/d.py"], [], {**now, "pkg/d.py": now["pkg/a.py"]}, now, types) is None
    assert interface_again(root, memo, [], ["pkg/b.py"], now, now, types) is None
    # a manifest that now declares a package (its imports are then the repository's own)
    (root / "pyproject.toml").write_text('[project]\nname = "click"\n')
    assert interface_again(root, memo, ["pkg/c.py"], [], now, now, types) is None


def test_type_names_are_counted_from_the_latest_without_decoding_unchanged_files(tmp_path: Path) -> None:
    """``interface.type_counts``: the repository's type names counted once in a full
    build, then from the latest's counts, reading only the files whose facts are not the
    latest's very objects: the others' symbols stay undecoded. The counts and the
    ``interface.json`` document equal those made from every file."""
    import dataclasses

    from oracl.builder.incremental import decode_head, read_facts
    from oracl.builder.pipeline.discover import read_one
    from oracl.builder.pipeline.interface import interface, latest_memo, type_counts
    from oracl.core.config import Config

    files = {"pkg/a.py": "class A:\n    pass\n\n\nclass B:\n    pass\n",
             "pkg/b.py": "class A:\n    pass\n",
             "pkg/c.py": "import os\n\n\ndef run(x):\n    return os.path.join(x, 'y')\n",
             "README.md": "# types\n"}
    root = write_tree(tmp_path / "r", files)
    bundle = Path(build(root, **KW).bundle_path)

    def latest() -> dict[str, Any]:
        return dict(read_facts(bundle, decode_head((bundle / FACTS_FILE).read_bytes())))

    whole = type_counts(list(latest().values()))
    assert whole == {"A": 2, "B": 1}  # (by hand: A in a.py and b.py, B in a.py)
    (root / "pkg/b.py").write_text("class C:\n    pass\n")
    fresh_b, _ = read_one(os.path.realpath(root), "pkg/b.py", Config())
    before = latest()
    now = [before["pkg/a.py"], fresh_b, before["pkg/c.py"], before["README.md"]]
    assert type_counts(now, (whole, before)) == {"A": 1, "B": 1, "C": 1}
    for path in ("pkg/a.py", "pkg/c.py", "README.md"):
        with pytest.raises(AttributeError):
            object.__getattribute__(before[path], "symbols")  # (not decoded: the latest's very object)
    assert type_counts([dataclasses.replace(f) for f in now]) == {"A": 1, "B": 1, "C": 1}  # (each file read)
    gone = [before["pkg/a.py"], before["README.md"]]  # b.py and c.py removed
    assert type_counts(gone, (whole, latest())) == {"A": 1, "B": 1}
    # a long-lived builder's: only the paths it read again or saw go are looked at (a path
    # named whose facts are the latest's very object counts for nothing)
    by_path = {f.path: f for f in now}
    assert type_counts(now, (whole, before), (["pkg/b.py", "pkg/c.py"], by_path)) == {"A": 1, "B": 1, "C": 1}
    assert type_counts(gone, (whole, before), (["pkg/b.py", "pkg/c.py"], {f.path: f for f in gone})) == \
        {"A": 1, "B": 1}
    assert whole == {"A": 2, "B": 1}  # (the counts given are not changed)
    # the document made from the latest's uses and these counts equals one made from scratch
    doc = interface(root, now, None)
    memo = latest_memo(bundle, "", latest()) or {}
    memo["basis"] = ""
    again = latest()
    kept = [again["pkg/a.py"], fresh_b, again["pkg/c.py"], again["README.md"]]
    assert interface(root, kept, memo, type_counts(kept, (whole, again))) == doc


def test_a_facts_cache_of_another_format_says_so(tmp_path: Path) -> None:
    """After an upgrade that changes the facts' layout the build is full, and says why in
    the words the settings' changes use (it said "unreadable")."""
    from oracl.builder.incremental import FORMAT

    root = write_tree(tmp_path / "r", {"m.py": "x = 1\n"})
    _stamp(root / "m.py", 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    bundle = Path(build(root, now=t0, **KW).bundle_path)
    head = orjson.loads((bundle / FACTS_FILE).read_bytes())
    head["format"] = FORMAT - 1
    data = orjson.dumps(head)
    (bundle / FACTS_FILE).write_bytes(data)
    manifest = orjson.loads((bundle / "manifest.json").read_bytes())
    manifest["files"][FACTS_FILE] = hashlib.sha256(data).hexdigest()
    (bundle / "manifest.json").write_bytes(orjson.dumps(manifest))
    (root / "m.py").write_text("x = 2\n")
    _stamp(root / "m.py", 1)
    assert build(root, now=t0 + timedelta(minutes=2), **KW).mode == \
        "full: the cache format changed since the previous build"


def _built_tree(tmp_path: Path, files: dict[str, str]) -> tuple[Path, datetime]:
    """``files`` written under ``tmp_path/repo``, their mtimes stamped, built once:
    (root, the build's time)."""
    root = write_tree(tmp_path / "repo", files)
    for rel in files:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    return root, t0


def _chain_tree(tmp_path: Path, n: int) -> tuple[Path, dict[str, str], datetime]:
    """``n`` Python files, each importing the next (the last the first), built once:
    (root, files, the build's time)."""
    files = {f"pkg/m{i}.py": f"import pkg.m{(i + 1) % n}\n\n\ndef f{i}(x):\n    return x + {i}\n" for i in range(n)}
    root, t0 = _built_tree(tmp_path, files)
    return root, files, t0


def _as_full_build(root: Path, now: datetime, step: int) -> BuildReport:
    """Asserts the export and every graph table row a full build of the same tree (at
    ``now``) makes equal the latest's; the vault is then put back. The full build's report."""
    rows, export, structure = _graph_rows(root), _canonical(root), _structure_recorded(root)
    vault, saved = root / ".oracl", root.parent / "saved-vault"
    shutil.copytree(vault, saved, symlinks=True)
    full = build(root, full=True, now=now, **KW)
    assert _canonical(root) == export, (step, _first_difference(export, _canonical(root)))
    assert _graph_rows(root) == rows, step
    # (the structure's key and sum the next build proves against: however this build had them)
    assert _structure_recorded(root) == structure, step
    shutil.rmtree(vault)
    saved.rename(vault)
    return full


def _structure_recorded(root: Path) -> tuple[str, str]:
    """The latest's ``stat.bin`` record of its structure: (its key, its sum)."""
    vault = Vault(root)
    doc = orjson.loads((vault.bundle(vault.read_latest()["bundle"]) / "stat.bin").read_bytes())
    return doc["structure_sha256"], doc["structure_sum"]


def _interface_doc(root: Path) -> dict:
    vault = Vault(root)
    return orjson.loads((vault.bundle(vault.read_latest()["bundle"]) / "interface.json").read_bytes())


def test_a_kept_symbol_table_gives_a_full_builds_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived builder keeps the symbol resolver's tables: an edit that keeps every
    name (lines moved, bodies and calls changed) declares only the edited files again, and
    the export is a full build's; an edit that renames a symbol has those tables patched
    (``resolve_again``, given the builder's own tables: none read back, none made whole)."""
    from oracl.builder import incremental, orchestrator, resident

    kept: list[bool] = []
    real = orchestrator.symbol_graph

    def spy(facts, idx, only=None, table=None, fork=None):  # type: ignore[no-untyped-def]
        kept.append(table is not None)
        return real(facts, idx, only, table, fork)

    monkeypatch.setattr(orchestrator, "symbol_graph", spy)
    patched: list[bool] = []  # (resolve_again's: whether it was given the builder's own tables)
    real_resolve = orchestrator.resolve_again
    monkeypatch.setattr(orchestrator, "resolve_again",
                        lambda *a: patched.append(a[9] is not None) or real_resolve(*a))  # type: ignore[func-returns-value]
    again: list[set[str] | None] = []
    real_again = resident.edges_to_make
    monkeypatch.setattr(resident, "edges_to_make",
                        lambda *a: again.append(real_again(*a)) or again[-1])  # type: ignore[func-returns-value]
    reached: list[bool] = []
    real_reach = orchestrator.standby_reach
    monkeypatch.setattr(orchestrator, "standby_reach",
                        lambda *a: reached.append((x := real_reach(*a)) is not None) or x)  # type: ignore[func-returns-value]
    reweighed: list[bool] = []
    real_reweigh = orchestrator.reweigh
    monkeypatch.setattr(orchestrator, "reweigh",
                        lambda *a: reweighed.append((g := real_reweigh(*a)) is not None) or g)  # type: ignore[func-returns-value]
    files = {
        "docs/a.md": "# A\n\nSee [usage](b.md#usage) and [b](b.md).\n",
        "docs/b.md": "# B\n\n## Usage\n\nRun it.\n",
        "svc/types.go": "package svc\n\ntype Store struct{ n int }\n\nfunc New() *Store { return &Store{} }\n",
        "svc/methods.go": "package svc\n\nfunc (s *Store) Get() int { return s.n }\n\n"
                          "func (s *Store) Put(v int) { s.n = v; s.Get() }\n",
        "svc/use.go": "package svc\n\nfunc Use() int { s := New(); s.Put(1); return s.Get() }\n",
        "pkg/base.py": "class Base:\n    def step(self):\n        return 1\n",
        "pkg/child.py": "from pkg.base import Base\n\n\nclass Child(Base):\n    def run(self):\n"
                        "        return self.step()\n",
        "pkg/use.py": "from pkg.child import Child\n\n\ndef main():\n    return Child().run()\n",
        "pkg/a.py": "class A:\n    def go(self):\n        return 1\n",
        "pkg/b.py": "class B:\n    def go(self):\n        return 2\n",
        "pkg/two.py": "from pkg.a import A\nfrom pkg.b import B\n\n\ndef one():\n    s = A()\n    return s.go()\n\n\n"
                      "def two():\n    s = B()\n    return s.go()\n",
        "pkg/ext.py": "import json\n\n\ndef dump(x):\n    return json.dumps(x)\n",
        "c/add.h": "int add(int a, int b);\n",
        "c/add.c": "#include \"add.h\"\n\nint add(int a, int b) { return a + b; }\n",
        "c/main.c": "#include \"add.h\"\n\nint main(void) { return add(1, 2); }\n",
    }
    root = write_tree(tmp_path / "repo", files)
    for rel in files:
        _stamp(root / rel, 0)
    carry = incremental.Carry()
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    assert build(root, now=t0, carry=carry, **KW).mode == "full: no previous build"
    assert carry.symbol_table is not None
    edits = [  # (path, new text, a kept table serves the build, the files whose edges are made again)
        ("svc/types.go", "package svc\n\n// Store holds n.\n// (two lines more)\ntype Store struct{ n int }\n\n"
                         "func New() *Store { return &Store{n: 1} }\n", True, {"svc/types.go"}),
        ("svc/methods.go", "package svc\n\n\nfunc (s *Store) Get() int { return s.n + 1 }\n\n"
                           "func (s *Store) Put(v int) { s.n = v }\n", True, {"svc/methods.go"}),
        ("pkg/base.py", "\n\nclass Base:\n    \"\"\"The base.\"\"\"\n\n    def step(self):\n        return 2\n", True,
         {"pkg/base.py", "pkg/child.py"}),  # (the import of Base names its lines)
        ("pkg/child.py", "from pkg.base import Base\n\n\nclass Child(Base):\n    def run(self):\n"
                         "        x = self.step()\n        return x + self.step()\n", True, {"pkg/child.py", "pkg/use.py"}),
        ("pkg/two.py", "\"\"\"Two.\n\nThree lines more.\n\"\"\"\nfrom pkg.a import A\nfrom pkg.b import B\n\n\n"
                       "def one():\n    s = A()\n    return s.go()\n\n\ndef two():\n    s = B()\n    return s.go()\n", True,
         {"pkg/two.py"}),
        ("c/add.c", "#include \"add.h\"\n\n/* adds */\nint add(int a, int b) {\n  return b + a;\n}\n", True, {"c/add.c"}),
        ("docs/b.md", "# B\n\nMore words.\n\nAnd more.\n\n## Usage\n\nRun it.\n", True, {"docs/a.md", "docs/b.md"}),
        ("docs/b.md", "# B\n\n## Running\n\nRun it.\n", True,
         {"docs/a.md", "docs/b.md"}),  # an anchor gone: the files linking to b's (no test calls a heading)
        ("pkg/ext.py", "import json\n\n\ndef dump(x):\n    y = json.loads(x)\n    return json.dumps(y)\n", True,
         {"pkg/ext.py"}),  # its uses of outside code (interface.json) moved
        ("pkg/base.py", "class Base:\n    def stride(self):\n        return 1\n", "patched",
         {"pkg/base.py", "pkg/child.py"}),  # a name changed: no test calls step or stride
        ("pkg/child.py", "from pkg.base import Base\n\n\nclass Child(Base):\n    def run(self):\n"
                         "        return self.stride()\n", True, {"pkg/child.py", "pkg/use.py"}),
    ]
    for step, (rel, text, served, made_again) in enumerate(edits, 1):
        (root / rel).write_text(text)
        _stamp(root / rel, step)
        kept.clear()
        again.clear()
        patched.clear()
        report = build(root, now=t0 + timedelta(minutes=2 * step), carry=carry, **KW)
        assert report.files_read == 1, report.mode
        if served == "patched":
            assert kept == [] and patched == [True], (step, rel, report.symbols_mode)
            assert report.symbols_mode.startswith("symbols: the name tables patched for 1 file"), report.symbols_mode
            assert carry.symbol_table is not None  # (the patched tables kept for the next save)
        else:
            assert kept == [served] and patched == [], (step, rel, report.symbols_mode)
        assert again == [made_again], (step, rel)
        incremental_export, rows, uses = _canonical(root), _graph_rows(root), _interface_doc(root)
        saved = tmp_path / "vault-kept"
        shutil.copytree(root / ".oracl", saved, symlinks=True)
        build(root, full=True, now=t0 + timedelta(minutes=2 * step + 1), **KW)
        full = (_canonical(root),)
        full_rows = _graph_rows(root)
        assert uses == _interface_doc(root), (step, rel)
        shutil.rmtree(root / ".oracl")
        saved.rename(root / ".oracl")
        assert incremental_export == full[0], f"step {step}: {_first_difference(incremental_export, full[0])}"
        for table, want in full_rows.items():  # the database's rows too: a standby patched where reached
            assert rows[table] == want, (step, table, sorted(set(rows[table]) ^ set(want))[:4])
    assert len(reweighed) == len(edits) and sum(reweighed) >= 5, reweighed  # the weights kept but where edges moved
    assert sum(reached) >= 3, reached  # the standby compared only where two reweighs reached
    edges = {(e["source"], e["target"], e["relation"]) for e in unpack_symbols(full[0])[1]}
    assert ("svc/types.go#Store", "svc/methods.go#Store.Get", "contains") in edges  # attached across files
    assert ("pkg/child.py#Child", "pkg/base.py#Base", "inherits") in edges
    assert ("pkg/child.py#Child.run", "pkg/base.py#Base.stride", "calls") in edges
    assert ("pkg/two.py#two", "pkg/b.py#B.go", "calls") in edges  # by the type in its own lines
    assert ("pkg/two.py#two", "pkg/a.py#A.go", "calls") not in edges


def _refreshes(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What each standby refresh was told it may read back (``_refresh_graph``'s ``only``:
    a ``Reach``, or None for every row), in order."""
    from oracl.bundle import database

    seen: list[Any] = []
    refresh = database._refresh_graph

    def spy(store: Any, tables: dict[str, Any], only: Any = None) -> None:
        seen.append(only)
        refresh(store, tables, only)

    monkeypatch.setattr(database, "_refresh_graph", spy)
    return seen


def test_a_cold_build_reads_back_only_the_standby_rows_its_reach_names(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``builder/reach.py``: a build with no long-lived builder behind it records, in its
    ``stat.bin``, the rows it can differ in from the bundle it started from (the files read
    again; the edges out of them and into them) when its weighting's structure did not move;
    the next build reads back and compares only those rows of its standby and its own; a
    build with no standby to take copies the latest and compares only its own reach.
    After each build every row of the artifact graph's tables, and the export, equal a full
    build's. When an edit moves an edge, or changes what other files' edges read of a file
    (a new top-level name), the weighing says the reach (``weigh_around``); when a learned
    tag moves a row of a file not read, it is found from the export instead: the rows of
    its groups that are not the latest's parts (``reach_of_groups``)."""
    root, t0 = _built_tree(tmp_path, CALLERS)
    seen = _refreshes(monkeypatch)

    def edit(step: int, rel: str, text: str) -> Any:
        (root / rel).write_text(text)
        _stamp(root / rel, step)
        report = build(root, now=t0 + timedelta(minutes=2 * step), **KW)
        vault = root / ".oracl"
        saved = root.parent / "saved-vault"
        shutil.copytree(vault, saved, symlinks=True)
        rows, export = _graph_rows(root), _canonical(root)
        build(root, full=True, now=t0 + timedelta(minutes=2 * step + 1), **KW)
        assert (_graph_rows(root), _canonical(root)) == (rows, export), step
        shutil.rmtree(vault)
        saved.rename(vault)
        return report

    shop, cart = CALLERS["pkg/shop.py"], CALLERS["pkg/cart.py"]
    # the full build's spare: its rows are the latest's, so they differ only in this build's reach
    one = edit(1, "pkg/shop.py", shop + "# one\n")
    assert one.database_mode == "database: the standby updated in place (0 more files caught up)" and len(seen) == 1
    assert seen[-1] is not None and seen[-1].nodes == seen[-1].sources == {"pkg/shop.py"}  # (nothing calls shop)
    two = edit(2, "pkg/cart.py", cart + "# two\n")
    assert two.database_mode == ("database: the standby updated in place (1 more file caught up, known to the "
                                 "latest build)")
    # the standby is the full build's: behind on shop.py (build one's) and cart.py (this one's);
    # base.py has edges into neither, so only its own row and edges are not read back
    assert seen[-1] is not None and seen[-1].nodes == {"pkg/shop.py", "pkg/cart.py"}
    assert seen[-1].sources == {"pkg/shop.py", "pkg/cart.py"}
    three = edit(3, "pkg/base.py", CALLERS["pkg/base.py"] + "# three\n")
    assert three.database_mode.endswith("(1 more file caught up, known to the latest build)")
    assert seen[-1] is not None and seen[-1].nodes == {"pkg/cart.py", "pkg/base.py"}
    assert seen[-1].sources == {"pkg/cart.py", "pkg/base.py", "pkg/shop.py"}  # (shop and cart import base)
    every = set(CALLERS)
    code = every - {"README.md"}

    def reach() -> tuple[set[str], set[str]]:
        assert seen[-1] is not None
        return set(seen[-1].nodes), set(seen[-1].sources)

    # an import moved an edge: weighed around the move (``weigh_around``), whose reach is the
    # ends of shop's edges (shop, cart, base) and the edges out of them; README is in none
    four = edit(4, "pkg/shop.py", "import pkg.base\n" + shop)
    assert four.weigh_mode.startswith("weigh: around the move: 1 file's edges moved; 3 nodes' structure")
    assert reach() == (code, code)
    edit(5, "pkg/cart.py", cart + "# five\n")  # (the latest recorded that reach: the standby's is it)
    assert reach() == (code, {"pkg/cart.py", "pkg/shop.py"})
    edit(6, "pkg/cart.py", cart + "# six\n")
    assert reach() == ({"pkg/cart.py"}, {"pkg/cart.py", "pkg/shop.py"})
    # a new top-level name in a file changes what the other files' edges read of it: every
    # file's edges are made again, none moved; base's tag set did (its edges, and the edges
    # of cart and shop, which import it, are ranked again)
    seven = edit(7, "pkg/base.py", CALLERS["pkg/base.py"] + "\n\ndef spare():\n    return 2\n")
    assert seven.weigh_mode == ("weigh: around the move: 0 files' edges moved; 0 nodes' structure and 3 files' "
                                "edge ranks made again (pkg/base.py's tags moved)")
    assert reach() == ({"pkg/base.py", "pkg/cart.py"}, code)
    edit(8, "pkg/cart.py", cart + "# eight\n")
    edit(9, "pkg/cart.py", cart + "# nine\n")
    assert reach() == ({"pkg/cart.py"}, {"pkg/cart.py", "pkg/shop.py"})
    # a learned review status moves a row of a file that was not read: the reach is found from
    # the export's groups that are not the latest's parts (in this four-file tree one group
    # holds every file's rows)
    write_learned(root / ".oracl" / "learned_tags.json", orjson.dumps({"pkg/base.py": {"review_status": "reviewed"}}))
    edit(10, "pkg/cart.py", cart + "# ten\n")
    assert reach() == (every, every)


def test_a_cold_builds_export_serialises_only_the_groups_its_reach_names(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``reach.Unmoved``: when a build's rows can differ from the latest's only in its reach,
    a group of export rows holding none of them is the latest's part for the same keys
    (the ids of the files read again mapped back), never serialised again; the export is
    still a full build's, byte for byte; an edit that moves an edge too (its reach is the
    weighing's: ``weigh_around``)."""
    import oracl.builder.orchestrator as orchestrator

    n = 600  # (a group closes after ~1 key in 64: here ~10 node groups and ~10 edge groups, by source)
    root, files, t0 = _chain_tree(tmp_path, n)
    sections: list[tuple[int, int]] = []  # (groups, groups taken from the latest) of each section put
    put = orchestrator.put_groups

    def counting(store: Any, keys: Any, rows_of: Any, kept: Any, **kw: Any) -> Any:
        taken = [0]

        def spy(a: int, b: int) -> Any:
            part = kept(a, b)
            taken[0] += part is not None
            return part

        out = put(store, keys, rows_of, spy, **kw)
        sections.append((len(out), taken[0]))
        return out

    monkeypatch.setattr(orchestrator, "put_groups", counting)

    def edit(step: int, rel: str, text: str) -> list[tuple[int, int]]:
        (root / rel).write_text(text)
        _stamp(root / rel, step)
        sections.clear()
        build(root, now=t0 + timedelta(minutes=step), **KW)
        made = list(sections)
        assert _canonical(root) == _full_beside(root, t0 + timedelta(minutes=step, seconds=30))[0], step
        return made

    for step, rel in ((1, "pkg/m7.py"), (2, "pkg/m150.py")):
        (nodes, nodes_kept), (edges, edges_kept) = edit(step, rel, files[rel] + f"# {step}\n")
        # made again: the groups around the file's old id (one) and its new id (two when that
        # id closes a group), and the hubs'; the edge groups around its old and new ids and the
        # group of the file importing it. (How many groups there are depends on the ids, which
        # hold the files' mtimes.)
        assert nodes_kept >= 1 and nodes - nodes_kept <= 4, (step, nodes, nodes_kept)
        assert edges_kept >= 1 and edges - edges_kept <= 4, (step, edges, edges_kept)
    # an edge more: the structure moved, weighed around the move (``weigh_around``): the
    # groups of m9 (its old and new ids), m10 and m3 (whose structure moved) and the hubs',
    # and the edge groups of m9 and m8 (whose ranks moved) are made again
    (nodes, nodes_kept), (edges, edges_kept) = edit(3, "pkg/m9.py", "import pkg.m3\n" + files["pkg/m9.py"])
    assert nodes_kept >= 1 and nodes - nodes_kept <= 5, (nodes, nodes_kept)
    assert edges_kept >= 1 and edges - edges_kept <= 4, (edges, edges_kept)


def test_a_cold_build_whose_structure_stays_reads_the_ranks_back_and_makes_only_the_rows_it_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``weigh(latest_key=…, latest_ranks=…, lazy=True)``: a cold build whose
    ``structure_key`` is the latest's takes the raw ranks the latest recorded in its
    ``stat.bin`` (a part of the store) instead of running the DuoRanker, and makes the
    artifact rows only when read — those of its reach, for the tables, and of the export's
    groups made again. The export and every table row are still a full build's. An edit
    that moves an edge is weighed around the move, the latest's ranks read back and those
    it moved ranked again; a damaged ranks part is not used (the ranker runs)."""
    import oracl.builder.orchestrator as orchestrator
    import oracl.builder.pipeline.weigh as weigh_mod
    from oracl.core.parts import store_of

    n = 600
    root, files, t0 = _chain_tree(tmp_path, n)
    made: list[str] = []
    ranked: list[int] = []
    node = weigh_mod._artifact_node
    import oracl.builder.pipeline.duoranker as duoranker  # (weigh_graph imports the ranker when it runs)

    real_ranks = duoranker.raw_ranks

    def counting_node(r: Any, *a: Any) -> Any:
        made.append(r.path)
        return node(r, *a)

    def counting_ranks(edges: Any, *a: Any) -> Any:
        ranked.append(len(edges))
        return real_ranks(edges, *a)

    monkeypatch.setattr(weigh_mod, "_artifact_node", counting_node)
    monkeypatch.setattr(duoranker, "raw_ranks", counting_ranks)
    edge_rows: list[tuple[str, ...]] = []  # each edge row made (``EdgeRows``: when read)
    real_edge = weigh_mod._edge_row

    def counting_edge(e: Any, *a: Any) -> Any:
        row = real_edge(e, *a)
        edge_rows.append((row["source"], row["target"], row["relation"], row["source_fragment"],
                          row["target_fragment"]))
        return row

    monkeypatch.setattr(weigh_mod, "_edge_row", counting_edge)
    serialised: set[str] = set()  # the artifact rows of the export's node groups made again
    serialised_edges: set[tuple[str, ...]] = set()  # the edge rows of its edge groups made again
    put = orchestrator.put_groups

    def spying(store: Any, keys: Any, rows_of: Any, kept: Any, **kw: Any) -> Any:
        def rows(a: int, b: int) -> Any:
            out = rows_of(a, b)
            serialised.update(str(r["path"]) for r in out if r.get("kind") == "artifact")
            serialised_edges.update((r["source"], r["target"], r["relation"], r["source_fragment"],
                                     r["target_fragment"]) for r in out if "relation" in r)
            return out

        return put(store, keys, rows, kept, **kw)

    monkeypatch.setattr(orchestrator, "put_groups", spying)

    def edit(step: int, rel: str, text: str) -> tuple[int, int, set[str], set[str]]:
        (root / rel).write_text(text)
        _stamp(root / rel, step)
        made.clear()
        ranked.clear()
        serialised.clear()
        edge_rows.clear()
        serialised_edges.clear()
        report = build(root, now=t0 + timedelta(minutes=step), **KW)
        out = (len(made), len(ranked), set(made), set(serialised))  # (before the full build beside it)
        if not ranked:  # lazy edge rows: each made once, those of the groups written among them
            assert len(edge_rows) == len(set(edge_rows)), step
            assert serialised_edges <= set(edge_rows), step
            # (few once a standby's reach is known: the first rebuild's copy takes every row)
            assert 0 < len(edge_rows) < report.counts["edges"] // 2 or step == 1, (step, len(edge_rows))
        assert _canonical(root) == _full_beside(root, t0 + timedelta(minutes=step, seconds=30))[0], step
        return out

    # the first rebuild after a full build: the ranks the full build recorded are read back;
    # its database is a copy of the latest's, whose tables take every row
    rows, ran, _, _ = edit(1, "pkg/m7.py", files["pkg/m7.py"] + "# 1\n")
    assert ran == 0, ran
    # then a standby whose reach is recorded: exactly the rows of the export's node groups
    # made again (those around the edited file's old and new ids: how many rows they hold
    # depends on the ids, which hold the files' mtimes) and of the rows the standby's tables
    # take (the file edited now and the one the latest build edited), each made once
    for step, rel, before in ((2, "pkg/m150.py", "pkg/m7.py"), (3, "pkg/m300.py", "pkg/m150.py")):
        rows, ran, rows_made, rows_serialised = edit(step, rel, files[rel] + f"# {step}\n")
        assert ran == 0 and rows == len(rows_made), (step, rows, ran)
        assert rel in rows_made and len(rows_serialised) < n, (step, len(rows_serialised))
        assert rows_made == rows_serialised | {rel, before}, (step, rows_made ^ (rows_serialised | {rel, before}))
    # an edge more: the structure moved, weighed around the move (``weigh_around``): the
    # ranker does not run over every edge (only m9's and m8's are ranked again, one by one),
    # and the rows made are those of the groups serialised and of the standby's reach
    rows, ran, rows_made, rows_serialised = edit(4, "pkg/m9.py", "import pkg.m3\n" + files["pkg/m9.py"])
    assert ran == 0 and rows == len(rows_made) < n // 2, (rows, ran)
    assert {"pkg/m9.py", "pkg/m10.py", "pkg/m3.py"} <= rows_serialised <= rows_made, rows_serialised
    # the ranks part the latest recorded, damaged: not used, the ranker runs, the rows are exact
    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())["build_id"]
    entry = orjson.loads((root / ".oracl" / "mirror" / latest / "stat.bin").read_bytes())["ranks"]
    part = store_of(root / ".oracl").path(entry[0])
    data = bytearray(part.read_bytes())
    data[0] ^= 0xFF
    part.write_bytes(bytes(data))
    rows, ran, _, _ = edit(5, "pkg/m20.py", files["pkg/m20.py"] + "# 5\n")
    assert ran == 1, (rows, ran)


def _remade_after(root: Path, t0: datetime, made: list[str], k: int, rel: str,
                  text: str | None) -> tuple[set[str], BuildReport]:
    """``rel`` written (or removed: ``text`` None) at step ``k`` and the tree built again,
    ``made`` (what a test's spies record of the files whose edges are made) emptied first:
    (the files recorded, the build's report). The export is a full build's."""
    if text is None:
        (root / rel).unlink()
    else:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        _stamp(root / rel, k)
    made.clear()
    report = build(root, now=t0 + timedelta(minutes=k), **KW)
    out = set(made)  # (before the full build beside it makes every file's)
    assert _canonical(root) == _full_beside(root, t0 + timedelta(minutes=k, seconds=30))[0], k
    return out, report


def test_a_cold_build_makes_again_only_the_edges_a_change_can_move(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``edge_shards``: each bundle keeps every file's Phase 2 and Phase 3 edges; a cold
    build whose changed files kept their ``edge_interface`` makes again only the edges of
    those files and of the files with an edge into one of them, and reads the others back;
    a file added or removed makes again its own and those of the files that looked it up.
    The export is a full build's after each step; a package's ``__init__.py`` coming or
    going makes again, besides, the edges of the files that looked up a name it moves of
    the modules under it. A damaged shard makes every file's edges."""
    import oracl.builder.orchestrator as orchestrator
    from oracl.builder.extractors import providers

    n = 300
    root, files, t0 = _chain_tree(tmp_path, n)
    made: list[str] = []
    real2, real3 = providers.phase2_of, providers.phase3_of

    def two(f: Any, idx: Any) -> Any:
        made.append(f.path)
        return real2(f, idx)

    monkeypatch.setattr(orchestrator, "phase2_of", two)
    monkeypatch.setattr(orchestrator, "phase3_of", lambda f, idx: real3(f, idx))

    def step(k: int, rel: str, text: str | None) -> set[str]:
        out, report = _remade_after(root, t0, made, k, rel, text)
        assert "edges_kept" in report.seconds
        return out

    # a line added above the function: the file's edges and those of the file importing it
    assert step(1, "pkg/m7.py", "# a comment\n" + files["pkg/m7.py"]) == {"pkg/m7.py", "pkg/m6.py"}
    # a line added below it: no line an edge into the file points at moved, its edges alone
    assert step(2, "pkg/m150.py", files["pkg/m150.py"] + "# 2\n") == {"pkg/m150.py"}
    # a new function: the edge interface moved, but only its symbols (no test calls g9):
    # the file's edges and those of the file importing it
    assert step(3, "pkg/m9.py", files["pkg/m9.py"] + "\n\ndef g9():\n    return 9\n") == {"pkg/m9.py", "pkg/m8.py"}
    # a damaged shard of the latest build: not used
    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())["build_id"]
    shard = sorted((root / ".oracl" / "mirror" / latest).glob("edges.*.bin"))[0]
    data = bytearray(shard.read_bytes())
    shard.unlink()  # (hard-linked into the bundle before it: that one is left whole)
    data[-2] ^= 0x01
    shard.write_bytes(bytes(data))
    assert len(step(4, "pkg/m20.py", files["pkg/m20.py"] + "# 4\n")) == n
    # then the shards this build wrote serve again
    assert step(5, "pkg/m21.py", "# 5\n" + files["pkg/m21.py"]) == {"pkg/m21.py", "pkg/m20.py"}
    # a file added: its edges and those of the files that looked up its path, name, module
    # names or folder while theirs were made (``IndexView.read``): here none
    assert step(6, "pkg/extra.py", "import pkg.m3\n") == {"pkg/extra.py"}
    # a module imported before it is there: added, the file importing it is made again; gone, too
    assert step(7, "pkg/m40.py", "import pkg.later\n" + files["pkg/m40.py"]) == {"pkg/m40.py", "pkg/m39.py"}
    assert step(8, "pkg/later.py", "X = 1\n") == {"pkg/later.py", "pkg/m40.py"}
    assert step(9, "pkg/later.py", None) == {"pkg/m40.py"}
    # with a shard of the latest damaged, every file's edges are made, and that file is not
    # linked for the bytes it should hold, so the build after it reads its own shards back
    damaged = sorted((root / ".oracl" / "mirror" / Vault(root).read_latest()["bundle"]).glob("edges.*.bin"))[3]
    data = bytearray(damaged.read_bytes())
    damaged.unlink()
    data[-2] ^= 0x01
    damaged.write_bytes(bytes(data))
    assert len(step(10, "pkg/extra2.py", "import pkg.m3\n")) == n + 2
    assert step(11, "pkg/m50.py", "# 11\n" + files["pkg/m50.py"]) == {"pkg/m50.py", "pkg/m49.py"}
    # a package's __init__.py moves the names of the modules under it (``pkg/m5.py`` is also
    # ``m5`` while ``pkg`` is no package): its edges and those of the files that looked one
    # of those names up, coming and going
    assert step(12, "pkg/short.py", "import m5\n") == {"pkg/short.py"}
    assert step(13, "pkg/__init__.py", "") == {"pkg/__init__.py", "pkg/short.py"}
    assert step(14, "pkg/__init__.py", None) == {"pkg/short.py"}


def test_a_file_that_comes_or_goes_makes_again_only_the_edges_that_looked_up_what_it_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The import resolvers of the other languages (``Ecosystems``) record what each file's
    imports looked up — a path, a folder's files, a JVM class, what the manifests hold — so a
    Go, JavaScript or Java file coming or going makes again the edges of the files that
    looked it up, not of every file importing through them (``came_or_went_reads``): here
    twenty JavaScript files importing one module, and Go and Java files, are left as they
    were. The export is a full build's after each step."""
    import oracl.builder.orchestrator as orchestrator
    from oracl.builder.extractors import providers

    files = {"go.mod": "module example.com/app\n\ngo 1.21\n",
             "svc/a.go": "package svc\n\nfunc A() int { return 1 }\n",
             "cmd/main.go": 'package main\n\nimport "example.com/app/svc"\n\nfunc main() { svc.A() }\n',
             "cmd/other.go": 'package main\n\nimport "example.com/app/lib"\n\nfunc other() {}\n',
             "lib/l.go": "package lib\n\nfunc L() int { return 2 }\n",
             "web/util.js": "export function util(x) {\n  return x;\n}\n",
             "app/main.rb": "require 'helper'\n\ndef main\n  helper\nend\n",
             "web/other.js": "import { later } from './later.js';\n\nexport function other() {\n  return later();\n}\n",
             "src/com/acme/Shop.java": ("package com.acme;\n\nimport com.acme.Ledger;\n\npublic class Shop {\n"
                                        "    public int run() {\n        return new Ledger().sum();\n    }\n}\n"),
             "src/com/acme/Tool.java": "package com.acme;\n\npublic class Tool {\n    public int use() {\n        return 1;\n    }\n}\n",
             **{f"web/page{i}.js": f"import {{ util }} from './util.js';\n\nexport function page{i}() {{\n  return util({i});\n}}\n"
                for i in range(20)}}
    root, t0 = _built_tree(tmp_path, files)
    made: list[str] = []
    real2, real3 = providers.phase2_of, providers.phase3_of

    def two(f: Any, idx: Any) -> Any:
        made.append(f.path)
        return real2(f, idx)

    def three(f: Any, idx: Any) -> Any:
        made.append(f.path)
        return real3(f, idx)

    monkeypatch.setattr(orchestrator, "phase2_of", two)
    monkeypatch.setattr(orchestrator, "phase3_of", three)

    def step(k: int, rel: str, text: str | None) -> set[str]:
        return _remade_after(root, t0, made, k, rel, text)[0]

    # a Go file in a package folder: the file importing that package (its folder's files read)
    assert step(1, "svc/b.go", "package svc\n\nfunc B() int { return 2 }\n") == {"svc/b.go", "cmd/main.go"}
    # a JavaScript module looked up before it was there, and gone again
    assert step(2, "web/later.js", "export function later() {\n  return 1;\n}\n") == {"web/later.js", "web/other.js"}
    assert step(3, "web/later.js", None) == {"web/other.js"}
    # a Java class a file imports: that file (its class looked up by package and name)
    ledger = "package com.acme;\n\npublic class Ledger {\n    public int sum() {\n        return 0;\n    }\n}\n"
    assert step(4, "src/com/acme/Ledger.java", ledger) == {"src/com/acme/Ledger.java", "src/com/acme/Shop.java"}
    # a new folder: every file that read which folders there are, with the file itself
    # a new folder: the file, and the Ruby file whose `require` searched every lib/ folder
    # (it read which folders there are); a new lib/ folder holding what it requires: its edge
    assert step(5, "tools/t.go", "package tools\n\nfunc T() {}\n") == {"tools/t.go", "app/main.rb"}
    assert step(6, "vendor/lib/helper.rb", "def helper\n  1\nend\n") == {"vendor/lib/helper.rb", "app/main.rb"}


def test_a_long_lived_builder_makes_again_only_the_edges_that_looked_up_a_file_that_came_or_went(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived builder (``Carry``) keeps each file's lookups (``Carry.edge_reads``): a
    file added or removed makes again its own edges and those of the files that looked it
    up, as a cold build does from the shards; the export is a full build's after each step."""
    import oracl.builder.orchestrator as orchestrator
    from oracl.builder import incremental
    from oracl.builder.extractors import providers

    n = 60
    root, files, t0 = _chain_tree(tmp_path, n)
    carry = incremental.Carry()
    made: list[str] = []
    real2 = providers.phase2_of

    def two(f: Any, idx: Any) -> Any:
        made.append(f.path)
        return real2(f, idx)

    monkeypatch.setattr(orchestrator, "phase2_of", two)
    (root / "pkg/m10.py").write_text(files["pkg/m10.py"] + "# 1\n")
    _stamp(root / "pkg/m10.py", 1)
    build(root, now=t0 + timedelta(minutes=1), carry=carry, **KW)  # (every file's: the builder starts)
    assert len(made) == n

    def step(k: int, change: Callable[[], None]) -> set[str]:
        change()
        made.clear()
        build(root, now=t0 + timedelta(minutes=k), carry=carry, **KW)
        out = set(made)  # (before the full build beside it makes every file's)
        assert _canonical(root) == _full_beside(root, t0 + timedelta(minutes=k, seconds=30))[0], k
        return out

    def write(rel: str, text: str, k: int) -> Callable[[], None]:
        def go() -> None:
            (root / rel).write_text(text)
            _stamp(root / rel, k)
        return go

    assert step(2, write("pkg/extra.py", "import pkg.m3\n", 2)) == {"pkg/extra.py"}
    assert step(3, write("pkg/m40.py", "import pkg.later\n" + files["pkg/m40.py"], 3)) == {"pkg/m40.py", "pkg/m39.py"}
    assert step(4, write("pkg/later.py", "X = 1\n", 4)) == {"pkg/later.py", "pkg/m40.py"}
    assert step(5, (root / "pkg/later.py").unlink) == {"pkg/m40.py"}


def test_a_cold_build_takes_the_latest_merge_and_decodes_only_the_lists_it_compares(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``edge_shards.Kept``: the shards hold each file's run of the merged edges and its
    drops; a cold build whose files all stayed merges again only the files whose edges it
    made again (the changed file and the file importing it), decodes the Phase 2 and
    Phase 3 lists of those alone, and writes the shards a full build writes, byte for byte.
    With another overlay or tail than the runs were merged with, every file is merged."""
    from oracl.builder import edge_shards
    from oracl.builder.pipeline import edge_lists
    from oracl.builder.pipeline import merge as merge_mod

    n = 120
    root, files, t0 = _chain_tree(tmp_path, n)
    merged_again: list[int] = []
    decoded: list[str] = []
    real_merge, real_rows = merge_mod.merge_by_source, edge_lists.Blobs.rows

    def merging(p2: Any, p3: Any, tail: Any, overlay: Any, nodes: Any, kept: Any = None, again: Any = None) -> Any:
        out = real_merge(p2, p3, tail, overlay, nodes, kept, again)
        merged_again.append(len(out.sources) if kept is None else len({s for s in out.sources
                                                                        if s in again or s not in kept.sources}))
        return out

    def rows(self: Any, path: str, phase: int) -> Any:
        if path not in self._rows:
            decoded.append(path)
        return real_rows(self, path, phase)

    import oracl.builder.orchestrator as orchestrator
    monkeypatch.setattr(orchestrator, "merge_by_source", merging)
    monkeypatch.setattr(edge_lists.Blobs, "rows", rows)

    def shards(at: Path) -> dict[str, bytes]:
        bundle = at / ".oracl" / "mirror" / Vault(at).read_latest()["bundle"]
        head = orjson.loads((bundle / "facts.bin").read_bytes())
        return {"head": orjson.dumps(head[edge_shards.MERGED_WITH]),
                **{p.name: p.read_bytes() for p in sorted(bundle.glob("edges.*.bin"))}}

    def step(k: int, rel: str) -> tuple[int, list[str]]:
        (root / rel).write_text(f"# {k}\n" + files[rel])  # (a line above: the lines m6's edge points at move)
        _stamp(root / rel, k)
        merged_again.clear()
        decoded.clear()
        build(root, now=t0 + timedelta(minutes=k), **KW)
        out = (merged_again[0], sorted(decoded))
        mine = shards(root)
        full = root.parent / f"full{k}"
        shutil.copytree(root, full, ignore=shutil.ignore_patterns(".oracl"))
        build(full, full=True, now=t0 + timedelta(minutes=k), **KW)
        assert mine == shards(full), k
        return out

    # m7 changed and m6 imports it: those two merged again, their lists alone decoded
    assert step(1, "pkg/m7.py") == (2, ["pkg/m6.py", "pkg/m7.py"])
    assert step(2, "pkg/m50.py") == (2, ["pkg/m49.py", "pkg/m50.py"])
    # the runs merged with another overlay or tail (their digest is not this build's): all merged
    monkeypatch.setattr(edge_shards, "merged_with", lambda overlay, tail: "another")
    assert step(3, "pkg/m60.py")[0] == n


def test_a_cold_build_takes_the_uses_of_outside_code_of_the_files_it_reused_from_the_latest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``interface.latest_memo``: a cold build's ``interface.json`` takes each reused
    file's uses of outside code from the latest bundle's while the repository's own
    packages and type names are the same (the basis its ``stat.bin`` recorded), and makes
    only the files read again; the document is a full build's, and when it is the latest's
    byte for byte, the latest's file is linked, not written. A new type name (the basis
    moved) or a damaged latest document makes every file's uses again."""
    from oracl.builder.pipeline import interface as interface_mod

    n = 40
    files = {f"app/m{i}.py": f"import requests\nimport app.m{(i + 1) % n}\n\n\ndef f{i}(url):\n"
                             f"    return requests.get(url)\n" for i in range(n)}
    root, t0 = _built_tree(tmp_path, files)
    made: list[str] = []
    real = interface_mod.file_uses

    def counting(f: Any, *a: Any) -> Any:
        made.append(f.path)
        return real(f, *a)

    monkeypatch.setattr(interface_mod, "file_uses", counting)

    def step(k: int, rel: str, text: str) -> set[str]:
        (root / rel).write_text(text)
        _stamp(root / rel, k)
        made.clear()
        build(root, now=t0 + timedelta(minutes=k), **KW)
        out, doc = set(made), _interface_doc(root)
        assert doc["files"]["app/m3.py"]["calls"], doc["files"]["app/m3.py"]  # (requests.get: a use)
        full = root.parent / "full"
        shutil.rmtree(full, ignore_errors=True)
        shutil.copytree(root, full, ignore=shutil.ignore_patterns(".oracl"))
        build(full, full=True, now=t0 + timedelta(minutes=k, seconds=30), **KW)
        assert doc == _interface_doc(full), k
        return out

    def linked() -> bool:  # the latest's interface.json is the bundle before's file (a hard link)
        latest = Vault(root).read_latest()["bundle"]
        return (root / ".oracl" / "mirror" / latest / "interface.json").stat().st_nlink > 1

    assert step(1, "app/m7.py", files["app/m7.py"] + "# 1\n") == {"app/m7.py"}
    assert linked()  # (a comment: the same document, not written again)
    assert step(2, "app/m8.py", files["app/m8.py"] + "    requests.post(url)\n") == {"app/m8.py"}
    assert not linked()
    # a class: a new type name, every file's uses are made again
    assert len(step(3, "app/m9.py", files["app/m9.py"] + "\n\nclass Session:\n    pass\n")) == n
    # the latest document damaged: not taken (it does not match its manifest)
    latest = Vault(root).read_latest()["bundle"]
    doc_path = root / ".oracl" / "mirror" / latest / "interface.json"
    data = doc_path.read_bytes()
    doc_path.unlink()
    doc_path.write_bytes(data.replace(b"requests", b"requestz", 1))
    assert len(step(4, "app/m10.py", files["app/m10.py"] + "# 4\n")) == n


def test_a_cold_build_reads_the_name_tables_back_instead_of_declaring_every_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``name_tables``: a full build writes its resolver's tables as a part; a cold build
    on the fast path (no file came or went, the changed files kept their interface) reads
    them back, declares only the files whose rows it makes, and records the same part.
    Each export is a full build's, and the tables read back are, field by field, those a
    declaration of every file gives (but the symbols' lines, never kept). A damaged part
    is not used (every file declared), and written again; a build with a file added
    patches the tables (the new file declared) and records them as a new part, which the
    next build reads back."""
    import oracl.builder.orchestrator as orchestrator
    from oracl.builder import name_tables, resolve_again
    from oracl.builder.pipeline import symbols as symbols_mod
    from oracl.builder.reach import recorded
    from oracl.core.parts import store_of

    n = 60
    root, files, t0 = _chain_tree(tmp_path, n)
    declared: list[str] = []
    real_declare = symbols_mod._declare

    def counting(t: Any, g: Any, f: Any, *a: Any) -> Any:
        declared.append(f.path)
        return real_declare(t, g, f, *a)

    monkeypatch.setattr(symbols_mod, "_declare", counting)
    seen: list[tuple[Any, Any]] = []
    real_graph = orchestrator.symbol_graph

    def spy(facts, idx, only=None, table=None, fork=None, **kw):  # type: ignore[no-untyped-def]
        seen.append((facts, idx))
        return real_graph(facts, idx, only, table, fork, **kw)

    monkeypatch.setattr(orchestrator, "symbol_graph", spy)
    monkeypatch.setattr(resolve_again, "symbol_graph", spy)

    def latest_stat() -> dict:
        vault = Vault(root)
        return recorded(vault.bundle(vault.read_latest()["bundle"]))

    def step(k: int, rel: str, text: str) -> tuple[list[str], str]:
        (root / rel).write_text(text)
        _stamp(root / rel, k)
        declared.clear()
        report = build(root, now=t0 + timedelta(minutes=k), **KW)
        out = sorted(declared)
        assert _canonical(root) == _full_beside(root, t0 + timedelta(minutes=k, seconds=30))[0], k
        return out, report.symbols_mode

    # the full build's tables read back: only the file read is declared
    first = latest_stat()[name_tables.KEY]
    assert set(first) == {"part", "bytes"} and first["bytes"] > 0
    out, mode = step(1, "pkg/m7.py", "# one\n" + files["pkg/m7.py"])
    assert out == ["pkg/m7.py"] and mode.endswith("; the name tables read back"), (out, mode)
    assert latest_stat()[name_tables.KEY] == first
    # read back: only the files whose rows are made are declared (the file read, and the
    # one the build before read, which the standby two builds behind catches up)
    out, mode = step(2, "pkg/m8.py", "# two\n" + files["pkg/m8.py"])
    assert out == ["pkg/m7.py", "pkg/m8.py"] and mode.endswith("; the name tables read back"), (out, mode)
    assert latest_stat()[name_tables.KEY] == first
    out, mode = step(3, "pkg/m9.py", "# three\n" + files["pkg/m9.py"])
    assert out == ["pkg/m8.py", "pkg/m9.py"] and mode.endswith("read back"), (out, mode)
    assert latest_stat()[name_tables.KEY] == first

    def same_as_declared() -> None:  # the tables read back: field by field a whole declaration's, but the lines
        facts, idx = seen[-1]
        back = name_tables.read(store_of(Vault(root).dir), latest_stat(), {f.path: i for i, f in enumerate(facts)})
        assert back is not None and back.t.span == {}
        fresh = real_graph(facts, idx).table
        assert fresh is not None and fresh.t.span
        assert {k: dict(v) if isinstance(v, dict) else v for k, v in vars(back.t).items() if k != "span"} == \
            {k: dict(v) if isinstance(v, dict) else v for k, v in vars(fresh.t).items() if k != "span"}
        assert back.attached == fresh.attached

    same_as_declared()
    # a damaged part: not used (every file declared), and the tables written again
    part = store_of(Vault(root).dir).path(first["part"])
    data = bytearray(part.read_bytes())
    part.unlink()
    data[len(data) // 2] ^= 1
    part.write_bytes(bytes(data))
    out, mode = step(4, "pkg/m10.py", "# four\n" + files["pkg/m10.py"])
    assert len(out) == n and "read back" not in mode
    # (equal tables; marshal's bytes need not be the same, and when they are the damaged
    # part is written over)
    assert name_tables.read(store_of(Vault(root).dir), latest_stat(), {p: i for i, p in enumerate(sorted(files))}) \
        is not None
    out, mode = step(5, "pkg/m11.py", "# five\n" + files["pkg/m11.py"])
    assert out == ["pkg/m10.py", "pkg/m11.py"] and mode.endswith("read back"), (out, mode)
    # a file added: the tables read back and patched (the new file declared into them, and
    # again with the files whose rows are made: it and the standby's catch-up); the patch
    # is written as a part beside the same tables' part; the body edit after it reads
    # both back, and a second file's removal patches them again
    kept = latest_stat()[name_tables.KEY]
    # (it declares f3 too, as m3.py does: its id goes before m3.py's in the tables' lists)
    out, mode = step(6, "pkg/extra.py", "import pkg.m3\n\n\ndef extra():\n    return 1\n\n\ndef f3(x):\n    return x\n")
    assert out == ["pkg/extra.py", "pkg/extra.py", "pkg/m11.py"], (out, mode)
    assert mode.startswith("symbols: the name tables patched for 1 file that came"), mode
    patched = latest_stat()[name_tables.KEY]
    assert patched["part"] == kept["part"] and 0 < patched["patch"]["bytes"] < kept["bytes"] // 10, patched
    same_as_declared()
    out, mode = step(7, "pkg/m12.py", "# seven\n" + files["pkg/m12.py"])
    assert out == ["pkg/extra.py", "pkg/m12.py"] and mode.endswith("read back"), (out, mode)
    assert latest_stat()[name_tables.KEY] == patched
    same_as_declared()
    (root / "pkg" / "m20.py").unlink()
    declared.clear()
    mode = build(root, now=t0 + timedelta(minutes=8), **KW).symbols_mode
    assert mode.startswith("symbols: the name tables patched for 1 file that came"), mode
    assert set(latest_stat()[name_tables.KEY]) == {"part", "bytes", "patch"}
    assert _canonical(root) == _full_beside(root, t0 + timedelta(minutes=8, seconds=30))[0]
    same_as_declared()


def test_name_tables_written_again_heal_a_damaged_part_of_the_same_name(tmp_path: Path) -> None:
    """``name_tables.write(heal=True)`` writes over a part of the same name and size (a
    damaged one the latest recorded); without it the store keeps what it has."""
    from oracl.builder import name_tables
    from oracl.builder.pipeline.symbols import symbol_graph
    from oracl.builder.resident import index_of
    from oracl.core.parts import PartStore, store_of
    from oracl.core.records import FileFacts

    facts = [FileFacts(path=p, artifact_id=p, checksum="0" * 64, size_bytes=20, mtime_ns=0, ctime_ns=0,
                       parse_status="ok", line_count=2, language="python", symbols=((f, "function", 1, 2),),
                       symbol_details=((f, f"def {f}()", ""),), calls=((g, 2),))
             for p, f, g in (("a.py", "f", "g"), ("b.py", "g", "f"))]
    table = symbol_graph(facts, index_of(None, None, {f.path: f for f in facts}, ["a.py", "b.py"], [])).table
    assert table is not None and len(table.t.kind) == 4
    store = store_of(tmp_path)
    entry = name_tables.write(store, table)
    part = store.path(entry["part"])
    good = part.read_bytes()
    part.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    assert name_tables.read(PartStore(store.root), {name_tables.KEY: entry}, {"a.py": 0, "b.py": 1}) is None
    name_tables.write(PartStore(store.root), table)
    assert part.read_bytes() != good
    assert name_tables.write(PartStore(store.root), table, heal=True) == entry
    back = name_tables.read(PartStore(store.root), {name_tables.KEY: entry}, {"a.py": 0, "b.py": 1})
    assert back is not None and back.t.kind == table.t.kind and back.attached == table.attached


def test_a_cold_build_proves_its_structure_the_latests_file_by_file(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``same_structure``: a cold build whose files all stayed, whose settings key is the
    latest's, whose files read again kept their record tags and whose files with edges
    made again merged into the same (source, target, relation, κ) edges takes the
    latest's structure — no pass works out every node's structure (``_structure``) — and
    its export and every table row are still a full build's. Each proof that fails says
    which, and the whole is worked out: an edge more, a secret (a tag) in a file."""
    import oracl.builder.pipeline.weigh as weigh_mod

    n = 120
    root, files, t0 = _chain_tree(tmp_path, n)
    whole: list[int] = []
    real = weigh_mod._structure

    def counting(*a: Any) -> Any:
        whole.append(1)
        return real(*a)

    monkeypatch.setattr(weigh_mod, "_structure", counting)

    def step(k: int, rel: str, text: str) -> tuple[str, bool]:
        (root / rel).write_text(text)
        _stamp(root / rel, k)
        whole.clear()
        report = build(root, now=t0 + timedelta(minutes=k), **KW)
        worked_out = bool(whole)
        _as_full_build(root, t0 + timedelta(minutes=k, seconds=30), k)
        return report.weigh_mode, worked_out

    # a comment below the code: the file's edges alone made again (no line an edge into it
    # points at moved), the same; above it, the one importing it too
    assert step(1, "pkg/m7.py", files["pkg/m7.py"] + "# 1\n") == \
        ("weigh: the structure is the latest's, 1 file's edges compared", False)
    assert step(2, "pkg/m7.py", "# 2\n" + files["pkg/m7.py"]) == \
        ("weigh: the structure is the latest's, 2 files' edges compared", False)
    # a body and its lines moved: fragments move, the structure does not
    assert step(3, "pkg/m50.py", "\n\n" + files["pkg/m50.py"].replace("x + 50", "x * 50 + 1")) == \
        ("weigh: the structure is the latest's, 2 files' edges compared", False)
    # an edge more: the structure moved, weighed around the move (``weigh_around``): m9, m10
    # and m3 (the ends of m9's edges) have their structure worked out again, and the edges
    # of m9 and of m8 (which imports m9: a 2-path through it) are ranked again
    assert step(4, "pkg/m9.py", "import pkg.m3\n" + files["pkg/m9.py"]) == \
        ("weigh: around the move: 1 file's edges moved; 3 nodes' structure and 2 files' edge ranks made again "
         "(pkg/m9.py's edges moved)", False)
    # the next edit proves it again, against the latest
    assert step(5, "pkg/m20.py", files["pkg/m20.py"] + "# 5\n")[1] is False
    # a secret in a file: its record's tag set moved — no edge did, but the edges of m30 and
    # of m31 (which imports it) compare m30's tags: ranked again
    assert step(6, "pkg/m30.py", files["pkg/m30.py"] + "KEY = '" + "AKIA" + "QWERTYUIOPASDFGH'\n") == \
        ("weigh: around the move: 0 files' edges moved; 0 nodes' structure and 2 files' edge ranks made again "
         "(pkg/m30.py's tags moved)", False)


def test_an_edit_that_moves_edges_is_weighed_around_the_move(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``weigh_around``: a cold build whose edges moved (an import dropped, a file left with
    no edge, a test that now tests a module, two imports more, a new top-level name, a file
    added, one deleted, one renamed) takes the latest's aggregates, orphans and raw ranks
    and works out again only the structure of the ends of the moved edges and the ranks of
    the edges that read them — no pass over every node (``_structure``) and no ranker over
    every edge — and its export (the header's exact aggregates and orphans included) and
    every table row are a full build's after each step."""
    import oracl.builder.pipeline.duoranker as duoranker
    import oracl.builder.pipeline.weigh as weigh_mod

    n = 30
    files = {f"pkg/m{i}.py": f"import pkg.m{i + 1}\n\n\ndef f{i}(x):\n    return x + {i}\n" for i in range(n - 1)}
    files[f"pkg/m{n - 1}.py"] = "def last(x):\n    return x\n"
    files["tests/test_m7.py"] = "def test_nothing():\n    assert True\n"
    files["web/app.js"] = "export function start() { return 1; }\n"
    root, t0 = _built_tree(tmp_path, files)
    whole: list[str] = []
    for name, mod in (("_structure", weigh_mod), ("raw_ranks", duoranker)):
        real = getattr(mod, name)

        def counting(*a: Any, _real: Any = real, _name: str = name) -> Any:
            whole.append(_name)
            return _real(*a)

        monkeypatch.setattr(mod, name, counting)

    def step(k: int, rel: str, text: str) -> tuple[str, int]:
        (root / rel).write_text(text)
        _stamp(root / rel, k)
        whole.clear()
        report = build(root, now=t0 + timedelta(minutes=k), **KW)
        assert not whole, (k, whole)
        assert report.orphans == _as_full_build(root, t0 + timedelta(minutes=k, seconds=30), k).orphans, k
        return report.weigh_mode, report.orphans

    around = "weigh: around the move: "
    # m5 drops its import: m5 and m6 (its ends) worked out again; the ranks of m5's edges
    # and of m4's (a 2-path through m5)
    mode, before = step(1, "pkg/m5.py", "\n\n\ndef f5(x):\n    return x + 5\n")
    assert mode == around + "1 file's edges moved; 2 nodes' structure and 2 files' edge ranks made again " \
        "(pkg/m5.py's edges moved)", mode
    # m4 drops its import too: m5 is left with no edge to or from another file (an orphan more)
    orphans = step(2, "pkg/m4.py", "\n\n\ndef f4(x):\n    return x + 4\n")
    assert orphans[0].startswith(around + "1 file's edges moved"), orphans
    assert orphans[1] == before + 1, (orphans, before)
    # the test now tests m7 (an import, and what the test calls): m7 is tested
    mode, _ = step(3, "tests/test_m7.py", "from pkg.m7 import f7\n\n\ndef test_f7():\n    assert f7(1) == 8\n")
    assert mode == around + "1 file's edges moved; 2 nodes' structure and 1 file's edge ranks made again " \
        "(tests/test_m7.py's edges moved)", mode
    assert any(e["relation"] == "tests" for e in _canonical(root)["edges"])
    # two imports more, and a new top-level name (m12's edges and m11's made again, m12's moved)
    mode, _ = step(4, "pkg/m12.py", "import pkg.m13\nimport pkg.m2\nimport pkg.m20\n\n\ndef f12(x):\n"
                   "    return x + 12\n\n\ndef g12():\n    return 0\n")
    assert mode.startswith(around + "1 file's edges moved") and mode.endswith("(pkg/m12.py's tags moved)"), mode
    # the next edit moves nothing: the structure is proven the latest's again
    mode, _ = step(5, "pkg/m20.py", files["pkg/m20.py"] + "# 5\n")
    assert mode.startswith("weigh: the structure is the latest's"), mode
    # a file added that imports m3: it and the ends of its edges worked out (the hub's
    # association moves by its member count); m3's in-neighbours' ranks again
    mode, _ = step(6, "pkg/extra.py", "import pkg.m3\n\n\ndef extra():\n    return 3\n")
    assert mode.startswith(around + "1 file's edges moved, 1 came and 0 went; "), mode
    # a file gone (m20, imported by m19): m20's and m19's edges moved
    (root / "pkg/m20.py").unlink()
    mode, _ = step(7, "pkg/m21.py", files["pkg/m21.py"] + "# 7\n")
    assert mode.startswith(around) and " edges moved, 0 came and 1 went; " in mode, mode
    # a file renamed: one gone, one came (m13 imports it under its old name: an end lost)
    (root / "pkg/m14.py").rename(root / "pkg/renamed.py")
    mode, _ = step(8, "pkg/renamed.py", (root / "pkg/renamed.py").read_text())
    assert ", 1 came and 1 went; " in mode and mode.startswith(around), mode


def test_a_new_function_makes_again_only_the_edges_that_read_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``edges_to_make``: when a changed file's symbols move (a function defined, renamed)
    but not its language, manifest or namespaces, the edges made again are the file's, its
    in-neighbours' (whose fragments point into it) and those of the test files that call a
    name it defines or defined (``_called_files``' table): not every file's. The export and
    every table row are a full build's; a Java file's symbols (a class is found by its
    package and name) or a changed manifest still make every file's edges again."""
    import oracl.builder.orchestrator as orchestrator

    files = {
        "pkg/calc.py": "def add(a, b):\n    return a + b\n",
        "pkg/use.py": "from pkg.calc import add\n\n\ndef run():\n    return add(1, 2)\n",
        "pkg/other.py": "def other():\n    return 0\n",
        "tests/test_totals.py": "from pkg.use import run\n\n\ndef test_totals():\n    assert compute_total([run()]) == 3\n",
        "tests/test_other.py": "from pkg.other import other\n\n\ndef test_other():\n    assert other() == 0\n",
        "src/Main.java": "package app;\n\npublic class Main {\n    public int one() { return 1; }\n}\n",
        "src/Use.java": "package app;\n\npublic class Use {\n    Main m = new Main();\n}\n",
    }
    root, t0 = _built_tree(tmp_path, files)
    seen: list[set[str] | None] = []
    real = orchestrator.edges_to_make
    monkeypatch.setattr(orchestrator, "edges_to_make", lambda *a: seen.append(real(*a)) or seen[-1])

    def step(k: int, rel: str, text: str) -> set[str] | None:
        (root / rel).write_text(text)
        _stamp(root / rel, k)
        build(root, now=t0 + timedelta(minutes=k), **KW)
        _as_full_build(root, t0 + timedelta(minutes=k, seconds=30), k)
        return seen[-1]

    # compute_total defined: calc, use (imports calc) and the test that calls compute_total
    assert step(1, "pkg/calc.py", files["pkg/calc.py"] + "\n\ndef compute_total(xs):\n    return sum(xs)\n") == \
        {"pkg/calc.py", "pkg/use.py", "tests/test_totals.py"}
    ids = {n["id"]: n.get("path") for n in _canonical(root)["nodes"]}
    tested = {(ids[e["source"]], ids[e["target"]]) for e in _canonical(root)["edges"] if e["relation"] == "tests"}
    assert ("tests/test_totals.py", "pkg/calc.py") in tested, tested
    # renamed: the test no longer finds it (its edge goes), the other test is not read
    assert step(2, "pkg/calc.py", files["pkg/calc.py"] + "\n\ndef compute_sum(xs):\n    return sum(xs)\n") == \
        {"pkg/calc.py", "pkg/use.py", "tests/test_totals.py"}
    ids = {n["id"]: n.get("path") for n in _canonical(root)["nodes"]}
    assert ("tests/test_totals.py", "pkg/calc.py") not in {
        (ids[e["source"]], ids[e["target"]]) for e in _canonical(root)["edges"] if e["relation"] == "tests"}
    # a body changed, its lines kept: the file's edges alone (use.py's edge into add's lines is the same)
    assert step(3, "pkg/calc.py", files["pkg/calc.py"].replace("a + b", "b + a") +
                "\n\ndef compute_sum(xs):\n    return sum(xs)\n") == {"pkg/calc.py"}
    # a body a line longer: add's lines moved, so the in-neighbour's edge into them is made again
    assert step(4, "pkg/calc.py", files["pkg/calc.py"].replace("    return a + b", "    c = b + a\n    return c") +
                "\n\ndef compute_sum(xs):\n    return sum(xs)\n") == {"pkg/calc.py", "pkg/use.py"}
    # a Java class's method more: every file's edges
    assert step(5, "src/Main.java", files["src/Main.java"].replace("    public int one()",
                                                                   "    public int two() { return 2; }\n"
                                                                   "    public int one()")) is None


def _forked_step(root: Path, t0: datetime, seen: Path, spy: str, k: int, rel: str, text: str,
                 *extra: str) -> tuple[str, str, list[str]]:
    """``rel`` written as ``text`` at step ``k``, then a build that forks (the CLI's
    executor), in a process of its own (one holding an engine open must not fork), with
    ``spy`` (Python run after ``orchestrator`` is imported; it appends a line per call to
    ``sys.argv[3]``, ``seen``; ``extra`` are ``sys.argv[4:]``). Asserts the export and the
    symbol rows are a full build's; returns (the build's pid, its symbols mode, the lines)."""
    driver = ("import os, sys\n"
              "from datetime import datetime\n"
              "from pathlib import Path\n"
              "import oracl.builder.orchestrator as orchestrator\n"
              + spy +
              "report = orchestrator.build(Path(sys.argv[1]), now=datetime.fromisoformat(sys.argv[2]),\n"
              "                            executor_kind='processes', buffer_pool_bytes=64 << 20, workers=1)\n"
              "print(os.getpid(), report.symbols_mode, sep='\\t')\n")
    (root / rel).write_text(text)
    _stamp(root / rel, k)
    seen.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", driver, str(root), (t0 + timedelta(minutes=k)).isoformat(),
                           str(seen), *extra], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pid, mode = proc.stdout.strip().split("\t")
    calls = seen.read_text().splitlines() if seen.exists() else []
    export, symbol_rows = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root)
    assert (export, symbol_rows) == _full_rows_beside(root, t0 + timedelta(minutes=k, seconds=30)), k
    return pid, mode, calls


def test_the_changed_files_symbols_are_resolved_in_a_task_beside_the_edges(tmp_path: Path) -> None:
    """``start_symbols``: a cold build whose files kept their interface reads the latest's
    name tables back and resolves the changed files' calls in a forked task, while it
    makes the edges; only the changed files' rows come back. The export and the symbol
    tables' rows are a full build's; the resolution ran in another process, over the
    changed file only. When the tables cannot be read, the task gives nothing and the
    build declares every file itself (and writes the tables again)."""
    n = 40
    root, files, t0 = _chain_tree(tmp_path, n)
    seen = tmp_path / "resolved.txt"
    spy = ("real = orchestrator.symbol_graph\n"
           "def spy(facts, idx, only=None, table=None, fork=None):\n"
           "    with open(sys.argv[3], 'a') as fh:\n"
           "        fh.write(f\"{os.getpid()} {sorted(only) if only is not None else 'all'} {table is not None}\\n\")\n"
           "    return real(facts, idx, only, table, fork)\n"
           "orchestrator.symbol_graph = spy\n")

    def step(k: int, rel: str, text: str) -> tuple[str, str, list[str]]:
        return _forked_step(root, t0, seen, spy, k, rel, text)

    pid, mode, calls = step(1, "pkg/m7.py", files["pkg/m7.py"].replace("x + 7", "f8(x) + 7"))
    assert mode == "symbols: the rows of 1 changed file made again, the others reused; the name tables read back"
    assert calls == [f"{calls[0].split()[0]} ['pkg/m7.py'] True"] and calls[0].split()[0] != pid, (pid, calls)
    # the tables' part damaged: the task reads nothing, the build declares every file here
    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())["build_id"]
    entry = orjson.loads((root / ".oracl" / "mirror" / latest / "stat.bin").read_bytes())["symbol_table"]
    from oracl.core.parts import store_of

    part = store_of(root / ".oracl").path(entry["part"])
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    pid, mode, calls = step(2, "pkg/m9.py", files["pkg/m9.py"] + "# 2\n")
    assert mode == "symbols: the rows of 1 changed file made again, the others reused", mode
    # (and m7's: the standby this build took over holds its rows from before step 1)
    assert calls == [f"{pid} ['pkg/m7.py', 'pkg/m9.py'] False"], calls


def test_what_a_moved_interface_reaches_is_resolved_again_in_a_task_beside_the_edges(tmp_path: Path) -> None:
    """``start_symbols`` for a cold build whose files came, went or changed their
    interface: ``resolve_again`` (the name tables read back and patched, the files the
    change reaches resolved again) runs in a forked task while the build makes the edges,
    and its rows are a full build's. When the patched tables are to be written whole (a
    patch past ``name_tables.COMPACT``, here set to 0), the task sends nothing back and the
    build resolves again itself, keeping the tables."""
    n = 40
    root, files, t0 = _chain_tree(tmp_path, n)
    seen = tmp_path / "again.txt"
    spy = ("from oracl.builder import name_tables\n"
           "name_tables.COMPACT = int(sys.argv[4])\n"
           "real = orchestrator.resolve_again\n"
           "def spy(*args, **kw):\n"
           "    out = real(*args, **kw)\n"
           "    with open(sys.argv[3], 'a') as fh:\n"
           "        fh.write(f\"{os.getpid()} {type(out).__name__}\\n\")\n"
           "    return out\n"
           "orchestrator.resolve_again = spy\n")

    def step(k: int, rel: str, text: str, compact: int) -> tuple[str, str, list[str]]:
        return _forked_step(root, t0, seen, spy, k, rel, text, str(compact))

    # a function more in m7 (its interface moved; no other file reads its name)
    pid, mode, calls = step(1, "pkg/m7.py", files["pkg/m7.py"] + "\n\ndef g7(x):\n    return f7(x)\n", 1000)
    assert mode == ("symbols: the name tables patched for 1 file that came, went or changed their interface; "
                    "1 file's rows made again, 1 moved and 0 gone written (pkg/m7.py changed what other files' "
                    "names resolve to)"), mode
    assert len(calls) == 1 and calls[0].split()[1] == "Again" and calls[0].split()[0] != pid, (pid, calls)
    # the tables to be written whole: the task's work is dropped, this process does it again
    pid, mode, calls = step(2, "pkg/m9.py", files["pkg/m9.py"] + "\n\ndef g9(x):\n    return f9(x)\n", 0)
    assert mode.startswith("symbols: the name tables patched for 1 file"), mode
    assert [c.split()[1] for c in calls] == ["Again", "Again"] and calls[0].split()[0] != pid \
        and calls[1].split()[0] == pid, (pid, calls)


def test_an_add_a_delete_and_a_rename_table_only_the_rows_of_the_export_groups_that_moved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``reach.reach_of_groups``: a cold build whose structure moved (a file added,
    deleted, renamed; an edge more) finds the rows it can differ in from the latest in its
    export: a group of rows whose part is one of the latest's holds the latest's very rows.
    The load then reads back and compares only the rows of the other groups (and of the
    files gone), and the next build's standby takes that reach. After each step every row
    of the artifact graph's tables and the export are a full build's."""
    n = 600  # (~10 node groups and ~10 edge groups: a group closes after ~1 key in 64)
    root, files, t0 = _chain_tree(tmp_path, n)
    seen = _refreshes(monkeypatch)

    def step(k: int, change: Any) -> Any:
        change()
        seen.clear()
        report = build(root, now=t0 + timedelta(minutes=2 * k), **KW)
        rows, export = _graph_rows(root), _canonical(root)
        vault, saved = root / ".oracl", root.parent / "saved-vault"
        shutil.copytree(vault, saved, symlinks=True)
        build(root, full=True, now=t0 + timedelta(minutes=2 * k + 1), **KW)
        assert _canonical(root) == export, (k, _first_difference(export, _canonical(root)))
        assert _graph_rows(root) == rows, k
        shutil.rmtree(vault)
        saved.rename(vault)
        assert len(seen) == 1 and seen[0] is not None, (k, report.database_mode)
        return seen[0]

    def recorded_reach() -> tuple[set[str], set[str]]:  # (what stat.bin records against the latest)
        latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())["build_id"]
        doc = orjson.loads((root / ".oracl" / "mirror" / latest / "stat.bin").read_bytes())["reach"]
        return set(doc["nodes"]), set(doc["sources"])

    def write(rel: str, text: str, k: int) -> Any:
        def go() -> None:
            (root / rel).write_text(text)
            _stamp(root / rel, k)
        return go

    added = step(1, write("pkg/extra.py", "import pkg.m5\n\n\ndef extra(x):\n    return x\n", 1))
    assert "pkg/extra.py" in added.nodes and "pkg/extra.py" in added.sources
    assert len(added.nodes) < n // 2 and len(added.sources) < n // 2, (len(added.nodes), len(added.sources))
    gone = step(2, lambda: (root / "pkg" / "extra.py").unlink())
    assert "pkg/extra.py" in gone.nodes and "pkg/extra.py" in gone.sources
    assert len(gone.nodes) < n // 2 and len(gone.sources) < n // 2
    # (the standby is two builds behind: its reach is this build's and the latest's together)
    moved = step(3, lambda: (root / "pkg" / "m300.py").rename(root / "pkg" / "m300b.py"))
    nodes, sources = recorded_reach()
    assert {"pkg/m300.py", "pkg/m300b.py"} <= nodes <= moved.nodes and len(nodes) < n // 2, len(nodes)
    assert {"pkg/m300.py", "pkg/m300b.py"} <= sources <= moved.sources and len(moved.nodes) < n
    edge = step(4, write("pkg/m9.py", "import pkg.m3\n" + files["pkg/m9.py"], 4))
    nodes, sources = recorded_reach()
    assert "pkg/m9.py" in sources and len(sources) < n // 2 and len(edge.sources) < n


def test_a_full_build_whose_spare_cannot_be_copied_still_publishes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The spare is a convenience: when its copy fails (here: refused), the full build
    publishes without it, leaves no staging folder, and its first rebuild copies the
    latest's database as before, with the same export as a full build."""
    from oracl.bundle import provenance

    def refused(*_: object) -> None:
        raise PermissionError("refused")

    monkeypatch.setattr(provenance, "copy_spare", refused)
    root = write_tree(tmp_path / "repo", CALLERS)
    for rel in CALLERS:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    first = build(root, now=t0, **KW)
    assert sorted(p.name for p in Vault(root).mirror.iterdir() if p.is_dir()) == [Path(first.bundle_path).name]
    (root / "pkg/shop.py").write_text(CALLERS["pkg/shop.py"] + "# one\n")
    _stamp(root / "pkg/shop.py", 1)
    one = build(root, now=t0 + timedelta(minutes=2), **KW)
    assert one.database_mode == "database: a copy of the latest (the latest build started from no bundle)"
    assert _canonical(root) == _full_beside(root, t0 + timedelta(minutes=3))[0]


def test_a_flipped_byte_in_a_facts_or_edge_shard_is_never_read_as_the_latests(tmp_path: Path) -> None:
    """The facts shards and the edge shards are decoded while their digests are made in a
    thread beside (``digests_beside``): a shard with one byte flipped is said by its digest,
    whatever its decoding made of it, and the next build starts from scratch (facts) or
    makes every file's edges again (edges), and equals a full build either way."""
    from oracl.builder.edge_shards import read_edges
    from oracl.builder.incremental import decode_head, digests_beside, read_facts, shard_groups

    assert digests_beside.__doc__
    with digests_beside([b"", b"abc"]) as made:
        pass
    assert made == [hashlib.sha256(b"").hexdigest(), hashlib.sha256(b"abc").hexdigest()]
    files = {f"pkg/m{i}.py": f"from pkg.m{max(i - 1, 0)} import f{max(i - 1, 0)}\n\n\ndef f{i}():\n    return {i}\n"
             for i in range(12)}
    root = write_tree(tmp_path / "r", files)
    bundle = Path(build(root, **KW).bundle_path)
    head = decode_head((bundle / FACTS_FILE).read_bytes())
    groups: dict[int, list[str]] = {}
    assert len(read_facts(bundle, head, groups)) == 12
    # (each shard's paths as read: what grouping the files again gives, which a build whose
    # files are these takes instead of hashing every path)
    assert groups == shard_groups(sorted(files)) and sum(map(len, groups.values())) == 12
    facts_shard = bundle / sorted(head["shards"])[0]
    edge_shard = bundle / sorted(head["edge_shards"])[0]
    for shard in (facts_shard, edge_shard):
        shard.chmod(0o644)
        data = bytearray(shard.read_bytes())
        data[len(data) // 2] ^= 1
        shard.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=f"{facts_shard.name} does not match its digest"):
        read_facts(bundle, head)
    assert read_edges(SimpleNamespace(bundle=bundle, edge_shards=dict(head["edge_shards"]),  # type: ignore[arg-type]
                                      facts=dict.fromkeys(files), edges_merged_with="")) is None
    (root / "pkg/m3.py").write_text(files["pkg/m3.py"] + "# three\n")
    assert build(root, **KW).mode.startswith("full: ")
    incremental = _canonical(root)
    full = _full_beside(root, datetime.now(UTC))[0]
    assert incremental == full, _first_difference(incremental, full)


def test_the_newest_file_made_older_moves_the_newest_mtime_as_a_full_build(tmp_path: Path) -> None:
    """A cold rebuild whose structure is the latest's takes the newest mtime from the files
    read again (``weigh.newest_kept``): when the file that held it is edited and dated
    back, every file's mtime is read and the freshness of every row is a full build's; when
    another is edited, its mtime or the latest's newest. Each step equals a full build."""
    files = {f"pkg/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(4)}
    root, t0 = _built_tree(tmp_path, files)
    _stamp(root / "pkg/m3.py", 30)  # (m3 the newest, m1 the next)
    _stamp(root / "pkg/m1.py", 20)
    build(root, now=t0 + timedelta(minutes=1), **KW)
    # (m3 dated back to 10: m1's 20 the newest; m2 to 5: still m1's; m0 to 40: its own)
    for k, (rel, at, newest) in enumerate((("pkg/m3.py", 10, 20), ("pkg/m2.py", 5, 20), ("pkg/m0.py", 40, 40)),
                                          start=2):
        with open(root / rel, "a") as fh:
            fh.write(f"# {k}\n")
        _stamp(root / rel, at)
        report = build(root, now=t0 + timedelta(minutes=k), **KW)
        assert report.weigh_mode.startswith("weigh: the structure is the latest's"), (k, report.weigh_mode)
        held = orjson.loads(export_of(root))["schema"]["aggregates"]["newest_mtime_ns"]
        assert held == OLD + newest * 10**9, (k, held)
        _as_full_build(root, t0 + timedelta(minutes=k, seconds=30), k)


def test_a_cold_rebuild_counts_its_files_from_the_latests_counts_as_a_full_build(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold rebuild's files by parse status and by language are the latest's (its
    ``stat.bin`` head records them) with the files read again or gone moved, no pass over
    every file: equal to a full build's after a parse that fails, a file gone and one added
    in another language; a head whose counts do not add up is counted over every file."""
    import oracl.builder.orchestrator as orchestrator
    from oracl.core.parts import stat_files
    from oracl.core.vault import STAT_FILE, Vault

    files = {"pkg/a.py": "def a():\n    return 1\n", "pkg/b.py": "def b():\n    return 2\n",
             "docs/c.md": "# C\n\nText.\n"}
    root, t0 = _built_tree(tmp_path, files)
    steps = ((lambda: (root / "pkg/a.py").write_text("def a(:\n    return (\n")),
             (lambda: (root / "pkg/b.py").unlink()),
             (lambda: (root / "src/d.rs").parent.mkdir() or (root / "src/d.rs").write_text("fn d() -> i32 { 4 }\n")))
    for k, change in enumerate(steps, start=1):
        change()
        report = build(root, now=t0 + timedelta(minutes=k), **KW)
        full = _as_full_build(root, t0 + timedelta(minutes=k, seconds=30), k)
        assert (report.parse_status, report.languages) == (full.parse_status, full.languages), k
        vault = Vault(root)
        head, _ = stat_files((vault.bundle(vault.read_latest()["build_id"]) / STAT_FILE).read_bytes(), vault.dir)
        assert head[orchestrator.FILE_COUNTS] == [dict(sorted(report.parse_status.items())),
                                                  dict(sorted(report.languages.items()))], k
    assert report.languages == {"markdown": 1, "python": 1, "rust": 1}, report.languages
    assert report.parse_status["ok"] == 2 and sum(report.parse_status.values()) == 3, report.parse_status
    # the counts are the head's: planted ones (adding up to its files) come back moved by the
    # file read again (a.py failed to parse and parses now: its status moves to "ok"); planted
    # ones that do not add up are not used (every file counted)
    real = orchestrator.file_counts
    planted: list[Any] = []

    def spying(carry: Any, r: Any, latest: Any = None) -> Any:
        return real(carry, r, {**latest, orchestrator.FILE_COUNTS: planted} if latest else latest)

    monkeypatch.setattr(orchestrator, "file_counts", spying)
    for k, (plant, want) in enumerate(((([{"ok": 2, "planted": 1}, {"python": 2, "planted": 1}]),
                                        ({"ok": 3, "planted": 1}, {"python": 2, "planted": 1})),
                                       (([{"ok": 9}, {"python": 9}]),
                                        ({"ok": 3}, {"markdown": 1, "python": 1, "rust": 1}))), start=10):
        planted[:] = plant
        (root / "pkg/a.py").write_text(f"def a():\n    return {k}\n")
        report = build(root, now=t0 + timedelta(minutes=k), **KW)
        assert (report.parse_status, report.languages) == want, (k, report.parse_status, report.languages)


def test_the_latests_lineage_lists_what_its_standby_is_behind_on(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild records in its lineage each file it read or removed with its checksum in
    the bundle it started from (``provenance.lineage``'s ``delta``); the next cold build
    takes that bundle over as its standby and catches those files up from the list, without
    reading the standby's checksums of every file. A lineage that lists none (more files
    than ``DELTA_MAX``) has the standby's checksums read, as before. Each build's export,
    symbol rows and full-text answer equal a full build's."""
    from oracl.bundle import database, provenance
    from oracl.core.vault import MANIFEST

    root = write_tree(tmp_path / "repo", CALLERS)
    for rel in CALLERS:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    read_whole: list[str] = []
    real = database.stat_files

    def counting(*a: Any, **kw: Any) -> Any:
        read_whole.append("stat")
        return real(*a, **kw)

    monkeypatch.setattr(database, "stat_files", counting)

    def checksum(rel: str) -> str:  # (the latest build's, from its stat.bin)
        from oracl.core.parts import stat_files
        from oracl.core.vault import STAT_FILE

        vault = Vault(root)
        return str(stat_files((vault.bundle(vault.read_latest()["build_id"]) / STAT_FILE).read_bytes(),
                              vault.dir)[1][rel][2])

    def edit(step: int, rel: str, text: str) -> Any:
        before = checksum(rel)
        (root / rel).write_text(text)
        _stamp(root / rel, step)
        read_whole.clear()
        report = build(root, now=t0 + timedelta(minutes=2 * step), **KW)
        lineage = orjson.loads((Path(report.bundle_path) / MANIFEST).read_bytes())["lineage"]
        assert lineage.get("delta") == ({rel: before} if provenance.DELTA_MAX else None), (step, lineage)
        export, rows, answer = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root), \
            _answer(root)
        assert (export, rows, answer) == _full_rows_beside(root, t0 + timedelta(minutes=2 * step + 1), answer=True)
        return report

    one = edit(1, "pkg/shop.py", CALLERS["pkg/shop.py"] + "# one\n")  # (the full build's spare: nothing behind)
    assert one.database_mode == "database: the standby updated in place (0 more files caught up)"
    two = edit(2, "pkg/cart.py", CALLERS["pkg/cart.py"] + "# two\n")  # (the standby is behind on shop.py)
    assert two.database_mode == ("database: the standby updated in place (1 more file caught up, known to the "
                                 "latest build)") and not read_whole, (two.database_mode, read_whole)
    monkeypatch.setattr(provenance, "DELTA_MAX", 0)
    three = edit(3, "pkg/base.py", CALLERS["pkg/base.py"] + "# three\n")  # (behind on cart.py: listed by two)
    assert three.database_mode.endswith("(1 more file caught up, known to the latest build)"), three.database_mode
    four = edit(4, "pkg/shop.py", CALLERS["pkg/shop.py"] + "# four\n")  # (three listed none: its standby's read)
    assert four.database_mode == "database: the standby updated in place (1 more file caught up)", four.database_mode
    assert read_whole == ["stat"], read_whole


def test_a_proven_structures_export_groups_its_edges_by_source(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold rebuild whose structure is the latest's writes the export's edge section from
    each file's run of the merged edges and its membership (``EdgeRows.by_source``), the
    groups cut over the sources' ids: no order of every edge is made (``edge_order``), and
    the export equals a full build's — an edit in a file with edges out and in, one in a
    file with none, and one that moves a fragment's lines."""
    import oracl.builder.orchestrator as orchestrator

    files = {f"pkg/m{i}.py": f"import pkg.m{(i + 1) % 12}\n\n\ndef f{i}(x):\n    return x + {i}\n" for i in range(12)}
    files["pkg/lone.py"] = "def lone():\n    return 0\n"
    files["docs/guide.md"] = "# Guide\n\nSee `pkg/m3.py` and f3.\n"
    root, t0 = _built_tree(tmp_path, files)
    refusing = [False]
    real = orchestrator.edge_order

    def refuse(*a: Any, **kw: Any) -> Any:
        assert not refusing[0], "every edge was ordered"
        return real(*a, **kw)

    monkeypatch.setattr(orchestrator, "edge_order", refuse)
    for k, (rel, text) in enumerate((("pkg/m3.py", files["pkg/m3.py"] + "# note\n"),
                                     ("pkg/lone.py", files["pkg/lone.py"] + "# note\n"),
                                     ("pkg/m7.py", "# a line before\n" + files["pkg/m7.py"])), start=1):
        (root / rel).write_text(text)
        _stamp(root / rel, k)
        refusing[0] = True  # (the rebuild's alone: the full build below orders every edge)
        report = build(root, now=t0 + timedelta(minutes=k), **KW)
        refusing[0] = False
        assert report.weigh_mode.startswith("weigh: the structure is the latest's"), (k, report.weigh_mode)
        _as_full_build(root, t0 + timedelta(minutes=k, seconds=30), k)
