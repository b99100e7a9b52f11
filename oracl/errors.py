"""The one error tree of ORACL.

Every error a user can cause is an ``OraclError``; the CLI prints ``Error: <message>``
on one line and exits with the class's ``exit_code``. Anything else is a bug and shows
a traceback.

    OraclError (1)
    ├── ConfigError (2)          bad [tool.oracl] / .oracl.toml / option value
    ├── RootError (3)            the root does not exist or is not a directory
    ├── NoBuildError (4)         no build in the vault yet
    ├── StoreError (5)           the Kùzu engine refused or failed (translated in store.py)
    │   └── StoreLockedError (6) another process holds the database for writing
    ├── VaultError (7)           a vault file is missing, truncated or unreadable
    └── QueryError (8)           a query or path argument the plane cannot answer
"""

from __future__ import annotations


class OraclError(Exception):
    """Base of every error ORACL reports to a user. ``str(e)`` is one sentence."""

    exit_code = 1


class ConfigError(OraclError):
    exit_code = 2


class RootError(OraclError):
    exit_code = 3


class NoBuildError(OraclError):
    exit_code = 4


class StoreError(OraclError):
    exit_code = 5


class StoreLockedError(StoreError):
    exit_code = 6


class VaultError(OraclError):
    exit_code = 7


class QueryError(OraclError):
    exit_code = 8
