"""Make a commit-bench set from a clone: each row is one commit's message (the query) and
the source files it modified (the answer), to be searched in the tree at its parent.

    python scripts/make_commit_bench.py CLONE --head COMMIT --repo OWNER/NAME --out SET.jsonl [--rows 100]

Selection, newest first from HEAD (every rule is a function below):

* a non-merge commit with a parent, by an author that is not a bot;
* not a revert, a merge, a release or version bump, and a message of more than one word
  (the query is the message without trailers such as ``Co-authored-by:``);
* 1 to 5 modified source files (the language's code suffixes; tests, build scripts,
  docs and examples excluded), and no source file added, deleted or renamed;
* at most ``MAX_TOUCHED`` files touched in all.

Row: ``{"repo", "commit", "parent", "date", "subject", "query", "gold_files",
"test_files", "other_files"}`` — the same shape the evaluation script reads. The tree to
search is the row's ``parent``; a hit at k needs every gold file in the top k.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import orjson

SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".c",
                   ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".scala")
MAX_SOURCE = 5
MAX_TOUCHED = 10
_TEST = re.compile(r"(^|/)(tests?|testing|__tests__|spec)(/|$)|(^|/)test_[^/]*$|_test\.[a-z]+$|"
                   r"\.(test|spec)\.[a-z]+$|Tests?\.java$|(^|/)conftest\.py$")
_RELEASE = re.compile(r"^\s*(release|prepare (for )?release|bump (the )?version|version bump|"
                      r"v?\d+\.\d+(\.\d+)*\s*$|changelog for)", re.I)
_BOT = re.compile(r"bot\b|\[bot\]|dependabot|renovate|github-actions", re.I)
# build scripts, docs and examples are not the code a message is about
_NOT_SOURCE = re.compile(r"(^|/)(setup\.py|noxfile\.py|fabfile\.py)$|^(docs?|examples?|benchmarks?)/")
_TRAILER = re.compile(r"^(co-authored-by|signed-off-by|reviewed-by|acked-by|change-id):", re.I)


def is_test(path: str) -> bool:
    return bool(_TEST.search(path))


def is_source(path: str) -> bool:
    return path.endswith(SOURCE_SUFFIXES) and not is_test(path) and not _NOT_SOURCE.search(path)


def keep_message(subject: str, body: str) -> bool:
    words = (subject + " " + body).split()
    return (len(words) > 1 and not subject.startswith(("Revert", "revert", "Merge ")) and not _RELEASE.match(subject))


def query_of(message: str) -> str:
    """The commit message without trailers (Co-authored-by: …) and separator lines."""
    lines = [ln for ln in message.splitlines()
             if not _TRAILER.match(ln.strip()) and not re.fullmatch(r"-{3,}", ln.strip())]
    return "\n".join(lines).strip()


def git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(clone), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def changes(clone: Path, commit: str) -> list[tuple[str, str]]:
    """(status letter, path) of each file the commit touched (renames as R)."""
    out = git(clone, "diff-tree", "--no-commit-id", "-r", "-M", "--name-status", commit)
    rows = []
    for line in out.splitlines():
        parts = line.split("\t")
        rows.append((parts[0][0], parts[-1]))
    return rows


def row_of(clone: Path, repo: str, commit: str) -> dict[str, object] | None:
    meta = git(clone, "show", "-s", "--format=%P%x00%aI%x00%an <%ae>%x00%s%x00%B", commit).split("\x00")
    parents, date, author, subject, message = meta[0].split(), meta[1], meta[2], meta[3], meta[4].strip()
    if len(parents) != 1 or _BOT.search(author) or not keep_message(subject, message[len(subject):]):
        return None
    touched = changes(clone, commit)
    if not touched or len(touched) > MAX_TOUCHED:
        return None
    source = [(s, p) for s, p in touched if is_source(p)]
    if not 1 <= len(source) <= MAX_SOURCE or any(s != "M" for s, _ in source):
        return None
    gold = sorted(p for _, p in source)
    tests = sorted(p for _, p in touched if is_test(p))
    other = sorted(p for _, p in touched if p not in gold and p not in tests)
    return {"repo": repo, "commit": commit, "parent": parents[0], "date": date, "subject": subject,
            "query": query_of(message), "gold_files": gold, "test_files": tests, "other_files": other}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clone", type=Path, help="a git clone of the repository")
    ap.add_argument("--head", required=True, help="the newest commit to consider")
    ap.add_argument("--repo", required=True, help="OWNER/NAME, recorded in every row")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=100)
    a = ap.parse_args(argv)
    rows = []
    for commit in git(a.clone, "rev-list", "--no-merges", a.head).split():
        row = row_of(a.clone, a.repo, commit)
        if row is not None:
            rows.append(row)
            if len(rows) >= a.rows:
                break
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    print(f"{len(rows)} rows → {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
