"""Polyglot: one repository with files in every supported language, with known imports,
includes, templates, build-file references and tests, yields exactly the expected edges
and symbols (design §3b, §5b)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracl.builder.extractors.code import extract
from oracl.builder.extractors.providers import phase3_edges
from oracl.builder.extractors.resolve import IndexView, subject_names
from oracl.builder.pipeline.discover import read_one
from oracl.builder.pipeline.linguist import held_back, language_of
from oracl.core.config import Config
from oracl.core.paths import is_test_path
from oracl.core.walk import walk

from .conftest import write_tree

POLYGLOT: dict[str, str | bytes] = {
    # Go: a module, a package imported by path, a test beside its file
    "go.mod": "module example.com/app\n\ngo 1.21\n",
    "main.go": 'package main\n\nimport "example.com/app/internal/store"\n\nfunc main() { store.Open() }\n',
    "internal/store/store.go": ("package store\n\n// Open opens the store.\nfunc Open() *DB { return &DB{} }\n\n"
                                "// DB is a handle.\ntype DB struct{}\n\nfunc (d *DB) Close() error { return nil }\n"),
    "internal/store/store_test.go": ('package store\n\nimport "testing"\n\n'
                                     "func TestOpen(t *testing.T) { Open().Close() }\n"),
    # TypeScript/TSX and JavaScript: tsconfig paths, relative specifiers, a package's scripts
    "web/package.json": ('{"name": "web", "main": "src/index.ts",\n'
                         ' "scripts": {"build": "node scripts/build.js"}}\n'),
    "web/tsconfig.json": ('{\n  // comments are allowed here\n  "compilerOptions": {"baseUrl": ".",\n'
                          '    "paths": {"@lib/*": ["src/lib/*"]}},\n}\n'),
    "web/src/index.ts": 'import {greet} from "@lib/greet";\nimport {App} from "./App";\nexport const x = greet(App());\n',
    "web/src/lib/greet.ts": "/** Greets. */\nexport function greet(name: string): string { return name; }\n",
    "web/src/App.tsx": "export function App(): string { return <div/> as any; }\n",
    "web/src/lib/greet.test.ts": ('import {greet} from "./greet";\n'
                                  'describe("greet", () => { it("works", () => greet("a")); });\n'),
    "web/scripts/build.js": 'const greet = require("../src/lib/greet");\nmodule.exports = function build() {};\n',
    # Rust: a workspace, `mod`, `crate::`, a crate used by name from an integration test
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/core/Cargo.toml": '[package]\nname = "app-core"\nversion = "0.1.0"\n',
    "crates/core/src/lib.rs": "pub mod parser;\n\n/// Runs.\npub fn run() {}\n",
    "crates/core/src/parser.rs": ("use crate::run;\n\npub struct Parser;\n\nimpl Parser {\n"
                                  "    pub fn parse(&self) { run() }\n}\n"),
    "crates/core/tests/it.rs": "use app_core::parser::Parser;\n\n#[test]\nfn parses() { Parser.parse() }\n",
    # Java, Kotlin, Scala: packages and classes
    "java/src/main/java/com/ex/Greeter.java": ("package com.ex;\n\nimport com.ex.util.Strings;\n\n"
                                               "/** Greets people. */\npublic class Greeter {\n"
                                               "    public String greet(String n) { return Strings.trim(n); }\n}\n"),
    "java/src/main/java/com/ex/util/Strings.java": ("package com.ex.util;\n\npublic final class Strings {\n"
                                                    "    public static String trim(String s) { return s.trim(); }\n}\n"),
    "java/src/test/java/com/ex/GreeterTest.java": ("package com.ex;\n\nimport org.junit.Test;\n\n"
                                                   "public class GreeterTest {\n    @Test\n"
                                                   "    public void greets() { new Greeter().greet(\"a\"); }\n}\n"),
    "kotlin/App.kt": "package com.kt\n\nimport com.ex.Greeter\n\nfun main() {\n    Greeter().greet(\"k\")\n}\n",
    "scala/Main.scala": "package com.sc\n\nimport com.ex.util.Strings\n\nobject Main {\n  def run(): Unit = ()\n}\n",
    # C and C++: quoted includes, relative and through CMake's include directories
    "c/CMakeLists.txt": "include_directories(include)\nadd_executable(app src/main.c src/util.c)\n",
    "c/include/util.h": "int util_add(int a, int b);\n",
    "c/src/util.c": '#include "util.h"\n\n/* Adds. */\nint util_add(int a, int b) { return a + b; }\n',
    "c/src/main.c": '#include <stdio.h>\n#include "util.h"\n\nint main(void) { return util_add(1, 2); }\n',
    "cpp/src/shape.hpp": "namespace geo {\nclass Shape {\n public:\n  double area() const;\n};\n}\n",
    "cpp/src/shape.cpp": '#include "shape.hpp"\n\ndouble geo::Shape::area() const { return 0; }\n',
    # C#: using → the files declaring the namespace
    "cs/Models/User.cs": "namespace Shop.Models\n{\n    public class User { public string Name { get; set; } }\n}\n",
    "cs/Program.cs": "using Shop.Models;\n\nnamespace Shop\n{\n    class Program { static void Main() { new User(); } }\n}\n",
    # Ruby: require through lib/, require_relative, an RSpec file
    "ruby/lib/shop/cart.rb": "module Shop\n  # A cart.\n  class Cart\n    def total; 0; end\n  end\nend\n",
    "ruby/lib/shop.rb": 'require "shop/cart"\n',
    "ruby/spec/cart_spec.rb": ('require_relative "../lib/shop/cart"\n\ndescribe Shop::Cart do\n'
                               '  it "totals" do\n    expect(Shop::Cart.new.total).to eq 0\n  end\nend\n'),
    # PHP: PSR-4 through composer.json, a PHPUnit test
    "php/composer.json": '{"autoload": {"psr-4": {"Shop\\\\": "src/"}}}\n',
    "php/src/Cart.php": "<?php\nnamespace Shop;\n\nclass Cart\n{\n    public function total() { return 0; }\n}\n",
    "php/src/Order.php": "<?php\nnamespace Shop;\n\nuse Shop\\Cart;\n\nclass Order { }\n",
    "php/tests/CartTest.php": ("<?php\nuse Shop\\Cart;\nuse PHPUnit\\Framework\\TestCase;\n\n"
                               "class CartTest extends TestCase\n{\n    public function testTotal() { (new Cart())->total(); }\n}\n"),
    # Swift: a SwiftPM target imported by module name
    "swift/Sources/Core/Core.swift": "/// The core.\npublic func core() -> Int { return 1 }\n",
    "swift/Sources/App/main.swift": "import Core\n\nprint(core())\n",
    # Bash: source
    "bash/run.sh": "#!/bin/sh\nsource ./lib.sh\nhelper\n",
    "bash/lib.sh": "# Helps.\nhelper() { echo hi; }\n",
    # Python, documented by Sphinx
    "pkg/__init__.py": "",
    "pkg/mod.py": '"""A module."""\n\ndef thing():\n    """A thing."""\n    return 1\n',
    "docs/conf.py": "project = 'x'\n",
    "docs/index.rst": ("Index\n=====\n\n.. toctree::\n\n   guide\n\nSee :ref:`the guide <guide-label>`.\n\n"
                       ".. automodule:: pkg.mod\n.. literalinclude:: ../bash/lib.sh\n"),
    "docs/guide.rst": ".. _guide-label:\n\nGuide\n-----\n\nUse :func:`pkg.mod.thing`.\n",
    "docs/api.adoc": "= API\n\ninclude::partial.adoc[]\n",
    "docs/partial.adoc": "== Partial\n",
    # templates: Jinja, EJS, ERB partials, Go templates
    "templates/base.html": "<html><h1>Base</h1>{% block body %}{% endblock %}</html>\n",
    "templates/page.html": '{% extends "base.html" %}\n{% block body %}<a href="../docs/api.adoc">api</a>{% endblock %}\n',
    "views/index.ejs": "<%- include('header') %>\n<p>hi</p>\n",
    "views/header.ejs": "<header></header>\n",
    "app/views/users/index.html.erb": '<%= render "form" %>\n',
    "app/views/users/_form.html.erb": "<form></form>\n",
    "tmpl/page.tmpl": '{{ template "header" . }}\n',
    "tmpl/header.tmpl": '{{ define "header" }}<h1>H</h1>{{ end }}\n',
    # build and deploy files
    "Dockerfile": "FROM alpine\nCOPY bash/run.sh /app/run.sh\nCMD [\"/app/run.sh\"]\n",
    "docker-compose.yml": "services:\n  web:\n    build: ./web\n",
    ".github/workflows/ci.yml": "jobs:\n  test:\n    steps:\n      - run: bash bash/run.sh\n",
    # recorded, never parsed
    "web/package-lock.json": '{"lockfileVersion": 3}\n',
    "vendor/github.com/x/y/y.go": "package y\nfunc Y() {}\n",
    "web/dist.min.js": "var a=1;" * 400,
    "internal/store/store.pb.go": "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage store\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\0\0",
    "data/blob.dat": b"\0\1\2binary",
}

# (source, target, relation, provider): every import, include, reference, template, build
# and test edge of the fixture (mentions and hub memberships are left out)
EXPECTED = {
    ("main.go", "internal/store/store.go", "imports", "code_imports"),
    ("internal/store/store_test.go", "internal/store/store.go", "tests", "test_targets"),
    ("web/src/index.ts", "web/src/lib/greet.ts", "imports", "code_imports"),
    ("web/src/index.ts", "web/src/App.tsx", "imports", "code_imports"),
    ("web/src/lib/greet.test.ts", "web/src/lib/greet.ts", "tests", "test_targets"),
    ("web/scripts/build.js", "web/src/lib/greet.ts", "imports", "code_imports"),
    ("web/package.json", "web/src/index.ts", "configures", "doc_refs"),
    ("web/package.json", "web/scripts/build.js", "configures", "doc_refs"),
    ("crates/core/src/lib.rs", "crates/core/src/parser.rs", "imports", "code_imports"),
    ("crates/core/src/parser.rs", "crates/core/src/lib.rs", "imports", "code_imports"),
    ("crates/core/tests/it.rs", "crates/core/src/parser.rs", "tests", "test_targets"),
    ("Cargo.toml", "crates/core/Cargo.toml", "depends_on", "doc_refs"),
    ("java/src/main/java/com/ex/Greeter.java", "java/src/main/java/com/ex/util/Strings.java", "imports", "code_imports"),
    ("java/src/test/java/com/ex/GreeterTest.java", "java/src/main/java/com/ex/Greeter.java", "tests", "test_targets"),
    ("kotlin/App.kt", "java/src/main/java/com/ex/Greeter.java", "imports", "code_imports"),
    ("scala/Main.scala", "java/src/main/java/com/ex/util/Strings.java", "imports", "code_imports"),
    ("c/src/util.c", "c/include/util.h", "imports", "code_imports"),
    ("c/src/main.c", "c/include/util.h", "imports", "code_imports"),
    ("c/CMakeLists.txt", "c/src/main.c", "configures", "doc_refs"),
    ("c/CMakeLists.txt", "c/src/util.c", "configures", "doc_refs"),
    ("cpp/src/shape.cpp", "cpp/src/shape.hpp", "imports", "code_imports"),
    ("cs/Program.cs", "cs/Models/User.cs", "imports", "code_imports"),
    ("ruby/lib/shop.rb", "ruby/lib/shop/cart.rb", "imports", "code_imports"),
    ("ruby/spec/cart_spec.rb", "ruby/lib/shop/cart.rb", "tests", "test_targets"),
    ("php/src/Order.php", "php/src/Cart.php", "imports", "code_imports"),
    ("php/tests/CartTest.php", "php/src/Cart.php", "tests", "test_targets"),
    ("crates/core/tests/it.rs", "crates/core/src/parser.rs", "imports", "code_imports"),
    ("php/tests/CartTest.php", "php/src/Cart.php", "imports", "code_imports"),
    ("ruby/spec/cart_spec.rb", "ruby/lib/shop/cart.rb", "imports", "code_imports"),
    ("web/src/lib/greet.test.ts", "web/src/lib/greet.ts", "imports", "code_imports"),
    ("swift/Sources/App/main.swift", "swift/Sources/Core/Core.swift", "imports", "code_imports"),
    ("bash/run.sh", "bash/lib.sh", "imports", "code_imports"),
    ("docs/index.rst", "docs/guide.rst", "references", "doc_refs"),
    ("docs/index.rst", "pkg/mod.py", "references", "doc_refs"),
    ("docs/index.rst", "bash/lib.sh", "references", "doc_refs"),
    ("docs/guide.rst", "pkg/mod.py", "references", "doc_refs"),
    ("docs/api.adoc", "docs/partial.adoc", "references", "doc_refs"),
    ("templates/page.html", "templates/base.html", "imports", "doc_refs"),
    ("templates/page.html", "docs/api.adoc", "references", "doc_refs"),
    ("views/index.ejs", "views/header.ejs", "imports", "doc_refs"),
    ("app/views/users/index.html.erb", "app/views/users/_form.html.erb", "imports", "doc_refs"),
    ("tmpl/page.tmpl", "tmpl/header.tmpl", "imports", "doc_refs"),
    ("Dockerfile", "bash/run.sh", "configures", "doc_refs"),
    ("docker-compose.yml", "web/package.json", "configures", "doc_refs"),
    (".github/workflows/ci.yml", "bash/run.sh", "configures", "doc_refs"),
}


def _facts(root: Path) -> dict:
    cfg = Config()
    return {rel: read_one(str(root), rel, cfg)[0] for rel in walk(root, cfg).files}


def test_every_language_yields_exactly_the_expected_edges(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "poly", POLYGLOT)
    facts = _facts(root)
    assert "logo.png" not in facts  # named binary: never opened
    assert facts["data/blob.dat"].parse_status == "binary"  # sniffed: a NUL byte
    held = {p: f.parse_status for p, f in facts.items() if f.parse_status not in ("ok", "binary")}
    assert held == {"web/package-lock.json": "lockfile", "vendor/github.com/x/y/y.go": "vendored",
                    "web/dist.min.js": "minified", "internal/store/store.pb.go": "generated"}
    edges = phase3_edges(list(facts.values()), IndexView.build(facts))
    got = {(e.source, e.target, e.relation, e.provider) for e in edges
           if e.provider not in ("path_mentions", "comment_refs", "config_refs", "markdown_links") and e.target}
    assert got - EXPECTED == set()
    assert EXPECTED - got == set()


def test_import_fragments_point_at_the_imported_symbol(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "poly", POLYGLOT)
    facts = _facts(root)
    edges = phase3_edges(list(facts.values()), IndexView.build(facts))
    frag = {(e.source, e.target): (e.source_fragment, e.target_fragment) for e in edges
            if e.provider == "code_imports"}
    assert frag[("web/src/index.ts", "web/src/lib/greet.ts")] == ("L1-1", "L2-2")   # `greet`
    assert frag[("crates/core/src/parser.rs", "crates/core/src/lib.rs")] == ("L1-1", "L4-4")  # `run`
    assert frag[("main.go", "internal/store/store.go")] == ("L3-3", "")


def test_symbols_in_every_language(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "poly", POLYGLOT)
    facts = _facts(root)

    def syms(path: str) -> list[tuple[str, str, str, str]]:
        f = facts[path]
        assert len(f.symbols) == len(f.symbol_details)
        return [(s[1], d[0], d[1], d[2]) for s, d in zip(f.symbols, f.symbol_details, strict=True)]

    assert syms("internal/store/store.go") == [
        ("function", "Open", "func Open() *DB", "Open opens the store."),
        ("struct", "DB", "DB struct", "DB is a handle."),
        ("method", "DB.Close", "func (d *DB) Close() error", "")]
    assert syms("crates/core/src/parser.rs") == [
        ("struct", "Parser", "pub struct Parser;", ""), ("method", "Parser.parse", "pub fn parse(&self)", "")]
    assert syms("java/src/main/java/com/ex/Greeter.java") == [
        ("class", "Greeter", "public class Greeter", "Greets people."),
        ("method", "Greeter.greet", "public String greet(String n)", "")]
    assert syms("cpp/src/shape.hpp") == [
        ("namespace", "geo", "namespace geo", ""), ("class", "geo.Shape", "class Shape", ""),
        ("method", "geo.Shape.area", "double area() const;", "")]
    assert syms("ruby/lib/shop/cart.rb") == [
        ("module", "Shop", "module Shop", ""), ("class", "Shop.Cart", "class Cart", "A cart."),
        ("method", "Shop.Cart.total", "def total;", "")]
    assert syms("cs/Models/User.cs") == [
        ("class", "User", "public class User", ""), ("property", "User.Name", "public string Name", "")]
    assert syms("pkg/mod.py") == [("function", "thing", "def thing()", "A thing.")]
    assert facts["internal/store/store.go"].namespaces == ("store",)
    assert facts["java/src/main/java/com/ex/Greeter.java"].namespaces == ("com.ex",)
    assert facts["internal/store/store_test.go"].test_markers == (("TestOpen", 5),)
    assert facts["java/src/test/java/com/ex/GreeterTest.java"].test_markers == (("@Test", 6),)
    assert facts["web/src/lib/greet.test.ts"].test_markers == (("describe", 2), ("it", 2))
    assert ("?~Open().Close", 5) in facts["internal/store/store_test.go"].calls  # on what `Open()` returns
    assert [h[:2] for h in facts["docs/index.rst"].headings] == [("Index", 1)]
    langs = {p: f.language for p, f in facts.items()}
    assert langs["web/src/App.tsx"] == "tsx" and langs["Dockerfile"] == "dockerfile"
    assert langs["templates/page.html"] == "jinja" and langs["views/index.ejs"] == "ejs"


@pytest.mark.parametrize(("name", "subjects"), [
    ("test_auth.py", ["auth.py"]), ("args_test.go", ["args.go"]), ("FooTest.java", ["Foo.java"]),
    ("cart_spec.rb", ["cart.rb"]), ("CartTests.cs", ["Cart.cs"]), ("readme.md", []),
    ("greet.spec.ts", ["greet.ts", "greet.ts", "greet.tsx", "greet.js", "greet.jsx", "greet.mjs"]),
])
def test_subject_names(name: str, subjects: list[str]) -> None:
    assert subject_names(name) == subjects


@pytest.mark.parametrize(("path", "is_test"), [
    ("tests/x.py", True), ("a/x_test.go", True), ("src/a.test.tsx", True), ("lib/__tests__/a.js", True),
    ("spec/a_spec.rb", True), ("src/test/java/A.java", True), ("src/FooTest.java", True),
    ("src/Contest.java", False), ("src/latest.go", False), ("src/protest.py", False), ("x.bats", True),
])
def test_is_test_path(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def test_linguist_rules() -> None:
    assert held_back("third_party/zlib/zlib.h", b"") == "vendored"
    assert held_back("go.sum", b"") == "lockfile" and held_back("Cargo.lock", b"") == "lockfile"
    assert held_back("api/x_pb2.py", b"") == "generated"
    assert held_back("x.go", b"// Code generated by stringer; DO NOT EDIT.\n") == "generated"
    assert held_back("src/app.js", b"x" * 4096) == "minified"
    assert held_back("src/app.js", b"let x = 1;\n" * 400) == ""
    assert held_back("ext/logo.svg", b"<svg>" + b"<path d='M0 0'/>" * 300) == "minified"  # one long line
    assert held_back("docs/long.md", b"A paragraph of prose on one line. " * 12 + b"\n" * 2) == ""
    one_line = b"a = [" + b"1, " * 2000 + b"]"
    assert held_back("deep.toml", one_line) == "" and held_back("x.py", one_line) == ""  # parsed, checked
    assert language_of("CMakeLists.txt") == "cmake" and language_of("a.kts") == "kotlin"
    assert language_of("notes") == ""


def test_a_broken_file_still_yields_what_parses() -> None:
    facts = extract("go", "package p\n\nfunc Good() {}\n\nfunc Bad( {\n")
    assert facts.error == "syntax errors in the tree"
    assert facts.symbols[0][:2] == ("Good", "function")


def test_a_polyglot_build_answers_in_every_language(tmp_path: Path) -> None:
    """The whole plane over the fixture: a real build, then search, show, related and trace
    on a Go, a TypeScript and a Java file through ``Memory``."""
    from oracl import Memory
    from oracl.builder.orchestrator import build

    root = write_tree(tmp_path / "poly", POLYGLOT)
    report = build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert report.languages["go"] == 5 and report.languages["rust"] == 3 and report.languages["java"] == 3
    assert report.skipped_by_suffix == {"binary .png": 1}
    assert report.parse_status == {"binary": 1, "generated": 1, "lockfile": 1, "minified": 1, "ok": 58,
                                   "vendored": 1}
    with Memory(root) as mem:
        hits = [r["path"] for r in mem.search("store Open opens", k=3)["results"]]
        assert hits[0] == "internal/store/store.go"
        shown = mem.show("internal/store/store.go")
        assert [s[0] for s in shown["artifact"]["symbols"]][:3] == ["Open", "DB", "Close"]
        assert shown["artifact"]["tags"]["language"] == "go"
        near = {n["path"] for n in mem.related("web/src/index.ts")["neighbours"]}
        assert {"web/src/lib/greet.ts", "web/src/App.tsx"} <= near
        out = mem.trace("java/src/test/java/com/ex/GreeterTest.java", depth=2)
        reached = {e["node"] for level in out["levels"] for e in level}
        assert "java/src/main/java/com/ex/util/Strings.java" in reached  # test → Greeter → Strings
