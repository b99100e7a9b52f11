"""``oracl stats``: the counts of one build, read from its bundle (opened read-only) and
its header."""

from __future__ import annotations

from typing import Any

from oracl.read.snapshot import Snapshot


def stats(snap: Snapshot) -> dict[str, Any]:
    """Counts of the build: artifacts, hubs (members, mean priority, top member), edges by
    relation, μ and σ."""
    header = snap.header
    by_relation = {r["relation"]: r["n"] for r in snap.named("count_links_by_relation")}
    by_relation["belongs_to"] = snap.named("count_belongs")[0]["n"]
    return {
        "build_id": snap.build_id,
        "generated_at": header["generated_at"],
        "root": header["root"],
        "source_commit": header.get("source_commit"),
        "artifacts": snap.named("count_artifacts")[0]["n"],
        "hubs": snap.hubs(),
        "edges_by_relation": dict(sorted(by_relation.items())),
        "edges": sum(by_relation.values()),
        "mu": header["mu"],
        "sigma": header["sigma"],
        "coverage": header["coverage"],
        "symbols": (header.get("counts") or {}).get("symbols", {}),  # the symbol graph's counts (design §5b)
        "notices": list(snap.notices),
    }
