"""The one error tree of ORACL.

Every error a user can cause is an ``OraclError``; the CLI prints ``Error: <message>``
on one line and exits with the class's ``exit_code``. Anything else is a bug and shows
a traceback.

    OraclError (1)
    ├── ConfigError (2)          bad [tool.oracl] / .oracl.toml / option value
    │   └── LearnedDataError (24) a proposals or learned file is not readable JSON or holds
    │                            a value out of range (nothing is overwritten)
    ├── RootError (3)            the root does not exist or is not a directory
    ├── NoBuildError (4)         no build in the vault yet
    ├── StoreError (5)           the Kùzu engine refused or failed (translated in store.py)
    │   ├── StoreLockedError (6) another process holds the database for writing
    │   └── PreviousBundleError  the previous bundle failed under a selective build
    │                            (the build runs again, full; never reaches a user)
    ├── VaultError (7)           a vault file is missing, truncated or unreadable
    ├── QueryError (8)           a query or path argument the plane cannot answer
    │   ├── RefusedError (18)    the console refused a statement that is not a read query
    │   ├── WithheldError (19)   an agent asked for a file that holds key material
    │   └── SandboxError (22)    a console statement's child crashed, ran out of time
    │                            or memory, or answered too much (the console goes on)
    ├── BuildLockedError (9)     another build holds the vault
    ├── UnsafePathError (16)     a file named by the build is no longer a regular file
    │                            inside the root (a symlink out, a FIFO, a socket): refused
    ├── ChildError (17)          a build's child process died or failed with a bug
    ├── PortError (21)           `oracl serve` cannot listen on the port asked for
    ├── IngestError (25)         a report or event `oracl ingest` cannot take (format, schema
    │                            version, a malformed document): nothing of it is stored
    ├── ContractError (26)       a mutation (`oracl apply`) that does not parse: the block
    │                            and line are named, nothing is written
    ├── EditRefusedError (27)    a gate refused a mutation (each gate named): nothing written
    ├── UndoError (28)           `oracl undo` cannot restore (no edit, or the files changed since)
    ├── DiskFullError (23)       the vault's device is full: the build stopped, the previous
    │                            build is untouched
    └── VerifyError (10)         `oracl verify` failed closed
        ├── DigestError (11)            the export does not match its .sha256
        ├── SignatureError (12)         bad signature, unknown algorithm, or no key to check it
        ├── SignatureMissingError (13)  no .sig while a key is configured or required
        ├── BundleMismatchError (14)    the Kùzu bundle disagrees with the export
        └── LatestError (15)            LATEST is unreadable, names a missing bundle, or its
                                        manifest does not match the bundle's files

Not errors: 2 is also a usage error (an unknown option, a missing argument), and 20 is
`oracl status --check` on a stale build.
"""

from __future__ import annotations


class OraclError(Exception):
    """Base of every error ORACL reports to a user. ``str(e)`` is one sentence."""

    exit_code = 1


class ConfigError(OraclError):
    exit_code = 2


class LearnedDataError(ConfigError):
    exit_code = 24


class RootError(OraclError):
    exit_code = 3


class NoBuildError(OraclError):
    exit_code = 4


class StoreError(OraclError):
    exit_code = 5


class StoreLockedError(StoreError):
    exit_code = 6


class PreviousBundleError(StoreError):
    """The previous bundle's database failed while a selective build patched a copy of
    it; the build starts again, full (never seen by a user)."""


class VaultError(OraclError):
    exit_code = 7


class QueryError(OraclError):
    exit_code = 8


class RefusedError(QueryError):
    exit_code = 18


class WithheldError(QueryError):
    exit_code = 19


class BuildLockedError(OraclError):
    exit_code = 9


class UnsafePathError(OraclError):
    exit_code = 16


class ChildError(OraclError):
    exit_code = 17


class IngestError(OraclError):
    exit_code = 25


class ContractError(OraclError):
    exit_code = 26


class EditRefusedError(OraclError):
    """A gate refused a mutation; ``verdicts`` holds every refusal (gate, path, block, why)."""

    exit_code = 27

    def __init__(self, message: str, verdicts: list[dict[str, object]] | None = None) -> None:
        super().__init__(message)
        self.verdicts = verdicts or []


class UndoError(OraclError):
    exit_code = 28


class PortError(OraclError):
    exit_code = 21


class DiskFullError(OraclError):
    exit_code = 23


NO_SPACE = ("No space left on device", "Disk quota exceeded", "[Errno 28]", "[Errno 122]")


def disk_full(exc: BaseException) -> bool:
    """An error that says the device (or the quota) is full, from any layer: an OSError,
    the engine's IO exception, a child's report."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return any(s in str(exc) for s in NO_SPACE)


class SandboxError(QueryError):
    exit_code = 22


class VerifyError(OraclError):
    exit_code = 10


class DigestError(VerifyError):
    exit_code = 11


class SignatureError(VerifyError):
    exit_code = 12


class SignatureMissingError(VerifyError):
    exit_code = 13


class BundleMismatchError(VerifyError):
    exit_code = 14


class LatestError(VerifyError):
    exit_code = 15


def in_range(name: str, value: int | float, low: int | float, high: int | float) -> int | float:
    """``value`` when ``low ≤ value ≤ high``, else a QueryError that names the argument
    and its bounds (every reader's numeric argument, whichever face passed it)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise QueryError(f"{name} must be between {low} and {high}, not {value!r}")
    return value
