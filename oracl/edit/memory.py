"""``oracl.Memory``: the read-only Memory, plus ``apply`` and ``undo`` of an agent's mutations.

The read plane's ``Memory`` never writes a user's file (the MCP server's read-only default
stays on it); this one applies a mutation after every gate, rebuilds what changed and says
what the change reaches:

>>> with Memory.open("path/to/repo") as mem:                       # doctest: +SKIP
...     out = mem.apply("@@FILE app.py\\n@@REPLACE\\nx = 1\\n@@WITH\\nx = 2\\n@@END\\n")
...     out["build_id"], out["impact"]["tests"][0]["path"]
"""

from __future__ import annotations

import hashlib
from typing import Any

from oracl.core.config import load_config
from oracl.core.errors import ContractError, EditRefusedError
from oracl.core.records import EVENT_VERSION, GraduatedEvent
from oracl.core.vault import Vault
from oracl.edit import apply as ap
from oracl.edit.contract import Mutation, parse
from oracl.edit.gates import HELD_BACK, Context
from oracl.read.memory import Memory as ReadMemory
from oracl.read.memory import sensitive_paths

ALLOW = HELD_BACK


def _syntax(path: str, text: str) -> bool | None:
    from oracl.builder.extractors.code import has_syntax_errors

    return has_syntax_errors(path, text)


class Memory(ReadMemory):
    """A ``Memory`` that can also apply an agent's mutation (``apply``) and put it back
    (``undo``); every read method is the read plane's."""

    def apply(self, mutation: str | bytes | Mutation, *, dry_run: bool = False, allow: tuple[str, ...] = (),
              confirm: bool = False, build: bool = True) -> dict[str, Any]:
        """Parse ``mutation`` (the ``@@FILE/@@REPLACE/@@WITH/@@END`` contract), pass every gate,
        write it all or not at all, rebuild and return the diff, the gates passed, the new
        build id and the ``impact`` of the change. ``dry_run``: the same answer, nothing
        written (impact on the current build). ``allow``: held-back kinds an edit may touch
        (archived, generated, vendored, lockfile, minified); ``confirm``: edit hub files past
        ``agent_confirm_backrefs``. A refusal raises ``EditRefusedError`` naming every gate
        that refused (recorded as an event); a mutation that does not parse, ``ContractError``."""
        bad = sorted(set(allow) - set(ALLOW))
        if bad:
            raise ContractError(f"--allow takes {', '.join(ALLOW)}, not {bad[0]!r}")
        m = mutation if isinstance(mutation, Mutation) else parse(mutation)
        cfg = load_config(self.root)
        ctx = Context(frozenset(allow), confirm, cfg.agent_never, cfg.agent_confirm_backrefs, syntax=_syntax)
        vault = Vault(self.root)
        with self._lock, ap.edit_lock(vault):
            recovered = ap.recover(self.root, vault)
            snap, _ = self.snapshot()
            rows: dict[str, dict[str, Any] | None] = {}
            for p in m.paths:
                found = snap.named("artifact_by_path", {"path": p}) if p and "\0" not in p else []
                rows[p] = found[0] if found else None
            planned = ap.gate(self.root, m, rows, sensitive_paths(snap), ctx)
            if planned.refused:
                self._record(planned, None, dry_run)
                raise ap.refusal(planned)
            diff = ap.unified(planned.changes)
            files = [{"path": c.path, "op": c.op, "blocks": c.blocks, "sha256_before": c.checksum,
                      "sha256_after": ap.sha256(c.after)} for c in planned.changes]
            out: dict[str, Any] = {"dry_run": dry_run, "files": files, "diff": diff, "gates": planned.passed(),
                                   "recovered": recovered, "build_id": snap.build_id, "edit": None}
            out["changed_lines"] = {c.path: ap.changed_lines(c, after=True) for c in planned.changes
                                    if c.after is not None}
            if dry_run:
                out["impact"] = self._impact(planned, after=False)
                return out
            edit_id = ap.commit(self.root, vault, [(c.path, c.before, c.after, c.mode) for c in planned.changes],
                                "apply", {"gates": planned.passed()})
            ap.clean(vault)
            out["edit"] = edit_id
            self._record(planned, edit_id, False)
        if build:
            from oracl.builder.orchestrator import build as run_build

            out["build_id"] = run_build(self.root).build_id
            out["impact"] = self._impact(planned, after=True)
        self.used("apply", [c.path for c in planned.changes if c.after is not None])
        return out

    def undo(self, edit_id: str | None = None, *, build: bool = True) -> dict[str, Any]:
        """Put back the files of the latest applied mutation (or ``edit_id``) when none changed
        since it wrote them (else ``UndoError``), then rebuild."""
        vault = Vault(self.root)
        with self._lock, ap.edit_lock(vault):
            out = ap.undo(self.root, vault, edit_id)
        if build:
            from oracl.builder.orchestrator import build as run_build

            out["build_id"] = run_build(self.root).build_id
        return out

    def edits(self) -> list[dict[str, Any]]:
        """The journal of applied, undone and rolled-back mutations, newest first."""
        return [{k: d.get(k) for k in ("id", "label", "state", "at", "undoes", "undone_by")}
                | {"files": [r["path"] for r in d.get("files", [])]} for d in reversed(ap.journals(Vault(self.root)))]

    def _impact(self, planned: ap.Planned, *, after: bool) -> dict[str, Any]:
        changed = {c.path: ap.changed_lines(c, after=after) for c in planned.changes
                   if c.after is not None and (after or c.op != "create")}
        return self.impact_of(changed)

    def impact_of(self, changed: dict[str, list[tuple[int, int]]]) -> dict[str, Any]:
        """``impact`` of an applied edit's ``changed_lines`` (an empty answer when none)."""
        changed = {p: [tuple(r) for r in lines] for p, lines in changed.items() if lines}  # type: ignore[misc]
        if not changed:
            return {"symbols": [], "files": [], "tests": [], "hubs": []}
        try:
            return self.impact(changed_lines=changed)
        except Exception as exc:  # noqa: BLE001 – the edit stands; say why its reach is unknown
            return {"error": f"impact unavailable: {str(exc).splitlines()[0][:200]}"}

    def _record(self, planned: ap.Planned, edit_id: str | None, dry_run: bool) -> None:
        """One event per file of an applied or refused mutation (names only: paths, gates, ids)."""
        if dry_run:
            return
        from oracl.builder.sensors.ingest import record

        refused = {v["path"]: v for v in reversed(planned.refused)}
        events = []
        for c in planned.changes:
            safe = not any(v["path"] == c.path and v["gate"] == "inside-root" and not v["ok"] for v in planned.verdicts)
            v = refused.get(c.path)
            if edit_id is None and v is None:
                continue
            decision = "go" if edit_id else "no-go"
            summary = (f"agent edit {edit_id} applied ({c.op})" if edit_id else
                       f"agent edit refused by gate {v['gate'] if v else 'unknown'}")
            arts = {"path": c.path if safe else "", "report": "edit", "op": c.op}
            if edit_id:
                arts["edit"] = edit_id
            digest = hashlib.sha256(f"{edit_id}\0{c.path}\0{summary}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
            codes = ("edit", "applied") if edit_id else ("edit", "refused", v["gate"] if v else "")
            events.append(GraduatedEvent(EVENT_VERSION, "", "oracode", "operator", decision, summary,
                                         tuple(x for x in codes if x), "Threat" if not edit_id else "Awareness",
                                         None, digest, arts))
        from datetime import UTC, datetime

        now = datetime.now(UTC)
        at = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        events = [GraduatedEvent(e.schema_version, at, e.sensor_source, e.event_type, e.decision, e.summary,
                                 e.reason_codes, e.motivator_hint, e.cortex_routing_hint, e.source_id_hash,
                                 e.artifacts) for e in events]
        try:
            record(self.root, events, now)
        except Exception:  # noqa: BLE001,S110 – a record that cannot be written never changes the answer
            pass


def refused_payload(exc: EditRefusedError) -> dict[str, Any]:
    return {"refused": True, "message": str(exc), "verdicts": exc.verdicts}


__all__ = ["Memory", "refused_payload"]
