"""What a person or an agent talks to: the CLI (the only typer import), rendering (the only rich import), the console, MCP, watch and the web view."""

from __future__ import annotations

TYPE_CHECKING = False  # (importing typing costs; mypy reads the name either way)
if TYPE_CHECKING:
    from oracl.core.records import Definition


def definitions_now(root: str, rel: str) -> list[Definition] | None:
    """The ``reread`` every face hands its Memory: a file's definitions as it is now
    (``oracl.builder.pipeline.discover.definitions_now``), the build plane imported only
    when ``impact --diff`` meets a build older than the working tree."""
    from oracl.builder.pipeline.discover import definitions_now as now

    return now(root, rel)
