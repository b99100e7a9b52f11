"""Files that come, go or change their interface: the symbol rows of the files they can
change are made again (``builder/resolve_again.py``), and the result is a full build's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from oracl.builder.extractors.resolve import IndexView
from oracl.builder.orchestrator import build
from oracl.builder.pipeline.symbols import change_tokens, declared, symbol_graph
from oracl.core.records import FileFacts

from .conftest import write_tree
from .test_incremental import (
    KW,
    _canonical,
    _first_difference,
    _full_rows_beside,
    _stamp,
    _symbol_rows,
)

TREE = {
    "pkg/root.py": "class Root:\n    def total(self):\n        return 1\n",
    "pkg/base.py": "class Base:\n    def size(self):\n        return 2\n",
    "pkg/cart.py": "class Cart(Base):\n    def add(self, x):\n        return x\n\n\ndef make_cart() -> Cart:\n"
                   "    return Cart()\n",
    "pkg/shop.py": "from pkg.cart import make_cart\n\n\ndef run(n):\n    c = make_cart()\n    return c.total() + c.size()\n",
    "pkg/net.py": "def fetch(session):\n    return session.send(1)\n",
    "lib/keep.py": "def keep():\n    return 0\n",
    "web/app.js": "import { ping } from './helpers.js';\n\nexport function main() {\n  return ping(1);\n}\n",
    "web/other.js": "export function other() {\n  return 3;\n}\n",
    "src/com/acme/Shop.java": ("package com.acme;\n\npublic class Shop {\n    public int run() {\n"
                               "        Ledger l = new Ledger();\n        return l.sum();\n    }\n}\n"),
    "src/com/acme/Tool.java": "package com.acme;\n\npublic class Tool {\n    public int use() {\n        return 1;\n    }\n}\n",
    "README.md": "# Shop\n",
}
LEDGER = "package com.acme;\n\npublic class Ledger {\n    public int sum() {\n        return 0;\n    }\n}\n"
HTTP = "class HttpSession:\n    def send(self, x):\n        return x\n"


def _write(root: Path, rel: str, text: str | None, step: int) -> None:
    path = root / rel
    if text is None:
        path.unlink()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    _stamp(path, step)


def _calls(root: Path) -> set[tuple[str, str, str]]:
    rows = _symbol_rows(root)["Calls"]
    return {(r[0], r[1], r[3]) for r in map(orjson.loads, rows)}


# (what changes: path → text, None to remove; how many files' rows the build makes again
# at most; a call the build must then hold, or not hold: (source, target, resolution, present))
STEPS = [
    # a type whose base's base has the member: shop.py's `c.total()` goes from the one method
    # named so (unique_member) to the member Cart inherits, through cart.py's bases moving
    # (shop.py reads no name more.py declares: it is resolved again as a reader of cart.py)
    ({"pkg/more.py": "class Base(Root):\n    pass\n"}, 3,
     ("pkg/shop.py#run", "pkg/root.py#Root.total", "typed", True)),
    # a receiver named like a type that ends with it: `session.send()` now resolves
    ({"pkg/http.py": HTTP}, 4, ("pkg/net.py#fetch", "pkg/http.py#HttpSession.send", "receiver", True)),
    # a JavaScript import of a file that was not there: app.js's call now resolves through it
    ({"web/helpers.js": "export function ping(x) {\n  return x;\n}\n"}, 3,
     ("web/app.js#main", "web/helpers.js#ping", "imported", True)),
    # a Java class of the package: Shop's `l.sum()` resolves to it
    ({"src/com/acme/Ledger.java": LEDGER}, 4, ("src/com/acme/Shop.java#Shop.run", "src/com/acme/Ledger.java#Ledger.sum",
                                              "typed", True)),
    # removed again: the calls into it go, the bases move back
    ({"pkg/more.py": None}, 3, ("pkg/shop.py#run", "pkg/root.py#Root.total", "typed", False)),
    # renamed: the same class under another name of the directory
    ({"pkg/http.py": None, "pkg/transport.py": HTTP}, 4,
     ("pkg/net.py#fetch", "pkg/transport.py#HttpSession.send", "receiver", True)),
    # an interface change (a function added) and a new file in one build
    ({"pkg/base.py": TREE["pkg/base.py"] + "\n\ndef helper():\n    return 5\n",
      "lib/use.py": "from pkg.base import helper\n\n\ndef use():\n    return helper()\n"}, 4,
     ("lib/use.py#use", "pkg/base.py#helper", "imported", True)),
    # a function no file imports, called by name alone from another directory: the one of
    # that name in the repository (a lookup in every file's names, whose outcome moved)
    ({"pkg/tools.py": "def tally():\n    return 1\n", "lib/count.py": "def count():\n    return tally()\n"}, 3,
     ("lib/count.py#count", "pkg/tools.py#tally", "unique", True)),
    # and removed: the latest's tables were read back without it (a file of their patch that
    # this build removed), yet its going moves that lookup, and count.py is resolved again
    ({"pkg/tools.py": None}, 2, ("lib/count.py#count", "pkg/tools.py#tally", "unique", False)),
]


def test_files_that_come_go_or_move_their_interface_remake_only_what_they_can_change(tmp_path: Path) -> None:
    """Each step adds, removes, renames or changes the interface of files (Python, JavaScript,
    Java): the tables are patched and only a few files resolved again — at most the
    step's bound, of 11 to 14 — and after each step the export, byte for byte, and every
    symbol table's rows equal a full build's; the call the step is about is there (or
    gone) with the resolution it says."""
    root = write_tree(tmp_path / "repo", TREE)
    for rel in TREE:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    assert ("pkg/shop.py#run", "pkg/root.py#Root.total", "unique_member") in _calls(root)
    catching_up = 0
    for step, (change, most, (source, target, how, present)) in enumerate(STEPS, 1):
        for rel, text in change.items():
            _write(root, rel, text, step)
        now = t0 + timedelta(minutes=2 * step)
        report = build(root, now=now, **KW)
        said = report.symbols_mode
        assert said.startswith("symbols: the name tables patched for "), (step, said)
        made = int(said.split("; ", 1)[1].split(" ", 1)[0])
        assert made <= most + catching_up, (step, said)
        catching_up = len(change) + 1  # (the next build catches the standby up on these files' rows too)
        assert ((source, target, how) in _calls(root)) is present, (step, sorted(_calls(root)))
        export, rows = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root)
        full_export, full_rows = _full_rows_beside(root, now + timedelta(minutes=1))
        assert export == full_export, f"step {step}: {_first_difference(orjson.loads(export), orjson.loads(full_export))}"
        assert rows == full_rows, f"step {step}: {[t for t in rows if rows[t] != full_rows[t]]}"


@pytest.mark.parametrize(("change", "why"), [
    ({"pkg/lib.rs": "pub fn f() -> i32 {\n    1\n}\n"}, "pkg/lib.rs roots a tree of imports"),
    ({"fresh/new.py": "def f():\n    return 1\n"}, "the directory of fresh/new.py appeared or emptied"),
    ({"web/package.json": '{"name": "web", "main": "app.js"}'}, "web/package.json is a manifest"),
])
def test_a_change_that_moves_a_whole_tree_resolves_every_file_and_says_why(tmp_path: Path, change: dict[str, str],
                                                                            why: str) -> None:
    """A crate root, a new directory, a manifest: every file is resolved, the report says
    why, and the result is still a full build's."""
    root = write_tree(tmp_path / "repo", TREE)
    for rel in TREE:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    for rel, text in change.items():
        _write(root, rel, text, 1)
    report = build(root, now=t0 + timedelta(minutes=2), **KW)
    assert report.symbols_mode.startswith("symbols: every file's rows made again"), report.symbols_mode
    assert report.symbols_mode.endswith(f"every file resolved: {why})"), report.symbols_mode
    assert _symbol_rows(root) == _full_rows_beside(root, t0 + timedelta(minutes=3))[1]


PACKAGES = {
    "app/__init__.py": "",
    "app/core/__init__.py": "",
    "app/core/engine.py": "def start():\n    return 1\n",
    "app/core/util.py": "def spin():\n    return 2\n",
    "lib/run.py": "from engine import start\n\n\ndef run():\n    return start()\n",
}


def test_a_packages_init_that_comes_or_goes_resolves_again_the_files_under_it_and_their_readers(
        tmp_path: Path) -> None:
    """A package's ``__init__.py`` removed, added back, renamed away: the module names of
    the files under it move (``app/core/engine.py`` is also ``engine`` while ``app/core`` is
    no package), so ``from engine import start`` resolves through the import or by the
    name alone. The tables are patched, never made whole: the files under the package and
    the file that reads their words are resolved again (at most 5 of the 16 files), and
    after each step the export, byte for byte, and every symbol table's rows equal a full
    build's."""
    tree = {**TREE, **PACKAGES}
    root = write_tree(tmp_path / "repo", tree)
    for rel in tree:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    call = ("lib/run.py#run", "app/core/engine.py#start")
    assert (*call, "unique") in _calls(root)  # (`engine` names no module yet: the one `start`)
    steps: list[tuple[dict[str, str | None], str]] = [
        ({"app/core/__init__.py": None}, "imported"),
        ({"app/core/__init__.py": ""}, "unique"),
        ({"app/core/__init__.py": None, "app/core/hooks.py": ""}, "imported"),
    ]
    for step, (change, how) in enumerate(steps, 1):
        for rel, text in change.items():
            _write(root, rel, text, step)
        now = t0 + timedelta(minutes=2 * step)
        said = build(root, now=now, **KW).symbols_mode
        assert said.startswith("symbols: the name tables patched for "), (step, said)
        assert int(said.split("; ", 1)[1].split(" ", 1)[0]) <= 5, (step, said)
        assert (*call, how) in _calls(root), (step, sorted(_calls(root)))
        export, rows = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root)
        full_export, full_rows = _full_rows_beside(root, now + timedelta(minutes=1))
        assert export == full_export, f"step {step}: {_first_difference(orjson.loads(export), orjson.loads(full_export))}"
        assert rows == full_rows, f"step {step}: {[t for t in rows if rows[t] != full_rows[t]]}"


def test_members_declared_outside_their_type_are_attached_again_beside_a_changed_file(tmp_path: Path) -> None:
    """Go methods declared in other files than their type (which type a method attaches to
    is read across its directory): a caller added, a method added (the type's file gains a
    `contains` edge), the type's file removed (its methods attach to nothing) and added
    again, a second type of the same name (two owners: none attached), and a Rust impl of a
    struct declared in another file: the tables are patched, never made whole, and after
    every step the symbol rows and names equal a full build's and the call resolves as
    the full build resolves it."""
    go_a, go_b = "package g\n\ntype T struct{}\n", "package g\n\nfunc (t T) M() int { return 1 }\n"
    tree = {**TREE, "go/a.go": go_a, "go/b.go": go_b,
            "rs/shape.rs": "pub struct Shape {}\n", "rs/area.rs": "impl Shape {\n    pub fn area(&self) -> i32 { 1 }\n}\n"}
    root = write_tree(tmp_path / "repo", tree)
    for rel in tree:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    use = "package g\n\nfunc Use() int { return T{}.M() + T{}.N() }\n"
    steps: list[dict[str, str | None]] = [
        {"go/c.go": use},
        {"go/d.go": "package g\n\nfunc (t T) N() int { return 2 }\n"},
        {"go/a.go": None},
        {"go/a.go": go_a},
        {"go/e.go": "package g\n\ntype T int\n"},
        {"go/e.go": None, "rs/more.rs": "impl Shape {\n    pub fn side(&self) -> i32 { 2 }\n}\n"},
    ]
    for step, change in enumerate(steps, 1):
        for rel, text in change.items():
            _write(root, rel, text, step)
        now = t0 + timedelta(minutes=2 * step)
        report = build(root, now=now, **KW)
        assert report.symbols_mode.startswith("symbols: the name tables patched for "), (step, report.symbols_mode)
        rows, calls = _symbol_rows(root), _calls(root)
        full_rows = _full_rows_beside(root, now + timedelta(minutes=1))[1]
        assert rows == full_rows, (step, [t for t in rows if rows[t] != full_rows[t]])
        if step == 2:
            assert ("go/c.go#Use", "go/d.go#T.N") in {(a, b) for a, b, _ in calls}, sorted(calls)


def _facts(path: str, language: str, symbols: tuple, details: tuple = (), namespaces: tuple = ()) -> FileFacts:
    return FileFacts(path, "a", "c", 1, 0, 0, "ok", language=language, symbols=symbols,
                     symbol_details=details or tuple((s[0], "", "") for s in symbols), namespaces=namespaces)


def test_change_tokens_name_the_file_its_directory_its_names_and_its_types_endings() -> None:
    f = _facts("pkg/net/http_session.py", "python",
               (("HttpSession", "class", 1, 5), ("send", "method", 2, 3)),
               (("HttpSession", "class HttpSession:", ""), ("HttpSession.send", "def send(self, x)", "")))
    assert change_tokens(f) == {
        "\0pkg/net/http_session.py", "http_session", "py",              # the file, its name's words
        "~httpsession", "~ttpsession", "~tpsession", "~psession", "~session", "~ession", "~ssion", "~sion"}
    java = _facts("src/a/Ledger.java", "java", (("Ledger", "class", 1, 2),), namespaces=("com.acme",))
    assert {"com", "acme", "Ledger", "java", "~ledger", "~edger", "~dger"} <= change_tokens(java)
    go = _facts("srv/api/handler.go", "go", (("Serve", "function", 1, 2),))
    assert {"\0srv/api/handler.go", "handler", "go", "api"} == change_tokens(go)  # a Go import names the directory
    index = _facts("web/util/index.ts", "typescript", ())
    assert change_tokens(index) == {"\0web/util/index.ts", "index", "ts", "util"}


def test_a_lookup_in_every_files_names_moves_only_where_its_outcome_moves() -> None:
    """``lookup_outcomes`` before and after a patch: a seventh method ``evalf`` (six are
    already more than ``MAX_CANDIDATES`` = 5: none linked) moves no ``*m:evalf`` reader; a
    second free function ``sqrt`` (one was linked as unique, two are ambiguous) moves the
    ``*c:sqrt`` readers, the files declaring it (``*v:``) and the ids named so (``*r:``);
    the new file's directory's ``*d:`` keys move; nothing else does."""
    from oracl.builder.pipeline.symbols import (
        MAX_CANDIDATES,
        lookup_keys,
        lookup_outcomes,
        moved_lookups,
        patch_table,
    )

    def method_file(i: int) -> FileFacts:
        return _facts(f"k/c{i}.py", "python", ((f"C{i}", "class", 1, 3), ("evalf", "method", 2, 3)),
                      ((f"C{i}", f"class C{i}:", ""), (f"C{i}.evalf", "def evalf(self)", "")))
    files = [method_file(i) for i in range(6)]
    files.append(_facts("m/a.py", "python", (("sqrt", "function", 1, 2),), (("sqrt", "def sqrt(x)", ""),)))
    assert MAX_CANDIDATES == 5
    g = symbol_graph(files, IndexView.build({f.path: f for f in files}))
    table, order = g.table, {f.path: i for i, f in enumerate(files)}
    assert table is not None
    copy = _facts("n/b.py", "python", (("C9", "class", 1, 3), ("evalf", "method", 2, 3), ("sqrt", "function", 4, 5)),
                  (("C9", "class C9:", ""), ("C9.evalf", "def evalf(self)", ""), ("sqrt", "def sqrt(x)", "")))
    order[copy.path] = len(order)
    keys = lookup_keys([declared(copy)])
    assert keys == ({("python", "C9"), ("python", "evalf"), ("python", "sqrt")}, {("n", "C9"), ("n", "sqrt")})
    before = lookup_outcomes(table.t, *keys)
    assert patch_table(table, [], [(copy.path, declared(copy))], order) == ""
    moved = moved_lookups(before, lookup_outcomes(table.t, *keys))
    assert moved == {"*c:sqrt", "*v:sqrt", "*r:sqrt", "*r:evalf", "*c:C9", "*t:C9", "*v:C9", "*r:C9",
                     "*d:n\0C9", "*d:n\0sqrt"}


def test_what_a_files_resolution_read_is_recorded_with_it() -> None:
    """A file's reads hold the names it looked up (found or not), the files whose entries
    or facts it read, and the words of the imports it read; a name looked up in the tables
    of every file's names (``nowhere``: not imported, not here; its directory's, then the
    free callables') also as such a lookup's token, one found through an import (``f``)
    not: no other file's ``f`` can move it."""
    a = FileFacts("m/a.py", "a", "c", 1, 0, 0, "ok", language="python",
                  symbols=(("f", "function", 1, 2),), symbol_details=(("f", "def f()", ""),))
    b = FileFacts("m/b.py", "b", "c", 1, 0, 0, "ok", language="python",
                  symbols=(("g", "function", 3, 4),), symbol_details=(("g", "def g()", ""),),
                  calls=(("f", 4), ("nowhere", 4)), imports=(("m.a", ("f",), 0),))
    g = symbol_graph([a, b], IndexView.build({"m/a.py": a, "m/b.py": b}))
    assert g.reads["m/b.py"] == {"\0m/a.py", "\0m/b.py", "m", "a", "f", "nowhere", "*d:m\0nowhere", "*c:nowhere"}
    assert g.reads["m/a.py"] == {"\0m/a.py"}


def test_the_reads_are_a_base_a_delta_and_a_recent_part_each_folded_past_its_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_sets``: a whole build writes a base; a later build writes the recent part
    again with the files it resolved (a removed file as None), the base and the delta
    untouched; past ``RECENT`` files the recent part is folded into the delta, and past
    ``COMPACT`` the delta into a new base. A damaged part: nothing read, and a build that
    is not whole records nothing."""
    from oracl.builder import read_sets
    from oracl.core.parts import store_of

    monkeypatch.setattr(read_sets, "RECENT", 2)
    monkeypatch.setattr(read_sets, "COMPACT", 3)
    store = store_of(tmp_path)

    def at(entry: dict | None) -> dict:
        return {read_sets.KEY: entry}

    first = read_sets.write(store, {}, {"a.py": {"f", "\0b.py"}, "b.py": {"g"}, "c.py": {"h"}}, whole=True)
    assert first is not None and first["delta"] is None and first["recent"] is None
    base = {"a.py": ("\0b.py", "f"), "b.py": ("g",), "c.py": ("h",)}
    second = read_sets.write(store, at(first), {"a.py": {"k"}}, gone=["c.py"])
    assert second is not None and second["base"] == first["base"] and second["delta"] is None
    assert read_sets.read(store, at(second)) == (base, {"a.py": ("k",), "c.py": None})
    third = read_sets.write(store, at(second), {"b.py": {"m"}})  # (3 recent files > 2: into the delta)
    assert third is not None and third["base"] == first["base"] and third["recent"] is None
    assert read_sets.read(store, at(third)) == (base, {"a.py": ("k",), "c.py": None, "b.py": ("m",)})
    assert read_sets.merged(*read_sets.read(store, at(third))) == {"a.py": ("k",), "b.py": ("m",)}
    fourth = read_sets.write(store, at(third), {"d.py": {"n"}})  # (the delta as it was, 1 recent file)
    assert fourth is not None and fourth["delta"] == third["delta"] and fourth["recent"]["bytes"] < third["delta"]["bytes"]
    assert read_sets.read(store, at(fourth))[1] == {"a.py": ("k",), "c.py": None, "b.py": ("m",), "d.py": ("n",)}
    fifth = read_sets.write(store, at(fourth), {"e.py": {"o"}})
    assert fifth is not None and fifth["delta"] == third["delta"]
    sixth = read_sets.write(store, at(fifth), {"a.py": {"q"}})  # (3 recent > 2; then 5 in the delta > 3: a new base)
    assert sixth is not None and sixth["delta"] is None and sixth["recent"] is None and sixth["base"] != first["base"]
    assert read_sets.read(store, at(sixth)) == (
        {"a.py": ("q",), "b.py": ("m",), "d.py": ("n",), "e.py": ("o",)}, {})
    for entry, key in ((fourth, "recent"), (third, "delta")):  # (the recent part first: fourth shares the delta)
        part = store.path(entry[key]["part"])
        part.chmod(0o644)
        part.write_bytes(b"x" * entry[key]["bytes"])  # damaged, its length kept
        assert read_sets.read(store, at(entry)) is None
        assert read_sets.write(store, at(entry), {"e.py": {"o"}}) is None
    assert read_sets.read(store, {}) is None


def test_moved_names_are_a_python_files_top_level_names_whose_entries_moved(tmp_path: Path) -> None:
    """``moved_names``: a function added or removed (made a variable) — the names alone; a class, a method, an import, another language — None (every
    name of both versions is then a change token)."""
    from oracl.builder.pipeline.discover import read_one
    from oracl.builder.pipeline.symbols import moved_names
    from oracl.core.config import Config

    def _py(path: str, text: str) -> FileFacts:
        write_tree(tmp_path, {path: text})
        return read_one(str(tmp_path), path, Config())[0]

    base = "import os\n\n\nclass Cart:\n    def add(self, x):\n        return x\n\n\ndef total(x):\n    return x\n"
    old = _py("pkg/m.py", base)
    assert moved_names(old, _py("pkg/m.py", base + "\n\ndef helper():\n    return 1\n")) == {"helper"}
    assert moved_names(old, _py("pkg/m.py", base.replace("def total(x):\n    return x\n",
                                                         "total = len\n"))) == {"total"}  # (no longer one)
    assert moved_names(old, _py("pkg/m.py", base + "\nLIMIT = 3\n")) == set()  # (a variable is no symbol)
    assert moved_names(old, _py("pkg/m.py", base.replace("\n\ndef total(x):\n    return x\n", "\n"))) == {"total"}
    assert moved_names(old, _py("pkg/m.py", "# a comment\n" + base)) == set()  # (lines only)
    assert moved_names(old, _py("pkg/m.py", base + "\n\nclass Box:\n    pass\n")) is None
    assert moved_names(old, _py("pkg/m.py", base.replace("        return x\n\n\ndef",
                                                         "        return x\n\n    def drop(self):\n"
                                                         "        return 0\n\n\ndef"))) is None
    assert moved_names(old, _py("pkg/m.py", "import sys\n" + base)) is None
    js = FileFacts("web/a.js", "a", "c", 1, 1, 1, "ok", language="javascript")
    assert moved_names(js, js) is None


def test_a_function_added_resolves_again_only_the_files_that_look_its_name_up(tmp_path: Path) -> None:
    """A new top-level function in a module five files import: only the module and the file
    that calls that name (unresolved until now) are resolved again — not every importer —
    and the export and every symbol table's rows equal a full build's."""
    tree = {"pkg/base.py": "def size():\n    return 2\n"}
    for i in range(5):
        tree[f"pkg/user{i}.py"] = f"from pkg.base import size\n\n\ndef use{i}():\n    return size() + {i}\n"
    tree["pkg/caller.py"] = "from pkg import base\n\n\ndef go():\n    return base.helper()\n"
    root = write_tree(tmp_path / "repo", tree)
    for rel in tree:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    _write(root, "pkg/base.py", tree["pkg/base.py"] + "\n\ndef helper():\n    return 5\n", 1)
    report = build(root, now=t0 + timedelta(minutes=2), **KW)
    assert report.symbols_mode.startswith("symbols: the name tables patched for 1 file that came, went or changed "
                                          "their interface; 2 files' rows made again"), report.symbols_mode
    assert ("pkg/caller.py#go", "pkg/base.py#helper", "imported") in _calls(root), sorted(_calls(root))
    export, rows = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root)
    full_export, full_rows = _full_rows_beside(root, t0 + timedelta(minutes=3))
    assert export == full_export, _first_difference(orjson.loads(export), orjson.loads(full_export))
    assert rows == full_rows


@pytest.mark.parametrize("copy_from", [400, 0])
def test_symbols_that_come_and_go_are_appended_to_the_name_delta_not_loaded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copy_from: int) -> None:
    """A function added, removed, then added again (with an edit of another file between,
    so that each database — the standby and the copy take turns — sees each change):
    SymbolName keeps the rows of the first build (never loaded again), each change appends
    the function's key to SymbolNameDelta with the patch's number (one more each time: alive,
    dropped, alive), and the lookup finds the function exactly while it is there; the names
    readers see equal a full build's after every step. The rows are created one by one
    (a few), or appended by one COPY (``copy_from`` rows and more: here every patch's)."""
    from oracl.bundle import database
    from oracl.read.callgraph import lookup
    from oracl.read.snapshot import Snapshot

    monkeypatch.setattr(database, "NAME_DELTA_COPY_MIN", copy_from)

    root = write_tree(tmp_path / "repo", TREE)
    for rel in TREE:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)

    def state() -> tuple[list[str], list[tuple[int, bool]], list[str]]:
        with Snapshot.open(root) as snap:
            names = sorted(orjson.dumps(list(r.values())).decode()
                           for r in snap.store.rows("MATCH (n:SymbolName) RETURN n.key, n.ids"))
            delta = sorted((r["s"], r["a"]) for r in snap.store.rows(
                "MATCH (d:SymbolNameDelta) WHERE d.key = 'gadget' AND d.id = 'lib/keep.py#gadget' "
                "RETURN d.seq AS s, d.alive AS a"))
            found = [r["id"] for r in lookup(snap, "gadget", fuzzy=False)[0]]
        return names, delta, found

    first, delta, found = state()
    assert delta == [] and found == []
    keep, readme = TREE["lib/keep.py"], TREE["README.md"]
    gadget = keep + "\n\ndef gadget():\n    return 7\n"
    steps = [("lib/keep.py", gadget, [(1, True)]), ("README.md", readme + "\nmore\n", [(1, True)]),
             ("lib/keep.py", keep, [(1, True), (2, False)]), ("README.md", readme, [(1, True), (2, False)]),
             ("lib/keep.py", gadget, [(1, True), (2, False), (3, True)])]
    for step, (rel, text, rows) in enumerate(steps, 1):
        _write(root, rel, text, step)
        build(root, now=t0 + timedelta(minutes=2 * step), **KW)
        names, delta, found = state()
        assert names == first, step  # (the standby and the copy alike: SymbolName as the full build made it)
        assert delta == rows, step
        assert found == (["lib/keep.py#gadget"] if rows[-1][1] else []), step
        assert _symbol_rows(root) == _full_rows_beside(root, t0 + timedelta(minutes=2 * step + 1))[1], step


def test_the_name_delta_over_symbol_names_by_hand() -> None:
    """Of each (key, id), the delta row with the largest number wins, whatever the order of
    the rows: an id dropped is left out of its key, an id made is put in in id order, a key
    that finds nothing more is gone, and one only the delta holds is there."""
    from oracl.bundle.tables import name_keys
    from oracl.read.callgraph import with_delta

    base = {"run": ["a.py#Foo.run", "b.py#run"], "foo": ["a.py#Foo"], "keep": ["k.py#keep"]}
    delta = [
        {"key": "run", "id": "c.py#run", "seq": 2, "alive": False},   # made at 1, dropped at 2
        {"key": "run", "id": "c.py#run", "seq": 1, "alive": True},
        {"key": "run", "id": "b.py#run", "seq": 1, "alive": False},   # dropped at 1, made again at 3
        {"key": "run", "id": "b.py#run", "seq": 3, "alive": True},
        {"key": "run", "id": "a.py#Foo.run", "seq": 2, "alive": False},
        {"key": "foo", "id": "a.py#Foo", "seq": 1, "alive": False},
        {"key": "new", "id": "z.py#New", "seq": 3, "alive": True},
        {"key": "new", "id": "m.py#New", "seq": 1, "alive": True},
    ]
    assert with_delta(base, delta) == {"run": ["b.py#run"], "keep": ["k.py#keep"], "new": ["m.py#New", "z.py#New"]}
    assert with_delta(base, []) == base
    assert name_keys("a", "a.py", "module") == ("a.py",)
    assert name_keys("Foo", "Foo", "class") == ("foo",)
    assert name_keys("run", "Foo.run", "method") == ("foo.run", "run")


def test_a_watchs_builds_keep_the_reads_recorded_for_the_next_cold_build(tmp_path: Path) -> None:
    """A long-lived builder's build (``Carry``, as ``oracl watch``) that resolves only its
    changed files records their reads over the latest's, as a cold build does: a cold build
    after it that defines a function patches the name tables and resolves only the readers
    (it resolved every file before: "the latest recorded no reads"), and its rows equal a
    full build's."""
    from oracl.builder.incremental import Carry

    root = write_tree(tmp_path / "repo", TREE)
    for rel in TREE:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    carry = Carry()
    build(root, now=t0 + timedelta(minutes=1), carry=carry, **KW)  # (the watch's first: its tables)
    _write(root, "pkg/net.py", TREE["pkg/net.py"] + "# saved\n", 1)
    watched = build(root, now=t0 + timedelta(minutes=2), carry=carry, **KW)
    assert watched.files_read == 1, watched.mode
    _write(root, "pkg/base.py", TREE["pkg/base.py"] + "\n\ndef helper():\n    return 5\n", 2)
    report = build(root, now=t0 + timedelta(minutes=3), **KW)
    assert report.symbols_mode.startswith("symbols: the name tables patched for 1 file"), report.symbols_mode
    assert _symbol_rows(root) == _full_rows_beside(root, t0 + timedelta(minutes=4))[1]


INIT_TREE = {
    "pkg/__init__.py": "VERSION = 1\n\n\ndef top():\n    return 1\n",
    "pkg/base.py": "def size():\n    return 2\n",
    "pkg/sub.py": "def inner():\n    return 3\n",
    "use/a.py": "import pkg\n\n\ndef go():\n    return pkg.helper()\n",
    "use/b.py": "from pkg import helper\n\n\ndef go():\n    return helper()\n",
    "use/c.py": "from pkg import *\n\n\ndef go():\n    return helper() + top()\n",
    "use/d.py": "from pkg import sub\n\n\ndef go():\n    return sub.inner()\n",
    "use/e.py": "from pkg.base import size\n\n\ndef go():\n    return size()\n",
    "use/f.py": "import pkg.sub\n\n\ndef go():\n    return pkg.sub.inner() + pkg.top()\n",
    **{f"other/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(6)},
}
INIT = INIT_TREE["pkg/__init__.py"]
BARE = '"""The package."""\n'
HELPER = "\n\ndef helper():\n    return 5\n"


@pytest.mark.parametrize(("first", "steps", "patched"), [
    # defined, shadowing a submodule, removed
    (INIT, [INIT + HELPER, INIT + HELPER + "\n\ndef sub():\n    return 0\n", INIT], True),
    (BARE, [BARE + HELPER, BARE + "\n\ndef top():\n    return 1\n", BARE], True),  # code comes and goes
    (INIT, [INIT + HELPER, "from pkg.base import size\n" + INIT + HELPER], False),  # then an import: every file
])
def test_an_init_that_stays_with_its_imports_resolves_only_the_files_it_can_move(
        tmp_path: Path, first: str, steps: list[str], patched: bool) -> None:
    """A package's ``__init__.py`` that stays with the same imports and gains, shadows or
    loses a function (or its first code, or all of it) is taken as any module: the name
    tables patched, the files that look its names up or read it resolved again (the
    importer, the ``from pkg import`` and the star import), not every file; an import moved
    in it still resolves every file. After each step the export and every symbol table's
    rows equal a full build's."""
    tree = {**INIT_TREE, "pkg/__init__.py": first}
    root = write_tree(tmp_path / "repo", tree)
    for rel in tree:
        _stamp(root / rel, 0)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    build(root, now=t0, **KW)
    for step, text in enumerate(steps, 1):
        _write(root, "pkg/__init__.py", text, step)
        now = t0 + timedelta(minutes=2 * step)
        said = build(root, now=now, **KW).symbols_mode
        if patched or step == 1:
            assert said.startswith("symbols: the name tables patched for 1 file"), (step, said)
            made = int(said.split("; ", 1)[1].split(" ", 1)[0])
            assert made < len(tree) - 6, (step, said)  # (none of other/: they look up no name of pkg)
        else:
            assert said.endswith("every file resolved: pkg/__init__.py roots a tree of imports)"), said
        if step == 1:
            assert {("use/a.py#go", "pkg/__init__.py#helper"), ("use/b.py#go", "pkg/__init__.py#helper"),
                    ("use/c.py#go", "pkg/__init__.py#helper")} <= {c[:2] for c in _calls(root)}, sorted(_calls(root))
        export, rows = orjson.dumps(_canonical(root), option=orjson.OPT_SORT_KEYS), _symbol_rows(root)
        full_export, full_rows = _full_rows_beside(root, now + timedelta(minutes=1))
        assert export == full_export, f"step {step}: {_first_difference(orjson.loads(export), orjson.loads(full_export))}"
        assert rows == full_rows, f"step {step}: {[t for t in rows if rows[t] != full_rows[t]]}"
