"""The package's version and the export schema's, in one place every plane may import
(and ``oracl --version`` reads without importing anything else)."""

__version__ = "0.1.0"
SCHEMA_VERSION = "wtls-1.5"  # 1.1: the symbol graph (``symbols``: nodes and edges);
# 1.2: history (each artifact's ``history`` text, ``co_change`` edges, the header's ``history``)
# 1.3: the header's ``aggregates`` (n, Σassoc and Σassoc² exactly, the newest mtime, the largest
# raw rank): the terms priority, δ, link density and association_rank are derived from when
# read; the database stores each row's own terms (oracl/core/derive.py)
# 1.4: the database's full-text rows are never deleted in place (Content and History: ``key``,
# ``n``, ``live``); the export is unchanged, the version moves so a reader refuses an older
# database instead of failing on its first search
# 1.5: the files' full-text postings are ORACL's own, beside the database (``fulltext.bin`` and
# ``fulltext.delta``: oracl/core/fulltext.py), no longer the engine's Content table and index;
# the export is unchanged, the version moves because a 1.4 bundle has no postings to search
