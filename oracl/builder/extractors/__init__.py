"""Extractors: the Python AST analyzer, the per-file scanners, and the six Phase 3 edge
providers (see ``providers.PROVIDERS``, the registry)."""
