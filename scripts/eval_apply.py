"""Real edits through ``oracl apply`` (issue 34): commit-bench commits re-expressed as mutations.

    python scripts/eval_apply.py CLONE commit_bench_X.jsonl [--edits 50] [--work DIR]

For each row (newest first) the clone's tree is checked out at the commit's parent into a
scratch worktree and built (selectively after the first build); every file the commit
changes becomes part of one mutation: a modified file ``@@FILE path`` with one
``@@REPLACE``/``@@WITH`` pair per changed hunk (bottom to top, each grown by lines around
it until its text occurs exactly once), an added file ``@@CREATE``, a deleted one
``@@DELETE``. The mutation goes through ``oracl apply --json`` (every gate, then the
rebuild); then each file must equal the commit's version byte for byte, and the memory
must be fresh: ``oracl show`` of each changed file gives the checksum of its new bytes.
Files that are not UTF-8 text are left out of the mutation (and counted). Reports per
commit and in total: files applied exactly, refusals by gate, and the time from ``apply``
to the fresh answer.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

ORACL = str(Path(sys.executable).with_name("oracl"))


def git(repo: Path, *args: str, text: bool = True) -> str | bytes:
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, text=text).stdout
    return out


def show(clone: Path, rev: str, path: str) -> bytes | None:
    proc = subprocess.run(["git", "-C", str(clone), "show", f"{rev}:{path}"], capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def escape(lines: list[str]) -> str:
    """Contract text of lines: a line starting with ``@@`` gets one more ``@``."""
    return "".join("@" + x if x.startswith("@@") else x for x in lines)


def blocks(old: str, new: str) -> str:
    """``@@REPLACE``/``@@WITH`` pairs turning ``old`` into ``new``, bottom to top."""
    a = [x + "\n" for x in old.split("\n")]
    a[-1] = a[-1][:-1]
    b = [x + "\n" for x in new.split("\n")]
    b[-1] = b[-1][:-1]
    a = [x for x in a if x] if a and not a[-1] else a
    b = [x for x in b if x] if b and not b[-1] else b
    cur = list(a)
    out = []
    ops = [o for o in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if o[0] != "equal"]
    for _, i1, i2, j1, j2 in reversed(ops):
        for c in range(0, len(cur) + 1):
            lo, hi = max(0, i1 - c), min(len(cur), i2 + c)
            chunk = "".join(cur[lo:hi])
            if chunk and "".join(cur).count(chunk) == 1:
                repl = cur[lo:i1] + b[j1:j2] + cur[i2:hi]
                out.append(f"@@REPLACE\n{escape(cur[lo:hi])}@@WITH\n{escape(repl)}@@END\n")
                cur = cur[:i1] + b[j1:j2] + cur[i2:]
                break
        else:
            raise ValueError("no unique text around a hunk")
    if "".join(cur) != new:
        raise ValueError("the pairs do not make the new text (a last line without a newline)")
    return "".join(out)


def mutation(clone: Path, parent: str, commit: str, skipped: dict[str, int]) -> tuple[str, list[str]]:
    changed = [line.split("\t") for line in str(git(clone, "diff", "--name-status", "--no-renames", parent,
                                                      commit)).splitlines()]
    parts, paths = [], []
    for status, path in ((c[0], c[-1]) for c in changed):
        before, after = show(clone, parent, path), show(clone, commit, path)
        try:
            old = before.decode("utf-8") if before is not None else None
            new = after.decode("utf-8") if after is not None else None
        except UnicodeDecodeError:
            skipped["not UTF-8"] = skipped.get("not UTF-8", 0) + 1
            continue
        if status.startswith("A") and new is not None:
            if not new.endswith("\n") and new:
                skipped["new file without a last newline"] = skipped.get("new file without a last newline", 0) + 1
                continue
            parts.append(f"@@CREATE {path}\n{escape(new.splitlines(keepends=True))}@@END\n")
        elif status.startswith("D"):
            parts.append(f"@@DELETE {path}\n")
        elif old is not None and new is not None:
            if old.endswith("\n") != new.endswith("\n") or "\r" in old.replace("\r\n", "") or "\r" in new.replace("\r\n", ""):
                skipped["last newline or lone CR changed"] = skipped.get("last newline or lone CR changed", 0) + 1
                continue
            try:
                parts.append(f"@@FILE {path}\n" + blocks(old, new))
            except ValueError as exc:
                skipped[str(exc)] = skipped.get(str(exc), 0) + 1
                continue
        else:
            continue
        paths.append(path)
    return "".join(parts), paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clone", type=Path)
    ap.add_argument("rows", type=Path)
    ap.add_argument("--edits", type=int, default=50, help="stop once this many files were applied")
    ap.add_argument("--work", type=Path, default=Path("/tmp/oracl-apply"))
    a = ap.parse_args()
    tree = a.work / "tree"
    if tree.exists():
        subprocess.run(["git", "-C", str(a.clone), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(tree, ignore_errors=True)
    a.work.mkdir(parents=True, exist_ok=True)
    rows = [orjson.loads(x) for x in a.rows.read_bytes().splitlines() if x.strip()]
    skipped: dict[str, int] = {}
    exact = applied = 0
    refused: dict[str, int] = {}
    fresh_s: list[float] = []
    git(a.clone, "worktree", "add", "-q", "--detach", str(tree), rows[0]["parent"])
    try:
        for row in rows:
            if applied >= a.edits:
                break
            git(tree, "checkout", "-q", "-f", row["parent"])
            git(tree, "clean", "-q", "-fdx", "-e", ".oracl")
            subprocess.run([ORACL, "build", str(tree), "-q"], check=True, capture_output=True)
            text, paths = mutation(a.clone, row["parent"], row["commit"], skipped)
            if not paths:
                continue
            (a.work / "m.txt").write_text(text)
            t0 = time.perf_counter()
            proc = subprocess.run([ORACL, "apply", str(a.work / "m.txt"), "-r", str(tree), "--json",
                                   "--allow", "generated", "--allow", "vendored", "--allow", "lockfile",
                                   "--allow", "minified", "--allow", "archived", "--confirm"],
                                  capture_output=True, text=True)
            out = orjson.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
            if proc.returncode != 0:
                gates = sorted({v["gate"] for v in out.get("verdicts", [])}) or [proc.stderr.strip()[:80]]
                for g in gates:
                    refused[g] = refused.get(g, 0) + 1
                print(orjson.dumps({"commit": row["commit"][:12], "refused": gates, "files": len(paths),
                                    "why": [v["why"][:100] for v in out.get("verdicts", [])][:3]}).decode(), flush=True)
                continue
            ok = 0
            for p in paths:
                want = show(a.clone, row["commit"], p)
                have = (tree / p).read_bytes() if (tree / p).exists() else None
                if have != want:
                    continue
                if want is None:
                    ok += 1
                    continue
                shown = subprocess.run([ORACL, "show", p, "-r", str(tree), "--json"], capture_output=True, text=True)
                art = orjson.loads(shown.stdout).get("artifact", {}) if shown.returncode == 0 else {}
                ok += art.get("checksum") == hashlib.sha256(want).hexdigest()
            fresh_s.append(time.perf_counter() - t0)
            applied += len(paths)
            exact += ok
            print(orjson.dumps({"commit": row["commit"][:12], "files": len(paths), "exact and fresh": ok,
                                "build": out.get("build_id"), "seconds": round(fresh_s[-1], 2)}).decode(), flush=True)
    finally:
        subprocess.run(["git", "-C", str(a.clone), "worktree", "remove", "--force", str(tree)], check=False)
    print(f"files applied: {applied}, equal to the commit's and fresh in the memory: {exact}; "
          f"mutations refused by gate: {refused or 'none'}; left out: {skipped or 'none'}; apply → fresh answer "
          f"median {statistics.median(fresh_s) if fresh_s else 0:.2f} s")


if __name__ == "__main__":
    main()
