"""The symbol graph (design §5b): a fixture in fifteen languages with known definitions,
calls, inheritance and tests yields exactly the expected symbols and edges; the graph is
loaded, exported, verified and answered (symbols, callers, callees, impact, --diff), and a
query naming a symbol ranks its file first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from oracl.builder.extractors.code import extract, python_calls
from oracl.builder.extractors.resolve import IndexView
from oracl.builder.orchestrator import build
from oracl.builder.pipeline import symbols
from oracl.builder.pipeline.discover import read_one
from oracl.builder.pipeline.symbols import CONFIDENCE, symbol_graph
from oracl.core.config import Config
from oracl.core.errors import QueryError
from oracl.core.export import unpack_symbols
from oracl.core.walk import walk
from oracl.read import callgraph
from oracl.read.memory import Memory
from oracl.read.snapshot import Snapshot
from tests.conftest import export_of

from .conftest import git, run_cli, run_tty, write_tree

FIXTURE: dict[str, str] = {
    # Python: a package re-exporting a class, inheritance, self/typed/imported calls, a test
    "py/shop/__init__.py": "from .cart import Cart\n",
    "py/shop/base.py": "class Base:\n    def total(self):\n        return 0\n\n    def describe(self):\n        return str(self.total())\n",
    "py/shop/cart.py": ("from .base import Base\n\n\nclass Cart(Base):\n    def add(self, item: 'Item') -> None:\n"
                        "        self.items.append(item)\n        self.describe()\n\n\ndef make_cart() -> Cart:\n"
                        "    cart = Cart()\n    cart.add(None)\n    return cart\n"),
    "py/tests/test_cart.py": ("from shop import Cart\nfrom shop.cart import make_cart\n\n\ndef test_add():\n"
                              "    c = make_cart()\n    c.add(1)\n    Cart().total()\n"),
    # TypeScript: extends/implements, this-calls, an imported function, a typed parameter
    "ts/src/shape.ts": ("export interface Shape { area(): number }\n\nexport class Square implements Shape {\n"
                        "  area(): number { return this.side() * 2 }\n  side(): number { return 1 }\n}\n"),
    "ts/src/draw.ts": ('import {Square, Shape} from "./shape";\n\nexport function draw(s: Square): number {\n'
                       "  return s.area()\n}\n\nexport class Big extends Square {}\n\nexport function main() { draw(new Square()) }\n"),
    # Go: a method on a type, called through its receiver and a typed variable, across the package
    "go/go.mod": "module example.com/g\n\ngo 1.21\n",
    "go/store/store.go": ("package store\n\ntype DB struct{}\n\nfunc Open() *DB { return &DB{} }\n\n"
                          "func (d *DB) Get(k string) string { return d.norm(k) }\n\nfunc (d *DB) norm(k string) string { return k }\n"),
    "go/store/use.go": "package store\n\nfunc Fetch() string {\n\tdb := &DB{}\n\treturn db.Get(\"a\")\n}\n",
    "go/main.go": ('package main\n\nimport "example.com/g/store"\n\nfunc main() {\n\tstore.Open()\n\tstore.Fetch()\n}\n'),
    # Java: a class extending another and implementing an interface, static and typed calls
    "java/src/com/ex/Animal.java": "package com.ex;\n\npublic interface Animal { String sound(); }\n",
    "java/src/com/ex/Pet.java": "package com.ex;\n\npublic class Pet {\n  public String name() { return \"p\"; }\n}\n",
    "java/src/com/ex/Dog.java": ("package com.ex;\n\npublic class Dog extends Pet implements Animal {\n"
                                 "  public String sound() { return name() + Util.loud(\"woof\"); }\n}\n"),
    "java/src/com/ex/Util.java": "package com.ex;\n\npublic class Util {\n  public static String loud(String s) { return s; }\n}\n",
    "java/src/com/ex/Main.java": ("package com.ex;\n\npublic class Main {\n  void run(Dog d) { d.sound(); }\n}\n"),
    # Rust: a trait implemented by a struct, a method called on self and through Type::new
    "rs/src/lib.rs": ("pub trait Speak { fn speak(&self) -> String; }\n\npub struct Cat;\n\nimpl Cat {\n"
                      "    pub fn new() -> Cat { Cat }\n    fn purr(&self) {}\n}\n\nimpl Speak for Cat {\n"
                      "    fn speak(&self) -> String { self.purr(); String::new() }\n}\n\npub fn run() { Cat::new().speak(); }\n"),
    # C#: a base class and an interface, this-calls
    "cs/Shapes.cs": ("namespace Geo {\n  public interface IShape { double Area(); }\n  public class Shape { public void Draw() {} }\n"
                     "  public class Circle : Shape, IShape {\n    public double Area() { this.Draw(); return 1; }\n  }\n}\n"),
    # JavaScript: a class extending another, require, a method assigned on an object
    "js/lib/base.js": "class Base {\n  greet() { return 'hi' }\n}\nmodule.exports = { Base }\n",
    "js/lib/app.js": ("const { Base } = require('./base')\n\nclass App extends Base {\n  run() { return this.greet() }\n}\n\n"
                      "const res = {}\nres.send = function send(body) { return body }\n\nfunction main() { new App().run(); res.send(1) }\n"),
    # Kotlin: a subclass calling its base's method, a top-level function
    "kt/src/Shapes.kt": ("package geo\n\nopen class Shape {\n    fun name(): String = \"s\"\n}\n\nclass Box : Shape() {\n"
                         "    fun label(): String = name()\n}\n\nfun make(): Box {\n    val b = Box()\n    b.label()\n    return b\n}\n"),
    # Scala: a trait mixed into a class
    "scala/src/Zoo.scala": ("trait Animal { def sound(): String }\n\nclass Dog extends Animal {\n  def sound(): String = bark()\n"
                            "  def bark(): String = \"woof\"\n}\n"),
    # C: functions across a header
    "c/src/util.h": "int add(int a, int b);\n",
    "c/src/util.c": '#include "util.h"\n\nint add(int a, int b) { return a + b; }\n\nint twice(int a) { return add(a, a); }\n',
    "c/src/main.c": '#include "util.h"\n\nint main(void) { return add(1, 2); }\n',
    # C++: a class deriving from another, a method calling its base's method
    "cpp/src/shape.hpp": ("class Shape {\n public:\n  int area() { return 0; }\n};\n\nclass Square : public Shape {\n"
                          " public:\n  int twice() { return area() * 2; }\n};\n"),
    # PHP: a class extending another, $this calls and a static call
    "php/src/Cart.php": ("<?php\nnamespace Shop;\n\nclass Base { public function total() { return 0; } }\n\n"
                         "class Cart extends Base {\n    public function sum() { return $this->total() + Util::round(1); }\n}\n\n"
                         "class Util { public static function round($x) { return $x; } }\n"),
    # Swift: a class conforming to a protocol, self calls
    "swift/Sources/App/Pet.swift": ("protocol Named { func name() -> String }\n\nclass Pet: Named {\n"
                                    "    func name() -> String { return tag() }\n    func tag() -> String { return \"p\" }\n}\n"),
    # Bash: a function calling another
    "sh/lib.sh": "helper() { echo hi; }\n\nmain() {\n  helper\n}\n",
    # Ruby: a subclass calling its inherited method
    "rb/lib/animal.rb": "class Animal\n  def breathe; end\nend\n\nclass Fish < Animal\n  def swim\n    breathe()\n  end\nend\n",
}

# (source, target, relation, resolution) of every edge but `contains`: each checked by hand
EXPECTED = {
    ("c/src/main.c#main", "c/src/util.c#add", "calls", "same_package"),  # the definition, not the header's prototype
    ("c/src/util.c#twice", "c/src/util.c#add", "calls", "same_scope"),
    ("cpp/src/shape.hpp#Square", "cpp/src/shape.hpp#Shape", "inherits", "same_scope"),
    ("cpp/src/shape.hpp#Square.twice", "cpp/src/shape.hpp#Shape.area", "calls", "inherited"),  # implicit this
    ("js/lib/app.js#App", "js/lib/base.js#Base", "inherits", "same_package"),
    ("js/lib/app.js#App.run", "js/lib/base.js#Base.greet", "calls", "inherited"),
    ("js/lib/app.js#main", "js/lib/app.js#App", "calls", "same_scope"),
    ("js/lib/app.js#main", "js/lib/app.js#App.run", "calls", "typed"),  # `new App().run()`
    ("js/lib/app.js#main", "js/lib/app.js#res.send", "calls", "receiver"),  # `res.send = function`
    ("kt/src/Shapes.kt#Box", "kt/src/Shapes.kt#Shape", "inherits", "same_scope"),
    ("kt/src/Shapes.kt#Box.label", "kt/src/Shapes.kt#Shape.name", "calls", "inherited"),
    ("kt/src/Shapes.kt#make", "kt/src/Shapes.kt#Box", "calls", "same_scope"),
    ("kt/src/Shapes.kt#make", "kt/src/Shapes.kt#Box", "references", "same_scope"),
    ("kt/src/Shapes.kt#make", "kt/src/Shapes.kt#Box.label", "calls", "typed"),  # val b = Box()
    ("php/src/Cart.php#Cart", "php/src/Cart.php#Base", "inherits", "same_scope"),
    ("php/src/Cart.php#Cart.sum", "php/src/Cart.php#Base.total", "calls", "inherited"),
    ("php/src/Cart.php#Cart.sum", "php/src/Cart.php#Util.round", "calls", "same_scope"),  # Util::round
    ("scala/src/Zoo.scala#Dog", "scala/src/Zoo.scala#Animal", "inherits", "same_scope"),
    ("scala/src/Zoo.scala#Dog.sound", "scala/src/Zoo.scala#Dog.bark", "calls", "same_scope"),
    ("sh/lib.sh#main", "sh/lib.sh#helper", "calls", "same_scope"),
    ("swift/Sources/App/Pet.swift#Pet", "swift/Sources/App/Pet.swift#Named", "inherits", "same_scope"),
    ("swift/Sources/App/Pet.swift#Pet.name", "swift/Sources/App/Pet.swift#Pet.tag", "calls", "same_scope"),
    ("cs/Shapes.cs#Circle", "cs/Shapes.cs#IShape", "inherits", "same_scope"),  # C# base lists do not say which
    ("cs/Shapes.cs#Circle", "cs/Shapes.cs#Shape", "inherits", "same_scope"),
    ("cs/Shapes.cs#Circle.Area", "cs/Shapes.cs#Shape.Draw", "calls", "inherited"),
    ("go/main.go#main", "go/store/store.go#Open", "calls", "imported"),
    ("go/main.go#main", "go/store/use.go#Fetch", "calls", "imported"),
    ("go/store/store.go#DB.Get", "go/store/store.go#DB.norm", "calls", "typed"),  # d *DB, the receiver
    ("go/store/store.go#Open", "go/store/store.go#DB", "references", "same_scope"),
    ("go/store/use.go#Fetch", "go/store/store.go#DB.Get", "calls", "typed"),  # db := &DB{}
    ("java/src/com/ex/Dog.java#Dog", "java/src/com/ex/Animal.java#Animal", "implements", "same_package"),
    ("java/src/com/ex/Dog.java#Dog", "java/src/com/ex/Pet.java#Pet", "inherits", "same_package"),
    ("java/src/com/ex/Dog.java#Dog.sound", "java/src/com/ex/Pet.java#Pet.name", "calls", "inherited"),
    ("java/src/com/ex/Dog.java#Dog.sound", "java/src/com/ex/Util.java#Util.loud", "calls", "same_package"),
    ("java/src/com/ex/Main.java#Main.run", "java/src/com/ex/Dog.java#Dog", "references", "same_package"),
    ("java/src/com/ex/Main.java#Main.run", "java/src/com/ex/Dog.java#Dog.sound", "calls", "typed"),
    ("py/shop/base.py#Base.describe", "py/shop/base.py#Base.total", "calls", "same_scope"),
    ("py/shop/cart.py#Cart", "py/shop/base.py#Base", "inherits", "imported"),
    ("py/shop/cart.py#Cart.add", "py/shop/base.py#Base.describe", "calls", "inherited"),
    ("py/shop/cart.py#make_cart", "py/shop/cart.py#Cart", "calls", "same_scope"),
    ("py/shop/cart.py#make_cart", "py/shop/cart.py#Cart", "references", "same_scope"),
    ("py/shop/cart.py#make_cart", "py/shop/cart.py#Cart.add", "calls", "typed"),  # cart = Cart()
    ("py/tests/test_cart.py#test_add", "py/shop/base.py#Base.total", "calls", "typed"),  # Cart().total()
    ("py/tests/test_cart.py#test_add", "py/shop/cart.py#Cart", "calls", "imported"),  # through shop/__init__
    ("py/tests/test_cart.py#test_add", "py/shop/cart.py#Cart.add", "calls", "typed"),  # c = make_cart() -> Cart
    ("py/tests/test_cart.py#test_add", "py/shop/cart.py#make_cart", "calls", "imported"),
    ("rb/lib/animal.rb#Fish", "rb/lib/animal.rb#Animal", "inherits", "same_scope"),
    ("rb/lib/animal.rb#Fish.swim", "rb/lib/animal.rb#Animal.breathe", "calls", "inherited"),
    ("rs/src/lib.rs#Cat", "rs/src/lib.rs#Speak", "implements", "same_scope"),
    ("rs/src/lib.rs#Cat.speak", "rs/src/lib.rs#Cat.purr", "calls", "same_scope"),
    ("rs/src/lib.rs#run", "rs/src/lib.rs#Cat.new", "calls", "same_scope"),
    ("rs/src/lib.rs#run", "rs/src/lib.rs#Cat.speak", "calls", "typed"),  # `Cat::new()` returns Cat
    ("ts/src/draw.ts#Big", "ts/src/shape.ts#Square", "inherits", "imported"),
    ("ts/src/draw.ts#draw", "ts/src/shape.ts#Square", "references", "imported"),
    ("ts/src/draw.ts#draw", "ts/src/shape.ts#Square.area", "calls", "typed"),  # s: Square
    ("ts/src/draw.ts#main", "ts/src/draw.ts#draw", "calls", "same_scope"),
    ("ts/src/draw.ts#main", "ts/src/shape.ts#Square", "calls", "imported"),
    ("ts/src/shape.ts#Square", "ts/src/shape.ts#Shape", "implements", "same_scope"),
    ("ts/src/shape.ts#Square.area", "ts/src/shape.ts#Square.side", "calls", "same_scope"),
}


def _graph(root: Path):  # type: ignore[no-untyped-def]
    cfg = Config(workers=1)
    d = walk(root, cfg, stat=False)
    facts = [read_one(os.path.realpath(root), rel, cfg)[0] for rel in d.files]
    return symbol_graph(facts, IndexView.build({f.path: f for f in facts}))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", FIXTURE)


@pytest.fixture
def built(repo: Path) -> Path:
    build(repo, buffer_pool_bytes=64 << 20, workers=1)
    return repo


def test_the_fixture_yields_exactly_the_expected_edges(repo: Path) -> None:
    g = _graph(repo)
    got = {(e["source"], e["target"], e["relation"], e["resolution"]) for e in g.edges if e["relation"] != "contains"}
    assert got == EXPECTED
    # self.items.append, str(…), String::new() (a type this repository does not define), require(…), echo
    assert g.unresolved == 5


def test_confidence_follows_the_resolution(repo: Path) -> None:
    g = _graph(repo)
    for e in g.edges:
        if e["relation"] == "contains":
            assert (e["confidence"], e["resolution"]) == (1.0, "defined")
        elif e["resolution"] == "ambiguous":
            assert e["confidence"] == 0.25 and e["candidates"] == 2  # 0.5 / 2 candidates
        else:
            assert e["confidence"] == CONFIDENCE[e["resolution"]] and e["candidates"] == 1
    lines = {(e["source"], e["target"]): e["lines"] for e in g.edges if e["relation"] == "calls"}
    assert lines[("py/shop/cart.py#make_cart", "py/shop/cart.py#Cart.add")] == [12]
    assert lines[("go/store/use.go#Fetch", "go/store/store.go#DB.Get")] == [5]


def test_symbols_nodes_and_containment(repo: Path) -> None:
    g = _graph(repo)
    nodes = {n["id"]: n for n in g.nodes}
    assert nodes["py/shop/cart.py#"]["kind"] == "module" and nodes["py/shop/cart.py#"]["name"] == "cart"
    cart = nodes["py/shop/cart.py#Cart.add"]
    assert (cart["kind"], cart["start"], cart["end"], cart["signature"]) == (
        "method", 5, 7, "def add(self, item: 'Item') -> None")
    assert nodes["go/store/store.go#DB.norm"]["exported"] is False  # lower case in Go
    assert nodes["go/store/store.go#DB.Get"]["exported"] is True
    assert nodes["rs/src/lib.rs#Cat.purr"]["exported"] is False and nodes["rs/src/lib.rs#run"]["exported"] is True
    contains = {(e["source"], e["target"]) for e in g.edges if e["relation"] == "contains"}
    assert ("py/shop/cart.py#", "py/shop/cart.py#Cart") in contains
    assert ("py/shop/cart.py#Cart", "py/shop/cart.py#Cart.add") in contains
    assert ("go/store/store.go#DB", "go/store/store.go#DB.Get") in contains  # a Go method, by its receiver


def test_an_overload_set_is_one_symbol(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", {"m.py": (
        "import typing as t\n\n@t.overload\ndef f(x: int) -> int: ...\n\n@t.overload\ndef f(x: str) -> str: ...\n\n"
        "def f(x):\n    return g(x)\n\ndef g(x):\n    return f(x)\n")})
    g = _graph(root)
    f = [n for n in g.nodes if n["name"] == "f"]
    assert [(n["id"], n["start"], n["end"]) for n in f] == [("m.py#f", 9, 10)]  # the implementation
    assert {(e["source"], e["target"]) for e in g.edges if e["relation"] == "calls"} == {
        ("m.py#f", "m.py#g"), ("m.py#g", "m.py#f")}


def test_call_receivers_and_declared_types() -> None:
    assert extract("java", "class A { void f() { this.g(); x.y().z(); h(); } }").calls == (
        ("?~x~y.z", 1), ("h", 1), ("this.g", 1), ("x.y", 1))  # z on what x.y() returns
    chains = extract("typescript", "function f() { new B().a().b(); make().go(); (w.v()).u() }").calls
    assert chains == (("?~make().go", 1), ("?~new B.a", 1), ("?~new B~a.b", 1), ("?~w~v.u", 1), ("B", 1),
                      ("make", 1), ("w.v", 1))
    assert extract("go", "package p\nfunc (s *S) Run(c *cobra.Command) { x := &T{}; s.g() }").typed == (
        ("c", "Command", 2), ("s", "S", 2), ("x", "T", 2))
    calls, typed = python_calls("def f(s: Session):\n  self.session.send('g()')  # h()\n  a = Adapter()\n")
    assert calls == (("session.send", 2), ("Adapter", 3))  # nothing from the string or the comment
    assert typed == (("s", "Session", 1), ("a", "Adapter", 3))
    assert extract("php", "<?php class A extends B implements C {}").bases == (
        ("A", "B", "inherits", 1), ("A", "C", "implements", 1))


def test_the_bundle_and_the_export_hold_the_symbol_graph(built: Path) -> None:
    doc = orjson.loads(export_of(built))
    assert doc["schema"]["version"] == "wtls-1.5"
    sym = doc["symbols"]
    assert sym["node_fields"] == ["id", "name", "qualified", "kind", "language", "path", "start", "end", "signature",
                                  "doc", "exported"]
    assert doc["schema"]["counts"]["symbols"]["symbols"] == len(sym["nodes"]) == 112
    nodes, edges = unpack_symbols(doc)
    assert nodes[0] == {"id": "c/src/main.c#", "name": "main", "qualified": "c/src/main.c", "kind": "module",
                        "language": "c", "path": "c/src/main.c", "start": 1, "end": 3, "signature": "", "doc": "",
                        "exported": True}
    assert {(e["source"], e["target"], e["relation"], e["resolution"]) for e in edges
            if e["relation"] != "contains"} == EXPECTED
    assert doc["schema"]["counts"]["symbols"]["edges_by_relation"]["calls"] == 39
    with Snapshot.open(built) as snap:
        assert snap.store.rows("MATCH (s:Symbol) RETURN count(s) AS n")[0]["n"] == 112
        assert snap.store.rows("MATCH ()-[c:Calls]->() RETURN count(c) AS n")[0]["n"] == 39
        assert snap.store.rows("MATCH (a:Artifact)-[:Defines]->(s:Symbol) WHERE s.id = 'py/shop/cart.py#Cart' "
                               "RETURN a.path AS p")[0]["p"] == "py/shop/cart.py"
    proc = run_cli("verify", str(built))
    assert proc.returncode == 0, proc.stderr
    assert "112 symbols and 39 call edges match the export" in " ".join(proc.stdout.split())


def test_symbols_exact_qualified_and_fuzzy(built: Path) -> None:
    with Snapshot.open(built) as snap:
        exact = callgraph.symbols(snap, "add", language="python")
        assert exact["match"] == "exact" and [d["id"] for d in exact["definitions"]] == ["py/shop/cart.py#Cart.add"]
        dotted = callgraph.symbols(snap, "shop.cart.Cart.add")  # a module path in front is dropped
        assert [d["id"] for d in dotted["definitions"]] == ["py/shop/cart.py#Cart.add"]
        fuzzy = callgraph.symbols(snap, "make_crt")
        assert fuzzy["match"] == "fuzzy" and fuzzy["definitions"][0]["id"] == "py/shop/cart.py#make_cart"
        line = callgraph.symbols(snap, "py/shop/cart.py:6")
        assert line["match"] == "line" and line["definitions"][0]["id"] == "py/shop/cart.py#Cart.add"
        kinds = callgraph.symbols(snap, "speak", kind="method", language="rust")
        assert sorted(d["id"] for d in kinds["definitions"]) == ["rs/src/lib.rs#Cat.speak", "rs/src/lib.rs#Speak.speak"]
        with pytest.raises(QueryError, match="no symbol named"):
            callgraph.callers(snap, "zzzqqq")


def test_callers_and_callees_with_depth_and_confidence(built: Path) -> None:
    with Snapshot.open(built) as snap:
        one = callgraph.callers(snap, "Base.describe")
        assert [(r["id"], r["lines"], r["resolution"]) for r in one["callers"]] == [
            ("py/shop/cart.py#Cart.add", [7], "inherited")]
        two = callgraph.callers(snap, "Base.describe", depth=2)
        # test_add calls Cart.add on `c = make_cart()`, whose signature says `-> Cart`: typed, κ 0.85
        assert [[r["id"] for r in lvl] for lvl in two["levels"]] == [
            ["py/shop/cart.py#Cart.add"], ["py/shop/cart.py#make_cart", "py/tests/test_cart.py#test_add"]]
        # `Cat::new().speak()`: Cat's (new returns Cat), not the trait's declaration
        assert [(r["id"], r["resolution"]) for r in callgraph.callers(snap, "Cat.speak")["callers"]] == [
            ("rs/src/lib.rs#run", "typed")]
        assert callgraph.callers(snap, "Speak.speak", min_confidence=0.0)["callers"] == []
        out = callgraph.callees(snap, "make_cart")
        assert [(r["id"], r["resolution"]) for r in out["callees"]] == [
            ("py/shop/cart.py#Cart", "same_scope"), ("py/shop/cart.py#Cart.add", "typed")]


def test_impact_of_a_symbol_a_file_and_a_diff(built: Path) -> None:
    with Snapshot.open(built) as snap:
        r = callgraph.impact(snap, ["py/shop/base.py#Base.total"])
        assert [s["id"] for s in r["seeds"]] == ["py/shop/base.py#Base.total"]
        reached = {s["id"]: (s["distance"], round(s["score"], 4)) for s in r["symbols"]}
        # describe calls total (κ 0.95 × decay 0.7), test_add calls it (κ 0.5 × 0.7)
        assert reached["py/shop/base.py#Base.describe"] == (1, 0.665)
        assert reached["py/tests/test_cart.py#test_add"][0] == 1
        assert reached["py/shop/cart.py#Cart.add"] == (2, round(0.665 * 0.85 * 0.7, 4))  # through `inherited`
        assert [t["path"] for t in r["tests"]] == ["py/tests/test_cart.py"]
        # base.py, cart.py (Cart.add), the test, and shop/__init__.py (imports cart.py)
        assert r["hubs"] == [{"hub": "hub:domain:py", "files": 4}]
        whole = callgraph.impact(snap, ["py/shop/base.py"])
        assert "py/shop/cart.py" in [f["path"] for f in whole["files"]]
    git(built, "init", "-q")
    git(built, "add", "-A", ".")
    git(built, "commit", "-qm", "base")
    (built / "py/shop/base.py").write_text(FIXTURE["py/shop/base.py"].replace("return 0", "return 1"))
    proc = run_cli("impact", "--diff", "-r", str(built), "--json")
    assert proc.returncode == 0, proc.stderr
    ans = orjson.loads(proc.stdout)
    assert [s["id"] for s in ans["seeds"]] == ["py/shop/base.py#Base.total"]  # only the changed method
    assert ans["changed"] == ["py/shop/base.py"] and [t["path"] for t in ans["tests"]] == ["py/tests/test_cart.py"]
    head = orjson.loads(run_cli("impact", "--diff", "HEAD", "-r", str(built), "--json").stdout)
    assert head["seeds"] == ans["seeds"] and head["diff"] == "HEAD"
    bad = run_cli("impact", "--diff", "x;rm -rf", "-r", str(built))
    assert bad.returncode == 8 and bad.stderr == "Error: 'x;rm -rf' is not a revision (HEAD, main, HEAD~3, a commit id)\n"
    two = run_cli("impact", "--diff", "HEAD", "main", "-r", str(built))
    assert two.returncode != 0 and "takes one revision" in two.stderr


def test_cli_and_memory_answer_symbol_questions(built: Path) -> None:
    proc = run_cli("callers", "Cart.add", "-r", str(built), "--json", "--min-confidence", "0.5")
    assert proc.returncode == 0, proc.stderr
    doc = orjson.loads(proc.stdout)
    assert [r["id"] for r in doc["callers"]] == ["py/shop/cart.py#make_cart", "py/tests/test_cart.py#test_add"]
    strict = orjson.loads(run_cli("callers", "Cart.add", "-r", str(built), "--json", "--min-confidence", "0.9").stdout)
    assert [r["id"] for r in strict["callers"]] == [] and strict["min_confidence"] == 0.9  # both typed, κ 0.85
    code, shown = run_tty("callers", "Cart.add", "-r", str(built), cols=200)
    assert code == 0 and "make_cart  py/shop/cart.py:12" in shown and "κ=0.85 typed" in shown
    piped = run_cli("callers", "Cart.add", "-r", str(built))
    assert piped.stdout == ("1\tmake_cart\tpy/shop/cart.py:12\tfunction\t0.85\ttyped\t\n"
                            "1\ttest_add\tpy/tests/test_cart.py:7\tfunction\t0.85\ttyped\t\n")
    missing = run_cli("callers", "nothing_like_it", "-r", str(built))
    assert missing.returncode != 0 and missing.stderr.count("\n") == 1 and "no symbol named" in missing.stderr
    with Memory.open(built) as mem:
        assert mem.symbols("Square", language="typescript")["definitions"][0]["path"] == "ts/src/shape.ts"
        assert mem.callees("Square.area")["callees"][0]["id"] == "ts/src/shape.ts#Square.side"
        assert mem.impact("go/store/store.go")["files"][0]["path"] == "go/store/store.go"


def test_a_query_naming_a_symbol_ranks_its_file_first(built: Path) -> None:
    with Memory.open(built) as mem:
        res = mem.search("why does make_cart return an empty basket", k=5)
        assert res["results"][0]["path"] == "py/shop/cart.py"
        assert res["results"][0]["defines"][0]["qualified"] == "make_cart"
        trace = mem.search('Traceback:\n  File "x.py", line 3, in describe\nTypeError', k=3)
        assert trace["results"][0]["path"] == "py/shop/base.py"
        pack = mem.context("make_cart fails", budget_tokens=500)
        first = pack.items[0]
        assert (first.path, first.start, first.end) == ("py/shop/cart.py", 10, 13)
        assert first.lines.startswith("def make_cart() -> Cart:")


def test_repair_restores_the_symbol_tables(built: Path) -> None:
    import shutil

    vault = built / ".oracl"
    for bundle in (vault / "mirror").iterdir():
        if bundle.is_dir():
            shutil.rmtree(bundle)
    proc = run_cli("repair", str(built))
    assert proc.returncode == 0, proc.stderr
    with Snapshot.open(built) as snap:
        assert snap.store.rows("MATCH ()-[c:Calls]->() RETURN count(c) AS n")[0]["n"] == 39
        assert callgraph.callers(snap, "py/shop/base.py#Base.total")["callers"][0]["id"] == "py/shop/base.py#Base.describe"


def test_the_names_a_query_gives_for_symbols_and_their_weights() -> None:
    from oracl.read.query.run import symbol_names

    assert symbol_names("why does make_cart fail") == {"make_cart": 1.0}
    text = 'Fix `Base.total` rounding\n\nAlso touches Cart.add and helper_fn.\n  File "a.py", line 3, in describe\n'
    # quoted and traceback names point at their definitions; identifiers a long text mentions count a quarter
    assert symbol_names(text, long=True) == {"Base.total": 1.0, "describe": 1.0, "Cart.add": 0.25, "helper_fn": 0.25}
    assert symbol_names("see pkg/util.py and util.py", long=False) == {}


def test_the_symbol_tables_column_by_column() -> None:
    """Hand-made rows → the engine's tables: every column, a call's lines as the text of
    their list, an inherits/references edge's one line (its first; none for line 0), the
    names table keyed by short and qualified."""
    from oracl.bundle.tables import symbol_tables

    node = {"language": "python", "path": "a.py", "signature": "", "doc": "", "exported": True}
    nodes = [{**node, "id": "a.py#", "name": "a", "qualified": "a.py", "kind": "module", "start": 1, "end": 9},
             {**node, "id": "a.py#B", "name": "B", "qualified": "B", "kind": "class", "start": 1, "end": 3},
             {**node, "id": "a.py#C.f", "name": "f", "qualified": "C.f", "kind": "method", "start": 5, "end": 6,
              "signature": "def f(self, b: B)", "exported": False}]
    edge = {"confidence": 0.9, "resolution": "imported", "candidates": 1}
    edges = [{**edge, "source": "a.py#C.f", "target": "a.py#B", "relation": "calls", "lines": [6, 7]},
             {**edge, "source": "a.py#C", "target": "a.py#B", "relation": "implements", "lines": [4]},
             {**edge, "source": "a.py#C.f", "target": "a.py#B", "relation": "references", "lines": []},
             {**edge, "source": "a.py#", "target": "a.py#B", "relation": "contains", "lines": [1]}]
    t = {k: v.to_pylist() for k, v in symbol_tables(nodes, edges).items()}
    assert [r["id"] for r in t["symbols"]] == ["a.py#", "a.py#B", "a.py#C.f"]
    assert t["symbols"][2] == {"id": "a.py#C.f", "name": "f", "qualified": "C.f", "kind": "method",
                               "language": "python", "path": "a.py", "start_line": 5, "end_line": 6,
                               "signature": "def f(self, b: B)", "doc": "", "exported": False}
    assert t["defines"] == [{"from": "a.py", "to": i} for i in ("a.py#", "a.py#B", "a.py#C.f")]
    assert t["calls"] == [{"from": "a.py#C.f", "to": "a.py#B", "confidence": 0.9, "resolution": "imported",
                           "candidates": 1, "lines": "[6,7]"}]  # (the text of the list: schema/002_rels.cypher)
    assert t["inherits"] == [{"from": "a.py#C", "to": "a.py#B", "relation": "implements", "confidence": 0.9,
                              "resolution": "imported", "candidates": 1, "line": 4}]
    assert t["references"] == [{"from": "a.py#C.f", "to": "a.py#B", "confidence": 0.9, "resolution": "imported",
                                "candidates": 1, "line": None}]
    assert t["contains"] == [{"from": "a.py#", "to": "a.py#B"}]
    assert {r["key"]: r["ids"] for r in t["symbol_names"]} == {"a.py": ["a.py#"], "b": ["a.py#B"],
                                                               "f": ["a.py#C.f"], "c.f": ["a.py#C.f"]}


def test_kappa_is_rounded_once_per_resolution() -> None:
    from oracl.builder.pipeline.symbols import _kappa

    assert (_kappa("ambiguous", 3), _kappa("ambiguous", 1), _kappa("imported", 4), _kappa("unique", 1)) == (
        0.166666667, 0.5, 0.9, 0.7)


AMBIGUOUS = {
    "adapters.py": ("class BaseAdapter:\n    def send(self, request):\n        raise NotImplementedError\n\n\n"
                    "class HTTPAdapter(BaseAdapter):\n    def send(self, request):\n        return request\n"),
    "sessions.py": ("from adapters import HTTPAdapter\n\n\nclass Session:\n    def send(self, request):\n"
                    "        adapter: HTTPAdapter = HTTPAdapter()\n        return adapter.send(request)\n\n"
                    "    def request(self, r):\n        return self.send(r)\n"),
    "api.py": "from sessions import Session\n\n\ndef get(r):\n    return Session().request(r)\n",
}


def test_a_name_with_several_definitions_answers_for_all_and_says_so(tmp_path: Path, built: Path) -> None:
    root = write_tree(tmp_path / "amb", AMBIGUOUS)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    with Snapshot.open(root) as snap:
        listed = callgraph.symbols(snap, "send")
        assert listed["match"] == "ambiguous" and sorted(d["id"] for d in listed["definitions"]) == [
            "adapters.py#BaseAdapter.send", "adapters.py#HTTPAdapter.send", "sessions.py#Session.send"]
        r = callgraph.callers(snap, "send")
        assert r["match"] == "ambiguous"
        assert sorted(t["id"] for t in r["targets"]) == sorted(d["id"] for d in listed["definitions"])
        # each caller says which definition it calls
        assert sorted((c["id"], c["via"]) for c in r["callers"]) == [
            ("sessions.py#Session.request", "sessions.py#Session.send"),
            ("sessions.py#Session.send", "adapters.py#HTTPAdapter.send")]
        assert len(r["notices"]) == 1 and r["notices"][0].startswith("'send' names 3 definitions; answering for all")
        one = callgraph.callers(snap, "HTTPAdapter.send")  # qualified: one definition, exact
        assert one["match"] == "exact" and [c["id"] for c in one["callers"]] == ["sessions.py#Session.send"]
        imp = callgraph.impact(snap, ["send"])
        assert sorted(s["id"] for s in imp["seeds"]) == sorted(d["id"] for d in listed["definitions"])
        assert any(n.startswith("'send' names 3 definitions") for n in imp["notices"])
    with Snapshot.open(built) as snap:  # a C function declared in a header and defined once is one definition
        c = callgraph.symbols(snap, "add", language="c")
        assert c["match"] == "exact" and [d["id"] for d in c["definitions"]] == ["c/src/util.c#add", "c/src/util.h#add"]
        assert callgraph.symbols(snap, "add")["match"] == "ambiguous"  # Cart.add too
    piped = run_cli("callers", "send", "-r", str(root))
    assert piped.returncode == 0
    # Session.send is one of the definitions too: listed under HTTPAdapter.send, not walked twice
    assert piped.stdout.splitlines() == [
        "1\tSession.send\tsessions.py:7\tmethod\t0.85\ttyped · calls HTTPAdapter.send\trepeat",
        "1\tSession.request\tsessions.py:10\tmethod\t0.95\tsame_scope · calls Session.send\t"]
    assert piped.stderr.startswith("Note: 'send' names 3 definitions; answering for all of them: ")


GIN = ("package gin\n\nfunc Recovery() HandlerFunc {\n\treturn CustomRecovery(nil)\n}\n\n"
       "func CustomRecovery(h func()) HandlerFunc {\n\treturn nil\n}\n")
COMMENTS = "".join(f"\t// note {i}\n" for i in range(5))


def test_impact_diff_names_the_definition_holding_the_change_on_a_stale_build(tmp_path: Path) -> None:
    """Five comment lines inside Recovery() name Recovery alone: placed through the diff's
    new side on a build of the working tree, its old side on a build of the base, and the
    file parsed as it is now on a build of neither (the CLI's Memory has the parser)."""
    root = write_tree(tmp_path / "gin", {"go.mod": "module example.com/gin\n\ngo 1.21\n", "recovery.go": GIN})
    git(root, "init", "-q")
    git(root, "add", "-A", ".")
    git(root, "commit", "-qm", "base")
    build(root, buffer_pool_bytes=64 << 20, workers=1)  # the build is of the diff's base
    inside = GIN.replace("HandlerFunc {\n\treturn CustomRecovery", "HandlerFunc {\n" + COMMENTS + "\treturn CustomRecovery")
    (root / "recovery.go").write_text(inside)

    def seeds() -> tuple[list[str], dict[str, str], list[str]]:
        proc = run_cli("impact", "--diff", "-r", str(root), "--json")
        assert proc.returncode == 0, proc.stderr
        r = orjson.loads(proc.stdout)
        return sorted(s["id"] for s in r["seeds"]), r["placed"], r["notices"]

    ids, placed, notices = seeds()
    assert ids == ["recovery.go#Recovery"] and placed == {"recovery.go": "base"}
    none = ("no test file reaches this change: none of the 1 file(s) reached is a test; nothing imports, calls or "
            "is named after what changed from a test")
    assert notices == ["the build is older than the working tree: 1 changed file(s) placed on the build's lines "
                       "through base (base: the diff's old side; re-read: the definitions in the file now)", none]
    build(root, buffer_pool_bytes=64 << 20, workers=1)  # the build is of the working tree
    assert seeds() == (["recovery.go#Recovery"], {"recovery.go": "as is"}, [none])
    # a build of neither: comments at the top built, then the five inside Recovery added
    top = GIN.replace("package gin\n", "package gin\n\n// one\n// two\n// three\n")
    (root / "recovery.go").write_text(top)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    (root / "recovery.go").write_text(top.replace("HandlerFunc {\n\treturn CustomRecovery",
                                                  "HandlerFunc {\n" + COMMENTS + "\treturn CustomRecovery"))
    assert seeds()[:2] == (["recovery.go#Recovery"], {"recovery.go": "re-read"})
    # a line removed from CustomRecovery's body, and a function the build has not seen
    (root / "recovery.go").write_text(top.replace("\treturn nil\n", "") + "\nfunc Fresh() {}\n")
    ids, placed, notices = seeds()
    assert (ids, placed) == (["recovery.go#CustomRecovery"], {"recovery.go": "re-read"})
    assert notices[1:] == ["1 changed definition(s) are not in the build (rebuild to follow them): Fresh (recovery.go:14)",
                           none]
    with Snapshot.open(root) as snap:  # a reader without a parser counts such a file whole, and says so
        r = callgraph.impact(snap, diff="HEAD")
    assert r["placed"] == {"recovery.go": "whole"}
    assert sorted(s["id"] for s in r["seeds"]) == ["recovery.go#", "recovery.go#CustomRecovery", "recovery.go#Recovery"]


def test_a_hunk_side_without_lines_is_the_gap_after_its_line() -> None:
    assert callgraph._side(7, 3) == (7, 9) and callgraph._side(7, 0) == (7.5, 7.5)
    defs = [("C", "class", 1, 10), ("C.m", "method", 2, 5), ("C.n", "method", 6, 9), ("f", "function", 12, 14)]
    assert callgraph._innermost(defs, [(5.5, 5.5)]) == [defs[0]]    # between m and n: the class
    assert callgraph._innermost(defs, [(4.5, 4.5)]) == [defs[1]]    # inside m
    assert callgraph._innermost(defs, [(9, 12)]) == [defs[2], defs[3]]
    assert callgraph._innermost(defs, [(10, 10)]) == [defs[0]]      # the class's own last line
    assert callgraph._innermost(defs, [(11.5, 11.5)]) == []         # between the class and f: neither


RENAMES = {
    "pkg/__init__.py": "from .types import is_ready as ready\n",
    "pkg/types.py": "def is_ready(x):\n    return True\n\n\nclass Box:\n    pass\n",
    "pkg/use.py": ("from .types import is_ready as _ready, Box as B\nimport pkg.types as t\nfrom pkg import ready\n\n\n"
                   "def go():\n    _ready(1)\n    B()\n    t.is_ready(2)\n    ready(3)\n"),
    "web/lib.ts": "export function makeThing(): number { return 1 }\nexport class Shape {}\n",
    "web/app.ts": ("import { makeThing as mk, Shape as S } from './lib'\nimport * as lib from './lib'\n\n"
                   "export function main() {\n  mk()\n  new S()\n  lib.makeThing()\n}\n"),
    # a default import, and a static call on an imported class whose module has the class's name
    "web/Ky.ts": "export class Ky {\n  static create(): Ky { return new Ky() }\n}\n",
    "web/delay.ts": "export default function delay(ms: number) { return ms }\n",
    "web/boot.ts": "import delay from './delay'\nimport {Ky} from './Ky'\n\nexport const boot = () => { delay(1); return Ky.create() }\n",
}


def test_a_name_imported_under_another_name_resolves_to_its_definition(tmp_path: Path) -> None:
    """``from m import a as b``, ``import a.b as c``, a package re-exporting under a new
    name, ``import {a as b}``, ``import * as ns``, a default import and a static call on an
    imported class whose module is named like it: each call reaches the definition
    (requests' ``from ._types import is_prepared as _is_prepared`` was eleven missed call
    sites against scip-python; ky's ``Ky.create`` and ``delay`` four against scip-typescript)."""
    g = _graph(write_tree(tmp_path / "r", RENAMES))
    calls = sorted((e["source"], e["target"], e["resolution"], e["lines"]) for e in g.edges if e["relation"] == "calls")
    assert calls == [("pkg/use.py#go", "pkg/types.py#Box", "imported", [8]),
                     ("pkg/use.py#go", "pkg/types.py#is_ready", "imported", [7, 9, 10]),
                     ("web/Ky.ts#Ky.create", "web/Ky.ts#Ky", "same_scope", [2]),
                     ("web/app.ts#main", "web/lib.ts#Shape", "imported", [6]),
                     ("web/app.ts#main", "web/lib.ts#makeThing", "imported", [5, 7]),
                     ("web/boot.ts#boot", "web/Ky.ts#Ky.create", "imported", [4]),
                     ("web/boot.ts#boot", "web/delay.ts#delay", "imported", [4])]
    facts = {rel: read_one(str(tmp_path / "r"), rel, Config())[0] for rel in ("pkg/use.py", "web/app.ts")}
    assert facts["pkg/use.py"].renames == (("_ready", "is_ready"), ("B", "Box"), ("t", "pkg.types"))
    assert facts["web/app.ts"].renames == (("mk", "makeThing"), ("S", "Shape"), ("lib", "*./lib"))


CHAINS = {
    "j/src/com/ex/Gson.java": ("package com.ex;\n\npublic class Gson {\n  public GsonBuilder newBuilder() { return new GsonBuilder(); }\n"
                               "  public String toJson(Object o) { return \"\"; }\n}\n"),
    "j/src/com/ex/GsonBuilder.java": ("package com.ex;\n\npublic class GsonBuilder {\n  @CanIgnoreReturnValue\n"
                                      "  public GsonBuilder setPretty() { return this; }\n  public Gson create() { return new Gson(); }\n}\n"),
    "j/src/com/ex/Use.java": ("package com.ex;\n\npublic class Use {\n  void run(Gson gson) {\n"
                              "    new GsonBuilder().setPretty().create().toJson(1);\n    gson.newBuilder()\n"
                              "        .setPretty()\n        .create();\n  }\n}\n"),
    "t/schema.ts": ("export class ZString {\n  min(n: number): this { return this }\n  email(): ZString { return this }\n"
                    '  "~validate"(): boolean { return true }\n}\n'
                    "export function string(): ZString { return new ZString() }\n"),
    "t/use.ts": "import * as z from './schema'\n\nexport function f() {\n  return z.string().min(3).email()\n}\n",
}


def test_a_chain_of_calls_goes_on_through_what_each_returns(tmp_path: Path) -> None:
    """A builder chain (gson's ``new GsonBuilder().setPretty().create()``, 297 call sites of
    ``create`` missed against javac) and zod's ``z.string().min(3).email()``: each call is
    resolved on the type the previous one's signature returns (``this`` is its own type);
    an annotation above a method is not its signature."""
    root = write_tree(tmp_path / "r", CHAINS)
    g = _graph(root)
    calls = sorted((e["source"].split("#")[1], e["target"].split("#")[1], e["resolution"], e["lines"]) for e in g.edges
                   if e["relation"] == "calls" and e["source"].split("#")[1] in ("Use.run", "f"))
    assert calls == [("Use.run", "Gson.newBuilder", "typed", [6]), ("Use.run", "Gson.toJson", "typed", [5]),
                     ("Use.run", "GsonBuilder", "same_package", [5]), ("Use.run", "GsonBuilder.create", "typed", [5, 8]),
                     ("Use.run", "GsonBuilder.setPretty", "typed", [5, 7]), ("f", "ZString.email", "typed", [4]),
                     ("f", "ZString.min", "typed", [4]), ("f", "string", "imported", [4])]
    sig = {n["qualified"]: n["signature"] for n in g.nodes}
    assert sig["GsonBuilder.setPretty"] == "public GsonBuilder setPretty()"
    assert symbols.return_type("java", "setPretty", sig["GsonBuilder.setPretty"]) == "GsonBuilder"
    assert symbols.return_type("typescript", "min", "min(n: number): this") == "this"
    assert symbols.return_type("python", "where", "def where(self) -> 'Q'") == "Q"
    assert symbols.return_type("go", "Use", "func (e *Engine) Use(middleware ...HandlerFunc) IRoutes") == "IRoutes"
    assert symbols.return_type("rust", "new", "pub fn new() -> Self") == "Self"
    assert symbols.return_type("java", "size", "public int size()") == ""  # nothing a chain goes on through
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    with Snapshot.open(root) as snap:  # an id may end in a quote; a name may be quoted as typed in Markdown
        assert [d["id"] for d in callgraph.symbols(snap, 't/schema.ts#ZString."~validate"')["definitions"]] == [
            't/schema.ts#ZString."~validate"']
        assert [d["id"] for d in callgraph.symbols(snap, "`ZString.min`")["definitions"]] == ["t/schema.ts#ZString.min"]


ASSIGNED = {
    "py/adapters.py": "class BaseAdapter:\n    def send(self, r):\n        return r\n",
    "py/sessions.py": ("from adapters import BaseAdapter\n\n\nclass Session:\n    def get_adapter(self, url) -> BaseAdapter:\n"
                       "        return BaseAdapter()\n\n    def send(self, r):\n        adapter = self.get_adapter(r)\n"
                       "        return adapter.send(r)\n\n    def loop(self, x):\n        x = x.next()\n        return x.go()\n"),
    "ts/schema.ts": "export class ZObject {\n  safeParse(v: unknown): boolean { return true }\n}\nexport function object(): ZObject { return new ZObject() }\n",
    "ts/use.ts": "import * as z from './schema'\n\nexport function check() {\n  const s = z.object()\n  return s.safeParse(1)\n}\n",
    "go/go.mod": "module example.com/g\n\ngo 1.21\n",
    "go/engine.go": "package g\n\ntype Engine struct{}\n\nfunc New() *Engine { return &Engine{} }\n\nfunc (e *Engine) Use() {}\n",
    "go/main.go": "package g\n\nfunc run() {\n\tr := New()\n\tr.Use()\n}\n",
    # a module-level variable of a declared type, imported by another file (flask's current_app)
    "py/globals.py": "from sessions import Session\n\ncurrent: Session = make_proxy()\n",
    "py/views.py": "from globals import current\n\n\ndef view(r):\n    return current.send(r)\n",
}


def test_a_variable_assigned_from_a_call_has_the_type_the_call_returns(tmp_path: Path) -> None:
    """``adapter = self.get_adapter(url)`` (requests), ``const s = z.object()`` (zod), ``r :=
    gin.New()`` (gin): a call on the variable is resolved on the type the assigned call's
    signature returns; ``x = x.next()`` (the variable's own call) stops, and says nothing. A
    module-level variable another file declares with a type is resolved by that type."""
    g = _graph(write_tree(tmp_path / "r", ASSIGNED))
    calls = sorted((e["source"].split("#")[1], e["target"].split("#")[1], e["resolution"]) for e in g.edges
                   if e["relation"] == "calls" and e["source"].split("#")[1] in ("Session.send", "check", "run", "Session.loop",
                                                                                    "view"))
    assert calls == [("Session.send", "BaseAdapter.send", "typed"), ("Session.send", "Session.get_adapter", "same_scope"),
                     ("check", "ZObject.safeParse", "typed"), ("check", "object", "imported"),
                     ("run", "Engine.Use", "typed"), ("run", "New", "same_package"), ("view", "Session.send", "typed")]


SUPPORT = {
    "src/app.py": "def create():\n    return 1\n",
    "tests/conftest.py": "from src.app import create\n\n\ndef app():\n    return create()\n",
    "tests/test_apps/cliapp/app.py": "from src.app import create\n\napplication = create()\n",
    "tests/test_app.py": "from src.app import create\n\n\ndef test_create():\n    assert create() == 1\n",
    "tests/test_mock.py": ("from unittest import mock\n\n\ndef test_patch():\n    with mock.patch('os.getcwd'):\n"
                           "        pass\n"),
    "src/sessions.py": "class Session:\n    def patch(self, url):\n        return url\n",
    "src/lonely.py": "def alone():\n    return 0\n",
}


def test_tests_to_run_leave_out_fixtures_helpers_and_library_calls_and_say_when_there_are_none(tmp_path: Path) -> None:
    """A fixture app and ``conftest.py`` are not tests to run; ``mock.patch()`` is unittest's,
    not ``Session.patch`` found by its name; a change no test reaches says so."""
    root = write_tree(tmp_path / "s", SUPPORT)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    with Snapshot.open(root) as snap:
        r = callgraph.impact(snap, ["src/app.py#create"])
        assert [t["path"] for t in r["tests"]] == ["tests/test_app.py"]
        assert {"tests/conftest.py", "tests/test_apps/cliapp/app.py"} <= {f["path"] for f in r["files"]}
        patched = callgraph.impact(snap, ["src/sessions.py#Session.patch"])
        assert patched["tests"] == [] and patched["notices"][-1].startswith("no test file reaches this change")
        lonely = callgraph.impact(snap, ["src/lonely.py"])
        assert lonely["notices"] == ["no test file reaches this change: none of the 1 file(s) reached is a test; "
                                     "nothing imports, calls or is named after what changed from a test"]


GO_IDIOMS = {
    "go.mod": "module example.com/g\n\ngo 1.21\n",
    "group.go": ("package g\n\ntype RouterGroup struct{}\n\nfunc (group *RouterGroup) POST(p string) {}\n\n"
                 "type Engine struct {\n\tRouterGroup\n\tWriter Writer\n}\n\n"
                 "func New() *Engine { return &Engine{} }\n\n"
                 "func Pair() (e *Engine, err error) { return New(), nil }\n\n"
                 "func (engine *Engine) Routes() []*Engine { return nil }\n\n"
                 "func (engine *Engine) Header() {}\n\n"
                 "func (engine *Engine) Send() {\n\tengine.Writer.Header()\n\tengine.Header()\n}\n"),
    "writer.go": "package g\n\ntype Writer interface {\n\tFlush()\n}\n",
    "use_test.go": ("package g\n\nfunc TestUse() {\n\te, _ := Pair()\n\te.POST(\"/a\")\n"
                    "\tfor _, r := range e.Routes() {\n\t\tr.Send()\n\t}\n\tall := e.Routes()\n"
                    "\tfor _, x := range all {\n\t\tx.Header()\n\t}\n}\n"),
}


def test_go_multiple_results_ranges_embedded_fields_and_a_receivers_field(tmp_path: Path) -> None:
    """``e, _ := Pair()`` takes Pair's first result; ``for _, r := range e.Routes()`` and
    ``range all`` take the slice's element type; ``e.POST()`` is promoted from the embedded
    RouterGroup; ``engine.Writer.Header()`` is the field's (an interface without Header),
    never the caller's own ``Engine.Header`` (which ``engine.Header()`` is)."""
    from oracl.builder.extractors.code import extract

    assert extract("go", GO_IDIOMS["group.go"]).bases == (("Engine", "RouterGroup", "inherits", 7),)
    g = _graph(write_tree(tmp_path / "g", GO_IDIOMS))
    calls = sorted((e["source"].split("#")[1], e["target"].split("#")[1], e["resolution"], e["lines"]) for e in g.edges
                   if e["relation"] == "calls" and e["source"].split("#")[1] in ("TestUse", "Engine.Send"))
    assert calls == [("Engine.Send", "Engine.Header", "typed", [22]),  # engine.Header(), not engine.Writer.Header() (21)
                     ("TestUse", "Engine.Header", "typed", [11]), ("TestUse", "Engine.Routes", "typed", [6, 9]),
                     ("TestUse", "Engine.Send", "typed", [7]), ("TestUse", "Pair", "same_package", [4]),
                     ("TestUse", "RouterGroup.POST", "typed", [5])]


POLY_TESTS = {
    "Cargo.toml": ('[package]\nname = "app"\n\n[dependencies]\nprinter = { path = "crates/printer" }\n\n'
                   '[workspace]\nmembers = ["crates/*"]\n'),
    "src/main.rs": "fn main() {}\n",
    "tests/regression.rs": "#[test]\nfn runs_the_binary() {}\n",
    "tests/data/sherlock.txt": "a data file a test reads\n",
    "crates/printer/Cargo.toml": '[package]\nname = "printer"\n',
    "crates/printer/src/lib.rs": "pub fn summary() -> u8 {\n    1\n}\n",
    "crates/printer/tests/print.rs": "#[test]\nfn prints() {}\n",
    "crates/lonely/Cargo.toml": '[package]\nname = "lonely"\n',
    "crates/lonely/tests/alone.rs": "#[test]\nfn alone() {}\n",
    "java/pom.xml": "<project/>\n",
    "java/src/main/java/a/Shapes.java": "package a;\n\nclass Circle {\n    void run() {}\n}\n",
    "java/src/test/java/a/CircleTest.java": "package a;\n\nclass CircleTest {\n}\n",
    "java/src/test/java/a/BarTest.java": "package a;\n\nclass BarTest {\n}\n",
    "web/package.json": "{}\n",
    "web/src/format.ts": "export function slugify(x: string) {\n  return x;\n}\n",
    "web/test/slugify.test.ts": "import { it } from 'vitest';\nit('slugs', () => {});\n",
    "web/test/other.test.ts": "import { it } from 'vitest';\nit('other', () => {});\n",
}


def test_tests_to_run_by_package_crate_and_history_when_no_edge_reaches_them(tmp_path: Path) -> None:
    """Tests no call or import reaches: a Rust crate's integration tests and those of the
    crates depending on it (ripgrep's ``tests/`` run the binary), never a data file under
    ``tests/``; Surefire's ``CircleTest`` in the module of the file defining Circle;
    vitest's ``slugify.test.ts`` in the package of the file defining ``slugify`` (neither is
    named after its file: the build links those itself); and a test that changed together
    with the file (co-change), each with its reason and evidence."""
    root = write_tree(tmp_path / "p", POLY_TESTS)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    for i in range(2):  # format.ts and other.test.ts change together twice
        with (root / "web/src/format.ts").open("a") as fh:
            fh.write(f"// {i}\n")
        with (root / "web/test/other.test.ts").open("a") as fh:
            fh.write(f"// {i}\n")
        git(root, "commit", "-qam", f"together {i}")
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    with Snapshot.open(root) as snap:
        rust = callgraph.impact(snap, ["crates/printer/src/lib.rs"])
        assert [(t["path"], round(t["score"], 4), t["reasons"][-1]) for t in rust["tests"]] == [
            ("crates/printer/tests/print.rs", 0.35, "integration test of crates/printer/Cargo.toml"),
            ("tests/regression.rs", 0.245, "integration test of Cargo.toml")]  # 0.35 × 0.7, one manifest away
        java = callgraph.impact(snap, ["java/src/main/java/a/Shapes.java"])
        assert [(t["path"], t["score"], t["reasons"]) for t in java["tests"]] == [
            ("java/src/test/java/a/CircleTest.java", 0.6, ["named after circle (same package)"])]
        web = callgraph.impact(snap, ["web/src/format.ts"])
        k = snap.named("cochange_partners_one", {"path": "web/src/format.ts"})[0]["k"]
        assert [(t["path"], t["reasons"][-1]) for t in web["tests"]] == [
            ("web/test/slugify.test.ts", "named after slugify (same package)"),
            ("web/test/other.test.ts", "changes with web/src/format.ts")]
        assert web["tests"][1]["score"] == pytest.approx(float(k) * 0.5)


RUST_MACROS = {
    "Cargo.toml": '[package]\nname = "m"\n',
    "src/lib.rs": ("pub struct Router;\n\nimpl Router {\n    pub fn new() -> Router {\n        Router\n    }\n"
                   "    pub fn route(&self, p: &str) -> usize {\n        p.len()\n    }\n}\n\n"
                   "pub struct PathRouter;\n\nimpl PathRouter {\n    pub fn route(&self) {}\n}\n\n"
                   "fn helper(x: u8) -> u8 {\n    x\n}\n\n"
                   "pub fn check() {\n    assert_eq!(helper(2), 2, \"{}\", Router::new().route(\"/\"));\n"
                   "    println!(\"{:?}\", (helper, (3)));\n}\n\n"
                   "pub fn wire(r: Router) {\n    tap!(r, this => { check!(this.path_router.route()); });\n}\n"),
}


def test_calls_inside_rust_macro_invocations(tmp_path: Path) -> None:
    """``assert_eq!(helper(2), …, Router::new().route("/"))``: the calls in a macro's tokens
    are calls, a call on ``Router::new()`` goes on through what it returns (axum's
    ``Router::route`` was resolved to ``PathRouter::route``, and its own
    ``this.path_router.route()`` was missed); a name followed by a comma, then a
    parenthesis, is not a call."""
    assert extract("rust", RUST_MACROS["src/lib.rs"]).calls == (
        ("p.len", 8), ("?~Router.new().route", 23), ("Router.new", 23), ("assert_eq", 23), ("helper", 23),
        ("println", 24), ("path_router.route", 28), ("tap", 28))
    g = _graph(write_tree(tmp_path / "m", RUST_MACROS))
    calls = sorted((e["target"].split("#")[1], e["resolution"]) for e in g.edges
                   if e["relation"] == "calls" and e["source"].endswith("#check"))
    # Router::new() returns Router: its route, not PathRouter's
    assert calls == [("Router.new", "same_scope"), ("Router.route", "typed"), ("helper", "same_scope")]
    # axum's `panic_on_err!(this.path_router.route(…))` two macros deep: the receiver names PathRouter
    wired = [(e["target"].split("#")[1], e["resolution"], e["confidence"]) for e in g.edges
             if e["relation"] == "calls" and e["source"].endswith("#wire")]
    assert wired == [("PathRouter.route", "receiver", 0.8)]


TS_BARRELS = {
    "package.json": '{"name": "lib", "exports": {".": "./src/index.ts", "./v4": "./src/v4/index.ts"}}\n',
    "src/index.ts": 'export * from "./v4/index.js";\n',
    "src/v4/index.ts": 'export * from "./classic/index.js";\nexport { helper as assist } from "./util.js";\n',
    "src/v4/classic/index.ts": 'export * from "./schemas.js";\n',
    "src/v4/util.ts": "export function helper(): number {\n  return 1;\n}\n",
    "src/v4/classic/schemas.ts": (
        "export interface ZodString {\n  min(n: number): ZodString;\n}\n\n"
        "export const ZodString = $constructor(\"ZodString\", (inst: any) => {\n"
        "  inst._zod.parse = (p: unknown) => p;\n});\n\n"
        "export const ZodNumber = $constructor(\"ZodNumber\", (inst: any) => {\n"
        "  inst._zod.parse = (p: unknown) => p;\n});\n\n"
        "export function string<\n  TypeParameterWithAVeryLongNameSoTheSignatureRunsPastTwoHundredCharacters extends string = string,\n"
        "  AnotherLongTypeParameterName extends number = number,\n  AThirdOneForGoodMeasure extends boolean = boolean,\n"
        ">(params?: string): ZodString {\n"
        "  return new ZodString(params);\n}\n"),
    "test/string.test.ts": ('import * as z from "lib/v4";\nimport { assist } from "../src/v4/index.js";\n\n'
                            'export function check() {\n  z.string().min(5);\n  assist();\n}\n'),
}


def test_typescript_barrels_factories_and_long_signatures(tmp_path: Path) -> None:
    """``import * as z from "lib/v4"`` through three ``export *`` barrels reaches ``string``;
    ``export {helper as assist} from`` is helper; a signature longer than the kept 200
    characters keeps its return type, so ``z.string().min()`` goes on to ZodString's min
    (the interface, merged with the const of the same name); ``const ZodString =
    $constructor(…, (inst) => {…})`` is a class and each ``inst._zod.parse = …`` in such a
    factory its own method."""
    facts = extract("typescript", TS_BARRELS["src/v4/classic/schemas.ts"])
    assert [(s[0], s[1]) for s in facts.symbols] == [
        ("ZodString", "interface"), ("min", "method"), ("ZodString", "class"), ("parse", "method"),
        ("ZodNumber", "class"), ("parse", "method"), ("string", "function")]
    assert [d[0] for d in facts.details][3:6] == ["ZodString.inst._zod.parse", "ZodNumber", "ZodNumber.inst._zod.parse"]
    assert facts.details[-1][1].endswith(" …): ZodString") and len(facts.details[-1][1]) == 200
    g = _graph(write_tree(tmp_path / "t", TS_BARRELS))
    calls = sorted((e["target"].split("#")[1], e["resolution"]) for e in g.edges
                   if e["relation"] == "calls" and e["source"] == "test/string.test.ts#check")
    assert calls == [("ZodString.min", "typed"), ("helper", "imported"), ("string", "imported")]


TS_TYPED = {
    "src/doc.ts": "export class Doc {\n  write(s: string) {}\n}\n",
    "src/core.ts": ("export interface $constructor<T> {\n  init(inst: T): void;\n}\n"
                    "export function $constructor(name: string, f: any): any {\n  return f;\n}\n"),
    "src/index.ts": 'export * from "./core.js";\nexport * from "./schemas.js";\n',
    "src/schemas.ts": ('import * as core from "./core.js";\nexport interface $ZodCUID {\n  x: number;\n}\n'
                       'export const $ZodCUID: core.$constructor<$ZodCUID> = core.$constructor("$ZodCUID", (inst: any) => {\n'
                       "  inst.x = 1;\n});\n"),
    "src/classic.ts": ('import * as core from "./index.js";\nimport { Doc } from "./doc.js";\n\n'
                       'export const ZodCUID: core.$constructor<any> = core.$constructor("ZodCUID", (inst: any) => {\n'
                       "  core.$ZodCUID.init(inst);\n  ZodCUID.init(inst);\n  const doc = new Doc();\n  doc.write(\"x\");\n});\n"),
}


def test_typescript_declared_consts_and_a_variable_named_like_a_module(tmp_path: Path) -> None:
    """``const ZodCUID: core.$constructor<…> = …`` is typed by its declaration (not by the
    call assigned to it); ``core.$ZodCUID.init()`` is the declared type's ``init``, where the
    one module declaring ``$ZodCUID`` says; ``import {Doc} from "./doc.js"`` binds Doc, so a
    local ``doc`` is the variable (``doc.write()``: Doc's), not the module; ``interface
    $constructor`` and ``function $constructor`` are two symbols."""
    assert extract("typescript", TS_TYPED["src/classic.ts"]).typed == (("ZodCUID", "$constructor", 4), ("doc", "Doc", 7))
    g = _graph(write_tree(tmp_path / "t", TS_TYPED))
    calls = sorted((e["target"].split("#")[1], e["resolution"], e["lines"]) for e in g.edges
                   if e["relation"] == "calls" and e["source"] == "src/classic.ts#ZodCUID")
    # the interface and the function named $constructor are two symbols: a type, and a value
    assert calls == [("$constructor.init", "typed", [5, 6]), ("$constructor@function", "imported", [4]),
                     ("Doc", "imported", [7]), ("Doc.write", "typed", [8])]
    assert {n["id"]: n["qualified"] for n in g.nodes if n["path"] == "src/core.ts" and n["kind"] != "module"} == {
        "src/core.ts#$constructor": "$constructor", "src/core.ts#$constructor.init": "$constructor.init",
        "src/core.ts#$constructor@function": "$constructor"}


PY_LOOPS = {
    "tag.py": ("class JSONTag:\n    def check(self, value):\n        return True\n\n\n"
               "class Session:\n    def send(self):\n        return 1\n\n\n"
               "class Serializer:\n    def __init__(self):\n        self.order: list[JSONTag] = []\n\n"
               "    def tag(self, value, session: Optional[Session] = None):\n        for tag in self.order:\n"
               "            tag.check(value)\n        session.send()\n"),
}


def test_python_loops_over_typed_containers_and_optional_parameters(tmp_path: Path) -> None:
    """``self.order: list[JSONTag]`` then ``for tag in self.order: tag.check(…)`` (flask's
    TaggedJSONSerializer): the loop variable is the element type; ``session:
    Optional[Session]`` is a Session."""
    g = _graph(write_tree(tmp_path / "p", PY_LOOPS))
    calls = sorted((e["target"].split("#")[1], e["resolution"], e["lines"]) for e in g.edges
                   if e["relation"] == "calls" and e["source"] == "tag.py#Serializer.tag")
    assert calls == [("JSONTag.check", "typed", [17]), ("Session.send", "typed", [18])]


def test_a_dunder_receiver_names_no_type(tmp_path: Path) -> None:
    """``self.__dict__.get(key)`` is the instance dict's, not ``LookupDict.get`` found
    because a type's name ends with "dict" (requests); ``self.lookup_dict.get()`` is."""
    src = ("class LookupDict(dict):\n    def get(self, key, default=None):\n        return self.__dict__.get(key, default)\n\n\n"
           "class Holder:\n    def read(self, key):\n        return self.lookup_dict.get(key)\n")
    g = _graph(write_tree(tmp_path / "d", {"structures.py": src}))
    calls = sorted((e["source"].split("#")[1], e["target"].split("#")[1], e["resolution"]) for e in g.edges
                   if e["relation"] == "calls")
    assert calls == [("Holder.read", "LookupDict.get", "receiver")]


@pytest.mark.parametrize("tree", ["FIXTURE", "AMBIGUOUS", "CHAINS", "GO_IDIOMS", "TS_BARRELS"])
def test_half_of_the_calls_resolved_elsewhere_gives_the_same_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     tree: str) -> None:
    """``symbol_graph(fork=…)``: with many call sites (here: any), the second half of the
    files' calls is resolved by what ``fork`` starts (a forked child in a build; here run at
    once, as the in-process executor does) and joined in: nodes, edges (their order too),
    each file's unresolved and ambiguous sites and the counts are the single pass's."""
    import oracl.builder.pipeline.symbols as symbols_mod

    root = write_tree(tmp_path / "repo", globals()[tree])
    cfg = Config(workers=1)
    d = walk(root, cfg, stat=False)
    facts = [read_one(os.path.realpath(root), rel, cfg)[0] for rel in d.files]
    idx = IndexView.build({f.path: f for f in facts})
    whole = symbol_graph(facts, idx)
    started: list[int] = []

    def fork(fn: Any) -> Any:
        value = fn()
        started.append(len(value[1]))  # (the files resolved there)
        return lambda: value

    monkeypatch.setattr(symbols_mod, "FORK_MIN_CALLS", 0)
    split = symbol_graph(facts, IndexView.build({f.path: f for f in facts}), fork=fork)
    assert len(started) == 1 and started[0] >= 1, started
    assert split.nodes == whole.nodes and split.edges == whole.edges
    assert split.sites == whole.sites and list(split.sites) == list(whole.sites)
    assert split.counts() == whole.counts() and whole.counts()["edges_by_relation"].get("calls", 0) > 0


def test_symbol_names_find_each_symbol_by_its_lower_cased_name_and_qualified_name_in_row_order() -> None:
    """SymbolName's rows, by hand: a module by its qualified name only; a name equal to
    its qualified name once; ids in row order under a key shared by two symbols."""
    from oracl.bundle.tables import symbol_names

    rows = [("a.py#", "a", "a.py", "module"), ("a.py#Foo", "Foo", "Foo", "class"),
            ("a.py#Foo.run", "run", "Foo.run", "method"), ("b.py#run", "run", "run", "function")]
    assert symbol_names(rows) == {"a.py": ["a.py#"], "foo": ["a.py#Foo"], "foo.run": ["a.py#Foo.run"],
                                  "run": ["a.py#Foo.run", "b.py#run"]}
