"""``BundleWriter``: the one way a bundle is made, for a build and for a repair alike.

A bundle is written into ``mirror/<build_id>.tmp``: the database (schema, graph tables),
the full-text postings, the export it was loaded from with its sidecars, ``header.json``
and whatever the caller adds (``stat.bin``, ``facts.bin``). ``publish`` seals it (the
manifest lists the SHA-256 of every file; ``manifest.json.sig`` signs the manifest when a
key is configured, so the signature covers the database, the facts, the stat rows and the
header readers read, not only the export), renames it into place, flips ``LATEST.json``
with one atomic rename and makes its export the vault's. Until that rename a crash leaves
the previous build untouched; ``abort`` removes the staging folder.

>>> w = BundleWriter(vault, build_id)                                 # doctest: +SKIP
>>> w.write_content(table, fts=True); w.load_graph(tables)            # doctest: +SKIP
>>> w.publish(export_root, header)                                  # doctest: +SKIP
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oracl.bundle import provenance
from oracl.core.export import canonical_bytes
from oracl.core.sign import sign
from oracl.core.vault import DB_FILE, HEADER_FILE, MANIFEST, MANIFEST_SIG, Vault, atomic_write


class BundleWriter:
    def __init__(self, vault: Vault, build_id: str) -> None:
        self.vault = vault
        self.build_id = build_id
        self.staging = vault.mirror / f"{build_id}.tmp"
        self.final = vault.bundle(build_id)
        self.staging.mkdir(parents=True, exist_ok=True)

    @property
    def db(self) -> Path:
        return self.staging / DB_FILE

    def write_content(self, content: Any, *, fts: bool, pool: int, threads: int,
                      previous: Path | None = None, keep_symbols: bool = False, standby: bool = False,
                      postings_from: Path | None = None, gone: tuple[str, ...] = ()) -> tuple[str, dict[str, str]]:
        """The schema – in a fresh database, a copy of the ``previous`` bundle's database,
        or (``standby``) the standby's database ``claim_standby`` moved into the staging
        folder – and the full-text postings of ``content`` (an Arrow table of path, text:
        ``core/fulltext.py``), made whole or (``postings_from``: the latest bundle) as that
        bundle's with the documents of ``gone`` and ``content`` written again. Leaves the
        database closed. Returns (what the postings write did when it folded its delta into a new
        base, else ""; the SHA-256 of the files it linked from ``postings_from``)."""
        from oracl.bundle import database
        from oracl.core import fulltext
        from oracl.core.store import close

        if standby:
            path = database.refresh_bundle(self.staging, buffer_pool_bytes=pool, threads=threads,
                                           drop_symbols=not keep_symbols)
        elif previous is not None:
            path = database.patch_bundle(self.staging, previous, buffer_pool_bytes=pool, threads=threads,
                                         keep_symbols=keep_symbols)
        else:
            path = database.start_bundle(self.staging, buffer_pool_bytes=pool, threads=threads)
        close(path)
        if not fts:
            return "", {}
        docs = zip(content.column("path").to_pylist(), content.column("text").to_pylist(), strict=True)
        return fulltext.write(self.staging, docs, previous=postings_from, delete=gone)

    def load_graph(self, tables: dict[str, Any], after_each: Callable[[], None] | None = None,
                   symbol_patch: tuple[list[str], dict[str, Any]] | None = None, in_place: bool = False,
                   only: Any = None, expected: dict[str, int] | None = None, held: Any = None,
                   made: dict[str, int] | None = None) -> int:
        """COPY the graph tables (artifacts, hubs, links, belongs, and the symbol tables
        unless ``symbol_patch`` patches the ones ``write_content`` kept) – in a standby
        (``in_place``), write the rows that differ instead (``only``: among the rows a
        ``database.Reach`` names; ``expected``: the edges each relationship table must then
        hold; ``made``: the graph's edges of the other tables; ``held``: ``database.hold_groups``'
        pairs a long-lived builder keeps) – checkpoint,
        close. Returns the superseded History rows a compaction deleted."""
        from oracl.bundle import database

        return database.finish_bundle(self.db, tables, after_each=after_each, symbol_patch=symbol_patch, in_place=in_place,
                               only=only, expected=expected, held=held, made=made)

    def add(self, name: str, data: bytes) -> None:
        atomic_write(self.staging / name, data)

    def add_or_link(self, name: str, data: bytes, previous: Path | None) -> bool:
        """``data`` as ``name``; when the ``previous`` bundle's file of that name holds the
        same bytes, a hard link to it instead (nothing written). Returns whether it linked."""
        import os
        import stat

        if previous is not None:
            try:
                st = os.lstat(previous / name)  # (a regular file only: a link planted there is never followed)
                same = stat.S_ISREG(st.st_mode) and st.st_size == len(data) and (previous / name).read_bytes() == data
                if same:
                    target = self.staging / name
                    if target.exists():
                        target.unlink()
                    os.link(previous / name, target)
                    return True
            except OSError:
                pass  # (the previous bundle went, or links are refused: written instead)
        self.add(name, data)
        return False

    def add_header(self, header: dict[str, Any]) -> None:
        self.add(HEADER_FILE, canonical_bytes(header))

    def link_export_from(self, folder: Path) -> None:
        """The export and its sidecars of ``folder`` (hard links, no copy)."""
        for name in provenance.SIDECARS:
            if (folder / name).exists():
                provenance.link_or_copy(folder / name, self.staging / name)

    def publish(self, export_root: str, header: dict[str, Any], *, snapshots: int = 0,
                before_flip: Callable[[], None] | None = None, lineage: dict[str, Any] | None = None,
                known: dict[str, str] | None = None) -> Path:
        """Seal, move into place, flip LATEST, publish the export (and keep a snapshot of
        it when ``snapshots`` > 0). ``lineage``: the bundle this build started from
        (``provenance.lineage``); ``known``: the SHA-256 of files linked from the bundle
        before (checked when it was read), not read again. Returns the bundle's folder."""
        from oracl.core.vault import fsync_dir

        manifest_sha256 = provenance.write_manifest(self.staging, self.build_id, export_root, header["counts"],
                                                    lineage, known)
        sig = sign((self.staging / MANIFEST).read_bytes())  # binds every file readers read
        if sig:
            self.add(MANIFEST_SIG, sig.encode() + b"\n")
        self.staging.replace(self.final)
        fsync_dir(self.vault.mirror)
        provenance.fault("sealed")
        if before_flip is not None:
            before_flip()
        # the bundle holds the export and its sidecars: LATEST flips to a bundle that is whole
        provenance.flip_latest(self.vault, self.build_id, export_root, header["generated_at"], manifest_sha256)
        provenance.fault("flipped")
        provenance.publish_export(self.vault, self.final)
        provenance.fault("published")
        if snapshots > 0:
            provenance.snapshot(self.vault, self.final, self.build_id, snapshots)
        return self.final

    def abort(self) -> None:
        """A failed build or repair: the database closed, the staging folder gone."""
        from oracl.core.store import close

        close(self.db)
        if self.staging.exists():
            shutil.rmtree(self.staging, ignore_errors=True)
