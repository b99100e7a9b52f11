"""Bad input and faults of a selective rebuild (issue 29), one test each: a kill after every
phase, a damaged or foreign symbol index, 10,000 files at once, a rename with an edit, a
branch switch over 30 % of a git tree, two builds at once, and a reader that holds its
snapshot for ten minutes of builds. Real processes, a real git repository, real Kùzu."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.bundle.verify import verify
from oracl.core.errors import OraclError, QueryError
from oracl.core.parts import decode_index, digests, store_of
from oracl.core.vault import MANIFEST, SYMBOLS_FILE, Vault
from oracl.read.memory import Memory

from .conftest import ORACL, git, run_cli, write_tree
from .test_incremental import KW, _canonical, _first_difference, _full_beside

OLD = time.time_ns() - 86_400 * 10**9  # a day back: never "racily clean"
# every phase the orchestrator times, in the order it runs them
PHASES = ("discover", "read", "content", "history", "phase2", "phase3", "merge", "symbols", "weigh", "export",
          "load")


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ORACL_") or k == "ORACL_HOME"}


def _chain(n: int) -> dict[str, str]:
    """m{i} imports f{i-1} from m{i-1} and defines f{i}; nothing calls f6 yet."""
    return {f"pkg/m{i}.py": f"from pkg.m{max(i - 1, 0)} import f{max(i - 1, 0)}\n\n\ndef f{i}():\n    return {i}\n"
            for i in range(n)}


def _dated(root: Path, files: dict[str, str], step: int = 0) -> Path:
    write_tree(root, files)
    for rel in files:
        os.utime(root / rel, ns=(OLD + step * 10**9, OLD + step * 10**9))
    return root


def _callers(root: Path, name: str) -> list[str]:
    mem = Memory.open(root)
    try:
        return sorted(c["id"] for c in mem.callers(name)["callers"])
    finally:
        mem.close()


def _equals_full(root: Path, **overrides: object) -> None:
    incremental = _canonical(root)
    full = _full_beside(root, datetime.now(UTC), **overrides)[0]
    assert incremental == full, _first_difference(incremental, full)


def _flip_a_byte(path: Path) -> None:
    """One bit of the file's middle byte flipped (bundle files are read-only)."""
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


def _edit_m7_to_call_f6(root: Path, files: dict[str, str]) -> None:
    _dated(root, {"pkg/m7.py": files["pkg/m7.py"].replace("return 7", "return f6() + 7")}, step=1)


def _latest_bundle(root: Path) -> Path:
    vault = Vault(root)
    return vault.bundle(vault.read_latest()["bundle"])


@pytest.mark.parametrize("how", ["selective", "--full"])
@pytest.mark.parametrize("phase", PHASES)
def test_sigkill_after_each_phase_of_a_build_leaves_the_previous_one_serving(tmp_path: Path, phase: str,
                                                                           how: str) -> None:
    """A selective build, or a full one over a previous build (what the chain's bound, the
    compaction, runs), killed after each phase: the previous build serves, and the next
    build starts from it."""
    files = _chain(40)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    _edit_m7_to_call_f6(root, files)
    crashed = run_cli("build", str(root), "-q", "--workers", "1", *([how] if how == "--full" else []),
                      env={**clean_env(), "ORACL_FAULT": f"after {phase}"})
    assert crashed.returncode == -9, (phase, crashed.stderr)
    assert verify(root)[0].startswith("latest: ")
    published = phase == PHASES[-1]  # the load ends by flipping LATEST: that build is whole and served
    assert _callers(root, "f6") == (["pkg/m7.py#f7"] if published else [])  # else the previous one, whole
    report = build(root, **KW)
    if published:
        assert report.mode == "incremental: 40 reused, 0 read, 0 removed", report.mode
    else:
        assert report.mode == "incremental: 39 reused, 1 read, 0 removed", report.mode
        assert report.symbols_mode == \
            "symbols: the rows of 1 changed file made again, the others reused; the name tables read back"
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]
    assert not list((root / ".oracl" / "mirror").glob("*.tmp"))
    assert _stored_parts(root) == _named_parts(root)  # what the killed build wrote and no index names: gone
    _equals_full(root)


def _named_parts(root: Path) -> set[str]:
    """The parts a kept export index (bundles, snapshots, the top-level copy) or a kept
    bundle's symbols.seg or stat.bin (its rows, its edges' raw ranks, its name tables, its
    reads' base and delta, its type names) names."""
    vault = root / ".oracl"
    indexes = [*vault.glob("mirror/*/export.idx"), *vault.glob("snapshots/*/export.idx"), vault / "export.idx"]
    named = set().union(*(digests(decode_index(i.read_bytes())) for i in indexes if i.is_file()))
    for seg in vault.glob(f"mirror/*/{SYMBOLS_FILE}"):
        named |= {d for d, *_ in orjson.loads(seg.read_bytes())["groups"]}
    for stat in vault.glob("mirror/*/stat.bin"):
        doc = orjson.loads(stat.read_bytes())
        named |= {d for d, _ in doc["parts"]} | ({doc["ranks"][0]} if "ranks" in doc else set()) \
            | ({doc["interface_types"][0]} if "interface_types" in doc else set()) \
            | ({doc["symbol_table"]["part"]} if "symbol_table" in doc else set()) \
            | {p["part"] for p in (doc.get("read_sets") or {}).values() if p} \
            | ({doc["symbol_table"]["patch"]["part"]} if "patch" in doc.get("symbol_table", {}) else set())
    return named


def _stored_parts(root: Path) -> set[str]:
    return {p.name for p in (root / ".oracl" / "parts").rglob("*") if p.is_file()}


@pytest.mark.parametrize("point", [*(f"after {p}" for p in PHASES if p not in ("discover", "history", "phase2")),
                                   "copy", "sealed", "flip"])
def test_sigkill_while_a_standby_is_updated_in_place_leaves_the_latest_serving(tmp_path: Path, point: str) -> None:
    """A build that takes over the standby (the bundle the latest build started from),
    killed at each step – before the takeover, inside the in-place update (``copy``: after
    the rows are written), after sealing, before the flip: the latest build serves
    untouched, verify passes, and the next build (which may have lost the standby: it then
    patches a copy) equals a full build."""
    files = _chain(40)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    _dated(root, {"pkg/m3.py": files["pkg/m3.py"] + "# three\n"}, step=1)
    latest = build(root, **KW)  # the chain's second build: the first is now its standby
    _dated(root, {"pkg/m7.py": files["pkg/m7.py"].replace("return 7", "return f6() + 7")}, step=2)
    crashed = run_cli("build", str(root), "-q", "--workers", "1", env={**clean_env(), "ORACL_FAULT": point})
    assert crashed.returncode == -9, (point, crashed.stderr)
    assert verify(root)[0].startswith("latest: ")
    published = point == "after load"
    assert (_latest_bundle(root).name == latest.build_id) != published
    assert _callers(root, "f6") == (["pkg/m7.py#f7"] if published else [])
    report = build(root, **KW)
    assert report.mode.startswith("incremental: "), report.mode
    lost = point not in ("after read", "after load")  # the killed build had taken the standby over
    assert report.database_mode == ("database: a copy of the latest (no standby bundle)" if lost else
                                    "database: the standby updated in place (1 more file caught up, known to the "
                                    "latest build)"), \
        (point, report.database_mode)
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]
    assert not list((root / ".oracl" / "mirror").glob("*.tmp"))
    assert verify(root)[0].startswith("latest: ")
    _equals_full(root)


def test_an_engine_fault_while_a_standby_is_updated_in_place_makes_the_build_start_again_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine fails inside the in-place update of the standby (Kùzu 0.11.3's
    `csr_node_group.cpp` assertion, met in benchmark runs): the build does not fail; it
    starts again, full, its mode says why, the answer equals a full build's and verify
    passes. A fault outside an earlier build's database (a fresh one) is the build's error."""
    from oracl.bundle import database
    from oracl.core.errors import StoreError

    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    _dated(root, {"pkg/m3.py": files["pkg/m3.py"] + "# three\n"}, step=1)
    build(root, **KW)  # the chain's second build: the first is now its standby
    real = database._refresh_graph
    fault = "Assertion failed in file \"csr_node_group.cpp\" on line 411: KU_UNREACHABLE"
    calls: list[int] = []

    def failing(store: object, tables: dict[str, object], only: object = None) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise StoreError(f"query failed: {fault}")
        real(store, tables, only)  # type: ignore[arg-type]

    monkeypatch.setattr(database, "_refresh_graph", failing)
    _edit_m7_to_call_f6(root, files)
    report = build(root, **KW)
    assert report.mode == ("full: the engine failed while it brought an earlier build's database up to date "
                           f"(query failed: {fault})"), report.mode
    assert len(calls) == 1  # (the full build loads its rows whole: no in-place update)
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]
    assert verify(root)[0].startswith("latest: ")
    assert not list((root / ".oracl" / "mirror").glob("*.tmp"))
    _equals_full(root)
    # a full build's own load failing is not retried
    monkeypatch.setattr(database, "finish_bundle", lambda *a, **k: (_ for _ in ()).throw(StoreError("boom")))
    with pytest.raises(StoreError, match="boom"):
        build(root, full=True, **KW)
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]


def test_the_engine_drops_a_node_groups_edges_when_a_checkpoint_empties_every_region_it_touched(
        tmp_path: Path) -> None:
    """Kùzu 0.11.3, as a one-file rebuild meets it: 3,000 edges loaded among the first
    1,000 of 5,000 nodes, five made in place from the last node and checkpointed, then
    deleted and checkpointed. The checkpoint's touched regions of the forward copy are all
    empty, and the engine drops the node group's whole forward copy: every edge is gone
    from that side, none from the other. ``directions_disagree`` (run after every in-place
    update) names it; the build then starts again, full (next test)."""
    import pyarrow as pa

    from oracl.bundle.database import directions_disagree
    from oracl.core.store import Store, close

    path = tmp_path / "g.kuzu"
    store = Store.open(path, read_only=False, buffer_pool_bytes=256 << 20, threads=2)
    try:
        store.execute("CREATE NODE TABLE S(id STRING PRIMARY KEY)")
        store.execute("CREATE REL TABLE C(FROM S TO S, w DOUBLE)")
        store.execute("COPY S FROM $t", {"t": pa.table({"id": [f"s{i}" for i in range(5000)]})})
        store.execute("COPY C FROM $t", {"t": pa.table({"from": [f"s{i}" for i in range(1000) for _ in range(3)],
                                                         "to": [f"s{(i * 7 + j) % 1000}" for i in range(1000)
                                                                for j in range(3)],
                                                         "w": [1.0] * 3000})})
        store.execute("CHECKPOINT")
        for k in range(5):
            store.execute("MATCH (a:S {id: 's4999'}), (b:S {id: $b}) CREATE (a)-[:C {w: 2.0}]->(b)", {"b": f"s{3000 + k}"})
        store.execute("CHECKPOINT")
        assert directions_disagree(store, [("C", "S", "S")], {"C": 3005}) == ""
        store.execute("MATCH (:S {id: 's4999'})-[e:C]->(:S) DELETE e")
        store.execute("CHECKPOINT")
        # (one direction's copy dropped, or both: seen both ways on this engine)
        lost = directions_disagree(store, [("C", "S", "S")], {"C": 3000})
        assert lost in ("C 0 forward, 3,000 backward, 3,000 made", "C 0 forward, 0 backward, 3,000 made"), lost
    finally:
        close(path)


@pytest.mark.parametrize("table, props", [("C", " {w: 2.0}"), ("K", "")])
def test_a_node_group_held_open_keeps_its_edges_through_the_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       table: str, props: str) -> None:
    """The case above, with the deletes made through the store an in-place update uses
    (``database._Deletes``): before the transaction commits, ``hold_groups`` writes one live
    edge of the node group again (C: its weight set to itself; K, with no property: the
    edge deleted and made again), the checkpoint rewrites that edge's region too, and
    nothing is dropped, either way, then or after a reopen."""
    import pyarrow as pa

    from oracl.bundle import database
    from oracl.bundle.database import _Deletes, _transaction, directions_disagree
    from oracl.core.store import Store, close

    monkeypatch.setattr(database, "rel_tables", lambda: [("C", "S", "S"), ("K", "S", "S")])
    monkeypatch.setattr(database, "primary_keys", lambda: {"S": "id"})
    monkeypatch.setattr(database, "rel_numbers", lambda: {"C": "w"})
    path = tmp_path / "g.kuzu"
    store = Store.open(path, read_only=False, buffer_pool_bytes=256 << 20, threads=2)
    try:
        store.execute("CREATE NODE TABLE S(id STRING PRIMARY KEY)")
        store.execute("CREATE REL TABLE C(FROM S TO S, w DOUBLE)")
        store.execute("CREATE REL TABLE K(FROM S TO S)")
        store.execute("COPY S FROM $t", {"t": pa.table({"id": [f"s{i}" for i in range(5000)]})})
        pairs = {"from": [f"s{i}" for i in range(1000) for _ in range(3)],
                 "to": [f"s{(i * 7 + j) % 1000}" for i in range(1000) for j in range(3)]}
        store.execute("COPY C FROM $t", {"t": pa.table({**pairs, "w": [1.0] * 3000})})
        store.execute("COPY K FROM $t", {"t": pa.table(pairs)})
        store.execute("CHECKPOINT")
        for k in range(5):
            store.execute(f"MATCH (a:S {{id: 's4999'}}), (b:S {{id: $b}}) CREATE (a)-[:{table}{props}]->(b)",
                          {"b": f"s{3000 + k}"})
        store.execute("CHECKPOINT")
        deletes = _Deletes(store)
        with _transaction(deletes):  # type: ignore[arg-type]
            deletes.execute(f"MATCH (:S {{id: 's4999'}})-[e:{table}]->(:S) DELETE e")
        assert deletes.tables == {table}
        store.execute("CHECKPOINT")
        assert directions_disagree(store, [("C", "S", "S"), ("K", "S", "S")], {"C": 3000, "K": 3000}) == ""
        assert store.rows(f"MATCH (a:S {{id: 's0'}})-[e:{table}]->(b:S) RETURN b.id AS t ORDER BY t") == [
            {"t": "s0"}, {"t": "s1"}, {"t": "s2"}]  # (the edge written again is s0's first: s0 → s0, as it was)
        close(path)
        store = Store.open(path, read_only=False, buffer_pool_bytes=256 << 20, threads=2)
        assert directions_disagree(store, [("C", "S", "S"), ("K", "S", "S")], {"C": 3000, "K": 3000}) == ""
    finally:
        close(path)


def _group_scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements that scan a node group for a live edge (``hold_groups``), as the
    store runs them from now on."""
    from oracl.core import store as store_module

    scans: list[str] = []
    rows = store_module.Store.rows

    def counted(self: object, statement: str, params: object = None) -> object:
        if "offset(id(" in statement and "LIMIT 1" in statement:
            scans.append(statement)
        return rows(self, statement, params)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module.Store, "rows", counted)
    return scans


def test_a_long_lived_builder_keeps_the_edges_it_held_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``oracl watch``'s Carry keeps ``hold_groups``' pairs: the next update that deletes
    edges checks each pair by key (in whichever database it updates) instead of scanning
    for a live edge of every node group again."""
    from oracl.builder.incremental import Carry

    scans = _group_scans(monkeypatch)
    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    carry = Carry()
    build(root, carry=carry, **KW)
    for step, gone in enumerate(("pkg/m29.py", "pkg/m28.py", "pkg/m27.py"), start=1):
        (root / gone).unlink()
        before = len(scans)
        assert build(root, carry=carry, **KW).mode.startswith("incremental: ")
        if step == 1:  # (the copy of the latest: its deletes scan for a live edge of each group)
            assert len(scans) > before and carry.held, (scans, carry.held)
            kept = dict(carry.held)
        else:  # (the standby, then the copy again: every pair kept is still there)
            assert len(scans) == before and carry.held == kept, scans[before:]
    _equals_full(root)


def test_a_cold_build_takes_the_pairs_the_last_update_held_open_from_the_vault(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold build's in-place update keeps ``hold_groups``' pairs in the vault
    (``held_pairs.json``) and the next cold build checks each by key before scanning a node
    group for a live edge; a pair whose node is not in the group it was chosen for is not
    used; a file that is not a list of pairs (or not a regular file) is no pair."""
    from oracl.bundle import database
    from oracl.core import store as store_module

    scans = _group_scans(monkeypatch)
    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    held_file = root / ".oracl" / database.HELD_FILE
    for step, gone in enumerate(("pkg/m29.py", "pkg/m28.py", "pkg/m27.py"), start=1):
        (root / gone).unlink()
        before = len(scans)
        assert build(root, **KW).mode.startswith("incremental: ")
        if step == 1:  # (no pairs yet: each group scanned, and the pairs kept in the vault)
            assert len(scans) > before and held_file.is_file()
            kept = database.read_held(root / ".oracl")
            assert kept and all(len(k) == 3 and len(v) == 2 for k, v in kept.items())
        else:
            assert len(scans) == before, scans[before:]
            assert database.read_held(root / ".oracl") == kept
    _equals_full(root)
    db = _latest_bundle(root) / "graph.kuzu"
    db.chmod(0o644)
    store = store_module.Store.open(db, read_only=False, buffer_pool_bytes=64 << 20, threads=1)
    try:
        (_, side, group), pair = next((k, v) for k, v in sorted(kept.items()) if k[0] == "Link")
        args = ("Link", "Artifact", "path", "Artifact", "path", database.rel_numbers()["Link"], pair)
        assert database._write_again(store, *args, (side, group)) is True  # type: ignore[arg-type]
        assert database._write_again(store, *args, (side, group + 1)) is False  # type: ignore[arg-type]
    finally:
        store_module.close(db)
    held_file.write_bytes(b'[["Link","x",0,"a.py"],["Link","z",0,"a.py","b.py"],["Link","x","0","a.py","b.py"],'
                          b'["Link","x",0,"a.py","b.py"]]')
    assert database.read_held(root / ".oracl") == {("Link", "x", 0): ("a.py", "b.py")}
    held_file.unlink()
    held_file.symlink_to("/dev/zero")
    assert database.read_held(root / ".oracl") == {}


def test_the_engines_full_text_delete_drops_another_documents_postings(tmp_path: Path) -> None:
    """Kùzu 0.11.3's full-text index, as an in-place update met it: 1,100 documents share
    the words "alpha beta" and each has its own; deleting one row also drops another
    document from the results of both shared words (the index finds that document by its
    own word still). Setting a column the index does not cover drops nothing, which is why
    a full-text row is superseded (``live`` false), never deleted in place."""
    import pyarrow as pa

    from oracl.core.store import Store, close

    def word(i: int) -> str:  # a word of letters only (the tokenizer drops digits)
        return "q" + "".join(chr(97 + (i // 26 ** k) % 26) for k in range(3))

    path = tmp_path / "f.kuzu"
    store = Store.open(path, read_only=False, buffer_pool_bytes=256 << 20, threads=2)
    try:
        store.execute("CREATE NODE TABLE D(id STRING PRIMARY KEY, live BOOLEAN, t STRING)")
        store.execute("COPY D FROM $t", {"t": pa.table({"id": [f"d{i}" for i in range(1100)], "live": [True] * 1100,
                                                        "t": [f"alpha beta {word(i)}" for i in range(1100)]})})
        store.execute("CALL CREATE_FTS_INDEX('D', 'ix', ['t'])")
        store.execute("CHECKPOINT")

        def hits(term: str) -> set[str]:
            return {r["i"] for r in store.rows("CALL QUERY_FTS_INDEX('D', 'ix', $q, top := 5000) RETURN node.id AS i",
                                               {"q": term})}

        everyone = {f"d{i}" for i in range(1100)}
        store.execute("MATCH (d:D {id: 'd3'}) SET d.live = false")
        assert hits("alpha") == hits("beta") == everyone
        store.execute("MATCH (d:D {id: 'd7'}) DELETE d")
        lost = everyone - {"d7"} - hits("alpha")
        assert len(lost) == 1 and lost == everyone - {"d7"} - hits("beta"), lost
        (gone,) = lost
        assert hits(word(int(gone[1:]))) == {gone}
    finally:
        close(path)


def _fts_hits(root: Path, word: str) -> tuple[list[str], tuple[int, int], bool]:
    """(the paths a full-text probe for ``word`` finds, (the documents the postings' delta
    holds, the base's documents gone), whether the base is the previous bundle's, linked)
    on the latest build."""
    from oracl.core import fulltext
    from oracl.read.snapshot import Snapshot

    with Snapshot.open(root) as snap:
        hits = sorted(r["path"] for r in snap.named("fts_probe", {"q": word, "k": 10_000}))
        ft = snap.fulltext()
        assert ft is not None
        linked = (snap.bundle / fulltext.BASE_FILE).stat().st_nlink > 1
        return hits, (len(ft.delta.docs), len(ft.delta.gone)), linked


def test_an_in_place_update_keeps_every_files_full_text_postings(tmp_path: Path) -> None:
    """1,100 files share a word. With the engine's index every one-file rebuild lost one
    more file from that word's results (1,099 after the first edit, 1,097 after the third:
    ``test_the_engines_full_text_delete_drops_another_documents_postings``). The postings
    are now ORACL's: edits, a delete and an add leave every file findable, the base is
    linked from bundle to bundle, and the delta holds the documents written since it and
    names the base's documents they replace or remove."""
    files = {f"pkg/m{i}.py": f"def f{i}():\n    return 'zebra quokka'\n" for i in range(1100)}
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    assert _fts_hits(root, "quokka") == (sorted(files), (0, 0), False)
    now = dict(files)
    for step, (change, delta) in enumerate([("pkg/m7.py", (1, 1)), ("pkg/m300.py", (2, 2)), ("pkg/m900.py", (3, 3)),
                                            ("-pkg/m5.py", (3, 4)), ("+pkg/new.py", (4, 4))], start=1):
        if change.startswith("-"):
            (root / change[1:]).unlink()
            del now[change[1:]]
        else:
            rel = change.lstrip("+")
            now[rel] = now.get(rel, "def g():\n    return 'quokka'\n") + "# edited\n"
            _dated(root, {rel: now[rel]}, step=step)
        assert build(root, **KW).mode.startswith("incremental: ")
        assert _fts_hits(root, "quokka") == (sorted(now), delta, True), change
    _equals_full(root)


def test_a_full_text_delta_past_its_bound_is_folded_into_a_new_base(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``delta_bound`` (2 documents written or gone, here) the next build folds the
    delta into a new base: an edit that would leave it 4 leaves it empty, says so in its
    database line, and every file is still found with the scores a full build gives."""
    from oracl.core import fulltext
    from oracl.read.query.run import search
    from oracl.read.snapshot import Snapshot

    def answer() -> list[tuple[str, float]]:
        with Snapshot.open(root) as snap:
            return [(r["path"], r["score"]) for r in search(snap, "zebra quokka edited", limit=12, log=False).results]

    monkeypatch.setattr(fulltext, "DELTA_DOCS_MIN", 2)
    files = {f"pkg/m{i}.py": f"def f{i}():\n    return 'zebra quokka'\n" for i in range(12)}
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    seen, said = [], []
    for step, i in enumerate([1, 2, 3, 4, 5], start=1):
        files[f"pkg/m{i}.py"] += "# edited quokka\n"
        _dated(root, {f"pkg/m{i}.py": files[f"pkg/m{i}.py"]}, step=step)
        report = build(root, **KW)
        assert report.mode.startswith("incremental: ")
        hits, delta, linked = _fts_hits(root, "quokka")
        assert hits == sorted(files)
        seen.append((delta, linked))
        said.append(report.database_mode.partition("; ")[2])
    assert seen == [((1, 1), True), ((0, 0), False), ((1, 1), True), ((0, 0), False), ((1, 1), True)], seen
    folded = "the full-text delta folded into a new base of 12 documents"
    assert said == ["", folded, "", folded, ""], said
    served = answer()
    assert len(served) == 12
    _equals_full(root)
    build(root, full=True, **KW)
    assert answer() == served


def test_a_files_history_moved_by_a_commit_is_superseded_and_searched_once(tmp_path: Path) -> None:
    """A commit moves the history text of the files it touches: their History rows are
    superseded (``live`` false) and made again, never deleted in place, and a search of
    the past commit subjects finds each file once, with its live text only."""
    from oracl.read.snapshot import Snapshot

    root = _dated(tmp_path / "r", {"pkg/a.py": "def a():\n    return 1\n", "pkg/b.py": "def b():\n    return 2\n"})
    git(root, "init", "-q")
    (root / ".gitignore").write_text(".oracl/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "walrus parser first cut")
    build(root, **KW)
    _dated(root, {"pkg/a.py": "def a():\n    return 3\n"}, step=1)
    git(root, "commit", "-qam", "walrus parser fixed for narwhal input")
    assert build(root, **KW).mode.startswith("incremental: ")
    with Snapshot.open(root) as snap:
        rows = snap.store.rows("MATCH (h:History) RETURN h.path AS path, h.live AS live, h.text AS text "
                               "ORDER BY path, live")
        assert [(r["path"], r["live"]) for r in rows] == [(".gitignore", True), ("pkg/a.py", False), ("pkg/a.py", True),
                                                          ("pkg/b.py", True)]
        assert "narwhal" in rows[2]["text"] and "narwhal" not in rows[1]["text"] + rows[3]["text"]
        assert snap.superseded() == {"History": 1}
        found = snap.named("search_history", {"q": "walrus parser", "k": 5})
        assert sorted(r["path"] for r in found) == [".gitignore", "pkg/a.py", "pkg/b.py"]
        assert [r["path"] for r in snap.named("search_history", {"q": "narwhal", "k": 5})] == ["pkg/a.py"]


def test_edges_lost_by_an_in_place_update_make_the_build_start_again_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the counts of a relationship table's two copies differ after the standby's
    in-place update (the engine fault above), the database is not published: the build
    starts again, full, says why, and equals a full build. The copies are counted without
    reading their ends' keys when both counts are the edges the build made."""
    from oracl.bundle import database
    from oracl.core import store as store_module

    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    _dated(root, {"pkg/m3.py": files["pkg/m3.py"] + "# three\n"}, step=1)
    build(root, **KW)
    real = database.directions_disagree
    seen: list[str] = []
    counted: list[str] = []  # (the tables counted by their ends' keys: none, every count as made)
    rows = store_module.Store.rows

    def keyed(self: object, statement: str, params: object = None) -> object:
        if "IS NOT NULL RETURN count(*)" in statement:
            counted.append(statement)
        return rows(self, statement, params)  # type: ignore[arg-type]

    def lost(store: object, tables: object = None, expected: object = None, made: object = None) -> str:
        seen.append(real(store, tables, expected, made))  # type: ignore[arg-type]
        assert tables is None or not counted, counted  # (a build's: Link and BelongsTo too, by the graph's counts)
        return "Calls 12 forward, 7 backward" if len(seen) == 1 else seen[-1]

    monkeypatch.setattr(store_module.Store, "rows", keyed)
    monkeypatch.setattr(database, "directions_disagree", lost)
    _edit_m7_to_call_f6(root, files)
    (root / "pkg/m29.py").unlink()  # (its artifact and symbols deleted: the tables they touch are counted)
    report = build(root, **KW)
    assert report.mode == ("full: the engine failed while it brought an earlier build's database up to date "
                           "(the engine lost edges at the checkpoint of an in-place update: Calls 12 forward, "
                           "7 backward)"), report.mode
    assert seen == [""]  # (the real copies agreed; a full build's fresh database is not checked)
    # a comment appended deletes no edge: nothing can be lost, nothing is counted
    _dated(root, {"pkg/m5.py": files["pkg/m5.py"] + "# five\n"}, step=3)
    assert build(root, **KW).mode.startswith("incremental: ")
    _dated(root, {"pkg/m6.py": files["pkg/m6.py"] + "# six\n"}, step=4)
    assert build(root, **KW).mode.startswith("incremental: ") and seen == [""]
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]
    assert verify(root)[0].startswith("latest: ")
    _equals_full(root)


def test_verify_reads_each_relationship_table_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``oracl verify`` counts every relationship table forward and backward (and the call
    edges against those it read): a bundle an earlier version published with one
    direction's copy dropped fails, naming the table; a sound one passes."""
    from oracl.bundle import database

    files = _chain(10)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    _edit_m7_to_call_f6(root, files)
    build(root, **KW)
    seen: list[object] = []
    real = database.directions_disagree

    def spy(store: object, tables: object = None, expected: object = None) -> str:
        seen.append(expected)
        return real(store, tables, expected)  # type: ignore[arg-type]

    monkeypatch.setattr(database, "directions_disagree", spy)
    assert verify(root)[0].startswith("latest: ")
    assert seen == [{"Calls": 1}]  # (f7 calls f6)
    monkeypatch.setattr(database, "directions_disagree", lambda *a, **k: "Calls 1 forward, 0 backward, 1 made")
    with pytest.raises(OraclError, match="disagree between their directions: Calls 1 forward, 0 backward"):
        verify(root)


def test_a_flipped_byte_in_the_symbol_segments_fails_verify_and_the_next_build_resolves_every_file(
        tmp_path: Path) -> None:
    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    _flip_a_byte(_latest_bundle(root) / SYMBOLS_FILE)
    with pytest.raises(OraclError, match="symbols.seg"):
        verify(root)
    r = run_cli("verify", str(root), env=clean_env())
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "symbols.seg" in r.stderr, r.stderr
    _edit_m7_to_call_f6(root, files)
    report = build(root, **KW)
    assert report.mode == "incremental: 29 reused, 1 read, 0 removed"  # the facts and the database are whole
    assert report.symbols_mode == "symbols: whole (symbols.seg does not match its manifest)"
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]
    assert verify(root)[0].startswith("latest: ")
    _equals_full(root)


@pytest.mark.parametrize("executor_kind", ["in-process", "processes"])
def test_a_flipped_byte_in_the_previous_export_makes_the_next_build_full(tmp_path: Path, executor_kind: str) -> None:
    """The previous build's symbol rows of a group made again are read from their part,
    checked against its digest, by the export task beside the load: a damaged part makes
    the build start again, full (every part written again: the damage is healed), and its
    mode says why; the answer equals a full build's."""
    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    store = store_of(root / ".oracl")
    seg = orjson.loads((_latest_bundle(root) / SYMBOLS_FILE).read_bytes())
    entry = next(e for e in (orjson.loads(store.get(d)) for d, *_ in seg["groups"]) if "pkg/m7.py" in e)
    digest = entry["pkg/m7.py"][1]  # the node part of m7's group: read to join the group again
    part = Vault(root).parts / digest[:2] / digest
    _flip_a_byte(part)
    _edit_m7_to_call_f6(root, files)
    report = build(root, executor_kind=executor_kind, **KW)
    assert (report.mode, report.symbols_mode) == (
        "full: the previous build's symbol rows could not be read (the export's part "
        f"{digest[:16]}… does not match its digest)", "symbols: whole (no previous build)")
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]
    assert verify(root)[0].startswith("latest: ")
    _equals_full(root)


def test_a_symbol_index_naming_a_file_the_previous_build_no_longer_has_is_not_used(tmp_path: Path) -> None:
    """The previous bundle's segments come from a build that still had pkg/m29.py (its
    manifest says they are its own): they are refused, and the pass is whole."""
    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    older = _latest_bundle(root) / SYMBOLS_FILE
    saved = tmp_path / "older.seg"
    shutil.copyfile(older, saved)
    (root / "pkg" / "m29.py").unlink()
    # m0 grows by 50 functions: the older segments lie inside this build's (longer) export
    _dated(root, {"pkg/m0.py": files["pkg/m0.py"] + "".join(f"\n\ndef h{i}():\n    return {i}\n" for i in range(50))},
           step=1)
    build(root, **KW)
    bundle = _latest_bundle(root)
    seg = bundle / SYMBOLS_FILE
    seg.chmod(0o644)
    shutil.copyfile(saved, seg)
    manifest = orjson.loads((bundle / MANIFEST).read_bytes())
    manifest["files"][SYMBOLS_FILE] = hashlib.sha256(saved.read_bytes()).hexdigest()
    (bundle / MANIFEST).chmod(0o644)
    (bundle / MANIFEST).write_bytes(orjson.dumps(manifest))
    _dated(root, {"pkg/m7.py": files["pkg/m7.py"].replace("return 7", "return f6() + 7")}, step=2)
    report = build(root, **KW)
    assert report.symbols_mode == "symbols: whole (symbols.seg does not list the previous build's files)"
    assert _callers(root, "f6") == ["pkg/m7.py#f7"]
    _equals_full(root)


def test_an_edit_calling_into_a_file_removed_in_the_same_build_equals_a_full_build(tmp_path: Path) -> None:
    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    assert _callers(root, "f8") == []
    (root / "pkg" / "m8.py").unlink()  # m9 imports f8 from it, unchanged; m10 now calls it too
    _dated(root, {"pkg/m10.py": files["pkg/m10.py"] + "\n\ndef g():\n    return f9() + f8()\n"}, step=1)
    report = build(root, **KW)
    assert report.mode == "incremental: 28 reused, 1 read, 1 removed"
    assert report.symbols_mode == (  # (m10.py; m9.py, which imports f8 from m8.py; not m11.py, which imports
        # m10.py but looks up no name m10.py moved: ``moved_names``)
        "symbols: the name tables patched for 2 files that came, went or changed their interface; 2 files' rows "
        "made again, 1 moved and 1 gone written (files were added or removed)")
    assert _callers(root, "f9") == ["pkg/m10.py#g"]
    with pytest.raises(QueryError, match="no symbol named 'f8'"):  # no dangling call edge to it
        _callers(root, "f8")
    _equals_full(root)


def test_a_file_renamed_and_edited_in_the_same_build_equals_a_full_build(tmp_path: Path) -> None:
    files = _chain(30)
    root = _dated(tmp_path / "r", files)
    build(root, **KW)
    (root / "pkg" / "m3.py").rename(root / "pkg" / "m3_renamed.py")
    _dated(root, {"pkg/m3_renamed.py": files["pkg/m3.py"].replace("return 3", "return f2() + 3")}, step=1)
    report = build(root, **KW)
    assert report.mode == "incremental: 29 reused, 1 read, 1 removed"
    assert _callers(root, "f2") == ["pkg/m3_renamed.py#f3"]
    paths = {n.get("path") for n in _canonical(root)["nodes"]}
    assert "pkg/m3_renamed.py" in paths and "pkg/m3.py" not in paths
    _equals_full(root)


def test_ten_thousand_files_changed_at_once_make_a_full_build_that_says_so(tmp_path: Path) -> None:
    root = _dated(tmp_path / "r", {f"pkg/m{i}.py": f"x = {i}\n" for i in range(10_000)})
    build(root, **KW)
    _dated(root, {f"pkg/m{i}.py": f"y = {i}\n" for i in range(10_000)}, step=1)
    report = build(root, **KW)
    assert report.mode == "full: 10,000 files to read and 0 removed, against 10,000 in the previous build"
    assert report.files_read == 10_000
    doc = _canonical(root)
    assert doc["schema"]["counts"]["nodes_by_kind"]["artifact"] == 10_000


def _git_tree(root: Path, n: int) -> dict[str, str]:
    files = _chain(n)
    write_tree(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the chain")
    return files


@pytest.mark.parametrize(("share", "mode"), [
    (0.2, "incremental: 240 reused, 60 read, 0 removed"),
    (0.3, "full: 90 files to read and 0 removed, against 300 in the previous build"),
])
def test_a_branch_switch_is_selective_up_to_a_quarter_of_the_tree_then_full_and_always_equal(
        tmp_path: Path, share: float, mode: str) -> None:
    root = tmp_path / "r"
    files = _git_tree(root, 300)
    touched = sorted(files)[: int(300 * share)]
    git(root, "checkout", "-q", "-b", "feature")
    for rel in touched:
        (root / rel).write_text(files[rel] + "\n\ndef extra():\n    return f0()\n")
    git(root, "commit", "-q", "-am", "feature: every touched module calls f0")
    git(root, "checkout", "-q", "main")
    for rel in files:  # checkout stamps files with now: date them back, as after a long pause
        os.utime(root / rel, ns=(OLD, OLD))
    build(root, **KW)
    git(root, "checkout", "-q", "feature")
    for rel in touched:
        os.utime(root / rel, ns=(OLD + 10**9, OLD + 10**9))
    report = build(root, **KW)
    assert report.mode == mode
    assert _callers(root, "f0") == sorted(f"{rel}#extra" for rel in touched)  # an import is not a call
    assert _canonical(root)["schema"]["source_commit"] == git(root, "rev-parse", "HEAD").strip()
    _equals_full(root)


def test_two_builds_started_at_once_one_builds_and_the_other_says_why(tmp_path: Path) -> None:
    root = _dated(tmp_path / "r", _chain(300))
    build(root, **KW)
    _dated(root, {"pkg/new.py": "from pkg.m3 import f3\n"}, step=1)
    cmd = [ORACL, "build", str(root), "-q", "--workers", "1"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
             for _ in range(2)]
    done = sorted((p.wait(timeout=300), p.communicate()[1]) for p in procs)
    assert [code for code, _ in done] == [0, 9], done
    assert done[1][1].strip().splitlines() == [done[1][1].strip()] and "another oracl build is running" in done[1][1]
    assert verify(root)[0].startswith("latest: ")
    assert len(_canonical(root)["nodes"]) == 301 + 1  # the artifacts and the one domain hub
    _equals_full(root, buffer_pool_bytes=0)  # the CLI's settings


READER = """
import sys, orjson
from oracl.read.snapshot import Snapshot
from oracl.read.query import run
snap = Snapshot.open(sys.argv[1])
def answer():
    return [snap.header["build_id"], snap.header["counts"]["symbols"],
            [r["path"] for r in run.search(snap, "g1 g5 f6", limit=5, log=False).results]]
print(orjson.dumps(answer()).decode(), flush=True)
for line in sys.stdin:
    print(orjson.dumps(answer()).decode(), flush=True)
"""


def test_a_reader_holds_its_snapshot_for_ten_minutes_across_twenty_builds_and_a_compaction(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oracl.builder import incremental

    monkeypatch.setattr(incremental, "MAX_CHAIN", 16)  # the compaction at the 17th build
    files = _chain(40)
    root = _dated(tmp_path / "r", files)
    t0 = datetime(2026, 6, 1, tzinfo=UTC)
    first = build(root, now=t0, **KW).build_id
    reader = subprocess.Popen([sys.executable, "-c", READER, str(root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    assert reader.stdin is not None and reader.stdout is not None
    try:
        held = orjson.loads(reader.stdout.readline())
        assert held[0] == first
        for step in range(1, 21):  # a build every 30 s for ten minutes, each one file
            rel = f"pkg/m{step}.py"
            _dated(root, {rel: files[rel] + f"\n\ndef g{step}():\n    return f6()\n"}, step=step)
            report = build(root, now=t0 + timedelta(seconds=30 * step), **KW)
            # the 17th starts over from scratch (the chain's bound, the compaction): the reader holds on
            assert report.mode == ("full: 16 incremental builds in a row; the content index is rebuilt" if step == 17
                                   else "incremental: 39 reused, 1 read, 0 removed"), (step, report.mode)
            if step % 5 == 0:
                reader.stdin.write("again\n")
                reader.stdin.flush()
                assert orjson.loads(reader.stdout.readline()) == held, step  # its build, as it was
        assert first in {p.name for p in (root / ".oracl" / "mirror").iterdir()}
        assert len(_callers(root, "f6")) == 20  # a new reader sees the newest build
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)
        reader.stdout.close()
        assert reader.stderr is not None
        err = reader.stderr.read()
        reader.stderr.close()
    assert reader.returncode == 0, err
    build(root, now=t0 + timedelta(minutes=11), full=True, **KW)  # released: the next build prunes it
    assert first not in {p.name for p in (root / ".oracl" / "mirror").iterdir()}


def test_rows_by_primary_key_are_the_in_statements_rows_for_any_number_of_keys(tmp_path: Path) -> None:
    """``database.by_keys``: a statement selecting by ``IN $keys`` over a primary key is run
    a key at a time (``= $keys``) up to ``_BY_KEY`` keys, else as it is; the rows are the
    same either way (nodes and the edges out of them, as dicts or Arrow), none for no key
    or an unknown one. A statement without the IN is refused, not run."""
    import pyarrow as pa

    from oracl.bundle.database import _BY_KEY, by_keys
    from oracl.core.store import Store, close

    path = tmp_path / "g.kuzu"
    store = Store.open(path, read_only=False, buffer_pool_bytes=64 << 20, threads=2)
    try:
        store.execute("CREATE NODE TABLE S(id STRING PRIMARY KEY, v INT64)")
        store.execute("CREATE REL TABLE C(FROM S TO S, w DOUBLE)")
        store.execute("COPY S FROM $t", {"t": pa.table({"id": [f"s{i:02d}" for i in range(40)], "v": list(range(40))})})
        store.execute("COPY C FROM $t", {"t": pa.table({"from": [f"s{i:02d}" for i in range(40)],
                                                         "to": [f"s{(i + 1) % 40:02d}" for i in range(40)],
                                                         "w": [i / 2 for i in range(40)]})})
        nodes = "MATCH (n:S) WHERE n.id IN $keys RETURN n.id AS id, n.v AS v"
        edges = "MATCH (a:S)-[e:C]->(b:S) WHERE a.id IN $keys RETURN a.id AS `from`, b.id AS `to`, e.w AS w"
        for n in (0, 1, _BY_KEY, _BY_KEY + 1, 40):
            keys = [f"s{i:02d}" for i in range(n)]
            for statement in (nodes, edges):
                want = sorted(store.rows(statement, {"keys": keys}), key=orjson.dumps)
                assert len(want) == n
                assert sorted(by_keys(store, statement, "keys", keys, arrow=False), key=orjson.dumps) == want
                got = by_keys(store, statement, "keys", keys)
                assert sorted(got.to_pylist(), key=orjson.dumps) == want
        assert by_keys(store, nodes, "keys", ["s05", "nope"], arrow=False) == [{"id": "s05", "v": 5}]
        with pytest.raises(ValueError, match="selects by no IN"):
            by_keys(store, "MATCH (n:S) WHERE n.id = $keys RETURN n.id AS id", "keys", ["s01"])
    finally:
        close(path)
