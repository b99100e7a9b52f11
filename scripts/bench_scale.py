"""What many repositories and a Ray cluster cost (issue 35; docs/scale.md).

    python scripts/bench_scale.py DIR [--members 20] [--files 400] [--extra ROOT…]
        [--ray-tree TREE] [--runs 2] [--query TEXT]

1. **A simulated organisation**: ``--libs`` shared libraries (Python packages
   ``shared0``…, 40 modules of 6 functions each, ``lib-shared0``… in their ``pyproject.toml``)
   and ``--members`` synthetic services (``synth_workspace.py``, ``--files`` files each, one
   seed per member, polyglot every other one), each service depending on every library in
   its ``pyproject.toml`` and holding 30 files that import and call them, all written under
   DIR and built (``oracl build -q``), plus ``--extra`` roots already built (fetched
   repositories); all added to one workspace file. Reported: the builds' total and median
   seconds, then ``oracl query --workspace`` cold (a process per query) with 1, 5, 10 and
   every member: median seconds over ``--runs``; then, over every member, ``oracl workspace
   links``, ``oracl impact`` of one library module across the services and ``oracl callers``
   of one library function, cold: median seconds, links, repositories and files reached.
2. **The Ray executor** on ``--ray-tree`` (e.g. a copy of the 20,000-file workspace):
   ``oracl build --full`` with ``--executor in-process``, ``processes`` and ``ray`` (a local
   cluster of this machine's cores), alternated ``--runs`` times: each median, and each
   against in-process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synth_workspace import generate  # noqa: E402

ORACL = str(Path(sys.executable).with_name("oracl"))


def oracl(*args: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([ORACL, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"oracl {' '.join(args[:3])} failed: {proc.stderr.strip()[-400:]}")
    return time.perf_counter() - t0


def shared_library(root: Path, j: int, modules: int = 40, functions: int = 6) -> None:
    """A library member: package ``shared{j}``, ``modules`` modules of ``functions`` functions
    each, the first of a module calling the second (so a change inside reaches callers)."""
    pkg = root / "src" / f"shared{j}"
    pkg.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "lib-shared{j}"\nversion = "1.0"\n')
    (pkg / "__init__.py").write_text(f'"""Shared library {j}."""\n')
    for m in range(modules):
        body = [f'"""Module {m} of shared library {j}."""\n']
        for f in range(functions):
            call = f"    return fn_{m}_{f + 1}(x) + 1\n" if f + 1 < functions else "    return x\n"
            body.append(f"\ndef fn_{m}_{f}(x):\n{call}")
        (pkg / f"mod{m}.py").write_text("".join(body))


def depend(root: Path, libs: int, seed: int, files: int = 30, modules: int = 40, functions: int = 6) -> None:
    """A service's dependency on every library: its ``pyproject.toml``, and ``files`` modules
    under ``services/uses_shared/`` importing and calling them."""
    import random

    rng = random.Random(seed)
    deps = ", ".join(f'"lib-shared{j}>=1"' for j in range(libs))
    (root / "pyproject.toml").write_text(f'[project]\nname = "{root.name}"\nversion = "1.0"\ndependencies = [{deps}]\n')
    out = root / "services" / "uses_shared"
    out.mkdir(parents=True, exist_ok=True)
    (out / "__init__.py").write_text("")
    for i in range(files):
        j, m, f = rng.randrange(libs), rng.randrange(modules), rng.randrange(functions)
        (out / f"use{i}.py").write_text(f"from shared{j}.mod{m} import fn_{m}_{f}\nimport shared{j}.mod{(m + 1) % modules}"
                                        f" as other\n\n\ndef handle_{i}(x):\n    return fn_{m}_{f}(x) + other.fn_"
                                        f"{(m + 1) % modules}_0(x)\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--members", type=int, default=20)
    ap.add_argument("--libs", type=int, default=2)
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--extra", type=Path, nargs="*", default=[])
    ap.add_argument("--ray-tree", type=Path)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--query", default="ledger balance cache invalidation")
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    roots = []
    builds = []
    for j in range(a.libs):
        root = a.dir / f"lib-shared{j}"
        if not root.exists():
            shared_library(root, j)
        builds.append(oracl("build", str(root), "-q"))
        roots.append(root)
    for i in range(a.members):
        root = a.dir / f"svc{i:02d}"
        if not root.exists():
            generate(root, a.files, seed=100 + i, polyglot=i % 2 == 1)
        if a.libs and not (root / "services" / "uses_shared").exists():
            depend(root, a.libs, seed=i)
        builds.append(oracl("build", str(root), "-q"))
        roots.append(root)
    roots += [r.resolve() for r in a.extra]
    print(f"{a.libs} libraries and {a.members} synthetic members of {a.files} files built: {sum(builds):.1f} s "
          f"in all, median {statistics.median(builds):.2f} s", flush=True)
    for n in sorted({1, 5, 10, len(roots)}):
        if n > len(roots):
            continue
        wsf = a.dir / f"ws{n}.toml"
        wsf.unlink(missing_ok=True)
        oracl("workspace", "add", *map(str, roots[:n]), "--workspace", str(wsf))
        times = [oracl("query", a.query, "--workspace", str(wsf), "-k", "10") for _ in range(a.runs)]
        print(f"query --workspace, {n} member(s): median {statistics.median(times):.3f} s "
              f"({', '.join(f'{t:.3f}' for t in times)})", flush=True)
    if a.libs:
        wsf = a.dir / f"ws{len(roots)}.toml"
        asks = {"workspace links": ["workspace", "links", "--workspace", str(wsf), "--json"],
                "impact of a library module": ["impact", "src/shared0/mod0.py", "--workspace", str(wsf),
                                               "--member", "lib-shared0", "--json", "--hops", "2"],
                "callers of a library function": ["callers", "fn_0_5", "--workspace", str(wsf), "--json"]}
        for what, args in asks.items():
            times = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                proc = subprocess.run([ORACL, *args], capture_output=True, text=True)
                times.append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    raise SystemExit(f"oracl {what} failed: {proc.stderr.strip()[-400:]}")

            out = orjson.loads(proc.stdout)
            said = (f"{len(out['links'])} links" if what == "workspace links" else
                    f"{out['reached_repositories']} repositories and {out['reached_files']} files reached"
                    if "repositories" in out else f"{out['total']} callers, {out['across']} in other repositories")
            print(f"{what} over {len(roots)} members: median {statistics.median(times):.3f} s "
                  f"({', '.join(f'{t:.3f}' for t in times)}); {said}", flush=True)
    if a.ray_tree is not None:
        kinds = ("in-process", "processes", "ray")
        times: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(a.runs):
            for k in kinds:
                times[k].append(oracl("build", str(a.ray_tree), "--full", "-q", "--executor", k))
        base = statistics.median(times["in-process"])
        for k in kinds:
            med = statistics.median(times[k])
            print(f"build --full --executor {k}: median {med:.2f} s ({', '.join(f'{t:.2f}' for t in times[k])}); "
                  f"{base / med:.2f}× in-process", flush=True)


if __name__ == "__main__":
    main()
