"""Retrieval 2 (issue 15): each defect found on flask and requests, as a test on a small
tree shaped like them (a real git history, a real build, real subprocesses), and the new
formulas (chunk BM25, co-change κ, the role multiplier) against hand-computed values."""

from __future__ import annotations

import doctest
import os
import subprocess
from pathlib import Path

import orjson
import pytest

from oracl import Memory
from oracl.builder.orchestrator import build
from oracl.builder.pipeline import history, priority
from oracl.builder.pipeline.history import parse_log
from oracl.core.errors import QueryError
from oracl.core.paths import role
from oracl.read.query import chunks, frames, run
from oracl.read.query.chunks import Chunk, best_spans, score_chunks

from .conftest import export_of, on_latest, run_cli, write_tree

SMALL = {"buffer_pool_bytes": 64 << 20, "workers": 1}

CORE = '''"""The application object."""
from app import signals


class App:
    """The central object."""

    def route(self, rule):
        """Register a view for a URL rule."""
        return rule

    def teardown_appcontext(self, f):
        """Register a function to call when the application context ends."""
        self.teardown_funcs.append(f)
        return f

    def handle_exception(self, e):
        """Handle an exception that was not caught."""
        signals.got_request_exception.send(self)
        raise e
'''
CLI = '''"""The command line: run the server, run callbacks in order."""


def run_command(callbacks):
    """Run the development server; run the callbacks in order."""
    for callback in callbacks:
        callback()


def run_order(callbacks):
    """The order the callbacks run in."""
    return sorted(callbacks)


def callbacks_run():
    """Run every registered callback."""
    return run_command([])
'''
COOKIES = '''"""Cookie handling."""


class MockRequest:
    """Wraps a request for the cookie jar."""

    def get_type(self):
        return "cookies"

    def get_host(self):
        return "localhost"


def extract_cookies_to_jar(jar, request, response):
    """Persist the cookies of a response in the jar, so that they are kept between requests.

    The jar is what a session keeps from one request to the next.
    """
    req = MockRequest()
    jar.extract(response, req)
    jar.save()
    return jar


def cookiejar_from_dict(values):
    """A new jar holding ``values``."""
    return dict(values)
'''
BIG = "".join(f"def helper_{i}(x):\n    '''Unrelated helper number {i}.'''\n    return x + {i}\n\n" for i in range(60)) + (
    "def rotate_signing_keys(keyring):\n    '''Rotate the signing keys of the keyring.'''\n"
    "    keyring.rotate()\n    return keyring\n")
FILES = {
    "pyproject.toml": '[project]\nname = "app"\nrequires-python = ">=3.9"\n'
                      'classifiers = ["Programming Language :: Python :: 3.9", "Supported versions: 3.9 to 3.13"]\n',
    "src/app/__init__.py": '"""The app package."""\nfrom app.core import App\nfrom app.auth import login\n',
    "src/app/core.py": CORE,
    "src/app/cli.py": CLI,
    "src/app/signals.py": '"""Signals."""\ngot_request_exception = object()\n',
    "src/app/cookies.py": COOKIES,
    "src/app/keys.py": BIG,
    "src/app/tiny.py": "# keys\nKEYS = 1\n",
    "src/app/render.py": 'def render_markdown(text):\n    """Render markdown text as HTML."""\n    return text\n',
    "src/app/json/provider.py": '"""JSON support."""\n\n\nclass DefaultJSONProvider:\n'
                                '    """A json provider with a custom encoder."""\n\n'
                                '    def dumps(self, obj):\n        """Serialise with the custom encoder."""\n'
                                '        return str(obj)\n',
    "src/app/auth.py": '"""Log a user in."""\n\n\ndef login(user):\n    """Check the login of a user."""\n'
                       '    return user\n',
    "examples/tutorial/flaskr/auth.py": '"""The tutorial\'s login view."""\nfrom app import App\n\n\n'
                                        'def login(user):\n    """Log the user in (auth login)."""\n    return user\n',
    "tests/test_blueprints.py": "from app.core import App\n\n\ndef test_blueprint_url_prefix():\n"
                                "    '''A blueprint url prefix is joined to the rule.'''\n"
                                "    assert App().route('/prefix/x')\n",
    "tests/test_core.py": "from app.core import App\n\n\ndef test_route():\n    assert App().route('/')\n",
    "tests/static/config.json": '{"provider": "json", "custom": true, "encoder": "json"}\n',
    ".devcontainer/devcontainer.json": '{"name": "json provider custom encoder"}\n',
    "docs/guide.md": "# Guide\nA json provider with a custom encoder is configured on the app.\n",
}


def _git(root: Path, *args: str, when: int = 1_700_000_000) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": f"@{when} +0000",
           "GIT_COMMITTER_DATE": f"@{when} +0000", "GIT_CONFIG_GLOBAL": "/dev/null"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def _commit(root: Path, files: dict[str, str], message: str, when: int) -> None:
    write_tree(root, files)
    _git(root, "add", "-A", when=when)
    _git(root, "commit", "-q", "-m", message, when=when)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("r2") / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    day = 86_400
    t0 = 1_700_000_000
    _commit(root, FILES, "initial import", t0)
    # cookies.py and core.py change together twice: a co-change pair
    _commit(root, {"src/app/cookies.py": COOKIES + "\n# 1\n", "src/app/core.py": CORE + "\n# 1\n"},
            "keep the session jar across redirects", t0 + day)
    _commit(root, {"src/app/cookies.py": COOKIES + "\n# 2\n", "src/app/core.py": CORE + "\n# 2\n"},
            "fix quirk with the jar", t0 + 2 * day)
    # a commit on another branch, after the built commit: never read
    _git(root, "checkout", "-q", "-b", "later", when=t0 + 3 * day)
    _commit(root, {"src/app/tiny.py": "# keys\nKEYS = 2\n"}, "zanzibar wombat message", t0 + 3 * day)
    _git(root, "checkout", "-q", "main", when=t0 + 3 * day)
    build(root, **SMALL)
    return root


def search(root: Path, text: str, **kw):  # type: ignore[no-untyped-def]
    return on_latest(run.search, root, text, log=False, **kw)


def paths(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [r["path"] for r in result.results]


# ---- 1. filters mean what they say ------------------------------------------------------

def test_plain_words_are_evidence_not_filters(repo: Path) -> None:
    r = search(repo, "json provider custom encoder")
    assert r.query.filters.empty and "src/app/json/provider.py" in paths(r)[:2]
    assert {"tests/static/config.json", ".devcontainer/devcontainer.json"} & set(paths(r))  # not filtered out either
    r = search(repo, "which python versions are supported")
    assert "pyproject.toml" in paths(r)  # "python" no longer hides it behind ext:py
    assert "src/app/render.py" in paths(search(repo, "markdown"))  # "markdown" is no longer ext:md


def test_explicit_filters_are_hard(repo: Path) -> None:
    r = search(repo, "domain:tests blueprint url prefix")
    assert paths(r) and all(x["domain"] == "tests" for x in r.results)  # no tests→ propagation out of the filter
    assert paths(r)[0] == "tests/test_blueprints.py"
    r = search(repo, "json ext:json")
    assert paths(r) and all(p.endswith(".json") for p in paths(r))


@pytest.mark.parametrize(("text", "listed"), [
    ("x domain:nosuch", "the values of domain: are core, devcontainer, docs, examples, root, tests"),
    ("x type:test", "the values of type: are"),
    ("x ext:rst", "the values of ext: are json, md, py, toml"),
])
def test_a_filter_value_that_matches_nothing_lists_the_values(repo: Path, text: str, listed: str) -> None:
    with pytest.raises(QueryError, match="matches no file of this build") as info:
        search(repo, text)
    assert listed in str(info.value)
    out = run_cli("query", text, "-r", str(repo))
    assert out.returncode == 8 and out.stdout == "" and len(out.stderr.strip().splitlines()) == 1


# ---- 2. exact names win; tracebacks are evidence -------------------------------------------

def test_an_exact_symbol_name_beats_common_words(repo: Path) -> None:
    r = search(repo, "teardown_appcontext callbacks run order")
    assert paths(r)[0] == "src/app/core.py" and paths(r).index("src/app/cli.py") > 0
    assert r.results[0]["defines"][0]["qualified"] == "App.teardown_appcontext"
    # every name in quoted code counts, a plain class name included (not the keyword)
    assert run.symbol_names("Optimize `new App()` for callbacks") == {"App": 1.0}
    assert paths(search(repo, "Optimize `new App()` for callbacks run order"))[0] == "src/app/core.py"


def test_a_path_named_in_the_query_anchors_its_file(repo: Path) -> None:
    r = search(repo, "the callbacks run order is wrong, see src/app/cookies.py")
    assert paths(r)[0] == "src/app/cookies.py" and "frame" in r.results[0]["matched_fields"]
    assert "frames" not in r.results[0]  # a path without a line: no frame lines


def test_a_traceback_from_another_machine_anchors_its_frames(repo: Path) -> None:
    report = ("Internal error on every request\nTraceback (most recent call last):\n"
              '  File "/home/ci/venv/lib/python3.12/site-packages/app/core.py", line 20, in handle_exception\n'
              "    raise e\nValueError: bad value\n")
    r = search(repo, report)
    top = r.results[0]
    assert top["path"] == "src/app/core.py"
    assert top["frames"] == [{"line": 20, "function": "handle_exception"}]
    assert top["spans"] == [{"start": 17, "end": 20, "label": "symbol App.handle_exception"}]
    with Memory.open(repo) as mem:
        pack = mem.context(report, budget_tokens=600)
    first = pack.items[0]
    assert (first.path, first.start, first.end) == ("src/app/core.py", 17, 20)
    assert "def handle_exception" in first.lines


def test_frames_parse_every_language_and_resolve_by_suffix() -> None:
    text = ('File "/x/site-packages/app/core.py", line 3, in f\n'
            "    at Layer.handle (/srv/node_modules/express/lib/router/layer.js:95:5)\n"
            "\tat com.google.gson.Gson.fromJson(Gson.java:12)\n"
            "\t/home/u/go/cobra/command.go:940 +0x1d\n"
            "thread 'main' panicked at crates/core/main.rs:12:5\n")
    got = [(f.path, f.line, f.function) for f in frames.parse_frames(text)]
    assert got == [("/x/site-packages/app/core.py", 3, "f"),
                   ("/srv/node_modules/express/lib/router/layer.js", 95, "Layer.handle"),
                   ("Gson.java", 12, "com.google.gson.Gson.fromJson"),
                   ("/home/u/go/cobra/command.go", 940, ""),
                   ("crates/core/main.rs", 12, "")]
    by_name = {"core.py": ["src/app/core.py", "tests/core.py"], "layer.js": ["lib/router/layer.js"],
               "Gson.java": ["gson/src/main/java/com/google/gson/Gson.java"], "main.rs": ["crates/core/main.rs"],
               "command.go": ["command.go"]}
    assert frames.resolve("/x/site-packages/app/core.py", by_name) == "src/app/core.py"
    assert frames.resolve("/srv/node_modules/express/lib/router/layer.js", by_name) == "lib/router/layer.js"
    gson = frames.parse_frames("at com.google.gson.Gson.fromJson(Gson.java:12)")[0]
    assert frames.resolve(frames.java_path(gson), by_name) == "gson/src/main/java/com/google/gson/Gson.java"
    assert frames.resolve("other/thing.py", by_name) is None
    assert frames.resolve("/x/core.py", {"core.py": ["a/core.py", "b/core.py"]}) is None  # ambiguous: none
    # a web address is no frame, however long its path (xarray's issue template links a notebook)
    linked = ("[Binder](https://mybinder.org/v2/gh/pydata/xarray/main?urlpath=lab/tree/doc/examples/blank_template.ipynb)"
              " see http://example.org/src/app/core.py:12 and src/app/core.py")
    assert [(f.path, f.line) for f in frames.parse_frames(linked)] == [("src/app/core.py", 0)]


# ---- 3. finer evidence: chunk BM25 --------------------------------------------------------

def test_chunk_bm25_by_hand() -> None:
    # a.py: one line "cookie cookie" (one window); b.py: three lines without the term.
    # N = 2 chunks, n = 1 → idf = ln(1 + 1.5/1.5) = ln 2; avg |c| = 2 lines;
    # a: |c| = 1 → norm = 1.2·(0.25 + 0.75·1/2) = 0.75; tf 2 → ln2 · 2·2.2 / 2.75 = 1.6·ln2
    got = score_chunks([("cooki", 1.0)], {"a.py": "cookie cookie\n", "b.py": "jar\nx\nx\n"}, {})
    assert list(got) == ["a.py"]
    assert got["a.py"][0] == Chunk(1, 1, "lines", pytest.approx(1.6 * 0.6931471805599453))
    # ω scales it; a camelCase hump and a snake_case part both match the stem
    got = score_chunks([("cooki", 2.0)], {"a.py": "getCookieJar\nextract_cookies\n"}, {})
    # one chunk: N = n = 1 → idf = ln(1 + 0.5/1.5) = ln(4/3); |c| = avg → norm 1.2; tf 2
    assert got["a.py"][0].score == pytest.approx(2.0 * 0.28768207245178085 * 2 * 2.2 / 3.2)


def test_a_long_file_with_one_relevant_function_beats_a_short_file_with_a_common_word(repo: Path) -> None:
    r = search(repo, "rotate the signing keys of the keyring")
    assert paths(r)[0] == "src/app/keys.py"
    assert r.results[0]["spans"][0]["label"] == "symbol rotate_signing_keys"
    assert paths(r).index("src/app/tiny.py") > 0 if "src/app/tiny.py" in paths(r) else True


def test_best_spans_merge_and_order() -> None:
    a, b, c = Chunk(40, 50, "symbol g", 1.5), Chunk(10, 20, "symbol f", 2.0), Chunk(60, 70, "lines", 0.5)
    assert [(x.start, x.end, x.label) for x in best_spans([b, a, c])] == [(10, 20, "symbol f"), (40, 50, "symbol g")]
    assert best_spans([b, c]) == [b]  # 0.5 < 0.6 × 2: one span only
    assert chunks.merge_spans([(35, 35), (38, 38), (37, 37)]) == [(35, 38)]


# ---- 4. history as evidence ---------------------------------------------------------------

def test_cochange_kappa_by_hand() -> None:
    # c1 at HEAD's time (day 3,600: a multiple of REFERENCE_DAYS, 30) changes a, b (n = 2:
    # weight 1); c2 a year earlier changes a, b, c (recency 0.5, n = 3: weight 0.5 / 2 =
    # 0.25). s(a, b) = 1.25 → κ = 1.25 / 2.25; (a, c) and (b, c) share one commit only
    # (< MIN_SUPPORT): no edge.
    day, year = 86_400, 365 * 86_400
    log = (f"\x1ec1\x1f{3600 * day}\x1fkeep jar\x1f\n\na.py\nb.py\n"
           f"\x1ec2\x1f{3600 * day - year}\x1fadd jar\x1f\n\na.py\nb.py\nc.py\n").encode()
    h = parse_log(log, {"a.py", "b.py", "c.py"})
    assert [(e.source, e.target, e.relation, e.confidence) for e in h.edges] == [
        ("a.py", "b.py", "co_change", round(1.25 / 2.25, 6)), ("b.py", "a.py", "co_change", round(1.25 / 2.25, 6))]
    assert h.messages == {"a.py": "keep jar · add jar", "b.py": "keep jar · add jar", "c.py": "add jar"}
    # HEAD 10 days into its 30: ages count from day 3,600, so c1's is −10 days (recency
    # 2^(10/365)); c0, dated after HEAD, counts as HEAD's time; c2's stays a year
    log = (f"\x1ec1\x1f{3610 * day}\x1fkeep jar\x1f\n\na.py\nb.py\n"
           f"\x1ec0\x1f{3700 * day}\x1fskewed\x1f\n\na.py\nb.py\n"
           f"\x1ec2\x1f{3600 * day - year}\x1fadd jar\x1f\n\na.py\nb.py\nc.py\n").encode()
    s = 2 * 2 ** (10 / 365) + 0.25
    assert [e.confidence for e in parse_log(log, {"a.py", "b.py", "c.py"}).edges] == [round(s / (s + 1), 6)] * 2
    # a sweep (more than MAX_COMMIT_FILES files) counts for nothing
    many = "\n".join(f"f{i}.py" for i in range(history.MAX_COMMIT_FILES + 1))
    sweep = parse_log(f"\x1es\x1f1\x1freformat\x1f\n\n{many}\n".encode() * 3, {f"f{i}.py" for i in range(40)})
    assert sweep.edges == [] and sweep.messages == {}


def test_history_is_in_the_build_and_ends_at_head(repo: Path) -> None:
    vault = repo / ".oracl"
    doc = orjson.loads(export_of(vault.parent))
    assert doc["schema"]["history"]["commits"] == 3
    ids = {n["id"]: n.get("path") for n in doc["nodes"]}
    co = sorted((ids[e["source"]], ids[e["target"]], e["metadata"]["confidence"]) for e in doc["edges"]
                if e["relation"] == "co_change")
    # the pair changed together in two commits one day apart, and in the initial import two
    # days before HEAD with every other file (its share: / (n − 1)); ages count from HEAD's
    # time (t0 + 2 days = 1,700,172,800 s) rounded down to a multiple of 30 days
    # (1,697,760,000 s: 27.925926 days before HEAD), so HEAD's commit is −27.925926 days old
    before = 2_412_800 / 86_400
    s = 2 ** (before / 365) + 2 ** ((before - 1) / 365) + 2 ** ((before - 2) / 365) / (len(FILES) - 1)
    assert co == [("src/app/cookies.py", "src/app/core.py", round(s / (s + 1), 6)),
                  ("src/app/core.py", "src/app/cookies.py", round(s / (s + 1), 6))]
    messages = {n["path"]: n["history"] for n in doc["nodes"] if n["kind"] == "artifact"}
    assert messages["src/app/cookies.py"] == "fix quirk with the jar · keep the session jar across redirects · initial import"
    assert not any("zanzibar" in m for m in messages.values())  # a later commit on another branch
    out = run_cli("verify", str(repo))
    assert out.returncode == 0, out.stderr


def test_commit_messages_and_cochange_rank_files(repo: Path) -> None:
    r = search(repo, "quirk")  # a word only the history has
    assert paths(r)[:2] == ["src/app/cookies.py", "src/app/core.py"] or paths(r)[:2] == [
        "src/app/core.py", "src/app/cookies.py"]
    assert "history" in r.results[0]["matched_fields"]
    r = search(repo, "persist cookies jar")
    assert paths(r)[0] == "src/app/cookies.py" and "src/app/core.py" in paths(r)
    core = next(x for x in r.results if x["path"] == "src/app/core.py")
    assert "co_change" in core["matched_fields"]


def test_the_kept_git_log_is_read_again_only_for_new_commits(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "h"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    t0, day = 1_700_000_000, 86_400
    _commit(root, {"a.py": "A = 1\n", "b.py": "B = 1\n", "c.md": "# c\n"}, "initial import", t0)
    _commit(root, {"a.py": "A = 2\n", "b.py": "B = 2\n"}, "move both", t0 + day)
    paths = {"a.py", "b.py", "c.md"}
    calls: list[tuple[str, ...]] = []
    real_git = history.git

    def counted(where: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        return real_git(where, *args, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(history, "git", counted)
    first = history.read_history(root, paths)
    assert first.read == "whole" and first.commits == 2 and first.log is not None
    # the same commit: the kept log is parsed again, git log is not run
    calls.clear()
    same = history.read_history(root, paths, kept=first.log)
    assert same.read == "kept" and not any(a[0] in ("log", "rev-list") for a in calls)
    assert (same.edges, same.messages, same.commits, same.head) == (first.edges, first.messages, 2, first.head)
    # three new commits (one a day before the newest kept: the walk's order, not the kept
    # log's, decides), and a file gone from the build: only those commits are read by name
    _commit(root, {"a.py": "A = 3\n", "b.py": "B = 3\n"}, "again both", t0 + 2 * day)
    _commit(root, {"a.py": "A = 4\n", "c.md": "# c 4\n"}, "a and c", t0 + 3 * day)
    _commit(root, {"c.md": "# c 5\n", "b.py": "B = 5\n"}, "c and b, dated back", t0 + day // 2)
    calls.clear()
    again = history.read_history(root, paths - {"c.md"}, kept=first.log)
    whole = history.read_history(root, paths - {"c.md"})
    assert again.read == "new commits 3" and whole.read == "whole"
    # (HEAD and the shallow boundary, then the walk and the three commits; a whole read after)
    assert [a[0] for a in calls] == ["rev-parse", "rev-parse", "rev-list", "log", "rev-parse", "rev-parse", "log"]
    assert calls[3][-3:] == tuple(_git(root, "rev-list", "--no-merges", "HEAD").split()[:3])
    assert again.log is not None and whole.log is not None and again.log == whole.log
    assert (again.edges, again.messages, again.commits, again.head) == \
        (whole.edges, whole.messages, 5, _git(root, "rev-parse", "HEAD").strip())
    assert [(e.source, e.target) for e in again.edges] == [("a.py", "b.py"), ("b.py", "a.py")]
    # a shallow boundary is part of what the log is a function of
    (root / ".git" / "shallow").write_text(_git(root, "rev-parse", "HEAD~1"))
    assert history.read_history(root, paths, kept=whole.log).read != "kept"


def test_a_build_keeps_its_git_log_and_the_next_reads_no_history_again(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from oracl.builder import orchestrator
    from oracl.bundle.provenance import prune_parts
    from oracl.core.vault import Vault

    root = tmp_path / "b"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _commit(root, {"a.py": "def jar():\n    return 1\n", "b.py": "def box():\n    return 2\n"}, "start", 1_700_000_000)
    _commit(root, {"a.py": "def jar():\n    return 3\n", "b.py": "def box():\n    return 4\n"}, "quirk fix",
            1_700_086_400)
    build(root, **SMALL)
    vault = Vault(root)
    stat = orjson.loads((vault.bundle(vault.read_latest()["bundle"]) / "stat.bin").read_bytes())
    entry = stat[orchestrator.GIT_LOG]
    assert entry[2].startswith(_git(root, "rev-parse", "HEAD").strip() + ":")
    read: list[str] = []
    real = orchestrator.read_history

    def noted(*a: object, **kw: object) -> history.History:
        h = real(*a, **kw)  # type: ignore[arg-type]
        read.append(h.read)
        return h
    monkeypatch.setattr(orchestrator, "read_history", noted)
    parsed: list[int] = []  # (the logs parsed, by their length)
    real_parse = history.parse_log

    def parse(out: bytes, files: object) -> history.History:
        parsed.append(len(out))
        return real_parse(out, files)  # type: ignore[arg-type]
    monkeypatch.setattr(history, "parse_log", parse)
    monkeypatch.setattr(orchestrator, "parse_log", parse)
    (root / "a.py").write_text("def jar():\n    return 5\n")  # an edit, no commit
    prune_parts(vault)  # (the parts are named by stat.bin: kept)
    build(root, **SMALL)
    # the same log and the same files: what the latest parsed it into is read back, not parsed
    assert read == ["kept"] and parsed == []
    stat = orjson.loads((vault.bundle(vault.read_latest()["bundle"]) / "stat.bin").read_bytes())
    assert stat[orchestrator.GIT_LOG] == entry
    assert paths(search(root, "quirk"))[:2] in (["a.py", "b.py"], ["b.py", "a.py"])
    # a file no commit holds, added: the update's rows hold no history, the database's still
    # do, and so does its full-text index (an update whose rows held none dropped it: the
    # answers lost the commit subjects until a build whose rows held some made it again)
    for body in ("8", "9"):  # (twice: the second update's standby catches up on nothing else)
        (root / "c.py").write_text(f"def crate():\n    return {body}\n")
        build(root, **SMALL)
    assert read == ["kept", "kept", "kept"]
    assert parsed == [entry[1]]  # (c.py came: the log parsed with this build's files, once)
    found = search(root, "quirk")
    assert paths(found)[:2] in (["a.py", "b.py"], ["b.py", "a.py"]) and "history" in found.results[0]["matched_fields"]
    _commit(root, {"b.py": "def box():\n    return 6\n"}, "another", 1_700_172_800)
    build(root, **SMALL)
    assert read == ["kept", "kept", "kept", "new commits 1"]
    # the new log parsed; the latest's history (what moved is found against) read back
    assert len(parsed) == 2 and parsed[1] > entry[1]
    # a part with a flipped byte is never parsed: the whole log is read again
    from oracl.core.parts import store_of
    stat = orjson.loads((vault.bundle(vault.read_latest()["bundle"]) / "stat.bin").read_bytes())
    part = store_of(vault.dir).path(stat[orchestrator.GIT_LOG][0])
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 1
    part.write_bytes(bytes(data))
    (root / "a.py").write_text("def jar():\n    return 7\n")
    build(root, **SMALL)
    assert read == ["kept", "kept", "kept", "new commits 1", "whole"]


def test_a_tree_without_git_builds_and_answers(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "plain", {"a.py": "def cookie_jar():\n    return 1\n"})
    build(root, **SMALL)
    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())
    header = orjson.loads((root / ".oracl" / "mirror" / latest["build_id"] / "header.json").read_bytes())
    assert header["history"]["commits"] == 0 and header["history"]["note"]
    assert paths(search(root, "cookie jar")) == ["a.py"]


# ---- 6. context packs quote the right lines ----------------------------------------------

def test_context_pack_quotes_the_function_that_matches(repo: Path) -> None:
    with Memory.open(repo) as mem:
        pack = mem.context("where are cookies persisted between requests", budget_tokens=4000)
    item = next(i for i in pack.items if i.path == "src/app/cookies.py")
    assert "def extract_cookies_to_jar" in item.lines and "get_type" not in item.lines
    assert item.why.endswith("symbol extract_cookies_to_jar")


def test_a_definition_is_not_cut_in_half_when_a_smaller_one_fits(repo: Path) -> None:
    with Memory.open(repo) as mem:
        big = mem.context("where are cookies persisted between requests", budget_tokens=4000)
        first = big.items[0]
        # room for the first item and little more: a second definition that does not fit
        # whole is left out rather than cut
        budget = big.used_tokens - sum(i.tokens for i in big.items[1:]) + 25
        small = mem.context("where are cookies persisted between requests", budget_tokens=budget)
    assert small.items[0].lines == first.lines and small.truncated
    for i in small.items[1:]:
        whole = next(x for x in big.items if x.path == i.path and x.start == i.start)
        assert i.lines == whole.lines or not i.why.rsplit("; ", 1)[-1].startswith("symbol")


# ---- 7. priority that matches intuition ---------------------------------------------------

def test_role_and_final_priority_by_hand() -> None:
    assert [role(p) for p in ("examples/tutorial/flaskr/auth.py", "src/app/core.py", "tests/fixtures/a.json",
                                       "vendor/lib/x.go", "docs/samples/a.py")] == [
        "example", "product", "fixture", "vendored", "example"]
    # m_role · (P0 + α·max(δ, 0)) + α·min(δ, 0)
    assert priority.final_priority(0.4, 0.35, 2.0, "example") == pytest.approx(0.5 * (0.4 + 0.7))
    assert priority.final_priority(0.4, 0.35, -1.0, "example") == pytest.approx(0.5 * 0.4 - 0.35)
    assert priority.final_priority(0.4, 0.35, 2.0) == pytest.approx(1.1)
    assert not priority.security_hint("src/flask/signals.py") and priority.security_hint("src/signing.py")
    assert not priority.security_hint("AUTHORS.md") and priority.security_hint("app/auth.py")


def test_examples_rank_below_the_product_unless_asked(repo: Path) -> None:
    rows = {r["path"]: r["priority"] for r in on_latest(lambda s: s.named("artifact_rows", {
        "paths": ["examples/tutorial/flaskr/auth.py", "src/app/auth.py"]}), repo)}
    # both are linked once and named "auth"; the example keeps half of what it earns
    assert rows["examples/tutorial/flaskr/auth.py"] < rows["src/app/auth.py"]
    assert paths(search(repo, "auth login"))[0] == "src/app/auth.py"
    assert paths(search(repo, "tutorial auth login"))[0] == "examples/tutorial/flaskr/auth.py"


def test_module_examples_hold() -> None:
    for module in (chunks, frames, history):
        assert doctest.testmod(module).failed == 0


def test_a_build_of_an_older_export_schema_asks_for_a_build(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "old", {"a.py": "def f():\n    return 1\n"})
    build(root, **SMALL)
    latest = orjson.loads((root / ".oracl" / "mirror" / "LATEST.json").read_bytes())
    header = root / ".oracl" / "mirror" / latest["build_id"] / "header.json"
    doc = orjson.loads(header.read_bytes())
    header.write_bytes(orjson.dumps({**doc, "version": "wtls-1.1"}))
    out = run_cli("query", "f", "-r", str(root))
    assert out.returncode == 4 and out.stderr.strip().splitlines() == [
        f"Error: the latest build of {root} was made by an older ORACL (export schema wtls-1.1, this one reads "
        f"wtls-1.5): run `oracl build {root}`"]


# ---- issue 31: a pasted bug report ----------------------------------------------------------

REPORT_TREE = {
    "src/linkcheck.py": ('"""Check the links of a built site."""\n\n\ndef check_anchor(response, anchor):\n'
                         '    """Whether the anchor is in the page."""\n    return anchor in response\n'),
    "src/other.py": '"""Other things."""\n\n\ndef unrelated():\n    return 1\n',
    ".github/ISSUE_TEMPLATE/bug_report.yml": ("name: Bug report\ndescription: linkcheck anchor broken report\n"
                                              "body: describe the bug, how to reproduce, expected behavior, "
                                              "linkcheck anchor anchor anchor\n"),
    "setup.cfg": "[linkcheck]\nanchor = check anchor linkcheck\n",
    "static/jquery-3.5.1.js": "function check_anchor(a) { return linkcheck(a, 'anchor anchor anchor'); }\n",
    "docs/_build/html/linkcheck.html": "<p>linkcheck anchor anchor check_anchor</p>\n",
}
REPORT = ("linkcheck reports a broken anchor\n\n**Describe the bug**\nThe linkcheck builder says the anchor is "
          "not found although `check_anchor` should find it.\n\n**To Reproduce**\n```\n$ make linkcheck\n"
          "$ open docs/_build/html/linkcheck.html\n```\nSee https://example.org/docs/_build/html/setup.cfg and "
          "https://user-images.githubusercontent.com/20618587/83668496-566d3680.png\n\n**Environment**\n"
          "- OS: macOS 10.15.5\n- Python 3.8.2\n- the docs and the tests say nothing\n")


def test_a_pasted_report_ranks_the_code_above_metadata_copies_and_its_own_links(tmp_path: Path) -> None:
    """A long query (a bug report) asks about the code: the issue template and setup.cfg
    (neither code nor prose) rank below it, the vendored ``jquery-3.5.1.js`` that also
    defines ``check_anchor`` is not anchored, the reporter's ``docs/_build/…`` path and the
    web addresses are not frames, and its version numbers are not entities."""
    root = write_tree(tmp_path / "r", REPORT_TREE)
    build(root, **SMALL)
    assert role("static/jquery-3.5.1.js") == "vendored" and role("docs/_build/html/linkcheck.html") == "generated"
    res = search(root, REPORT, limit=10)
    got = paths(res)
    assert got[0] == "src/linkcheck.py"
    below = ("setup.cfg", ".github/ISSUE_TEMPLATE/bug_report.yml", "static/jquery-3.5.1.js",
             "docs/_build/html/linkcheck.html")
    assert all(got.index(p) > 0 for p in below if p in got)
    assert not any("frame" in r["matched_fields"] for r in res.results)  # no frame from a link or the reporter's path
    score = {r["path"]: r["score"] for r in res.results}
    # jquery defines check_anchor too, but gains no anchor: its score is its own matches × 0.5 × 0.4
    assert score["static/jquery-3.5.1.js"] < 0.1 * score["src/linkcheck.py"]
    weights = {t.text: t.weight_class for t in res.query.terms}
    assert weights["10.15.5"] == "stop" and weights["3.8.2"] == "stop" and "20618587" not in weights
    assert not any("githubusercontent" in t for t in weights)


MESSAGE_TREE = {
    # the code that writes the message: nothing else in it matches the report's words
    "src/units/core.py": ('"""Units."""\n\n\ndef parse_unit(s):\n    """A unit from its name."""\n'
                          '    if s is None:\n        raise ValueError("None is not a valid Unit")\n    return s\n'),
    # a longer message that starts the same way, and a comment: neither wrote it
    "src/units/quantity.py": ('"""Quantities: a value with a unit; quantity value unit quantity value."""\n\n\n'
                              'def quantity(value, unit):\n    """A quantity of a value in a unit, a valid unit."""\n'
                              '    if unit is None:\n        raise TypeError("None is not a valid Unit for a quantity")\n'
                              '    # None is not a valid Unit\n    return value, unit\n'),
    # the message in a test and in a translation catalogue: the product's code comes first
    "tests/test_core.py": ('from units.core import parse_unit\n\n\ndef test_none():\n'
                           '    assert str(err("None is not a valid Unit"))\n'),
    "locale/de.po": 'msgid "None is not a valid Unit"\nmsgstr "None ist keine gültige Einheit"\n',
}
MESSAGE_REPORT = ("Quantity of a value with no unit fails\n\nCreating a quantity value without a unit:\n```\n"
                  ">>> quantity(1, None)\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
                  "ValueError: None is not a valid Unit\n```\nI expected a quantity value.\n")


def test_a_quoted_error_message_points_at_the_code_that_writes_it(tmp_path: Path) -> None:
    """Issue 31: the words of a pasted ``ValueError: …`` are a string literal of the code
    that raised it. The file whose literal ends where the message ends is first (above
    the file every other word of the report matches), with the lines around the raise;
    the longer message, the comment, the test and the catalogue are not anchored."""
    from oracl.read.query import messages

    assert doctest.testmod(messages).failed == 0
    assert messages.message_fragments(MESSAGE_REPORT) == ["None is not a valid Unit"]
    root = write_tree(tmp_path / "m", MESSAGE_TREE)
    build(root, **SMALL)
    res = search(root, MESSAGE_REPORT, limit=10)
    top = res.results[0]
    assert top["path"] == "src/units/core.py" and "message" in top["matched_fields"]
    assert top["spans"] == [{"start": 4, "end": 8, "label": "message"}]  # the function holding the raise
    anchored = [r["path"] for r in res.results if "message" in r["matched_fields"]]
    assert anchored == ["src/units/core.py"]
    # without the message the other file wins: the anchor is what put core.py first
    plain = search(root, MESSAGE_REPORT.replace("ValueError: None is not a valid Unit\n", ""), limit=10)
    assert paths(plain)[0] == "src/units/quantity.py"


def test_message_fragments_cut_the_values_out_and_skip_the_interpreters_words() -> None:
    from oracl.read.query.messages import literal_lines, message_fragments

    text = ("/tmp/x/index.rst:3: WARNING: toctree contains reference to nonexisting document 'genindex'\n"
            "E   astropy.io.fits.verify.VerifyWarning: Card is too long, comment will be truncated.\n"
            "AttributeError: 'Foo' object has no attribute 'bar'\n"
            "IndexError: tuple index out of range\n"
            "WARNING: more than one target found for cross-reference 'A': mod.A, mod.submod.A\n"
            "KeyError: 'x'\nsee https://example.org/ValueError: a b c d e f\n")
    assert message_fragments(text) == ["toctree contains reference to nonexisting document",
                                       "Card is too long, comment will be truncated",
                                       "more than one target found for cross-reference"]
    code = "log(__('toctree contains reference to nonexisting document %r'), doc)\n"
    assert literal_lines("toctree contains reference to nonexisting document", code) == [(1, False)]
    assert literal_lines("comment will be truncated", 'warn("Card is too long, comment will be truncated.")') == [
        (1, True)]


API_TREE = {
    "pkg/__init__.py": "from pkg.core.computation import where\n",
    "pkg/core/computation.py": ('"""Functions over arrays."""\n\n\ndef where(cond, x, y, keep_attrs=None):\n'
                                '    """Choose from x or y."""\n    return x if cond else y\n'),
    "pkg/core/common.py": ('"""Shared behaviour: attributes, where, coordinate attributes kept."""\n\n\n'
                           'class DataWithCoords:\n    def where(self, cond, other=None):\n'
                           '        """Keep coordinate attributes where cond holds; attributes."""\n        return self\n'),
    "other/where.py": "def where(a):\n    return a\n",
}
API_REPORT = ("keep_attrs overwrites coordinate attributes\n\nCoordinate attributes are lost:\n```python\n"
              "import pkg as p\nds = p.open()\np.where(True, ds.air, ds.air, keep_attrs=True).time.attrs\n```\n")


def test_a_name_the_reports_code_reaches_through_an_import_anchors_its_top_level_definition(tmp_path: Path) -> None:
    """Issue 31: ``import pkg as p`` … ``p.where(…)`` names the top-level ``where`` of
    the package ``pkg`` (not the method ``DataWithCoords.where``, nor a ``where`` outside
    the package); it anchors with ``API_ANCHOR`` × the best score."""
    assert run.api_names(API_REPORT) == {"open": "pkg", "where": "pkg"}
    root = write_tree(tmp_path / "a", API_TREE)
    build(root, **SMALL)
    res = search(root, API_REPORT, limit=10, explain=True)
    assert paths(res)[0] == "pkg/core/computation.py"
    first = res.explain[0]
    assert [(m["term"], m["field"]) for m in first["matches"] if m["field"] == "definition"][-1] == ("where",
                                                                                                     "definition")
    assert res.results[0]["defines"] == [{"name": "where", "qualified": "where", "start": 4, "end": 6,
                                          "weight": run.API_ANCHOR}]
    anchored = [r["path"] for r in res.results if "defines" in r]
    assert anchored == ["pkg/core/computation.py"]
