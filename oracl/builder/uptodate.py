"""A build with nothing to do (issue 49: cost follows the change, and no change costs no
build). ``oracl build`` after a build of the same tree, with the same settings and inputs,
publishes nothing and says so, the way ``make`` says "nothing to be done": the latest
bundle already is what a new build would write (its export, database and every answer).

What a build's output depends on, and how each is checked here without reading the
previous build's facts:

* the files: the walk's paths equal the latest build's (``stat.bin``) and each file's
  ``(size, mtime_ns, ctime_ns)`` too, none of them one a build retries (unreadable,
  vanished); a file written just before that build ("racily clean") is hashed and must
  still match its checksum;
* what the walk skipped and why (the header's coverage counts);
* the settings (``Config.digest``, the skipped phases, the full-text setting, the tool,
  schema and fact formats);
* git: HEAD and whether the work tree is dirty (the header's, and the history HEAD gives);
* the vault's inputs a build merges: the learned files and the ingested events, by their
  stat identity;
* the signing key: the current key must sign the latest export index into the signature
  it carries (or no key and no signature), so a key set since is never left unused.

And the latest build must have finished what a next build would otherwise finish: its
database and facts cache as its manifest records them (the checks a selective build
makes before starting from it), the vault's top-level export its own (a publish killed
after LATEST flipped leaves an earlier one), and the JSON-lines files when asked for.

The fingerprint of all but the files is written into each bundle's ``stat.bin`` header
(``inputs``) by the build that makes it; a bundle without one is simply built again.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from oracl.builder.incremental import NEVER_REUSED, RACY_NS, same_bytes, settings
from oracl.core.records import FileFacts
from oracl.core.version import SCHEMA_VERSION
from oracl.core.walk import Discovery

# the vault's files a build merges besides the tree (``annotate.LEARNED_FILES``, ``vault.EVENTS_FILE``)
VAULT_INPUTS = ("learned_edges.json", "learned_terms.json", "learned_tags.json", "events/events.jsonl")


def _identity(path: Path) -> list[int] | None:
    """A file's stat identity (None: absent): a rewrite changes its size, mtime or ctime."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def fingerprint(vault_dir: Path, discovery: Discovery, cfg_digest: str, read_digest: str, fts: bool,
                skip: frozenset[str], git_state: tuple[str | None, bool | None]) -> dict[str, Any]:
    """Everything but the files' own stats that a build's output depends on, as one
    JSON-able value: two builds with equal fingerprints and equal file stats write the
    same bundle."""
    walk = orjson.dumps([discovery.seen, sorted(discovery.skipped.items()), sorted(discovery.excluded_dirs.items()),
                         sorted(discovery.skipped_suffixes.items())])
    return {"schema_version": SCHEMA_VERSION, **settings(read_digest, fts), "config_sha256": cfg_digest,
            "skip": sorted(skip), "walk_sha256": hashlib.sha256(walk).hexdigest(),
            "git": [git_state[0], git_state[1]],
            "vault": {name: _identity(vault_dir / name) for name in VAULT_INPUTS}}


@dataclass(frozen=True, slots=True)
class Latest:
    """The latest bundle, found to be what this build would write."""

    bundle: Path
    build_id: str
    export_root: str
    stat_header: dict[str, Any]
    files: int
    racy_checked: int


def _racy(rel: str, row: list[Any]) -> FileFacts:
    """A stand-in holding what ``same_bytes`` compares: the stat and checksum of ``row``."""
    return FileFacts(path=rel, artifact_id="", checksum=str(row[2]), size_bytes=int(row[0]), mtime_ns=int(row[1]),
                     ctime_ns=int(row[4]), parse_status=str(row[3]))


def _signed_alike(bundle: Path) -> bool:
    """Whether the key configured now signs the bundle's export index into the signature it
    carries (no key and no signature: alike too)."""
    from oracl.core.parts import INDEX
    from oracl.core.sign import sign

    try:
        index = (bundle / INDEX).read_bytes()
    except OSError:
        return False
    try:
        held = (bundle / (INDEX + ".sig")).read_text().strip()
    except FileNotFoundError:
        held = ""
    except OSError:
        return False
    try:
        now = sign(index) or ""
    except Exception:  # noqa: BLE001 – a key that cannot sign: the build says why
        return False
    return now == held


def _finished(vault: Any, bundle: Path, jsonl: bool) -> bool:
    """Whether the build of ``bundle`` left nothing for a next build to finish: its facts
    cache is the one its manifest lists, the vault's top-level export is its own, and the
    JSON-lines files are there when ``jsonl`` asks for them."""
    from oracl.bundle.provenance import JSONL_FILES
    from oracl.bundle.verify import same_export_files
    from oracl.core.vault import FACTS_FILE, MANIFEST

    try:
        manifest = orjson.loads((bundle / MANIFEST).read_bytes())
        facts = hashlib.sha256((bundle / FACTS_FILE).read_bytes()).hexdigest()
        if manifest["files"][FACTS_FILE] != facts or not same_export_files(vault.dir, bundle):
            return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return not jsonl or all((vault.dir / name).is_file() for name in JSONL_FILES)


def latest_if_current(vault: Any, root: Path, discovery: Discovery, inputs: dict[str, Any],
                      damage: str, jsonl: bool = False) -> Latest | None:
    """The latest bundle when it is what a build of ``discovery`` under ``inputs`` would
    write (``damage``: ``previous_damage``'s verdict on its database, '' when sound;
    ``jsonl``: the vault's JSON-lines files are asked for), else None. Reads LATEST, the
    bundle's ``stat.bin`` and its parts, and hashes only the racily clean files."""
    from oracl.core.errors import OraclError
    from oracl.core.parts import stat_files
    from oracl.core.vault import STAT_FILE

    if damage:
        return None
    try:
        latest = vault.read_latest()
        bundle = vault.bundle(str(latest.get("bundle", latest["build_id"])))
        header, rows = stat_files((bundle / STAT_FILE).read_bytes(), vault.dir)
    except (OSError, OraclError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return None
    if header.get("inputs") != inputs or not isinstance(header.get("scan_started_ns"), int) or \
            not _finished(vault, bundle, jsonl):
        return None
    if len(rows) != len(discovery.files):
        return None
    racy_after = header["scan_started_ns"] - RACY_NS
    racy: list[tuple[str, FileFacts]] = []
    stats = discovery.stats
    for rel in discovery.files:
        row, st = rows.get(rel), stats.get(rel)
        if row is None or st is None or len(row) < 5 or row[3] in NEVER_REUSED:
            return None
        if not stat_mod.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns, st.st_ctime_ns) != (row[0], row[1], row[4]):
            return None
        if st.st_mtime_ns >= racy_after:
            if not row[2]:
                return None
            racy.append((rel, _racy(rel, row)))
    if racy and len(same_bytes(os.path.realpath(root), racy)) != len(racy):
        return None
    if not _signed_alike(bundle):
        return None
    return Latest(bundle, str(latest["build_id"]), str(latest.get("export_root", "")), header, len(rows),
                  len(racy))
