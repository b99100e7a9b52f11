"""Write docs/cli.md from the commands' own help (or, with --check, fail when it differs).

    python scripts/cli_reference.py            # rewrite docs/cli.md
    python scripts/cli_reference.py --check    # exit 1 when docs/cli.md is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

from oracl.face.cli import reference

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def main(argv: list[str]) -> int:
    text = reference()
    if "--check" in argv:
        same = DOC.is_file() and DOC.read_text(encoding="utf-8") == text
        print("docs/cli.md is up to date" if same else "docs/cli.md is out of date: run python scripts/cli_reference.py")
        return 0 if same else 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
