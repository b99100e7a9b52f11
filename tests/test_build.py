"""End to end: a real build into a real Kùzu bundle and a canonical export."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.core import derive
from oracl.core.derive import Terms
from oracl.core.errors import ConfigError, RootError
from oracl.core.export import r9
from oracl.read.snapshot import Snapshot
from oracl.read.stats import stats

from . import conftest
from .conftest import SAMPLE, git, on_latest, write_learned, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}
RECORD_FIELDS = {"artifact_id", "checksum", "path", "file_type", "size_bytes", "created_at",
                 "modified_at", "author", "tags", "review_status", "usage", "estimated_savings",
                 "link_count", "backrefs"}


def export_of(root: Path) -> dict:
    return orjson.loads(conftest.export_of(root))


def test_export_shape(built_sample) -> None:  # type: ignore[no-untyped-def]
    root, report = built_sample
    doc = export_of(root)
    assert set(doc) == {"schema", "nodes", "edges", "symbols"}
    arts = [n for n in doc["nodes"] if n["kind"] == "artifact"]
    hubs = [n for n in doc["nodes"] if n["kind"] == "hub"]
    assert len(arts) == 7 and {h["id"] for h in hubs} == {
        "hub:domain:core", "hub:domain:docs", "hub:domain:tests", "hub:domain:root"}
    for n in arts:
        assert RECORD_FIELDS | {"id", "kind", "tags", "priority", "link_density", "priority_detail"} <= set(n)
        assert set(n["priority_detail"]) >= {"components", "m_cls", "m_sens", "base", "association", "delta"}
        assert n["id"] == n["artifact_id"] and n["author"] == "system" and n["review_status"] == "draft"
    for e in doc["edges"]:
        assert {"source", "target", "relation", "source_fragment", "target_fragment", "metadata",
                "relation_weight", "association_rank"} <= set(e)
        assert 0 < e["metadata"]["confidence"] <= 1 and 0 <= e["association_rank"] <= 1
    assert [n["id"] for n in doc["nodes"]] == sorted(n["id"] for n in doc["nodes"])
    keys = [(e["source"], e["source_fragment"], e["target"], e["target_fragment"], e["relation"]) for e in doc["edges"]]
    assert keys == sorted(keys)
    h = doc["schema"]
    assert h["version"] == "wtls-1.5" and h["build_id"] == report.build_id
    # the terms every priority and rank is derived from, exact (core/derive.py)
    t = Terms.from_header(h)
    assert t.n == len(doc["nodes"]) and (r9(t.mu), r9(t.sigma)) == (h["mu"], h["sigma"])
    hubs_assoc = sorted(n["association"] for n in hubs)
    assert r9(t.rank_top) > 0 and max(e["association_rank"] for e in doc["edges"]) == 1.0
    assert hubs_assoc and all(r9(derive.delta(t, a)) == r9((a - t.mu) / t.sigma) for a in hubs_assoc)
    assert (h["alpha"], h["beta"], h["gamma"], h["lambda"]) == (0.35, 0.5, 0.2, 0.6)
    assert h["counts"]["nodes_by_kind"] == {"artifact": 7, "hub": 4}
    # the project's own package (pyproject name "pkg") maps to the core domain
    auth = next(n for n in arts if n["path"] == "pkg/auth.py")
    assert auth["tags"]["domain"] == "core" and auth["tags"]["ast_sensitive"] == ["crypto"]
    assert auth["priority_detail"]["risk_score"] == 40 + 15  # "auth" in the path + crypto API


def test_vault_files(built_sample) -> None:  # type: ignore[no-untyped-def]
    """The JSON-lines files are written when asked for (``jsonl``), and removed by a build
    that does not write them, so none describes an earlier tree."""
    from oracl.builder.orchestrator import build

    root, report = built_sample
    vault = root / ".oracl"
    assert not (vault / "index.jsonl").exists() and not (vault / "edges").exists()
    report = build(root, buffer_pool_bytes=64 << 20, workers=1, jsonl=True)
    index = [orjson.loads(x) for x in (vault / "index.jsonl").read_bytes().splitlines()]
    assert sorted(r["path"] for r in index) == sorted(p for p in SAMPLE)
    for name in ("phase2_edges", "phase3_edges", "all_edges"):
        assert (vault / "edges" / f"{name}.jsonl").stat().st_size > 0
    import hashlib
    digest = (vault / "export.idx.sha256").read_text().split()[0]
    assert digest == hashlib.sha256((vault / "export.idx").read_bytes()).hexdigest() == report.export_root
    latest = orjson.loads((vault / "mirror" / "LATEST.json").read_bytes())
    assert latest["build_id"] == report.build_id
    manifest = orjson.loads((vault / "mirror" / report.build_id / "manifest.json").read_bytes())
    assert manifest["export_root"] == digest and "graph.kuzu" in manifest["files"]
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert not (vault / "index.jsonl").exists() and not list((vault / "edges").glob("*.jsonl"))


def test_bundle_matches_export_and_fts_answers(built_sample) -> None:  # type: ignore[no-untyped-def]
    root, _ = built_sample
    doc = export_of(root)
    s = on_latest(stats, root)
    assert s["artifacts"] == 7 and s["edges"] == len(doc["edges"])
    assert s["edges_by_relation"] == doc["schema"]["counts"]["edges_by_relation"]
    with Snapshot.open(root) as snap:
        store = snap.store
        rows = store.rows("MATCH (a:Artifact) MATCH (t:ArtifactText {path: a.path}) WHERE t.n = a.text_n "
                          "RETURN a.path AS path, t.checksum AS c, t.id AS id ORDER BY path")
        exported = sorted((n["path"], n["checksum"], n["id"]) for n in doc["nodes"] if n["kind"] == "artifact")
        assert [(r["path"], r["c"], r["id"]) for r in rows] == exported
        hits = snap.named("fts_probe", {"q": "hashlib hexdigest", "k": 5})
        assert hits[0]["path"] == "pkg/auth.py"
        hub = {h["hub"]: h for h in s["hubs"]}["hub:domain:core"]
        assert hub["members"] == 3


def test_two_builds_differ_only_in_time_and_id(sample_repo: Path) -> None:
    git(sample_repo, "init", "-q")
    (sample_repo / ".gitignore").write_text(".oracl/\n")
    git(sample_repo, "add", "-A")
    git(sample_repo, "commit", "-qm", "x")
    build(sample_repo, **SMALL)
    first = export_of(sample_repo)
    build(sample_repo, **SMALL)
    second = export_of(sample_repo)
    assert first["schema"]["source_commit"] == git(sample_repo, "rev-parse", "HEAD").strip()
    assert first["schema"]["dirty"] is False
    for doc in (first, second):
        doc["schema"].pop("generated_at")
        doc["schema"].pop("build_id")
    assert first == second


def test_two_layer_mode_gives_the_same_graph(sample_repo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    build(sample_repo, **SMALL)
    plain = export_of(sample_repo)
    monkeypatch.setenv("ORACL_TWO_LAYER", "1")
    report = build(sample_repo, **SMALL)
    layered = export_of(sample_repo)
    assert report.two_layer
    assert layered["nodes"] == plain["nodes"] and layered["edges"] == plain["edges"]
    evidence = sample_repo / ".oracl" / "evidence"
    assert sorted(p.name for p in evidence.iterdir()) == [
        "overlay.jsonl", "phase2_repo_edges.jsonl", "phase3_static_edges.jsonl"]


def test_learned_tags_and_edges(sample_repo: Path) -> None:
    vault = sample_repo / ".oracl"
    vault.mkdir()
    write_learned(vault / "learned_tags.json", orjson.dumps(
        {"pkg/util.py": {"team": "platform", "confidence": 0.9, "source": "review", "review_status": "approved"}}))
    write_learned(vault / "learned_edges.json", orjson.dumps(
        [{"source": "pkg/util.py", "target": "docs/guide.md", "confidence": 0.7}]))
    build(sample_repo, **SMALL)
    doc = export_of(sample_repo)
    util = next(n for n in doc["nodes"] if n.get("path") == "pkg/util.py")
    assert util["tags"]["team"] == "platform" and "confidence" not in util["tags"] and "source" not in util["tags"]
    assert util["review_status"] == "approved"
    learned = [e for e in doc["edges"] if e["relation"] == "learned_association"]
    assert len(learned) == 1 and learned[0]["metadata"]["confidence"] == 0.7
    assert learned[0]["relation_weight"] == 0.35  # fallback ρ 0.5 × κ 0.7


def test_bad_learned_edges_is_a_config_error(sample_repo: Path) -> None:
    (sample_repo / ".oracl").mkdir()
    write_learned(sample_repo / ".oracl" / "learned_edges.json", '[{"source": "a"}]')
    with pytest.raises(ConfigError, match="learned edge"):
        build(sample_repo, **SMALL)


def test_parameters_are_options_and_recorded(sample_repo: Path) -> None:
    build(sample_repo, alpha=0.0, beta=0.0, gamma=1.0, lam=0.3, neighbour_cap=5, **SMALL)
    doc = export_of(sample_repo)
    h = doc["schema"]
    assert (h["alpha"], h["beta"], h["gamma"], h["lambda"], h["caps"]["neighbourhood"]) == (0.0, 0.0, 1.0, 0.3, 5)
    for n in doc["nodes"]:
        if n["kind"] == "artifact":
            assert n["priority"] == n["priority_detail"]["base"]  # α = 0


def test_skip_phases(sample_repo: Path) -> None:
    report = build(sample_repo, skip=("phase2", "phase3", "fts"), **SMALL)
    assert report.counts["edges_by_relation"] == {"belongs_to": 7}
    assert report.fts is False and report.seconds["phase2"] == 0.0
    with pytest.raises(ConfigError, match="cannot skip weigh"):
        build(sample_repo, skip=("weigh",), **SMALL)


def test_root_errors(tmp_path: Path) -> None:
    with pytest.raises(RootError, match="does not exist"):
        build(tmp_path / "missing", **SMALL)


def test_empty_root(tmp_path: Path) -> None:
    report = build(tmp_path, **SMALL)
    assert report.files_indexed == 0 and report.counts["nodes"] == 0
    assert on_latest(stats, tmp_path)["artifacts"] == 0


def test_old_bundles_are_pruned(sample_repo: Path) -> None:
    ids = [build(sample_repo, full=True, **SMALL).build_id for _ in range(3)]
    bundles = sorted(p.name for p in (sample_repo / ".oracl" / "mirror").iterdir() if p.is_dir())
    # (a full build leaves its spare database beside it, a bundle for its first rebuild to
    # take over: it counts among the two kept)
    assert bundles == [ids[2], f"{ids[2]}-spare"]


def test_bad_input_build(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = write_tree(tmp_path / "r", {
        "bin.py": b"\x00\x01binary", "latin.md": "caf\xe9".encode("latin-1"),
        "broken.py": "def f(:\n", "bad.json": '{"a": ', "bad.yaml": "a:\n\t- b\n",
        "bad.toml": "a = = 1\n", "empty.py": "", "name with spaces.md": "# x\n",
        "quote'\"name.txt": "q", "ünïcödé.md": "# ü\n", "new\nline.txt": "nl",
    })
    with open(root / "huge.txt", "wb") as fh:
        fh.truncate(8 * 1024 * 1024 + 1)  # sparse: 8 MiB + 1 byte of zeros
    (root / "big.md").write_bytes(b"a" * (8 * 1024 * 1024 + 10))
    os.symlink(root, root / "loop")
    os.symlink(tmp_path, root / "outside")
    import oracl.builder.orchestrator as builder

    real_walk = builder.walk

    def walk_then_delete(r, cfg, **kw):  # type: ignore[no-untyped-def]
        d = real_walk(r, cfg, **kw)
        (root / "vanishing.py").unlink()  # deleted between listing and reading
        return d

    (root / "vanishing.py").write_text("x = 1\n")
    monkeypatch.setattr(builder, "walk", walk_then_delete)
    report = build(root, **SMALL)
    assert report.files_indexed == 14
    assert report.parse_status == {"binary": 2, "malformed": 3, "non_utf8": 1, "ok": 5,
                                   "oversize": 1, "syntax_error": 1, "vanished": 1}
    assert report.excluded_dirs == {"symlink_alias": 1, "symlink_outside_root": 1, "vault": 1}
    doc = export_of(root)
    paths = {n["path"]: n for n in doc["nodes"] if n["kind"] == "artifact"}
    assert "new\nline.txt" in paths and "quote'\"name.txt" in paths and "ünïcödé.md" in paths
    assert paths["broken.py"]["tags"]["parse_error"] == "syntax_error"
    assert paths["broken.py"]["tags"]["ast_error"] is True
    assert on_latest(stats, root)["artifacts"] == 14


def test_export_rows_are_the_typed_rows(built_sample) -> None:  # type: ignore[no-untyped-def]
    """Every node and edge of an export has exactly the keys its typed row declares."""
    from oracl.core.records import ArtifactNode, EdgeMetadata, EdgeRow, HubNode, PriorityDetail

    root, _ = built_sample
    doc = export_of(root)
    kinds = {"artifact": ArtifactNode, "hub": HubNode}
    for n in doc["nodes"]:
        assert set(n) == kinds[n["kind"]].__required_keys__, n["id"]
        if n["kind"] == "artifact":
            assert set(n["priority_detail"]) == PriorityDetail.__required_keys__
    for e in doc["edges"]:
        assert set(e) == EdgeRow.__required_keys__ and set(e["metadata"]) == EdgeMetadata.__required_keys__


def test_a_build_asked_to_spare_what_it_made_hands_it_over_and_the_console_script_still_reports(
        sample_repo: Path) -> None:
    """``build(spare=…)``: the build's objects go into the caller's list instead of being
    freed (the console script leaves by ``os._exit`` after a build); the report is the
    same, and the script's output is flushed and its exit code kept."""
    from oracl.builder.pipeline.weigh import WeightedGraph

    kept: list[object] = []
    report = build(sample_repo, spare=kept, **SMALL)
    assert len(kept) == 1 and isinstance(kept[0], dict)
    assert any(isinstance(v, WeightedGraph) for v in kept[0].values())
    assert report.files_indexed > 0
    out = conftest.run_cli("build", str(sample_repo), "--json", "--full")
    assert out.returncode == 0, out.stderr
    assert orjson.loads(out.stdout)["files_indexed"] == report.files_indexed
    bad = conftest.run_cli("build", str(sample_repo), "--skip-phase", "nothing")
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1, bad.stderr
