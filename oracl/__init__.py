"""ORACL: a semantic memory for large working repositories.

>>> from oracl import build
>>> report = build("path/to/repo")       # doctest: +SKIP
"""

from __future__ import annotations

from oracl.core.errors import (
    ConfigError,
    NoBuildError,
    OraclError,
    QueryError,
    RootError,
    StoreError,
    StoreLockedError,
    UnsafePathError,
    VaultError,
)
from oracl.core.version import __version__

TYPE_CHECKING = False  # (not typing's: importing typing costs ~6 ms; mypy reads the name either way)
if TYPE_CHECKING:  # `import oracl` (every CLI process, `oracl --version` too) stays cheap
    from pathlib import Path
    from typing import Any


def __getattr__(name: str) -> Any:
    if name == "Memory":  # imported lazily: `import oracl` stays cheap for the CLI
        from oracl.edit.memory import Memory  # the read Memory, plus apply and undo

        return Memory
    if name == "Workspace":  # many repositories as one memory
        from oracl.read.fanout import Workspace

        return Workspace
    raise AttributeError(name)


def build(root: str | Path, **kwargs: Any) -> Any:
    """Build the graph of ``root``; see ``oracl.builder.orchestrator.build`` (imported lazily). Nothing
    is forked (the in-process executor), so a process holding a ``Memory`` may build."""
    from pathlib import Path

    from oracl.builder.orchestrator import build as _build

    return _build(Path(root), **kwargs)


__all__ = ["Memory", "Workspace", "ConfigError", "NoBuildError", "OraclError", "QueryError", "RootError", "StoreError",
           "StoreLockedError", "UnsafePathError", "VaultError", "__version__", "build"]
