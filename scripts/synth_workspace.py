"""Deterministic synthetic workspace: a realistic mix of packages, tests, docs, configs
and scripts that reference each other (imports, Markdown links, config values, path
mentions, comments), for benchmarks.

    python scripts/synth_workspace.py OUT_DIR --files 50000 [--seed 7] [--polyglot]

The same arguments always give the same bytes (file contents and names); a git repository
is not created, so the tree is indexed as a plain folder.

``--polyglot`` makes the code packages polyglot, as a working repository is: each package
of ``services/`` and ``libs/`` is written in one of Go, TypeScript, JavaScript, Rust, Java,
Kotlin, Scala, C, C++, C#, Ruby, PHP, Swift or Bash (round robin), its files importing
their siblings the way that ecosystem does (a ``go.mod`` module path, relative ES
specifiers, ``mod``/``use crate::``, packages, ``#include``, namespaces, ``require``,
PSR-4), with the ecosystem's build file (``go.mod``, ``package.json``, ``Cargo.toml``,
``CMakeLists.txt``, ``composer.json``) and tests named by its convention; and a quarter
of ``docs/`` is reStructuredText.
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


POLYGLOT = ("go", "typescript", "javascript", "rust", "java", "kotlin", "scala", "c", "cpp", "csharp",
            "ruby", "php", "swift", "bash")


def _camel(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("_") if not w.isdigit()) + name.rsplit("_", 1)[-1]


def _body(rng: random.Random, comment: str, fn: str, ret: str, n: int) -> list[str]:
    lines = []
    for _ in range(n):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        lines.append(f"    {comment} {a} {b} {rng.randint(0, 99)}")
        lines.append(fn.format(a=a, b=b, n=rng.randint(0, 99)))
    lines.append(ret)
    return lines


def _code_module(rng: random.Random, lang: str, comp: str, name: str, sibs: list[str], top: str,
                 packages: list[str]) -> tuple[str, str]:
    """(file name, text) of one module of ``lang`` in package ``comp`` importing ``sibs``
    (Go imports packages: earlier Go packages of the same top folder, ``packages``)."""
    cls, funcs = _camel(name), [_ident(rng) for _ in range(rng.randint(2, 6))]
    doc = " ".join(rng.sample(WORDS, 7))
    lines: list[str] = []
    if lang == "go":
        lines = [f"// Package {comp} {doc}.", f"package {comp.split('_')[0]}", "", "import ("]
        lines += [f'\t"example.com/synth/{top}/{o}"' for o in rng.sample(packages, min(2, len(packages)))] + [")", ""]
        lines += [f"// {cls} is {doc}.", f"type {cls} struct{{ {rng.choice(WORDS).capitalize()} int }}", ""]
        for fn in funcs:
            lines += [f"// {_camel(fn)} {doc}.", f"func (r *{cls}) {_camel(fn)}(x int) int {{"]
            lines += _body(rng, "//", "\tx = x + {n} // {a} {b}", "\treturn x\n}", rng.randint(2, 8))
        return f"{name}.go", "\n".join(lines) + "\n"
    if lang in ("typescript", "javascript"):
        ext = "ts" if lang == "typescript" else "js"
        lines = [f'import {{ {_camel(o)} }} from "./{o}";' for o in rng.sample(sibs, min(3, len(sibs)))]
        lines += ["", f"/** {doc}. */", f"export class {cls} {{"]
        for fn in funcs:
            lines += [f"  /** {doc}. */", f"  {fn}(x{': number' if ext == 'ts' else ''}) {{"]
            lines += _body(rng, "  //", "    x = x + {n}; // {a} {b}", "    return x;\n  }", rng.randint(2, 8))
        lines += ["}", ""]
        return f"{name}.{ext}", "\n".join(lines) + "\n"
    if lang == "rust":
        lines = [f"use crate::{o}::{_camel(o)};" for o in rng.sample(sibs, min(2, len(sibs)))]
        lines += ["", f"/// {doc}.", f"pub struct {cls} {{ pub n: i64 }}", "", f"impl {cls} {{"]
        for fn in funcs:
            lines += [f"    /// {doc}.", f"    pub fn {fn}(&self, x: i64) -> i64 {{"]
            lines += _body(rng, "    //", "        let x = x + {n}; // {a} {b}", "        x\n    }", rng.randint(2, 8))
        lines += ["}", "", "#[cfg(test)]", "mod tests {", "    #[test]", "    fn works() { assert!(true); }", "}"]
        return f"{name}.rs", "\n".join(lines) + "\n"
    if lang in ("java", "kotlin", "scala", "csharp"):
        pkg = f"com.synth.{comp}"
        imports = [f"{pkg}.{_camel(o)}" for o in rng.sample(sibs, min(2, len(sibs)))]
        if lang == "java":
            lines = [f"package {pkg};", ""] + [f"import {i};" for i in imports]
            lines += ["", f"/** {doc}. */", f"public class {cls} {{"]
            for fn in funcs:
                lines += [f"    /** {doc}. */", f"    public int {fn}(int x) {{"]
                lines += _body(rng, "    //", "        x = x + {n}; // {a} {b}", "        return x;\n    }", rng.randint(2, 8))
            return f"{cls}.java", "\n".join(lines + ["}"]) + "\n"
        if lang == "kotlin":
            lines = [f"package {pkg}", ""] + [f"import {i}" for i in imports]
            lines += ["", f"/** {doc}. */", f"class {cls} {{"]
            for fn in funcs:
                lines += [f"    fun {fn}(x: Int): Int {{"]
                lines += _body(rng, "    //", "        val y{n} = x + {n} // {a} {b}", "        return x\n    }", rng.randint(2, 8))
            return f"{cls}.kt", "\n".join(lines + ["}"]) + "\n"
        if lang == "scala":
            lines = [f"package {pkg}", ""] + [f"import {i}" for i in imports]
            lines += ["", f"/** {doc}. */", f"class {cls} {{"]
            for fn in funcs:
                lines += [f"  def {fn}(x: Int): Int = {{"]
                lines += _body(rng, "  //", "    val y{n} = x + {n} // {a} {b}", "    x\n  }", rng.randint(2, 8))
            return f"{cls}.scala", "\n".join(lines + ["}"]) + "\n"
        lines = ["using System;", f"using {pkg.title()};", "", f"namespace {pkg.title()}", "{",
                 f"    /// <summary>{doc}.</summary>", f"    public class {cls}", "    {"]
        for fn in funcs:
            lines += [f"        public int {_camel(fn)}(int x)", "        {"]
            lines += _body(rng, "        //", "            x = x + {n}; // {a} {b}", "            return x;\n        }", rng.randint(2, 8))
        return f"{cls}.cs", "\n".join(lines + ["    }", "}"]) + "\n"
    if lang in ("c", "cpp"):
        ext = "c" if lang == "c" else "cpp"
        lines = [f'#include "{o}.h"' for o in rng.sample(sibs, min(3, len(sibs)))] + [""]
        for fn in funcs:
            lines += [f"/* {doc}. */", f"int {name}_{fn}(int x) {{"]
            lines += _body(rng, "  //", "  x = x + {n}; /* {a} {b} */", "  return x;\n}", rng.randint(2, 8))
        return f"{name}.{ext}", "\n".join(lines) + "\n"
    if lang == "ruby":
        lines = [f'require_relative "{o}"' for o in rng.sample(sibs, min(2, len(sibs)))]
        lines += ["", f"module {_camel(comp)}", f"  # {doc}.", f"  class {cls}"]
        for fn in funcs:
            lines += [f"    # {doc}.", f"    def {fn}(x)"]
            lines += _body(rng, "    #", "      x = x + {n} # {a} {b}", "      x\n    end", rng.randint(2, 8))
        return f"{name}.rb", "\n".join(lines + ["  end", "end"]) + "\n"
    if lang == "php":
        ns = "Synth\\" + _camel(comp)
        lines = ["<?php", f"namespace {ns};", ""] + [f"use {ns}\\{_camel(o)};" for o in rng.sample(sibs, min(2, len(sibs)))]
        lines += ["", f"/** {doc}. */", f"class {cls}", "{"]
        for fn in funcs:
            lines += [f"    public function {fn}($x)", "    {"]
            lines += _body(rng, "    //", "        $x = $x + {n}; // {a} {b}", "        return $x;\n    }", rng.randint(2, 8))
        return f"{cls}.php", "\n".join(lines + ["}"]) + "\n"
    if lang == "swift":
        lines = ["import Foundation", "", f"/// {doc}.", f"public class {cls} {{"]
        for fn in funcs:
            lines += [f"    public func {fn}(x: Int) -> Int {{", "        var x = x"]
            lines += _body(rng, "    //", "        x = x + {n} // {a} {b}", "        return x\n    }", rng.randint(2, 8))
        return f"{name}.swift", "\n".join(lines + ["}"]) + "\n"
    lines = ["#!/usr/bin/env bash", f"# {doc}."] + [f"source ./{o}.sh" for o in rng.sample(sibs, min(2, len(sibs)))]
    for fn in funcs:
        lines += [f"{fn}() {{"]
        lines += _body(rng, "  #", "  echo {a} {b} {n}", "}", rng.randint(1, 4))
    return f"{name}.sh", "\n".join(lines) + "\n"


def _code_package(rng: random.Random, out: Path, top: str, comp: str, lang: str, n: int,
                  packages: list[str]) -> int:
    """One package of ``lang``: its build file, modules importing each other, a test."""
    base = out / top / comp
    names = [f"{_ident(rng)}_{i}" for i in range(max(1, n - 2))]
    written = 0
    for name in names:
        sibs = [x for x in names if x != name][:12]
        fname, text = _code_module(rng, lang, comp, name, sibs, top, packages)
        if lang == "rust":
            fname = f"src/{fname}"
        elif lang == "php":
            fname = f"src/{fname}"
        elif lang in ("java", "kotlin", "scala"):
            fname = f"src/main/{lang}/com/synth/{comp}/{fname}"
        (base / fname).parent.mkdir(parents=True, exist_ok=True)
        (base / fname).write_text(text)
        if lang in ("c", "cpp"):
            (base / f"{name}.h").write_text(f"int {name}_run(int x);\n")
            written += 1
        written += 1
    first, cls = names[0], _camel(names[0])
    build = {
        "go": ("go.mod", f"module example.com/synth/{top}/{comp}\n\ngo 1.21\n"),
        "typescript": ("package.json", '{"name": "%s", "main": "%s.ts"}\n' % (comp, first)),
        "javascript": ("package.json", '{"name": "%s", "main": "%s.js"}\n' % (comp, first)),
        "rust": ("Cargo.toml", f'[package]\nname = "{comp}"\nversion = "0.1.0"\n'),
        "c": ("CMakeLists.txt", f"add_library({comp} {' '.join(x + '.c' for x in names[:8])})\n"),
        "cpp": ("CMakeLists.txt", f"add_library({comp} {' '.join(x + '.cpp' for x in names[:8])})\n"),
        "php": ("composer.json", '{"autoload": {"psr-4": {"Synth\\\\%s\\\\": "src/"}}}\n' % _camel(comp)),
        "java": ("pom.xml", f"<project><artifactId>{comp}</artifactId></project>\n"),
    }.get(lang)
    if build:
        (base / build[0]).write_text(build[1])
        written += 1
    if lang == "rust":
        (base / "src/lib.rs").write_text("".join(f"pub mod {x};\n" for x in names))
        written += 1
    test = {
        "go": (f"{first}_test.go", f'package {comp.split("_")[0]}\n\nimport "testing"\n\nfunc Test{cls}(t *testing.T) {{}}\n'),
        "typescript": (f"{first}.test.ts", f'import {{ {cls} }} from "./{first}";\ndescribe("{cls}", () => {{ it("runs", () => {{}}); }});\n'),
        "javascript": (f"{first}.test.js", f'const m = require("./{first}");\ntest("{cls}", () => {{}});\n'),
        "java": (f"src/test/java/com/synth/{comp}/{cls}Test.java",
                 f"package com.synth.{comp};\n\npublic class {cls}Test {{\n    @Test\n    public void runs() {{ new {cls}(); }}\n}}\n"),
        "ruby": (f"spec/{first}_spec.rb", f'require_relative "../{first}"\ndescribe "{cls}" do\n  it "runs" do\n  end\nend\n'),
        "php": (f"tests/{cls}Test.php", f"<?php\nuse Synth\\{_camel(comp)}\\{cls};\nclass {cls}Test extends TestCase {{}}\n"),
    }.get(lang)
    if test:
        (base / test[0]).parent.mkdir(parents=True, exist_ok=True)
        (base / test[0]).write_text(test[1])
        written += 1
    return written


def _rst_page(rng: random.Random, title: str, docs: list[str], modules: list[tuple[str, str]]) -> str:
    parts = [title, "=" * len(title), "", " ".join(rng.choices(WORDS, k=rng.randint(40, 160))), ""]
    for _ in range(rng.randint(1, 4)):
        sub = _ident(rng).replace("_", " ").title()
        parts += [sub, "-" * len(sub), "", " ".join(rng.choices(WORDS, k=rng.randint(30, 120))), ""]
        if docs and rng.random() < 0.5:
            parts.append(f"See :doc:`/{rng.choice(docs).rsplit('.', 1)[0]}`.")
        if modules and rng.random() < 0.5:
            pkg, name = rng.choice(modules)
            parts += ["", f".. automodule:: {pkg}.{name}", ""]
    return "\n".join(parts) + "\n"


def generate(out: Path, files: int, seed: int = 7, polyglot: bool = False) -> int:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    modules: list[tuple[str, str]] = []  # (dotted pkg, module name)
    py_paths: list[str] = []
    doc_paths: list[str] = []
    go_packages: dict[str, list[str]] = {}
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
            if polyglot and top in ("services", "libs") and n >= 4:
                lang = POLYGLOT[(pkg_i - 1) % len(POLYGLOT)]
                made += _code_package(rng, out, top, comp, lang, n, go_packages.setdefault(top, []))
                if lang == "go":
                    go_packages[top].append(comp)
            elif top in ("core", "services", "libs", "archive"):
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
                    if polyglot and i % 4 == 3:
                        path = base / f"{name}_{i}.rst"
                        path.write_text(_rst_page(rng, title, doc_paths, modules))
                    else:
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
    ap.add_argument("--polyglot", action="store_true", help="code packages in 14 languages besides Python")
    a = ap.parse_args()
    n = generate(a.out, a.files, a.seed, a.polyglot)
    total = sum(len(fs) for _, _, fs in os.walk(a.out))
    print(f"wrote {n} files ({total} on disk) under {a.out}")


if __name__ == "__main__":
    main()
