"""One question to every member of a workspace, one ranked answer (design §12).

Each member answers from its own latest build (its own ``Snapshot``, its own search); the
answers are merged by **reciprocal rank**: a result scores ``1 / (K + rank)`` with its
rank among its own member's results, ties broken by its score as a share of that
member's best. A member's raw scores are not comparable with another's: BM25's inverse
document frequencies and the normalisations by the best candidate depend on each
repository's size and vocabulary, so a 50,000-file repository's scores would bury a
40-file one's best match. Ranks are comparable: each member's best result is among the
first ``len(members)`` merged ones whatever the sizes (a test holds a 1,500-file member
from drowning a 3-file one). Results of equal rank are ordered by the fields
they matched (``evidence``: a file named for the words and defining them before one that
mentions them), which no corpus statistic enters. Every result carries its ``repository``.

A member that cannot answer (no build, a damaged vault, a manifest whose signature does
not verify against the member's public key) is named with the reason in ``members`` and
in the notices; the others still answer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from oracl.core.errors import OraclError, QueryError
from oracl.core.members import DEFAULT_FILE, Member, WorkspaceFile
from oracl.core.sign import VerifyKeys, load_public_key, verify_signature
from oracl.core.vault import MANIFEST, MANIFEST_SIG
from oracl.read.query.run import search
from oracl.read.snapshot import Snapshot

K = 60  # the reciprocal-rank constant (Cormack et al.'s): rank 1 → 1/61, rank 10 → 1/70
# what a result's matched fields say, the same in every repository (no corpus statistics):
# the tie-break between results of equal rank in different members
EVIDENCE = {"filename": 3.0, "symbols": 3.0, "path": 2.0, "headings": 2.0, "body": 1.0, "chunk": 1.0}


def evidence(row: dict[str, Any]) -> float:
    """Σ of ``EVIDENCE`` over the fields a result matched (0.5 for any other field).

    >>> evidence({"matched_fields": ["filename", "symbols", "body"]}), evidence({"matched_fields": ["body"]})
    (7.0, 1.0)
    """
    return sum(EVIDENCE.get(f, 0.5) for f in row.get("matched_fields") or [])


def _verify_member(snap: Snapshot, m: Member) -> str:
    """The member's manifest signature against its public key (when the workspace names one)."""
    if m.public_key is None:
        return "unsigned member (no public key named)"
    try:
        key = load_public_key(Path(m.public_key).read_text(), m.public_key)
    except OSError as exc:
        raise OraclError(f"cannot read its public key {m.public_key}: {exc.strerror}") from None
    sig = snap.bundle / MANIFEST_SIG
    data = (snap.bundle / MANIFEST).read_bytes()
    return verify_signature(data, sig.read_text().strip() if sig.is_file() else None, VerifyKeys(key),
                            required=True, what=f"member {m.name}'s manifest")


def fan_out(ws: WorkspaceFile, ask: Callable[[Snapshot], list[dict[str, Any]]], withhold: bool = False
            ) -> tuple[list[tuple[Member, list[dict[str, Any]]]], list[dict[str, Any]], list[str]]:
    """``ask`` on every member's latest build: (each answering member and its rows, every
    member's status, notices); with ``withhold``, rows naming a member's files that hold
    key material are left out (as ``Memory(withhold_sensitive=True)`` does: MCP, the web)."""
    from oracl.read.memory import _without, sensitive_paths

    answers, status, notices = [], [], []
    for m in ws.members:
        try:
            with Snapshot.open(Path(m.root)) as snap:
                checked = _verify_member(snap, m)
                rows = ask(snap)
                if withhold:
                    rows = _without(rows, sensitive_paths(snap))
                status.append({"name": m.name, "root": m.root, "build_id": snap.build_id, "ok": True,
                               "checked": checked})
                answers.append((m, rows))
        except (OraclError, OSError) as exc:
            why = str(exc).split("\n")[0][:300]
            status.append({"name": m.name, "root": m.root, "ok": False, "error": why})
            notices.append(f"member {m.name} did not answer: {why}")
    return answers, status, notices


def merge(answers: list[tuple[Member, list[dict[str, Any]]]], k: int) -> list[dict[str, Any]]:
    """The members' ranked rows as one list by reciprocal rank (ties: the fields matched,
    ``evidence``; then the share of the member's best score; then the repository and
    path), each with ``repository``."""
    pooled = []
    for m, rows in answers:
        best = max((float(r.get("score") or 0) for r in rows), default=0.0) or 1.0
        for i, r in enumerate(rows, 1):
            share = float(r.get("score") or 0) / best
            pooled.append((1.0 / (K + i), evidence(r), share, m.name, r))
    pooled.sort(key=lambda x: (-x[0], -x[1], -x[2], x[3], x[4].get("path", "")))
    out = []
    for n, (fused, _, share, name, r) in enumerate(pooled[:k], 1):
        out.append({**r, "repository": name, "rank": n, "member_rank": r.get("rank"),
                    "fused": round(fused, 6), "share_of_best": round(share, 6)})
    return out


def search_workspace(ws: WorkspaceFile, text: str, k: int = 10, persona: str = "default",
                     withhold: bool = False) -> dict[str, Any]:
    """``query`` over every member: the merged results, each with its repository."""
    answers, status, notices = fan_out(ws, lambda snap: search(snap, text, limit=k, persona=persona).results,
                                       withhold)
    return {"schema": "oracl.workspace-search/1", "workspace": str(ws.path), "query": text,
            "results": merge(answers, k), "members": status, "notices": notices}


MATCH_ORDER = {"exact": 0, "ambiguous": 0, "fuzzy": 1}  # ambiguous: several exact definitions


def symbols_workspace(ws: WorkspaceFile, name: str, kind: str | None = None, language: str | None = None,
                      k: int = 20, withhold: bool = False) -> dict[str, Any]:
    """Where ``name`` is defined in every member: the members with an exact definition
    first (in the workspace's order), then those with only close names; each definition
    with its ``repository`` and how its member matched."""
    from oracl.read.callgraph import symbols

    answers, status, notices = fan_out(ws, lambda snap: [symbols(snap, name, kind=kind, language=language, k=k)],
                                       withhold)
    found = sorted(((MATCH_ORDER.get(a[0]["match"], 3), i, m, a[0]) for i, (m, a) in enumerate(answers)),
                   key=lambda x: (x[0], x[1]))
    rows = [{**d, "repository": m.name, "match": ans["match"]} for _, _, m, ans in found for d in ans["definitions"]]
    return {"schema": "oracl.workspace-symbols/1", "workspace": str(ws.path), "query": name, "definitions": rows[:k],
            "members": status, "notices": notices}


class Workspace:
    """Many repositories as one memory, from Python (``oracl.Workspace``):

    >>> ws = Workspace.open("oracl-workspace.toml")                     # doctest: +SKIP
    >>> [(r["repository"], r["path"]) for r in ws.search("session cookie", k=3)["results"]]  # doctest: +SKIP
    >>> [s["repository"] for s in ws.impact("click", "secho")["repositories"]]  # doctest: +SKIP
    ['click', 'flask']

    Each call opens every member's latest build and closes it again (a member rebuilt in
    between answers from its new build)."""

    def __init__(self, file: WorkspaceFile) -> None:
        self.file = file

    @classmethod
    def open(cls, path: str | Path = DEFAULT_FILE) -> Workspace:
        return cls(WorkspaceFile.load(Path(path)))

    @property
    def members(self) -> list[Member]:
        return list(self.file.members)

    def search(self, q: str, k: int = 10, persona: str = "default") -> dict[str, Any]:
        return search_workspace(self.file, q, k=k, persona=persona)

    def symbols(self, name: str, kind: str | None = None, language: str | None = None, k: int = 20) -> dict[str, Any]:
        return symbols_workspace(self.file, name, kind=kind, language=language, k=k)

    def impact(self, member: str, targets: list[str] | str | None = None, diff: str | None = None, depth: int = 3,
               hops: int = 3, k: int = 20) -> dict[str, Any]:
        """What a change in ``member`` reaches there and in the members depending on it
        (``oracl impact --workspace``)."""
        from oracl.read.crossrepo import impact_workspace

        items = [targets] if isinstance(targets, str) else list(targets or [])
        return impact_workspace(self.file, member, items, diff=diff, depth=depth, hops=hops, k=k)

    def callers(self, name: str, min_confidence: float = 0.7, k: int = 100) -> dict[str, Any]:
        """Who calls ``name``, in its members and across their dependents (``oracl callers --workspace``)."""
        from oracl.read.crossrepo import callers_workspace

        return callers_workspace(self.file, name, min_confidence=min_confidence, k=k)

    def context(self, q: str, budget_tokens: int = 4000) -> dict[str, Any]:
        """An agent's context pack across the members, within ``budget_tokens`` (``context_workspace``)."""
        return context_workspace(self.file, q, budget_tokens=budget_tokens)

    def links(self) -> dict[str, Any]:
        """The edges between members that their manifests make (``oracl workspace links``)."""
        from oracl.read.crossrepo import links_workspace

        return links_workspace(self.file)


def status_workspace(ws: WorkspaceFile) -> dict[str, Any]:
    """``oracl status`` of every member: its build, whether its tree moved since, and the
    verdict; a member holding a bundle alone (a CI's, no tree) says so instead of listing
    every file as deleted."""
    from oracl.core.vault import VAULT
    from oracl.read.status import status

    rows, notices = [], []
    for m in ws.members:
        root = Path(m.root)
        try:
            if root.is_dir() and all(p.name == VAULT for p in root.iterdir()):
                with Snapshot.open(root) as snap:
                    _verify_member(snap, m)
                    rows.append({"name": m.name, "root": m.root, "ok": True, "build_id": snap.build_id,
                                 "fresh": True, "verdict": "a bundle alone (no tree to compare with)"})
                continue
            with Snapshot.open(root) as snap:
                _verify_member(snap, m)
            r = status(root)
            rows.append({"name": m.name, "root": m.root, "ok": True, "build_id": r["build_id"], "fresh": r["fresh"],
                         "verdict": r["verdict"], "added": len(r["added"]), "modified": len(r["modified"]),
                         "deleted": len(r["deleted"])})
        except (OraclError, OSError) as exc:
            why = str(exc).split("\n")[0][:300]
            rows.append({"name": m.name, "root": m.root, "ok": False, "fresh": False, "error": why})
            notices.append(f"member {m.name} did not answer: {why}")
    return {"schema": "oracl.workspace-status/1", "workspace": str(ws.path), "members": rows,
            "fresh": all(r["fresh"] for r in rows), "notices": notices}


def member_target(ws: WorkspaceFile, target: str) -> tuple[Member, str]:
    """``MEMBER:REST`` → (the member, REST), the member's latest build verified against its
    public key first (the one-repository readers then answer from it)."""
    name, sep, rest = target.partition(":")
    member = next((m for m in ws.members if m.name == name), None)
    if not sep or member is None:
        known = ", ".join(m.name for m in ws.members[:10])
        raise QueryError(f"with --workspace, name it as MEMBER:{'PATH' if not sep else rest or 'PATH'} "
                         f"(members: {known})")
    with Snapshot.open(Path(member.root)) as snap:
        _verify_member(snap, member)
    return member, rest



def context_workspace(ws: WorkspaceFile, q: str, budget_tokens: int = 4000, k: int = 12,
                      withhold: bool = True) -> dict[str, Any]:
    """An agent's context pack over every member: each member's own pack (``Memory.context``,
    its files holding key material withheld), their items merged by reciprocal rank of the
    file each quotes (a member's best file, then the next …; ties by the item's score as a
    share of its member's best, then repository), taken in that order while they fit in
    ``budget_tokens`` (the header counted), each with its ``repository``."""
    from oracl.core.errors import in_range
    from oracl.core.secrets import redact_typed
    from oracl.read.memory import MAX_BUDGET_TOKENS, Memory, estimate_tokens

    in_range("budget_tokens", budget_tokens, 50, MAX_BUDGET_TOKENS)
    packs, status, notices = [], [], []
    for m in ws.members:
        try:
            with Snapshot.open(Path(m.root)) as snap:
                checked = _verify_member(snap, m)
            with Memory.open(m.root, withhold_sensitive=withhold) as mem:
                pack = mem.context(q, budget_tokens=budget_tokens, k=k).to_json()
            status.append({"name": m.name, "root": m.root, "build_id": pack["build_id"], "ok": True, "checked": checked})
            packs.append((m, pack))
        except (OraclError, OSError) as exc:
            why = str(exc).split("\n")[0][:300]
            status.append({"name": m.name, "root": m.root, "ok": False, "error": why})
            notices.append(f"member {m.name} did not answer: {why}")
    pooled = []
    for m, pack in packs:
        order: dict[str, int] = {}
        best = max((float(it["score"]) for it in pack["items"]), default=0.0) or 1.0
        for j, it in enumerate(pack["items"]):
            rank = order.setdefault(it["path"], len(order) + 1)
            pooled.append((1.0 / (K + rank), float(it["score"]) / best, m.name, j, it))
    pooled.sort(key=lambda x: (-x[0], -x[1], x[2], x[3]))
    query = redact_typed(q[:2000])
    used = estimate_tokens(f"# context for: {query[:200]} across {len(packs)} repositories")
    items, truncated = [], any(p["truncated"] for _, p in packs)
    for _, _, name, _, it in pooled:
        if used + it["tokens"] > budget_tokens:
            truncated = True
            continue
        items.append({**it, "repository": name})
        used += it["tokens"]
    return {"schema": "oracl.workspace-context/1", "workspace": str(ws.path), "query": query,
            "budget_tokens": budget_tokens, "used_tokens": used, "truncated": truncated, "items": items,
            "members": status, "notices": notices}
