"""Definitions and callers against a reference indexer (issue 30): SCIP indexes made by
scip-python (Python) and scip-typescript (TypeScript/JavaScript), javac's own
attribution (Java, through the compiler tree API) and go/types' (Go), on real repositories.

    python scripts/eval_reference.py CLONE [CLONE ...] [--sample 150] [--seed 7] [--out rows.jsonl]

Each CLONE is a git work tree; its language is read from its files (``pyproject.toml`` or
``setup.py``: Python; ``package.json``: TypeScript; ``pom.xml`` or ``build.gradle``: Java,
every ``src/main/java`` and ``src/test/java`` under it, attributed by javac from the JDK
(Debian's ``default-jdk-headless`` when ``javac`` is missing) with a small program the
script compiles: each method invocation's declaration, missing libraries tolerated); ``go.mod``:
Go, every package of the module and its tests type-checked by go/types with a small
program the script builds (Debian's ``golang-go`` when ``go`` is missing; no module proxy:
libraries outside the module are empty packages, tolerated). The script installs the indexers with
npm into ``~/.cache/oracl-eval/npm`` (pinned below; evaluation only, never a dependency of
ORACL), builds the clone with ORACL when it has no build, installs the project itself
where the indexer needs it (a Python venv with the project editable; a TypeScript
project's ``node_modules``, no install scripts run), indexes the clone, decodes the index with the protobuf code the scip-typescript
package ships, and compares:

* **definitions recall**: each function, method and class the index defines (the SCIP
  descriptors ``().`` and ``#``; parameters, locals and anonymous ``<...>`` names left
  out) is found when ORACL has a symbol of the same name in the same file whose lines
  hold the reference's definition line (an overload after the first: one of that name
  whose class holds it, since ORACL keeps an overload set as one symbol);
* **callers precision and recall** at ORACL's default confidence (0.7), over a seeded
  sample of the functions and methods ORACL found: the reference's call sites of a
  definition are its references followed by ``(`` (a TypeScript ``<…>`` type argument
  list or ``?.`` may stand between) that are not its definition, as (file, line), of
  every reference definition that matches the same ORACL symbol (an overload set is one
  symbol in ORACL), one sample entry per ORACL symbol; ORACL's
  are the lines of ``oracl callers`` at depth 1, in the files the index covers (a
  TypeScript project's tests are often outside its tsconfig: no truth there).
  Micro-averaged over the sample, and again with the call sites in test files left out
  on both sides.

Prints one Markdown row per clone and, with ``--out``, every sampled definition with both
sides' sites (what ORACL missed and what it added) for reading.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import orjson

from oracl.core.export import unpack_symbols
from oracl.core.parts import latest_export
from oracl.core.paths import is_test_path
from oracl.read import callgraph
from oracl.read.snapshot import Snapshot

TOOLS = Path.home() / ".cache" / "oracl-eval" / "npm"
PINS = {"@sourcegraph/scip-python": "0.6.6", "@sourcegraph/scip-typescript": "0.4.0",
        "pnpm": "10.34.9"}  # pnpm: scip-typescript lists a pnpm workspace's projects with it
FLOOR = callgraph.DEFAULT_CONFIDENCE
DECODE = """
const fs = require("fs");
const { scip } = require(process.argv[2]);
const idx = scip.Index.deserializeBinary(fs.readFileSync(process.argv[3]));
for (const d of idx.documents) {
  const occ = d.occurrences.map(o => [o.range, o.symbol, o.symbol_roles]);
  process.stdout.write(JSON.stringify({path: d.relative_path, occ}) + "\\n");
}
"""
_CALL_AFTER = re.compile(r"\s*(?:\?\.)?\s*(?:<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>)?\s*\(")
_DEF_BEFORE = re.compile(r"\b(?:def|function|fun|func)\s+$")
_DESCRIPTOR = re.compile(r"([^/#.()`]+|`[^`]+`)(\(\)\.|#)$")


def tools() -> Path:
    """The npm folder holding the pinned indexers (installed on first use)."""
    if not all((TOOLS / "node_modules" / name / "package.json").exists() for name in PINS):
        TOOLS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(TOOLS),
                        *(f"{name}@{version}" for name, version in PINS.items())], check=True)
    return TOOLS


def language(clone: Path) -> str:
    if (clone / "pyproject.toml").exists() or (clone / "setup.py").exists():
        return "python"
    if (clone / "package.json").exists():
        return "typescript"
    if any((clone / f).exists() for f in ("pom.xml", "build.gradle", "build.gradle.kts")):
        return "java"
    if (clone / "go.mod").exists():
        return "go"
    raise SystemExit(f"{clone}: neither a Python, a TypeScript, a Java nor a Go project")


JAVA = r'''import com.sun.source.tree.*;
import com.sun.source.util.*;
import javax.lang.model.element.*;
import javax.tools.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;

public class RefJava {
    static String root;
    static PrintWriter out;
    static Trees trees;
    static SourcePositions pos;

    static String q(String s) { return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""; }

    static long line(CompilationUnitTree u, long p) { return u.getLineMap().getLineNumber(p); }

    static String rel(CompilationUnitTree u) {
        return Paths.get(root).toAbsolutePath().normalize().relativize(Paths.get(u.getSourceFile().toUri()).normalize()).toString();
    }

    /** file:line of an element's name, when the element is declared in these sources. */
    static String key(Element e) {
        TreePath p = trees.getPath(e);
        if (p == null) return null;
        CompilationUnitTree u = p.getCompilationUnit();
        Tree t = p.getLeaf();
        long start = pos.getStartPosition(u, t);
        if (t instanceof ClassTree) {
            long after = pos.getEndPosition(u, ((ClassTree) t).getModifiers());
            if (after > 0) start = after;
        } else if (t instanceof MethodTree) {
            MethodTree m = (MethodTree) t;
            // the name's line: after the modifiers and the return type
            long after = m.getReturnType() != null ? pos.getEndPosition(u, m.getReturnType()) : pos.getEndPosition(u, m.getModifiers());
            if (after > 0) start = after;
        }
        return rel(u) + ":" + line(u, start);
    }

    public static void main(String[] args) throws Exception {
        root = args[0];
        out = new PrintWriter(new BufferedWriter(new FileWriter(args[1])));
        List<File> files = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            try (var s = Files.walk(Paths.get(args[i]))) {
                s.filter(f -> f.toString().endsWith(".java")).forEach(f -> files.add(f.toFile()));
            }
        }
        JavaCompiler c = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = c.getStandardFileManager(null, null, null);
        JavacTask task = (JavacTask) c.getTask(null, fm, d -> {}, List.of("-proc:none", "-implicit:none"), null,
                                               fm.getJavaFileObjectsFromFiles(files));
        trees = Trees.instance(task);
        pos = trees.getSourcePositions();
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        for (CompilationUnitTree u : units) {
            String path = rel(u);
            new TreePathScanner<Void, Void>() {
                @Override public Void visitClass(ClassTree t, Void v) {
                    Element e = trees.getElement(getCurrentPath());
                    if (e != null && !t.getSimpleName().toString().isEmpty())
                        out.println("{\"kind\":\"def\",\"what\":\"type\",\"path\":" + q(path) + ",\"name\":" + q(t.getSimpleName().toString()) + ",\"key\":" + q(key(e)) + "}");
                    return super.visitClass(t, v);
                }
                @Override public Void visitMethod(MethodTree t, Void v) {
                    Element e = trees.getElement(getCurrentPath());
                    String name = t.getName().toString();
                    if (e != null && !name.equals("<init>"))
                        out.println("{\"kind\":\"def\",\"what\":\"callable\",\"path\":" + q(path) + ",\"name\":" + q(name) + ",\"key\":" + q(key(e)) + "}");
                    return super.visitMethod(t, v);
                }
                @Override public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
                    Element e = trees.getElement(getCurrentPath());
                    if (e instanceof ExecutableElement && e.getKind() == ElementKind.METHOD) {
                        String k = key(e);
                        if (k != null) {
                            ExpressionTree sel = t.getMethodSelect();
                            long p = pos.getEndPosition(u, sel);
                            if (sel instanceof MemberSelectTree) p -= ((MemberSelectTree) sel).getIdentifier().length();
                            else p = pos.getStartPosition(u, sel);
                            out.println("{\"kind\":\"call\",\"path\":" + q(path) + ",\"line\":" + line(u, p) + ",\"key\":" + q(k) + "}");
                        }
                    }
                    return super.visitMethodInvocation(t, v);
                }
            }.scan(u, null);
        }
        out.close();
    }
}
'''

GO = r'''// Definitions and call sites of a Go module, attributed by go/types (the Go compiler's
// type checker, standard library only): each call's callee as the file:line of its name.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

var (
	root, module string
	fset         = token.NewFileSet()
	std          = importer.ForCompiler(fset, "source", nil)
	loaded       = map[string]*types.Package{}
	out          *bufio.Writer
	ctx          = build.Default
)

func rel(p token.Pos) (string, int) {
	pos := fset.Position(p)
	r, err := filepath.Rel(root, pos.Filename)
	if err != nil || strings.HasPrefix(r, "..") {
		return "", 0
	}
	return r, pos.Line
}

func emit(m map[string]any) {
	b, _ := json.Marshal(m)
	out.Write(b)
	out.WriteByte('\n')
}

type imp struct{}

func (imp) Import(path string) (*types.Package, error) {
	if p, ok := loaded[path]; ok {
		return p, nil
	}
	if path == module || strings.HasPrefix(path, module+"/") {
		dir := filepath.Join(root, strings.TrimPrefix(strings.TrimPrefix(path, module), "/"))
		p := check(dir, path, false)
		return p, nil
	}
	if !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") {
		if p, err := std.Import(path); err == nil {
			loaded[path] = p
			return p, nil
		}
	}
	// a library outside the module: an empty package, its uses are errors the checker tolerates
	parts := strings.Split(path, "/")
	p := types.NewPackage(path, strings.TrimPrefix(parts[len(parts)-1], "go-"))
	p.MarkComplete()
	loaded[path] = p
	return p, nil
}

func files(dir string, tests bool) map[string][]*ast.File {
	ents, _ := os.ReadDir(dir)
	byPkg := map[string][]*ast.File{}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") != tests {
			continue
		}
		if ok, _ := ctx.MatchFile(dir, n); !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil || f == nil {
			continue
		}
		byPkg[f.Name.Name] = append(byPkg[f.Name.Name], f)
	}
	return byPkg
}

// check type-checks a directory's package (with its in-package tests when `all`) and
// reports its definitions and calls; returns the package.
func check(dir, path string, all bool) *types.Package {
	if p, ok := loaded[path]; ok && !all {
		return p
	}
	main := files(dir, false)
	var fs []*ast.File
	var name string
	for n, f := range main {
		if name == "" || len(f) > len(main[name]) {
			name = n
		}
		_ = f
	}
	fs = append(fs, main[name]...)
	tests := files(dir, true)
	if all && name != "" {
		fs = append(fs, tests[name]...)
	}
	conf := types.Config{Importer: imp{}, Error: func(error) {}}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	p, _ := conf.Check(path, fset, fs, info)
	if !all {
		loaded[path] = p
		return p
	}
	report(fs, info)
	if name != "" {
		if ext, ok := tests[name+"_test"]; ok {
			info2 := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
			conf.Check(path+"_test", fset, ext, info2)
			report(ext, info2)
		}
	}
	return p
}

func key(o types.Object) string {
	f, l := rel(o.Pos())
	if f == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", f, l)
}

func report(fs []*ast.File, info *types.Info) {
	for _, f := range fs {
		file, _ := rel(f.Pos())
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncDecl:
				if o := info.Defs[x.Name]; o != nil && x.Name.Name != "_" && x.Name.Name != "init" {
					emit(map[string]any{"kind": "def", "what": "callable", "path": file, "name": x.Name.Name, "key": key(o)})
				}
			case *ast.TypeSpec:
				if o := info.Defs[x.Name]; o != nil {
					emit(map[string]any{"kind": "def", "what": "type", "path": file, "name": x.Name.Name, "key": key(o)})
				}
			case *ast.CallExpr:
				fun := x.Fun
				for {
					switch g := fun.(type) {
					case *ast.IndexExpr:
						fun = g.X
						continue
					case *ast.IndexListExpr:
						fun = g.X
						continue
					case *ast.ParenExpr:
						fun = g.X
						continue
					}
					break
				}
				var id *ast.Ident
				switch g := fun.(type) {
				case *ast.Ident:
					id = g
				case *ast.SelectorExpr:
					id = g.Sel
				}
				if id == nil {
					return true
				}
				if fn, ok := info.Uses[id].(*types.Func); ok {
					if fn = fn.Origin(); fn != nil {
						if k := key(fn); k != "" {
							_, line := rel(id.Pos())
							emit(map[string]any{"kind": "call", "path": file, "line": line, "key": k})
						}
					}
				}
			}
			return true
		})
	}
}

func main() {
	root, _ = filepath.Abs(os.Args[1])
	f, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	out = bufio.NewWriter(f)
	mod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	for _, l := range strings.Split(string(mod), "\n") {
		if strings.HasPrefix(l, "module ") {
			module = strings.TrimSpace(strings.TrimPrefix(l, "module "))
		}
	}
	var dirs []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			n := d.Name()
			if p != root && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			if p != root {
				if _, e := os.Stat(filepath.Join(p, "go.mod")); e == nil {
					return filepath.SkipDir // another module
				}
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Strings(dirs)
	for _, d := range dirs {
		r, _ := filepath.Rel(root, d)
		path := module
		if r != "." {
			path = module + "/" + filepath.ToSlash(r)
		}
		check(d, path, true)
	}
	out.Flush()
	f.Close()
}
'''


def keyed(out: Path) -> tuple[dict[str, tuple[str, int, str, str]], dict[str, set], set[str]]:
    """(key → (path, line, name, kind) of each definition, key → call sites, files attributed)
    from a compiler front end's lines: the key of a definition is the file and line of its name."""
    defs: dict[str, tuple[str, int, str, str]] = {}
    calls: dict[str, set[tuple[str, int]]] = defaultdict(set)
    files: set[str] = set()
    for line in out.read_text().splitlines():
        r = json.loads(line)
        files.add(r["path"])
        if r["kind"] == "def" and r["key"] not in ("null", ""):
            path, at = r["key"].rsplit(":", 1)
            defs.setdefault(r["key"], (path, int(at), r["name"], r["what"]))
        elif r["kind"] == "call":
            calls[r["key"]].add((r["path"], r["line"]))
    return defs, calls, files


def go_reference(clone: Path, work: Path) -> tuple[dict[str, tuple[str, int, str, str]], dict[str, set], set[str]]:
    """The module's definitions and calls attributed by go/types (standard library only:
    no module proxy needed; a library outside the module is an empty package, its uses
    tolerated), honouring build constraints; Debian's Go when ``go`` is missing."""
    go = shutil.which("go") or next((str(p) for p in sorted(Path("/usr/lib").glob("go-1.*/bin/go"))), None)
    if go is None:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "golang-go"], capture_output=True)
        go = shutil.which("go") or next((str(p) for p in sorted(Path("/usr/lib").glob("go-1.*/bin/go"))), "go")
    (work / "refgo.go").write_text(GO)
    (work / "go.mod").write_text("module refgo\n\ngo 1.19\n")
    env = dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off", GOCACHE=str(work / "cache"), GOTOOLCHAIN="local")
    subprocess.run([go, "build", "-o", str(work / "refgo"), "."], cwd=work, check=True, capture_output=True, env=env)
    out = work / "go.jsonl"
    subprocess.run([str(work / "refgo"), str(clone), str(out)], check=True, capture_output=True, timeout=3600,
                   env=dict(env, GOROOT=str(Path(go).resolve().parent.parent)))
    return keyed(out)


def javac_reference(clone: Path, work: Path) -> tuple[dict[str, tuple[str, int, str, str]], dict[str, set], set[str]]:
    """The same from javac: the key of a method is the file and line of its name."""
    if shutil.which("javac") is None:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run([*sudo, "apt-get", "install", "-y", "-qq", "default-jdk-headless"], capture_output=True)
    (work / "RefJava.java").write_text(JAVA)
    subprocess.run(["javac", "-d", str(work), str(work / "RefJava.java")], check=True, capture_output=True)
    roots = sorted(str(p) for p in clone.rglob("src/*/java") if p.parent.name in ("main", "test") and ".oracl" not in p.parts)
    out = work / "java.jsonl"
    subprocess.run(["java", "-cp", str(work), "RefJava", str(clone), str(out), *roots], check=True, capture_output=True,
                   timeout=3600)
    return keyed(out)


def index(clone: Path, lang: str, out: Path) -> list[dict]:
    """The clone's SCIP index, decoded: one {path, occ: [[range, symbol, roles], …]} per document."""
    bin_ = tools() / "node_modules" / ".bin"
    env = dict(os.environ)
    if lang == "python":
        # the project installed (editable, no dependencies) in a venv of its own: its example
        # apps and tests import it by its package name, which pyright resolves only so
        venv = out.parent / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "-e", str(clone)], capture_output=True)
        env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(venv))
        cmd = [str(bin_ / "scip-python"), "index", "--project-name", clone.name, "--output", str(out), "--quiet", "."]
    else:
        # the project's own dependencies (its tsconfig often extends a package's), no scripts run
        pnpm = (clone / "pnpm-workspace.yaml").exists()
        if not (clone / "node_modules").exists():
            install = ([str(bin_ / "pnpm"), "install", "--ignore-scripts", "--config.manage-package-manager-versions=false"]
                       if pnpm else ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--silent"])
            subprocess.run(install, cwd=clone, capture_output=True, timeout=1800)
        env.update(PATH=f"{bin_}:{env.get('PATH', '')}", npm_config_manage_package_manager_versions="false")
        cmd = [str(bin_ / "scip-typescript"), "index", "--output", str(out)]
        if pnpm:
            cmd.append("--pnpm-workspaces")
        elif "workspaces" in orjson.loads((clone / "package.json").read_bytes()):
            cmd.append("--yarn-workspaces")
    subprocess.run(cmd, cwd=clone, capture_output=True, timeout=3600, env=env)
    if not out.exists():
        raise SystemExit(f"{clone}: the indexer wrote no index ({' '.join(cmd[:2])})")
    script = out.with_suffix(".js")
    script.write_text(DECODE)
    proto = tools() / "node_modules" / "@sourcegraph" / "scip-typescript" / "dist" / "src" / "scip.js"
    text = subprocess.run(["node", str(script), str(proto), str(out)], capture_output=True, text=True,
                          check=True).stdout
    return [json.loads(line) for line in text.splitlines()]


def definition_name(symbol: str) -> tuple[str, str] | None:
    """(name, "callable" | "type") of a function, method or class symbol; None otherwise."""
    if symbol.startswith("local ") or symbol.endswith(")") or "<" in symbol.rsplit("/", 1)[-1]:
        return None
    m = _DESCRIPTOR.search(symbol)
    if m is None:
        return None
    name = m.group(1).strip("`")
    if name in ("__init__", "<constructor>", "constructor") or not name:
        return None if name == "" else (name, "callable")
    return name, "callable" if m.group(2) == "()." else "type"


def reference(docs: list[dict], clone: Path) -> tuple[dict[str, tuple[str, int, str, str]], dict[str, set]]:
    """(symbol → (path, line, name, kind) of its definition, symbol → call sites (path, line))."""
    defs: dict[str, tuple[str, int, str, str]] = {}
    calls: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for d in docs:
        try:
            lines = (clone / d["path"]).read_text("utf-8", "replace").splitlines()
        except OSError:
            continue
        for rng, symbol, roles in d["occ"]:
            named = definition_name(symbol)
            if named is None:
                continue
            line = rng[0]
            if roles & 1:
                defs.setdefault(symbol, (d["path"], line + 1, *named))
                continue
            end_line, end_col = (rng[2], rng[3]) if len(rng) == 4 else (line, rng[2])
            rest = lines[end_line][end_col:] if end_line < len(lines) else ""
            if line < len(lines) and _DEF_BEFORE.search(lines[line][:rng[1]]):
                continue  # `def x(` of an overload stub or a property's setter: a definition, not a call
            if _CALL_AFTER.match(rest) or (not rest.strip() and end_line + 1 < len(lines)
                                            and lines[end_line + 1].lstrip().startswith("(")):
                calls[symbol].add((d["path"], line + 1))
    return defs, calls


def evaluate(clone: Path, n: int, seed: int, rows_out: list[dict]) -> dict:
    lang = language(clone)
    if not (clone / ".oracl").exists():  # first: the indexer's install may leave files behind
        subprocess.run([str(Path(sys.executable).with_name("oracl")), "build", str(clone), "-q"], check=True,
                       capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        if lang in ("java", "go"):
            defs, calls, indexed = (javac_reference if lang == "java" else go_reference)(clone, Path(tmp))
            docs: list[dict] = [{"path": p} for p in indexed]
        else:
            docs = index(clone, lang, Path(tmp) / "index.scip")
            defs, calls = reference(docs, clone)
            indexed = {d["path"] for d in docs}
    snap = Snapshot.open(clone)
    nodes, _ = unpack_symbols(orjson.loads(latest_export(clone)))
    ours: dict[str, list[dict]] = defaultdict(list)
    for s in nodes:
        if s["kind"] != "module":
            ours[s["path"]].append(s)

    def found(path: str, line: int, name: str) -> dict | None:
        """ORACL's symbol for a definition: the narrowest of that name holding its line, else
        (an overload after the first: one symbol holds the set, at the first one's lines)
        the one of that name whose class holds the line."""
        mine = ours.get(path, [])
        hits = [s for s in mine if s["name"] == name and s["start"] <= line <= s["end"]]
        if hits:
            return min(hits, key=lambda s: s["end"] - s["start"])
        owners = {s["qualified"]: s for s in mine}
        same = [s for s in mine if s["name"] == name and "." in s["qualified"]
                and (o := owners.get(s["qualified"].rsplit(".", 1)[0])) is not None and o["start"] <= line <= o["end"]]
        return same[0] if len(same) == 1 else None

    matched = {sym: found(*d[:3]) for sym, d in defs.items()}
    # ORACL keeps an overload set (Java's five `fromJson`, TypeScript's signatures) as one
    # symbol: its call sites are those of every reference definition it matches
    sites: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for sym, mine in matched.items():
        if mine is not None:
            sites[mine["id"]] |= calls.get(sym, set())
    by_kind = defaultdict(lambda: [0, 0])
    for sym, d in defs.items():
        by_kind[d[3]][0] += 1
        by_kind[d[3]][1] += matched[sym] is not None
    pool = sorted({matched[sym]["id"]: sym for sym, d in sorted(defs.items()) if d[3] == "callable"  # type: ignore[index]
                   and matched[sym] is not None and not is_test_path(d[0]) and not d[2].startswith("__")}.values())
    sample = random.Random(seed).sample(pool, min(n, len(pool)))
    tally = {scope: [0, 0, 0] for scope in ("all", "non-test")}  # hits, ours, truth
    for sym in sample:
        mine = matched[sym]
        assert mine is not None
        ans = callgraph.callers(snap, mine["id"], min_confidence=FLOOR, k=callgraph.MAX_K)
        got = {(c["path"], line) for c in ans["callers"] for line in c["lines"]}
        truth = sites[mine["id"]]
        got = {s for s in got if s[0] in indexed}  # a file the reference did not index has no truth
        for scope, keep in (("all", lambda p: True), ("non-test", lambda p: not is_test_path(p))):
            g = {s for s in got if keep(s[0])}
            t = {s for s in truth if keep(s[0])}
            tally[scope][0] += len(g & t)
            tally[scope][1] += len(g)
            tally[scope][2] += len(t)
        rows_out.append({"clone": clone.name, "symbol": sym, "oracl": mine["id"], "missed": sorted(truth - got),
                         "added": sorted(got - truth), "hits": len(got & truth)})
    snap.close()

    def ratio(a: int, b: int) -> float:
        return a / b if b else float("nan")

    return {"clone": clone.name, "language": lang, "documents": len(docs), "files": len(ours),
            "defs": {k: v for k, v in by_kind.items()},
            "def_recall": ratio(sum(v[1] for v in by_kind.values()), sum(v[0] for v in by_kind.values())),
            "sampled": len(sample),
            **{f"{scope}_{m}": ratio(t[0], t[i]) for scope, t in tally.items()
               for m, i in (("precision", 1), ("recall", 2))},
            **{f"{scope}_sites": tuple(t) for scope, t in tally.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clones", type=Path, nargs="+")
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    rows: list[dict] = []
    print("| set | language | definitions recall (callables, types) | callers sampled | precision | recall "
          "| precision, non-test sites | recall, non-test sites |")
    print("|---|---|---|---|---|---|---|---|")
    for clone in a.clones:
        r = evaluate(clone.resolve(), a.sample, a.seed, rows)
        kinds = ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(r["defs"].items()))
        print(f"| {r['clone']} | {r['language']} | {r['def_recall']:.3f} ({kinds}) | {r['sampled']} "
              f"| {r['all_precision']:.3f} | {r['all_recall']:.3f} | {r['non-test_precision']:.3f} "
              f"| {r['non-test_recall']:.3f} |", flush=True)
    if a.out:
        a.out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


if __name__ == "__main__":
    main()
