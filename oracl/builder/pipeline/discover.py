"""Phase 1a/1b: discovery and reading. The only phase that touches the workspace.

``walk`` lists the indexable files (design §1) and counts what it skipped and why;
``read_one`` reads, hashes and scans one file and never raises: a file that cannot be
read or parsed still yields ``FileFacts`` whose ``parse_status`` says why.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat as stat_mod
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from oracl.builder.extractors import scan
from oracl.builder.extractors.code import QUERIES as CODE_QUERIES
from oracl.builder.extractors.code import extract as extract_code
from oracl.builder.extractors.code import python_calls
from oracl.builder.extractors.docs import scan_markup
from oracl.builder.extractors.manifests import manifest_of
from oracl.builder.extractors.python_ast import analyze_python
from oracl.builder.pipeline.linguist import held_back, language_of
from oracl.core.config import MENTION_SUFFIXES, Config
from oracl.core.errors import UnsafePathError
from oracl.core.records import Definition, FileFacts
from oracl.core.secrets import is_secret_file, suffix_of
from oracl.core.secrets import scan_text as scan_secrets
from oracl.core.tokens import fts_document
from oracl.core.workspace import Workspace

BINARY_SNIFF = 8192
CLASS_KINDS = ("class", "interface", "struct", "enum", "trait", "object", "record", "protocol")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@lru_cache(maxsize=8)
def _mention_suffixes(configured: tuple[str, ...]) -> tuple[str, ...]:
    """The suffixes a path mention may end with: the known ones and any configured (once per
    configuration, not once per file)."""
    return tuple(sorted(set(configured) | set(MENTION_SUFFIXES)))


def _jsonc(path: str) -> bool:
    """JSON with comments by convention (tsconfig, jsconfig, editor settings): not checked as JSON."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith(("tsconfig", "jsconfig")) or path.startswith(".vscode/") or "/.vscode/" in path


def artifact_id(path: str, mtime_ns: int, size: int) -> str:
    """``sha256("{path}|{mtime_ns}|{size}")`` – the versioning identity of design §2."""
    return hashlib.sha256(f"{path}|{mtime_ns}|{size}".encode("utf-8", "surrogateescape")).hexdigest()




@functools.lru_cache(maxsize=8)
def _real_root(root: str) -> str:
    return os.path.realpath(root).rstrip("/") + "/"


def _open_regular(root: str, rel: str) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file ``rel`` and its stat, without blocking: the final
    component is not followed when it is a link (a link inside the root, which the walk
    accepted, is resolved and checked to stay inside it); the file actually opened must
    lie under the root's real path (``/proc/self/fd``: a folder on the path swapped for a
    symlink after the walk is caught, one ``readlink`` a file, not an open per component);
    a FIFO, a socket or a device is refused on the opened descriptor."""
    try:
        fd = os.open(os.path.join(root, rel), _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        return Workspace(root).open_fd(rel)
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc: resolve the path again, component by component
        os.close(fd)
        return Workspace(root).open_fd(rel)
    if not opened.startswith(_real_root(root)):
        os.close(fd)
        raise UnsafePathError("a folder on its path leads out of the root; refused")
    st = os.fstat(fd)
    if not stat_mod.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePathError("not a regular file")
    return fd, st


def prime(paths: Iterable[str], cfg: Config) -> int:
    """Make ready what reading a file of each kind among ``paths`` builds when it first
    needs it (each language's parser and queries, each format's scanners: built once per
    process): one blank text of each (language, format) scanned, no file read. A
    long-lived builder's first save then costs what every later one does. Returns how many
    kinds were primed."""
    kinds: dict[tuple[str, str], str] = {}
    for rel in paths:
        name = rel.rsplit("/", 1)[-1]
        fmt = name.rsplit(".", 1)[1].lower() if "." in name[1:] else ""
        kinds.setdefault((language_of(rel), fmt), rel)
    for (language, fmt), rel in kinds.items():
        base: dict[str, Any] = dict(path=rel, artifact_id="", size_bytes=1, mtime_ns=0, ctime_ns=0, language=language)
        try:
            _scan_text("\n", b"\n", fmt, "", base, cfg)
        except Exception:  # noqa: BLE001 – a kind that fails here fails (and is said) when a file of it is read
            continue
    return len(kinds)


def read_one(root: str, rel: str, cfg: Config) -> tuple[FileFacts, str]:
    """Read, hash and scan one file. Never raises for a problem with the file itself.
    Returns its facts and its full-text document."""
    name = rel.rsplit("/", 1)[-1]
    fmt = name.rsplit(".", 1)[1].lower() if "." in name[1:] else ""
    path_only = fts_document(rel, (), (), b"", 0, cfg.fts_tf_cap)
    try:
        fd, st = _open_regular(root, rel)
    except FileNotFoundError:
        return FileFacts(rel, artifact_id(rel, 0, 0), "", 0, 0, 0, "vanished",
                         error="deleted before it could be read"), path_only
    except UnsafePathError as exc:
        return FileFacts(rel, artifact_id(rel, 0, 0), "", 0, 0, 0, "unreadable",
                         error=str(exc).removeprefix(f"{rel} ").removeprefix(f"{rel}: ")), path_only
    except OSError as exc:
        return FileFacts(rel, artifact_id(rel, 0, 0), "", 0, 0, 0, "unreadable",
                         error=exc.strerror or str(exc)), path_only
    aid = artifact_id(rel, st.st_mtime_ns, st.st_size)
    base: dict[str, Any] = dict(path=rel, artifact_id=aid, size_bytes=st.st_size, mtime_ns=st.st_mtime_ns,
                ctime_ns=st.st_ctime_ns, language=language_of(rel))
    try:
        with os.fdopen(fd, "rb") as fh:
            if st.st_size > cfg.max_read_bytes:
                h = hashlib.sha256()
                head = fh.read(BINARY_SNIFF)
                h.update(head)
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
                status = "binary" if b"\0" in head else "oversize"
                return FileFacts(checksum=h.hexdigest(), parse_status=status,
                                 error=f"larger than {cfg.max_read_bytes} bytes", **base), path_only
            data = fh.read()
    except OSError as exc:
        return FileFacts(checksum="", parse_status="unreadable", error=exc.strerror or str(exc),
                         **base), path_only
    checksum = hashlib.sha256(data).hexdigest()
    base["size_bytes"] = len(data)
    if is_secret_file(rel):  # .env, key files: the graph knows they exist, never what they hold
        return FileFacts(checksum=checksum, parse_status="secret_file", key_material=True,
                         line_count=data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
                         error="holds secrets: recorded, its text is not indexed", **base), path_only
    if b"\0" in data[:BINARY_SNIFF]:
        return FileFacts(checksum=checksum, parse_status="binary", error="NUL byte in the first 8 KiB",
                         **base), path_only
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return FileFacts(checksum=checksum, parse_status="non_utf8",
                         error=f"invalid UTF-8 at byte {exc.start}", **base), path_only
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    held = "" if cfg.index_generated else held_back(rel, data[:BINARY_SNIFF])
    if held:  # vendored, generated, minified, a lock file: known to exist, not read further
        return FileFacts(checksum=checksum, parse_status=held, line_count=lines,
                         error=f"{held}: recorded, not parsed or indexed (index_generated = true indexes it)",
                         **base), path_only
    try:
        return _scan_text(text, data, fmt, checksum, base, cfg)
    except Exception as exc:  # noqa: BLE001 - one file never stops a build (RecursionError, a parser's crash)
        return FileFacts(checksum=checksum, parse_status="parse_error", line_count=lines,
                         error=f"{type(exc).__name__} while scanning", **base), path_only


def _scan_text(text: str, data: bytes, fmt: str, checksum: str, base: dict,
               cfg: Config) -> tuple[FileFacts, str]:
    status, error = "ok", ""
    extra: dict[str, object] = {}
    symbols: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()
    original = text
    text, found = scan_secrets(original, suffix_of(base["path"]))
    if found:  # everything below sees the redacted text: no secret value reaches a fact or the index
        data = text.encode("utf-8")
    material = any(f.rule == "private-key" for f in found)
    secret_spots = tuple((f.rule, f.line) for f in found)
    language = base["language"]
    if language == "python":
        a = analyze_python(text)
        calls, typed = python_calls(text)
        if a.syntax_error:
            status, error = "syntax_error", a.syntax_error
        extra = dict(ast_tags=a.tags, symbols=a.symbols, imports=a.imports, renames=a.renames,
                     module_docstring=a.module_docstring, defs=a.defs,
                     documented_defs=a.documented_defs, sensitive_apis=a.sensitive,
                     secret_key_names=a.secret_key_names,
                     credential_literal=a.credential_literal or bool(found) and not material,
                     key_material=material, symbol_details=a.details,
                     calls=calls, typed=typed,
                     test_markers=a.test_markers, bases=a.bases)
        symbols = tuple(s[0] for s in a.symbols)
    elif language in CODE_QUERIES:
        c = extract_code(language, text)
        names, literal = scan.security_signals(original)
        kinds = Counter(k for _, k, _, _ in c.symbols)
        extra = dict(symbols=c.symbols, symbol_details=c.details, imports=c.imports, renames=c.renames,
                     calls=c.calls, bases=c.bases,
                     typed=c.typed,
                     namespaces=c.namespaces, test_markers=c.test_markers,
                     defs=len(c.symbols), documented_defs=c.documented,
                     module_docstring=bool(c.details) and bool(c.details[0][2]),
                     ast_tags={"ast_functions": kinds["function"] + kinds["method"],
                               "ast_classes": sum(kinds[k] for k in CLASS_KINDS),
                               **({"ast_tests": len(c.test_markers)} if c.test_markers else {}),
                               **({"ast_error": True} if c.error else {})},
                     secret_key_names=names, key_material=material,
                     credential_literal=literal or bool(found) and not material)
        symbols = tuple(s[0] for s in c.symbols)
    else:
        if fmt in ("json", "jsonl", "toml", "ini", "cfg", "yaml", "yml") and not _jsonc(base["path"]):
            problem = scan.validate_structured(text, fmt)
            if problem:
                status, error = "malformed", problem
        names, literal = scan.security_signals(original)
        extra = dict(secret_key_names=names, key_material=material,
                     credential_literal=literal or bool(found) and not material)
        if fmt == "md":
            heads = scan.markdown_headings(text)
            extra["headings"] = heads
            extra["md_links"] = scan.markdown_links(text)
            headings = tuple(h[0] for h in heads)
        else:
            heads, doc_refs, doc_manifest = scan_markup(language, text)
            if heads or doc_refs or doc_manifest:
                extra.update(headings=heads, refs=doc_refs, manifest=doc_manifest)
                headings = tuple(h[0] for h in heads)
        extra["config_values"] = scan.config_values(text, fmt)
    manifest, build_refs = manifest_of(base["path"], text)
    if manifest or build_refs:
        extra["manifest"] = {**extra.get("manifest", {}), **manifest}  # type: ignore[dict-item]
        extra["refs"] = (*extra.get("refs", ()), *build_refs)  # type: ignore[misc]
    extra["mentions"] = scan.path_mentions(text, _mention_suffixes(cfg.suffixes))
    extra["comment_refs"] = scan.comment_references(text, fmt)
    extra["secrets"] = secret_spots
    facts = FileFacts(checksum=checksum, parse_status=status, error=error,
                      line_count=text.count("\n") + (0 if text.endswith("\n") or not text else 1),
                      **base, **extra)  # type: ignore[arg-type]
    return facts, fts_document(facts.path, symbols, headings, data, cfg.fts_body_bytes, cfg.fts_tf_cap)


def definitions_now(root: str, rel: str) -> list[Definition] | None:
    """The definitions of ``rel`` as it is on disk now: (qualified name, kind, first line,
    last line) each, read and parsed as a build would (the ``Workspace`` rules, secrets
    redacted); None when it cannot be read or parsed. ``impact --diff`` places a changed
    line with it when the build holds neither the file now nor the diff's base."""
    f, _ = read_one(root, rel, Config())
    if f.parse_status not in ("ok", "syntax_error") or len(f.symbol_details) != len(f.symbols):
        return None
    return [(d[0], s[1], s[2], s[3]) for s, d in zip(f.symbols, f.symbol_details, strict=True)]
