"""Governance of what the memory learns (design §9, "Learning"): proposals wait in the
vault (``.oracl/learn/proposals.json``), never in the graph, until someone accepts them.

* ``learn(root)`` mines the follow-up log into proposals and merges them with those
  already there: a decision (accepted, rejected) stands, the evidence is brought up to
  date; with ``auto`` (off by default) pending ones at or above that confidence are
  accepted unattended.
* ``decide(root, ids | all | min_confidence, "accepted" | "rejected")`` records decisions
  in ``learn/decisions.jsonl`` (one line each: id, decision, by, time) and writes the
  accepted proposals, and only those, to the learned files the next build merges:
  ``learned_edges.json`` (both directions of an association), ``learned_terms.json``,
  ``learned_tags.json``. Rows a person wrote by hand (without a ``proposal`` key) are kept.

Every gate is named where it refuses: a proposal naming a file the current build does not
hold (``in-build``) or one holding key material (``withheld``) is never accepted. A file
that is not readable JSON or holds a value out of range is one ``LearnedDataError`` line,
and nothing is overwritten. Writers hold ``learn/.lock``.
"""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from oracl.core import telemetry
from oracl.core.errors import LearnedDataError, QueryError
from oracl.core.seal import read_sealed, write_sealed
from oracl.core.vault import LEARN_DECISIONS as DECISIONS
from oracl.core.vault import LEARNED_KIND, append_fd, folder_lock, json_or_none, read_control
from oracl.read.learn.mine import Mined, mine
from oracl.read.learn.usage import USAGE_LOG
from oracl.read.snapshot import Snapshot

KINDS = ("association", "term", "tag")
STATUSES = ("pending", "accepted", "rejected")
PROPOSALS = "learn/proposals.json"
EDGES, TERMS, TAGS = "learned_edges.json", "learned_terms.json", "learned_tags.json"
_ID = re.compile(r"^[0-9a-f]{12}$")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


SEALED = (PROPOSALS, EDGES, TERMS, TAGS)  # the files a build or a decision acts on: sealed (design §11)


def kind_of(name: str) -> str:
    """What the seal of a learned file or of the proposals binds it to."""
    return "proposals" if name == PROPOSALS else LEARNED_KIND + name


def _json(path: Path, name: str | None = None) -> Any:
    """A learned file's (or the proposals') JSON: None when missing; LearnedDataError when
    this user's ORACL did not write it (it came with the tree, or a person edited it):
    ``oracl learn trust`` takes it after a person has read it."""
    name = name or path.name
    if path.exists() and read_sealed(path, kind_of(name)) is None:
        raise LearnedDataError(f"{name} was not written by your oracl (it came with the tree, or was edited by "
                               "hand): read it, then `oracl learn trust` takes it as yours, or delete it; "
                               "nothing was written")
    return json_or_none(path, LearnedDataError)


def _write(path: Path, name: str, doc: Any) -> None:
    write_sealed(path, kind_of(name), orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))


def trust(vault_dir: Path) -> dict[str, Any]:
    """Seal the learned files and the proposals as they stand, after a person has read
    them (``oracl learn trust``): each is checked first, and one that is not of its shape
    is a LearnedDataError and nothing is sealed. Returns the files sealed now."""
    shape: dict[str, type | tuple[type, ...]] = {PROPOSALS: dict, EDGES: (list, dict), TERMS: list, TAGS: dict}
    todo = []
    for name in SEALED:
        path = vault_dir / name
        if not path.is_file() or read_sealed(path, kind_of(name)) is not None:
            continue
        raw = read_control(path)  # what is checked is what is sealed
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise LearnedDataError(f"{name} is not readable JSON ({exc}); nothing was sealed") from None
        if name == PROPOSALS:
            load_doc(data)
        elif not isinstance(data, shape[name]):
            raise LearnedDataError(f"{name} is not of its shape (a {'list' if shape[name] is list else 'mapping'}); "
                                   "nothing was sealed")
        todo.append((path, name, raw))
    with _locked(vault_dir):
        for path, name, raw in todo:
            write_sealed(path, kind_of(name), raw)
    return {"sealed": [name for _, name, _ in todo], "vault": str(vault_dir)}


def check_proposal(p: object, where: str) -> dict[str, Any]:
    """One proposal as read back (a hand-edited file is checked like any input)."""
    if not isinstance(p, dict):
        raise LearnedDataError(f"{where}: a proposal must be an object")
    pid, kind, status, kappa = p.get("id"), p.get("kind"), p.get("status"), p.get("confidence")
    if not isinstance(pid, str) or not _ID.match(pid):
        raise LearnedDataError(f"{where}: id must be 12 hexadecimal digits")
    if kind not in KINDS:
        raise LearnedDataError(f"{where} ({pid}): kind must be one of {', '.join(KINDS)}")
    if status not in STATUSES:
        raise LearnedDataError(f"{where} ({pid}): status must be one of {', '.join(STATUSES)}")
    if isinstance(kappa, bool) or not isinstance(kappa, int | float) or not 0 < kappa <= 1:
        raise LearnedDataError(f"{where} ({pid}): confidence must be a number in (0, 1]")
    need = {"association": ("source", "target"), "term": ("term", "path"), "tag": ("path", "tag", "value")}[kind]
    for key in need:
        if not isinstance(p.get(key), str) or not p[key]:
            raise LearnedDataError(f"{where} ({pid}): {key} must be a non-empty string")
    if not isinstance(p.get("support", 0), int) or p.get("support", 0) < 0:
        raise LearnedDataError(f"{where} ({pid}): support must be a count")
    return p


def load(vault_dir: Path) -> dict[str, Any]:
    """The proposals document: ``{"version": 1, "mined_at", "sessions", "proposals": [...]}``."""
    return load_doc(_json(vault_dir / PROPOSALS, PROPOSALS))


def load_doc(doc: Any) -> dict[str, Any]:
    """The proposals document checked (None: an empty one)."""
    if doc is None:
        return {"version": 1, "mined_at": None, "sessions": 0, "proposals": []}
    if not isinstance(doc, dict) or not isinstance(doc.get("proposals"), list):
        raise LearnedDataError(f"{PROPOSALS} must be an object with a list of proposals; it was left as it is")
    seen: set[str] = set()
    for i, p in enumerate(doc["proposals"]):
        check_proposal(p, f"{PROPOSALS}, proposal {i + 1}")
        if p["id"] in seen:
            raise LearnedDataError(f"{PROPOSALS}: proposal {p['id']} appears twice")
        seen.add(p["id"])
    return doc


def _locked(vault_dir: Path) -> AbstractContextManager[None]:
    return folder_lock(vault_dir / "learn")


def _save(vault_dir: Path, doc: dict[str, Any]) -> None:
    doc["proposals"].sort(key=lambda p: (-p["confidence"], p["id"]))
    _write(vault_dir / PROPOSALS, PROPOSALS, doc)


class SnapshotView:
    """The miner's view of a build: its files, the ones holding key material, a file's
    words (read once, through the snapshot) and domain."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.paths = snap.built_files()[1]
        self.sensitive = frozenset(r["path"] for r in snap.named("sensitive_paths"))
        self._stems: dict[str, frozenset[str]] = {}
        self._domains: dict[str, str | None] = {}

    def exists(self, path: str) -> bool:
        return path in self.paths

    def withheld(self, path: str) -> bool:
        return path in self.sensitive

    def has_term(self, path: str, stem: str) -> bool:
        from oracl.core.tokens import identifier_parts, stems
        from oracl.read.query.run import _text

        got = self._stems.get(path)
        if got is None:
            text = (_text(self.snap, path) or "") + " " + path.replace("/", " ").replace(".", " ")
            words = {w.lower() for w in _WORD.findall(text)}
            got = self._stems[path] = frozenset(stems(words | {p.lower() for w in words for p in identifier_parts(w)}))
        return stem in got

    def domain(self, path: str) -> str | None:
        if path not in self._domains:
            from oracl.read.callgraph import named_each

            rows = named_each(self.snap, "artifact_domains", [path])
            self._domains[path] = rows[0].get("domain") if rows else None
        return self._domains[path]


def merge(old: dict[str, Any], mined: Mined, now: datetime) -> dict[str, Any]:
    """The proposals after a mining: new ones pending, known ones with fresh evidence and
    their decision kept; a decided proposal no longer mined stays as it was."""
    by_id = {p["id"]: p for p in old["proposals"]}
    for p in mined.proposals:
        before = by_id.get(p["id"])
        if before is not None:
            p = {**p, **{k: before[k] for k in ("status", "decided_at", "decided_by") if k in before}}
        by_id[p["id"]] = p
    kept = [p for p in by_id.values() if p["status"] != "pending" or any(m["id"] == p["id"] for m in mined.proposals)]
    return {"version": 1, "mined_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "sessions": mined.sessions,
            "usage_rows": mined.rows, "skipped": dict(sorted(mined.skipped.items())), "proposals": kept}


def learn(root: Path, snap: Snapshot, now: datetime | None = None, auto: float | None = None) -> dict[str, Any]:
    """Mine ``logs/usage.jsonl`` against ``snap``'s build into the vault's proposals (and,
    with ``auto``, accept the pending ones at or above it); a summary."""
    now = now or datetime.now(UTC)
    vault_dir = snap.vault.dir
    count = telemetry.LineCount()
    mined = mine(telemetry.lines(vault_dir, USAGE_LOG, count), SnapshotView(snap), now)
    mined.skipped["unreadable line"] += count.bad
    if not mined.skipped["unreadable line"]:
        del mined.skipped["unreadable line"]
    with _locked(vault_dir):
        old = load(vault_dir)
        known = {p["id"] for p in old["proposals"]}
        doc = merge(old, mined, now)
        _save(vault_dir, doc)
    accepted: list[str] = []
    if auto is not None:
        accepted = decide(root, snap, [], "accepted", min_confidence=auto, by="auto", now=now)["decided"]
    doc = load(vault_dir)
    return {"sessions": mined.sessions, "usage_rows": mined.rows, "skipped": dict(sorted(mined.skipped.items())),
            "proposals": len(doc["proposals"]), "by_kind": _by_kind(doc),
            "new": sum(1 for p in mined.proposals if p["id"] not in known), "auto_accepted": accepted,
            "file": str(vault_dir / PROPOSALS)}


def _by_kind(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {k: dict.fromkeys(STATUSES, 0) for k in KINDS}
    for p in doc["proposals"]:
        out[p["kind"]][p["status"]] += 1
    return out


def review(vault_dir: Path, status: str | None = None, kind: str | None = None) -> dict[str, Any]:
    """The proposals (those of ``status`` and ``kind`` when given), best first."""
    if status is not None and status not in STATUSES:
        raise QueryError(f"--status must be one of {', '.join(STATUSES)}")
    if kind is not None and kind not in KINDS:
        raise QueryError(f"--kind must be one of {', '.join(KINDS)}")
    doc = load(vault_dir)
    rows = [p for p in doc["proposals"] if (status is None or p["status"] == status)
            and (kind is None or p["kind"] == kind)]
    return {"mined_at": doc.get("mined_at"), "sessions": doc.get("sessions", 0), "by_kind": _by_kind(doc),
            "proposals": sorted(rows, key=lambda p: (STATUSES.index(p["status"]), -p["confidence"], p["id"]))}


def subject(p: dict[str, Any]) -> list[str]:
    """The files a proposal names."""
    return [p["source"], p["target"]] if p["kind"] == "association" else [p["path"]]


def decide(root: Path, snap: Snapshot, ids: list[str], decision: str, *, every: bool = False,
           min_confidence: float | None = None, by: str = "review", now: datetime | None = None) -> dict[str, Any]:
    """Accept or reject proposals (``ids``, ``every`` pending one, or the pending ones at or
    above ``min_confidence``) and rewrite the learned files from the accepted ones."""
    if decision not in ("accepted", "rejected"):
        raise QueryError("a decision is accepted or rejected")
    if min_confidence is not None and not 0 < min_confidence <= 1:
        raise QueryError(f"the confidence must be in (0, 1], not {min_confidence}")
    now = now or datetime.now(UTC)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    vault_dir = snap.vault.dir
    view = SnapshotView(snap)
    with _locked(vault_dir):
        doc = load(vault_dir)
        by_id = {p["id"]: p for p in doc["proposals"]}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise QueryError(f"no proposal {unknown[0]!r} (oracl learn review lists them)")
        chosen = [by_id[i] for i in ids]
        if every or min_confidence is not None:
            chosen += [p for p in doc["proposals"] if p["status"] == "pending" and p not in chosen
                       and (min_confidence is None or p["confidence"] >= min_confidence)]
        refused: list[dict[str, str]] = []
        done: list[str] = []
        for p in chosen:
            if decision == "accepted":
                gate = next((("in-build", f) for f in subject(p) if not view.exists(f)), None) or next(
                    (("withheld", f) for f in subject(p) if view.withheld(f)), None)
                if gate is not None:
                    refused.append({"id": p["id"], "gate": gate[0], "path": gate[1]})
                    continue
            p.update(status=decision, decided_at=stamp, decided_by=by)
            done.append(p["id"])
        edges, terms, tags = _learned(vault_dir, doc)  # read (and checked) before anything is written
        _save(vault_dir, doc)
        _decisions(vault_dir, [(pid, decision, by, stamp) for pid in done])
        _write(vault_dir / EDGES, EDGES, edges)
        _write(vault_dir / TERMS, TERMS, terms)
        _write(vault_dir / TAGS, TAGS, tags)
    return {"decision": decision, "decided": done, "refused": refused,
            "accepted_total": sum(1 for p in doc["proposals"] if p["status"] == "accepted"),
            "files": [EDGES, TERMS, TAGS]}


def _decisions(vault_dir: Path, rows: list[tuple[str, str, str, str]]) -> None:
    if not rows:
        return
    data = b"".join(orjson.dumps({"id": i, "decision": d, "by": b, "at": t}, option=orjson.OPT_SORT_KEYS) + b"\n"
                    for i, d, b, t in rows)
    fd = append_fd(vault_dir / DECISIONS)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _learned(vault_dir: Path, doc: dict[str, Any]) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """The three learned files' contents: the hand-written rows as they are, then the
    accepted proposals."""
    accepted = sorted((p for p in doc["proposals"] if p["status"] == "accepted"), key=lambda p: p["id"])
    old_edges = _json(vault_dir / EDGES)
    if isinstance(old_edges, dict):
        old_edges = old_edges.get("edges", [])
    old_terms = _json(vault_dir / TERMS)
    old_tags = _json(vault_dir / TAGS)
    if old_edges is not None and not isinstance(old_edges, list):
        raise LearnedDataError(f"{EDGES} must be a list of edges; it was left as it is")
    if old_terms is not None and not isinstance(old_terms, list):
        raise LearnedDataError(f"{TERMS} must be a list of terms; it was left as it is")
    if old_tags is not None and not isinstance(old_tags, dict):
        raise LearnedDataError(f"{TAGS} must map each path to an object of tags; it was left as it is")
    edges = [e for e in old_edges or [] if not (isinstance(e, dict) and "proposal" in e)]
    terms = [t for t in old_terms or [] if not (isinstance(t, dict) and "proposal" in t)]
    tags = {k: v for k, v in (old_tags or {}).items() if not (isinstance(v, dict) and "proposal" in v)}
    for p in accepted:
        row = {"confidence": p["confidence"], "sessions": p.get("support", 0), "proposal": p["id"]}
        if p["kind"] == "association":
            edges.append({"source": p["source"], "target": p["target"], **row})
            edges.append({"source": p["target"], "target": p["source"], **row})
        elif p["kind"] == "term":
            terms.append({"term": p["term"], "path": p["path"], **row})
        elif p["path"] not in tags:  # a hand-written entry for the file wins
            tags[p["path"]] = {p["tag"]: p["value"], "source": "learned", **row}
    return edges, terms, tags
