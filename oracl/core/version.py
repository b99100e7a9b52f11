"""The package's version and the export schema's, in one place every plane may import
(and ``oracl --version`` reads without importing anything else)."""

__version__ = "0.1.0"
SCHEMA_VERSION = "wtls-1.2"  # 1.1: the symbol graph (``symbols``: nodes and edges);
# 1.2: history (each artifact's ``history`` text, ``co_change`` edges, the header's ``history``)
