"""Apply a mutation: plan it against the files as they are, pass every gate, then write all
of it or none of it, journalled so that ``undo`` can put it back (design §5e).

A mutation is applied under the vault's edit lock (two agents queue, and the second one's
``unchanged-since`` gate sees the first one's write). Before a byte is written, the journal
``.oracl/edits/<id>/`` holds every touched file's bytes as they were and the checksum each
will have; each file is then written to a temporary file beside it and renamed over it, in
the folder opened without following a symlink (a symlink swapped in between the gates and
the write is refused or replaced, never followed). The journal says ``applied`` only after
the last file: a process killed in between leaves it ``applying``, and the next ``apply`` or
``undo`` puts every file it had written back first (``recover``): never half a mutation.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import hashlib
import os
import shutil
import signal
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from oracl.core.errors import ContractError, EditRefusedError, UndoError, UnsafePathError
from oracl.core.seal import read_sealed, write_sealed
from oracl.core.secrets import redact_text
from oracl.core.vault import Vault, atomic_write, folder_lock, make_dirs, read_control
from oracl.edit.contract import Edit, Mutation
from oracl.edit.gates import GATE_NAMES, MAX_RESULT_BYTES, Change, Context, evaluate, kind_of

EDITS = "edits"
JOURNAL_KIND = "edit-journal"  # what a journal's seal binds it to (core.seal, design §11)
FAULT_ENV = "ORACL_FAULT"  # "edit between files": SIGKILL after the first file of a mutation is written
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
MAX_READ = MAX_RESULT_BYTES + 1


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def edit_lock(vault: Vault) -> contextlib.AbstractContextManager[None]:
    """One mutation (or undo) per vault at a time: the next one waits for it."""
    return folder_lock(vault.dir / EDITS)


def _parent(real_root: str, rel: str, create: bool = False) -> tuple[int, str]:
    """A descriptor of ``rel``'s folder, opened one component at a time without following a
    symlink (``create``: missing folders are made), and the file's name. A path that is not
    plainly inside the root (absolute, empty, ``.`` or ``..`` anywhere) is UnsafePathError,
    whoever wrote it: a journal is followed only through here."""
    parts = rel.split("/")
    if "\0" in rel or any(p in ("", ".", "..") for p in parts):
        raise UnsafePathError(f"{rel[:200]!r} is not a path inside the root; refused")
    fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafePathError(f"{rel}: the folder {part!r} on its path is a symlink or not a folder") from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _read(dfd: int, name: str) -> tuple[str, bytes | None, int]:
    """(what is there: "file", "symlink", … or "" for nothing, its bytes when a regular file,
    its mode). A FIFO is never opened (nothing blocks)."""
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return "", None, 0o644
    kind = kind_of(st.st_mode)
    if kind != "file":
        return kind, None, st.st_mode
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    with os.fdopen(fd, "rb") as fh:
        if not os.path.samestat(os.fstat(fh.fileno()), st):
            return "replaced while read", None, st.st_mode
        return "file", fh.read(MAX_READ), st.st_mode


def _inspect(real_root: str, rel: str) -> tuple[str, str, bytes | None, int]:
    """(unsafe reason or "", kind, bytes, mode) of ``rel`` under the root, never following a link."""
    if not rel or "\0" in rel or os.path.isabs(rel) or ".." in rel.split("/"):
        return "outside: not a path inside the root", "", None, 0o644
    try:
        dfd, name = _parent(real_root, rel)
    except FileNotFoundError:
        return "", "", None, 0o644
    except UnsafePathError as exc:
        return str(exc), "", None, 0o644
    try:
        kind, data, mode = _read(dfd, name)
    finally:
        os.close(dfd)
    return "", kind, data, mode


def _text_of(raw: bytes) -> tuple[str, bool, bool] | None:
    """(text, has a BOM, CRLF line endings) of UTF-8 bytes; None when they are not UTF-8."""
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        text = raw[3 if bom else 0:].decode("utf-8")
    except UnicodeDecodeError:
        return None
    crlf = text.count("\r\n")
    return text, bom, crlf > 0 and crlf * 2 >= text.count("\n")


def _plan_file(c: Change, edits: list[Edit]) -> None:
    """``c.after`` from ``c.before`` and the file's edits (or why not, in ``text_error``)."""
    first = edits[0]
    if first.op == "delete":
        c.after = None
        return
    if first.op == "create":
        c.after = first.new.encode("utf-8", "surrogatepass")
        return
    if c.before is None:
        return
    parsed = _text_of(c.before)
    if parsed is None:
        c.text_gate, c.text_error = "encoding", "not UTF-8 text; only UTF-8 files are edited"
        return
    text, bom, crlf = parsed
    for e in edits:
        old, new = (e.old.replace("\r\n", "\n").replace("\n", "\r\n"), e.new.replace("\r\n", "\n").replace("\n", "\r\n")) \
            if crlf else (e.old, e.new)
        n = text.count(old)
        if n != 1:
            c.text_gate = "match"
            c.text_error = (f"the @@REPLACE text of block {e.block} occurs {n} times; it must occur exactly once "
                            "(give more lines around it)" if n else
                            f"the @@REPLACE text of block {e.block} does not occur in the file")
            return
        text = text.replace(old, new, 1)
    c.after = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass")


def plan(root: Path, mutation: Mutation, build_rows: dict[str, dict[str, Any] | None],
         sensitive: frozenset[str]) -> list[Change]:
    """Each touched file's planned change, read now (``build_rows``: the latest build's row
    of each path, None when the build does not hold it)."""
    real_root = os.path.realpath(root)
    changes = []
    for path in mutation.paths:
        edits = [e for e in mutation.edits if e.path == path]
        ops = {e.op for e in edits}
        if len(ops) > 1 or (ops & {"create", "delete"} and len(edits) > 1):
            raise ContractError(f"block {edits[1].block}: {path} is touched by more than one of @@FILE, @@CREATE "
                                "and @@DELETE (one kind of change per file and mutation)")
        seen = next((e.seen for e in edits if e.seen), None)
        unsafe, kind, data, mode = _inspect(real_root, path)
        row = build_rows.get(path)
        c = Change(path=path, op=edits[0].op, blocks=sorted({e.block for e in edits}), seen=seen, exists=bool(kind),
                   kind=kind, before=data, checksum=sha256(data), build=row, unsafe=unsafe,
                   mode=mode & 0o777 if kind == "file" else 0o644,
                   sensitive=path in sensitive, backrefs=int((row or {}).get("backrefs") or 0))
        if not unsafe and (kind == "file" or c.op == "create"):
            if kind == "file" and data is not None and len(data) >= MAX_READ:
                c.text_gate, c.text_error = "encoding", f"over {MAX_RESULT_BYTES:,} bytes; not edited by agents"
            else:
                _plan_file(c, edits)
        changes.append(c)
    return changes


def unified(changes: list[Change]) -> str:
    """The mutation as a unified diff, secrets redacted (of the old text too)."""
    out: list[str] = []
    for c in changes:
        a = (c.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        b = (c.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        old = "/dev/null" if c.op == "create" else f"a/{c.path}"
        new = "/dev/null" if c.after is None else f"b/{c.path}"
        out += difflib.unified_diff(a, b, old, new, n=3)
    return redact_text("".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in out))


def changed_lines(c: Change, *, after: bool) -> list[tuple[int, int]]:
    """The line ranges the change touched, in the new file (``after``) or the old one."""
    a = (c.before or b"").decode("utf-8", "replace").splitlines()
    b = (c.after or b"").decode("utf-8", "replace").splitlines()
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        lo, hi = (j1, j2) if after else (i1, i2)
        out.append((lo + 1, max(lo + 1, hi)))
    return out


# ---- the journal and the writes -------------------------------------------------------------

def _journal_dir(vault: Vault, edit_id: str) -> Path:
    if not edit_id or "/" in edit_id or edit_id in (".", ".."):
        raise UndoError(f"{edit_id[:60]!r} is not a journal's id")
    return vault.dir / EDITS / edit_id


def _write_journal(folder: Path, doc: dict[str, Any]) -> None:
    write_sealed(folder / "journal.json", JOURNAL_KIND,
                 orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2))


def _before(folder: Path, i: int, row: dict[str, Any]) -> bytes | None:
    """The bytes a journal kept of file ``i`` as it was, checked against the SHA-256 the
    (sealed) journal records; UndoError when they do not match."""
    if row["before"] is None:
        return None
    try:
        data = read_control(folder / "before" / str(i), MAX_READ)
    except OSError:
        data = None
    if sha256(data) != row["before"]:
        raise UndoError(f"the kept copy of {row['path']} in journal {folder.name} does not match its checksum; "
                        "nothing was put back")
    return data


def _put(real_root: str, rel: str, data: bytes | None, expect: str | None, mode: int) -> None:
    """Make ``rel`` hold ``data`` (None: gone), only while it still holds what ``expect`` says
    (its SHA-256, None: nothing there): a temporary file beside it, renamed over it."""
    dfd, name = _parent(real_root, rel, create=data is not None)
    tmp = f".{name}.oracl-{uuid.uuid4().hex[:8]}"
    try:
        if data is not None:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
            os.fchmod(fd, mode & 0o777 or 0o644)  # the file's own mode, whatever the umask
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        kind, now, _ = _read(dfd, name)
        if (kind or None) and kind != "file":
            raise UnsafePathError(f"{rel} became a {kind} while the mutation was applied; refused")
        if sha256(now) != expect:
            raise EditRefusedError(f"{rel} changed while the mutation was applied; nothing more is written",
                                   [{"gate": "unchanged-since", "path": rel, "blocks": [], "ok": False,
                                     "why": "changed while the mutation was applied"}])
        if data is None:
            os.unlink(name, dir_fd=dfd)
        elif expect is None:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)  # never over anything
        else:
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        os.fsync(dfd)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dfd)
        os.close(dfd)


def commit(root: Path, vault: Vault, files: list[tuple[str, bytes | None, bytes | None, int]], label: str,
           extra: dict[str, Any] | None = None) -> str:
    """Write ``files`` ((path, bytes now, bytes wanted, mode) each) all or none, journalled;
    the journal's id. The caller holds the edit lock."""
    edit_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ") + "-" + uuid.uuid4().hex[:6]
    folder = _journal_dir(vault, edit_id)
    make_dirs(folder / "before")
    rows = []
    for i, (path, before, after, mode) in enumerate(files):
        if before is not None:
            atomic_write(folder / "before" / str(i), before)
        rows.append({"path": path, "before": sha256(before), "after": sha256(after), "mode": mode})
    doc = {"id": edit_id, "label": label, "state": "applying", "files": rows,
           "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), **(extra or {})}
    _write_journal(folder, doc)
    real_root = os.path.realpath(root)
    written = 0
    try:
        for path, before, after, mode in files:
            _put(real_root, path, after, sha256(before), mode)
            written += 1
            if os.environ.get(FAULT_ENV) == "edit between files":
                os.kill(os.getpid(), signal.SIGKILL)
    except BaseException:
        _roll_back(root, folder, doc)
        raise
    doc["state"] = "applied"
    _write_journal(folder, doc)
    return edit_id


def _roll_back(root: Path, folder: Path, doc: dict[str, Any]) -> list[str]:
    """Put back every file of an unfinished journal that holds what the journal wrote; the
    files that hold something else (changed since by someone) are named and left."""
    real_root = os.path.realpath(root)
    left = []
    for i, row in reversed(list(enumerate(doc["files"]))):
        _, kind, now, _ = _inspect(real_root, row["path"])
        current = sha256(now) if kind == "file" else None
        if current == row["before"]:
            continue
        if current != row["after"]:
            left.append(row["path"])
            continue
        _put(real_root, row["path"], _before(folder, i, row), current, row["mode"])
    doc["state"] = "rolled back"
    doc["left"] = left
    _write_journal(folder, doc)
    return left


def _trusted(d: Path) -> dict[str, Any] | None:
    """A journal folder's document when this user's ORACL wrote it (sealed), its id is the
    folder's name and every path it names is plainly inside the root; else None."""
    try:
        raw = read_sealed(d / "journal.json", JOURNAL_KIND)
        doc = orjson.loads(raw) if raw is not None else None
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("id") != d.name or not isinstance(doc.get("files"), list):
        return None
    for row in doc["files"]:
        path = row.get("path") if isinstance(row, dict) else None
        if not isinstance(path, str) or "\0" in path or any(p in ("", ".", "..") for p in path.split("/")):
            return None
    return doc


def journals(vault: Vault) -> list[dict[str, Any]]:
    """Every journal of the vault this user's ORACL wrote, oldest first; a journal that came
    with the tree (no seal of this user's key), names a path outside the root or cannot be
    read is never followed (``foreign_journals`` names them)."""
    out = []
    folder = vault.dir / EDITS
    for d in sorted(folder.iterdir()) if folder.is_dir() else []:
        doc = _trusted(d) if d.is_dir() and not d.is_symlink() else None
        if doc is not None:
            out.append(doc)
    return out


def foreign_journals(vault: Vault) -> list[str]:
    """The journal folders ``journals`` does not follow (their names)."""
    folder = vault.dir / EDITS
    return [d.name for d in (sorted(folder.iterdir()) if folder.is_dir() else [])
            if (d / "journal.json").exists() and (d.is_symlink() or _trusted(d) is None)]


def recover(root: Path, vault: Vault) -> list[str]:
    """Roll back every mutation a killed process left ``applying``; the ids rolled back."""
    done = []
    for doc in journals(vault):
        if doc.get("state") == "applying":
            _roll_back(root, _journal_dir(vault, doc["id"]), doc)
            done.append(doc["id"])
    return done


def undo(root: Path, vault: Vault, edit_id: str | None = None) -> dict[str, Any]:
    """Put back the files of the latest applied mutation (or ``edit_id``), when they still hold
    what it wrote; the caller holds the edit lock."""
    recover(root, vault)
    docs = [d for d in journals(vault) if d.get("state") == "applied" and d.get("label") == "apply"]
    if edit_id is not None:
        docs = [d for d in docs if d["id"] == edit_id]
        if not docs:
            raise UndoError(f"no applied mutation {edit_id!r} to undo (`oracl undo --list` shows them)")
    if not docs:
        foreign = foreign_journals(vault)
        raise UndoError("no applied mutation to undo" + (
            f" (ignored {len(foreign)} journal{'s' if len(foreign) > 1 else ''} your oracl did not write: "
            f"{', '.join(foreign[:3])})" if foreign else ""))
    doc = docs[-1]
    folder = _journal_dir(vault, doc["id"])
    real_root = os.path.realpath(root)
    files = []
    for i, row in enumerate(doc["files"]):
        _, kind, now, mode = _inspect(real_root, row["path"])
        current = sha256(now) if kind == "file" else None
        if current != row["after"]:
            raise UndoError(f"{row['path']} changed since mutation {doc['id']} wrote it; nothing was undone")
        files.append((row["path"], now, _before(folder, i, row), row["mode"] if now is None else mode))
    undo_id = commit(root, vault, files, "undo", {"undoes": doc["id"]})
    doc["state"] = "undone"
    doc["undone_by"] = undo_id
    _write_journal(folder, doc)
    return {"undone": doc["id"], "edit": undo_id, "files": [r["path"] for r in doc["files"]]}


@dataclass(frozen=True, slots=True)
class Planned:
    changes: list[Change]
    verdicts: list[dict[str, Any]]

    @property
    def refused(self) -> list[dict[str, Any]]:
        return [v for v in self.verdicts if not v["ok"]]

    def passed(self) -> list[str]:
        """The gates every file passed (in ``GATE_NAMES`` order)."""
        bad = {v["gate"] for v in self.refused}
        ran = {v["gate"] for v in self.verdicts}
        return [g for g in GATE_NAMES if g in ran and g not in bad]


def gate(root: Path, mutation: Mutation, build_rows: dict[str, dict[str, Any] | None], sensitive: frozenset[str],
         ctx: Context) -> Planned:
    changes = plan(root, mutation, build_rows, sensitive)
    ctx = Context(ctx.allow, ctx.confirm, ctx.never, ctx.confirm_backrefs, len(changes), ctx.syntax)
    return Planned(changes, evaluate(changes, ctx))


def refusal(p: Planned) -> EditRefusedError:
    first = p.refused[0]
    more = len(p.refused) - 1
    return EditRefusedError(f"refused by gate {first['gate']}: {first['path']}: {first['why']}"
                            + (f" (and {more} more refusal{'s' if more > 1 else ''})" if more else "")
                            + "; nothing was written", p.refused)


def clean(vault: Vault, keep: int = 50) -> None:
    """Drop the oldest finished journals beyond ``keep`` (an undo reaches back that far)."""
    done = [d for d in journals(vault) if d.get("state") != "applying"]
    for d in done[:-keep]:
        shutil.rmtree(_journal_dir(vault, d["id"]), ignore_errors=True)
