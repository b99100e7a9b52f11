"""Deterministic synthetic workspace: a realistic mix of packages, tests, docs, configs
and scripts that reference each other (imports, Markdown links, config values, path
mentions, comments), for benchmarks.

    python scripts/synth_workspace.py OUT_DIR --files 50000 [--seed 7]

The same arguments always give the same bytes (file contents and names); a git repository
is not created, so the tree is indexed as a plain folder.
"""

from __future__ import annotations

import argparse
import os
import random
from pathlib import Path

WORDS = ("account address alert archive audit auth batch billing buffer cache channel checkout "
         "client cluster config connector context credential cursor dashboard decoder deploy "
         "digest dispatch document encoder engine event export feature filter gateway graph "
         "handler health index invoice job journal kernel ledger limiter loader lock manifest "
         "metric migration monitor notifier order parser payment pipeline policy pool profile "
         "provider queue quota record registry renderer report request resolver retry router "
         "runner schedule schema scope search secret session shard signer snapshot socket "
         "storage stream subscriber task template tenant ticket token tracer transport upload "
         "user validator vault worker").split()
TOP = [("core", 0.30), ("services", 0.18), ("libs", 0.12), ("tests", 0.16), ("docs", 0.12),
       ("scripts", 0.03), ("deploy", 0.03), ("tools", 0.02), ("archive", 0.02), ("configs", 0.02)]
PKG_SIZE = 24


def _ident(rng: random.Random, n: int = 2) -> str:
    return "_".join(rng.choice(WORDS) for _ in range(n))


def _py_module(rng: random.Random, modname: str, siblings: list[str], pkg: str) -> str:
    lines = [f'"""{modname.replace("_", " ").capitalize()}: {" ".join(rng.sample(WORDS, 6))}."""', ""]
    for sib in rng.sample(siblings, min(len(siblings), rng.randint(0, 4))):
        if rng.random() < 0.5:
            lines.append(f"from {pkg} import {sib}")
        else:
            lines.append(f"import {pkg}.{sib}")
    if rng.random() < 0.15:
        lines.append(rng.choice(["import subprocess", "import hashlib", "import socket", "import pickle"]))
    lines.append("")
    for _ in range(rng.randint(1, 5)):
        cls = "".join(w.capitalize() for w in _ident(rng).split("_"))
        lines.append(f"class {cls}:")
        if rng.random() < 0.7:
            lines.append(f'    """{" ".join(rng.sample(WORDS, 8))}."""')
        for _ in range(rng.randint(1, 6)):
            fn = _ident(rng)
            lines.append(f"    def {fn}(self, {rng.choice(WORDS)}, {rng.choice(WORDS)}=None):")
            if rng.random() < 0.6:
                lines.append(f'        """{" ".join(rng.sample(WORDS, 7))}."""')
            if rng.random() < 0.2:
                lines.append(f"        # see {pkg}.{rng.choice(siblings or [modname])} for the {rng.choice(WORDS)} rules")
            for _ in range(rng.randint(2, 9)):
                a, b = rng.choice(WORDS), rng.choice(WORDS)
                lines.append(f"        {a} = self.{b}_{rng.choice(WORDS)}({a}, {rng.randint(0, 99)})")
            lines.append(f"        return {rng.choice(WORDS)}")
            lines.append("")
    for _ in range(rng.randint(0, 4)):
        fn = _ident(rng)
        lines.append(f"def {fn}({rng.choice(WORDS)}):")
        lines.append(f"    return {rng.choice(WORDS)}_{rng.choice(WORDS)}")
        lines.append("")
    if rng.random() < 0.1:
        lines += ["if __name__ == \"__main__\":", f"    {fn}(None)", ""]
    return "\n".join(lines) + "\n"


def generate(out: Path, files: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    modules: list[tuple[str, str]] = []  # (dotted pkg, module name)
    py_paths: list[str] = []
    doc_paths: list[str] = []
    plan = []
    for top, share in TOP:
        plan.append((top, max(1, int(files * share))))
    plan[0] = (plan[0][0], plan[0][1] + files - sum(n for _, n in plan))
    for top, count in plan:
        made = 0
        pkg_i = 0
        while made < count:
            comp = f"{rng.choice(WORDS)}_{pkg_i}"
            pkg_i += 1
            base = out / top / comp
            base.mkdir(parents=True, exist_ok=True)
            n = min(PKG_SIZE, count - made)
            if top in ("core", "services", "libs", "archive"):
                names = [f"{_ident(rng)}_{i}" for i in range(n - 1)]
                pkg = f"{top}.{comp}"
                (out / top / "__init__.py").write_text('"""Top package."""\n')
                (base / "__init__.py").write_text(f'"""{comp} package."""\n')
                made += 1
                for name in names:
                    path = base / f"{name}.py"
                    path.write_text(_py_module(rng, name, [x for x in names if x != name][:12], pkg))
                    modules.append((pkg, name))
                    py_paths.append(str(path.relative_to(out)))
                    made += 1
            elif top == "tests":
                for i in range(n):
                    if modules and rng.random() < 0.9:
                        pkg, name = rng.choice(modules)
                        body = (f'"""Tests for {pkg}.{name}."""\nimport pytest\nfrom {pkg} import {name}\n\n'
                                + "".join(f"def test_{_ident(rng)}_{j}():\n    assert {name} is not None\n\n"
                                          for j in range(rng.randint(2, 12))))
                        fname = f"test_{name}.py" if i % 3 else f"test_{name}_{i}.py"
                    else:
                        body, fname = "import pytest\n", f"test_misc_{i}.py"
                    (base / fname).write_text(body)
                    made += 1
            elif top == "docs":
                for i in range(n):
                    title = _ident(rng, 3).replace("_", " ").title()
                    parts = [f"# {title}", "", " ".join(rng.choices(WORDS, k=rng.randint(40, 200))), ""]
                    for _ in range(rng.randint(1, 6)):
                        parts.append(f"## {_ident(rng).replace('_', ' ').title()}")
                        parts.append(" ".join(rng.choices(WORDS, k=rng.randint(30, 150))))
                        if py_paths and rng.random() < 0.7:
                            target = rng.choice(py_paths)
                            parts.append(f"See [{target.rsplit('/', 1)[-1]}](../../{target}) and `{target}`.")
                        if doc_paths and rng.random() < 0.4:
                            d = rng.choice(doc_paths)
                            parts.append(f"Related: [{d}](/{d})")
                        parts.append("")
                    name = rng.choice(["guide", "notes", "runbook", "design", "report", "howto", "faq"])
                    path = base / f"{name}_{i}.md"
                    path.write_text("\n".join(parts) + "\n")
                    doc_paths.append(str(path.relative_to(out)))
                    made += 1
            elif top in ("configs", "deploy"):
                for i in range(n):
                    pkg, name = rng.choice(modules) if modules else ("core", "x")
                    kind = i % 4
                    if kind == 0:
                        text = (f"service: {rng.choice(WORDS)}\nentry: {pkg}.{name}:main\nreplicas: {rng.randint(1, 9)}\n"
                                f"docs: {rng.choice(doc_paths) if doc_paths else 'docs/index.md'}\n")
                        fname = f"{rng.choice(WORDS)}_{i}.yaml"
                    elif kind == 1:
                        text = ('{"name": "%s", "module": "%s.%s", "paths": ["%s"]}\n'
                                % (rng.choice(WORDS), pkg, name, rng.choice(py_paths) if py_paths else "x.py"))
                        fname = f"{rng.choice(WORDS)}_{i}.json"
                    elif kind == 2:
                        text = f'[tool]\nname = "{rng.choice(WORDS)}"\ntarget = "{pkg}.{name}"\n'
                        fname = f"{rng.choice(WORDS)}_{i}.toml"
                    else:
                        text = f"[main]\nhandler = {pkg}.{name}\ntimeout = {rng.randint(1, 60)}\n"
                        fname = f"{rng.choice(WORDS)}_{i}.ini"
                    (base / fname).write_text(text)
                    made += 1
            else:  # scripts, tools
                for i in range(n):
                    target = rng.choice(py_paths) if py_paths else "core/x.py"
                    if i % 3 == 0:
                        text = f"# Run the {rng.choice(WORDS)} tool\n$env:MODE = 'x'\npython {target}\n"
                        fname = f"run_{rng.choice(WORDS)}_{i}.ps1"
                    else:
                        text = (f"#!/usr/bin/env bash\n# {rng.choice(WORDS)} helper; see {target}\nset -e\n"
                                f"python {target} \"$@\"\n")
                        fname = f"{rng.choice(WORDS)}_{i}.sh"
                    (base / fname).write_text(text)
                    made += 1
        written += made
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    n = generate(a.out, a.files, a.seed)
    total = sum(len(fs) for _, _, fs in os.walk(a.out))
    print(f"wrote {n} files ({total} on disk) under {a.out}")


if __name__ == "__main__":
    main()
