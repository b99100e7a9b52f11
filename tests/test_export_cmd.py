"""``oracl export``: the latest build's canonical export on demand, assembled from its
parts byte for byte as the export writer gives it, checked against LATEST's root and each
part's digest before anything is written. Real builds, real processes."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import orjson

from oracl.builder import orchestrator
from oracl.core.errors import ConfigError, DigestError
from oracl.core.export import export_bytes
from oracl.core.parts import decode_index, store_of
from oracl.core.vault import EXPORT_INDEX, Vault

from .conftest import ORACL, SAMPLE, export_of, run_cli, write_tree


def test_the_assembled_export_is_the_export_writers_bytes(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What the parts assemble to equals ``export_bytes`` of the build's own rows (the
    derived priorities, δ, freshness, densities and ranks included), on a full build and
    on a rebuild that changed one file and made the newest mtime move."""
    root = write_tree(tmp_path / "repo", SAMPLE)
    want: list[bytes] = []
    start, start_symbols = orchestrator.start_export, orchestrator.start_symbol_sections
    made: list[Any] = []  # the build's symbols, as its symbol sections' task got them

    def symbols_spy(plan: Any, ex: Any, symbols: Any, *rest: Any) -> Any:
        # (the rows this build made, and the others read back from the latest's parts, before
        # the task writes the sections and lets the latest's parts go)
        made.append(symbols.segments.filled(store_of(plan.vault.dir)) if symbols.segments is not None else symbols)
        return start_symbols(plan, ex, symbols, *rest)

    def spy(plan: Any, ex: Any, header: Any, graph: Any, *rest: Any) -> Any:
        symbols = made[-1]
        events = rest[3] if len(rest) > 3 else None  # (stat_files, writer, learned_doc, events, …)
        section = events.section if events is not None else None
        nodes = [graph.full(n) for n in graph.nodes]  # (a lazy graph's rows: made when read)
        if isinstance(symbols, orchestrator.Symbols):  # a whole symbol pass: its packed rows are every row
            want.append(export_bytes(header, nodes, graph.edges, symbols.packed, events=section))
        else:  # the segments: the rows made again and the others read back
            want.append(export_bytes(header, nodes, graph.edges, symbols_section=symbols.section(), events=section))
        return start(plan, ex, header, graph, *rest)

    monkeypatch.setattr(orchestrator, "start_export", spy)
    monkeypatch.setattr(orchestrator, "start_symbol_sections", symbols_spy)
    orchestrator.build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert export_of(root) == want[-1]
    (root / "pkg" / "extra.py").write_text("def more():\n    return 2\n")  # a file added: the tables patched
    report = orchestrator.build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert report.symbols_mode.startswith("symbols: the name tables patched for 1 file"), report.symbols_mode
    assert len(want) == 2 and export_of(root) == want[-1]
    doc = orjson.loads(want[-1])
    assert {n["path"] for n in doc["nodes"] if n["kind"] == "artifact"} == {*SAMPLE, "pkg/extra.py"}


def test_export_writes_the_assembled_bytes_to_stdout_and_to_a_file(built_sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, report = built_sample
    want = export_of(root)
    digest = hashlib.sha256(want).hexdigest()
    vault = Vault(root)
    index = (vault.bundle(vault.read_latest()["bundle"]) / EXPORT_INDEX).read_bytes()
    assert hashlib.sha256(index).hexdigest() == report.export_root == vault.read_latest()["export_root"]
    r = subprocess.run([ORACL, "export", "-r", str(root)], capture_output=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, want, b"")
    assert set(orjson.loads(r.stdout)) == {"edges", "nodes", "schema", "symbols"}
    out = tmp_path / "graph.json"
    r2 = run_cli("export", str(root), "-o", str(out))
    assert r2.returncode == 0, r2.stderr
    assert out.read_bytes() == want
    assert r2.stdout == (f"wrote {out}: {len(want):,} bytes, sha256 {digest}, root {report.export_root[:16]}…, "
                         f"build {report.build_id}, unsigned\n")
    r3 = run_cli("export", str(root), "-o", str(out), "--json")
    assert orjson.loads(r3.stdout) == {"build_id": report.build_id, "root": report.export_root, "sha256": digest,
                                       "bytes": len(want), "path": str(out), "signature": None}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".graph")) == []  # no temporary left


def test_a_damaged_part_writes_nothing_and_exits_11(built_sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, report = built_sample
    vault = Vault(root)
    index = decode_index((vault.bundle(vault.read_latest()["bundle"]) / EXPORT_INDEX).read_bytes())
    digest = index["sections"]["symbol_nodes"][0][0]
    part = vault.parts / digest[:2] / digest
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 1
    part.write_bytes(bytes(data))
    line = f"Error: the export's part {digest[:16]}… does not match its digest\n"
    r = subprocess.run([ORACL, "export", "-r", str(root)], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (DigestError.exit_code, "", line)
    out = tmp_path / "graph.json"
    out.write_text("the previous export\n")
    r2 = run_cli("export", str(root), "-o", str(out))
    assert (r2.returncode, r2.stdout, r2.stderr) == (DigestError.exit_code, "", line)
    assert out.read_text() == "the previous export\n"  # untouched, and no temporary beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.json", "repo"]
    # verify names the same part, with the same exit code
    v = run_cli("verify", str(root))
    assert (v.returncode, v.stderr) == (DigestError.exit_code, line)


def test_bad_destinations_are_one_line_each(built_sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, _ = built_sample
    cases = [(["-o", str(tmp_path)], f"Error: '{tmp_path}' is a directory: name the file to write the export to\n"),
             (["-o", str(tmp_path / "no" / "g.json")],
              f"Error: '{tmp_path / 'no'}' does not exist: the export's file must be in an existing folder\n"),
             (["--json"], "Error: --json describes a file written with -o; without -o the export itself is the "
                          "output\n")]
    for args, line in cases:
        r = run_cli("export", str(root), *args)
        assert (r.returncode, r.stdout, r.stderr) == (ConfigError.exit_code, "", line), args
