"""The command line as a developer lives in it: it finds its repository, fits the terminal,
pipes cleanly, keeps its vault to itself, scripts well, and its help and reference agree.

Every test runs the real ``oracl`` in a subprocess: in a pipe (``run_cli``) or on a real
pseudo-terminal of a fixed width (``run_tty``)."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
from pathlib import Path

import orjson
import pytest

from oracl.builder.orchestrator import build
from oracl.core import locate
from oracl.face import cli, render
from oracl.face.cli import reference
from oracl.read import graph

from .conftest import ORACL, SAMPLE, git, run_cli, run_tty, write_tree

ROOT = Path(__file__).resolve().parent.parent
FILLER = "".join(f"# line {i}\n" for i in range(1, 35))
LONG = "src/platform/integrations/webhooks/very/deep/nesting/for/the/widest/paths/signature_fallback.py"
WIDE = {
    **SAMPLE,
    "src/platform/webhooks/signature_verifier.py": (
        '"""Verify the signature of a webhook payload."""\n'
        "import hmac\n\n"
        "def verify_signature(payload, signature, secret):\n"
        '    """Compare the signature of the payload in constant time."""\n'
        "    return hmac.compare_digest(signature, secret)\n"),
    "src/platform/webhooks/replay_guard.py": (
        "from src.platform.webhooks.signature_verifier import verify_signature\n\n"
        "def guard(payload, signature, secret):\n    return verify_signature(payload, signature, secret)\n"),
    "docs/runbooks/rotating_signing_secrets.md": (
        "# Rotating webhook signing secrets\nThe signature verifier reads the secret; see "
        "[the verifier](../../src/platform/webhooks/signature_verifier.py).\n"),
    LONG: '"""A signature verifier fallback for old webhook payloads."""\ndef fallback_signature():\n    return 0\n',
    # three import lines of one module, out of order in the source: one edge, merged fragments
    "pkg/many.py": FILLER + "from pkg import util\nx = 1\nfrom pkg.util import helper\nimport pkg.util\n",
}


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("wide") / "repo", WIDE)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    return root


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("Note: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


# ---- 1. one way to name the repository ----------------------------------------------------

def test_the_vault_is_found_by_walking_up_and_said(wide: Path) -> None:
    proc = run_cli("query", "signature", "verifier", cwd=wide / "src" / "platform")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == f"Note: using the build of {wide} (the nearest above the current folder)"
    assert proc.stdout.splitlines()[0].split("\t")[0] == "src/platform/webhooks/signature_verifier.py"
    here = run_cli("stats", cwd=wide)  # in the root itself: nothing to say
    assert here.returncode == 0 and "Note: using" not in here.stderr


def test_every_command_takes_the_root_the_same_way(wide: Path, tmp_path: Path) -> None:
    for args in (("status",), ("stats",), ("health",), ("verify",), ("query", "sign"), ("hub",),
                 ("show", "pkg/auth.py"), ("trace", "pkg/auth.py"), ("symbols", "sign"),
                 ("cypher", "MATCH (a:Artifact) RETURN count(*) AS n")):
        proc = run_cli(*args, "-r", str(wide), cwd=tmp_path)
        assert proc.returncode == 0, (args, proc.stderr)
        assert run_cli(*args, "--root", str(wide), cwd=tmp_path).stdout == proc.stdout, args
    positional = run_cli("status", str(wide), cwd=tmp_path)
    assert positional.returncode == 0 and positional.stdout == run_cli("status", "-r", str(wide)).stdout
    both = run_cli("status", str(wide), "-r", str(tmp_path))
    assert both.returncode == 2 and _one_error_line(both) == (
        f"Error: two repositories named: ROOT {wide} and -r {tmp_path}; give one")


def test_no_build_anywhere_above_is_one_line(tmp_path: Path) -> None:
    proc = run_cli("query", "anything", cwd=tmp_path)
    assert proc.returncode == 4
    assert _one_error_line(proc) == (f"Error: no build in {tmp_path} or any folder above it: run `oracl build DIR` "
                                     "first, or name the repository with -r DIR")


def test_a_directory_where_text_is_expected_is_refused_with_a_hint(wide: Path, tmp_path: Path) -> None:
    other = tmp_path / "flask"
    other.mkdir()
    proc = run_cli("query", "cookies", str(other), cwd=wide)
    assert proc.returncode == 8 and _one_error_line(proc) == (
        f"Error: {str(other)!r} is a directory, not search text: to ask the build of that repository, "
        f"run `oracl query cookies -r {other}`")
    assert run_cli("symbols", str(other), cwd=wide).returncode == 8
    assert run_cli("query", "cookies", ".", cwd=wide).returncode == 8  # the root itself is not text either
    # a bare word that happens to name a folder is text; so is a folder inside the tree
    assert run_cli("query", "tests", cwd=wide).returncode == 0
    assert run_cli("query", "src/platform", cwd=wide).returncode == 0
    # from a folder with no build above it, the same hint (it used to be "no build", exit 4)
    away = tmp_path / "elsewhere"
    away.mkdir()
    for args, what, meant in ((("query", "cookies", str(wide)), "search text", f"oracl query cookies -r {wide}"),
                              (("show", str(wide)), "a file", f"oracl show -r {wide}")):
        proc = run_cli(*args, cwd=away)
        assert proc.returncode == 8 and _one_error_line(proc) == (
            f"Error: {str(wide)!r} is a directory, not {what}: to ask the build of that repository, run `{meant}`")


def test_paths_absolute_root_or_cwd_relative_and_suggestions(wide: Path) -> None:
    want = orjson.loads(run_cli("show", "pkg/auth.py", "-r", str(wide), "--json").stdout)["artifact"]["path"]
    assert want == "pkg/auth.py"
    for arg, cwd in (("pkg/auth.py", wide), ("auth.py", wide / "pkg"), ("./auth.py", wide / "pkg"),
                     (str(wide / "pkg" / "auth.py"), wide / "docs"), ("../pkg/auth.py", wide / "docs")):
        doc = orjson.loads(run_cli("show", arg, "--json", cwd=cwd).stdout)
        assert doc["artifact"]["path"] == "pkg/auth.py", (arg, cwd)
    assert run_cli("fragment", "auth.py#L5-5", cwd=wide / "pkg").stdout == "def sign(data):\n"
    typo = run_cli("show", "pkg/auht.py", cwd=wide)
    assert typo.returncode == 8
    assert _one_error_line(typo).startswith("Error: 'pkg/auht.py' is not in the latest build; nearest indexed "
                                            "paths: pkg/auth.py")
    folder = run_cli("trace", "pkg", cwd=wide)
    assert folder.returncode == 8 and _one_error_line(folder) == (
        "Error: 'pkg' is a folder, not a file of the build; files in it: pkg/__init__.py, pkg/auth.py, "
        "pkg/many.py, pkg/util.py")


def test_nearest_and_candidates_by_hand() -> None:
    assert locate.candidates("auth.py", Path("/r"), Path("/r/pkg")) == ["pkg/auth.py", "auth.py"]
    assert locate.candidates("/r/pkg/auth.py", Path("/r"), None) == ["pkg/auth.py"]
    assert locate.candidates("/elsewhere/auth.py", Path("/r"), Path("/r")) == []
    assert locate.candidates("../x.py", Path("/r"), Path("/elsewhere")) == []
    paths = ["pkg/auth.py", "docs/auth.md", "pkg/util.py", "tests/test_auth.py"]
    # file names alike (difflib ratio ≥ 0.6 to "auht.py"): auth.py 12/14, util.py 10/14,
    # test_auth.py 12/19 (docs/auth.md 8/14 is not); ordered by the whole path's ratio:
    # pkg/auth.py 20/22, pkg/util.py 18/22, tests/test_auth.py 14/29
    assert locate.nearest("pkg/auht.py", paths) == ["pkg/auth.py", "pkg/util.py", "tests/test_auth.py"]
    assert locate.nearest("pkg/auht.py", paths, n=1) == ["pkg/auth.py"]
    assert locate.nearest("lib/auth.py", paths)[0] == "pkg/auth.py"  # the same file name first
    assert locate.under("pkg", paths) == ["pkg/auth.py", "pkg/util.py"]


# ---- 2. output that fits ------------------------------------------------------------------

def _table_lines(shown: str) -> list[str]:
    return [ln for ln in shown.splitlines() if ln.startswith(("┃", "│", "┏", "┡", "└", "┌", "├"))]


@pytest.mark.parametrize("cols", [80, 100, 200])
def test_query_tables_fit_and_never_break_a_path(wide: Path, cols: int) -> None:
    query = ("signature", "verifier", "-fallback", "-r", str(wide), "-k", "6")  # every path but the longest
    code, shown = run_tty("query", *query, cols=cols)
    assert code == 0, shown
    lines = _table_lines(shown)
    header = next(ln for ln in lines if ln.startswith("┃"))
    paths = [r["path"] for r in orjson.loads(run_cli("query", *query, "--json").stdout)["results"]]
    assert "src/platform/webhooks/signature_verifier.py" in paths and LONG not in paths
    for p in paths:  # every path whole, on one line of the table
        assert any(p in ln for ln in lines), p
    for kept in ("path", "score", "matched"):
        assert f" {kept} " in header
    assert all(len(ln) <= cols for ln in shown.splitlines())
    order = ("lifecycle", "type", "domain", "#", "priority")  # the least useful first
    dropped = [c for c in order if f" {c} " not in header]
    assert dropped == list(order[:len(dropped)])
    assert (len(dropped) == 0) if cols == 200 else (len(dropped) >= 3)


@pytest.mark.parametrize("cols", [80, 100])
def test_a_path_wider_than_the_table_turns_rows_into_records(wide: Path, cols: int) -> None:
    code, shown = run_tty("query", "signature", "verifier", "fallback", "-r", str(wide), "-k", "3", cols=cols)
    assert code == 0 and LONG in shown.splitlines()  # the path alone on its line, whole
    assert not _table_lines(shown)
    assert all(len(ln) <= cols for ln in shown.splitlines() if ln != LONG)
    first = shown.split(LONG + "\n", 1)[1].split("\nsrc/", 1)[0]  # the fields under the path, wrapped
    assert first.startswith("    # 1 · score ") and all(ln.startswith("    ") for ln in first.splitlines())
    assert re.search(r"· matched filename, symbols", " ".join(first.split()))


@pytest.mark.parametrize("cols", [80, 100, 200])
def test_health_related_hub_and_show_fit(wide: Path, cols: int) -> None:
    code, shown = run_tty("health", "-r", str(wide), cols=cols)
    assert code == 0 and "…" not in shown
    build_id = orjson.loads(run_cli("health", "-r", str(wide), "--json").stdout)[-1]["build_id"]
    assert build_id[:15] in shown and all(len(ln) <= cols for ln in _table_lines(shown))
    code, shown = run_tty("related", "src/platform/webhooks/signature_verifier.py", "-r", str(wide),
                          cols=cols)
    assert code == 0 and "src/platform/webhooks/replay_guard.py" in shown and "…" not in shown
    code, shown = run_tty("hub", "core", "-r", str(wide), cols=cols)
    assert code == 0 and "src/platform/webhooks/signature_verifier.py" in shown
    code, shown = run_tty("show", "src/platform/webhooks/replay_guard.py", "-r", str(wide), cols=cols)
    assert code == 0 and "src/platform/webhooks/signature_verifier.py" in shown


def test_fit_widths_by_hand() -> None:
    cols = [render.Col("path", "path"), render.Col("n", "num", 1), render.Col("why", "text")]
    row = [["src/a.py", "12", "path, symbols"]]
    # all three at their natural widths: 8 + 2 + 13 + 3 columns × 3 + 1 = 33
    assert render.fit_widths(cols, row, 33) == ([0, 1, 2], [8, 2, 13], 33)
    # at 30 the optional count goes (8 + 2 + 13 + 10 = 33 > 30); 8 + 13 + 7 = 28 fits
    assert render.fit_widths(cols, row, 30) == ([0, 2], [8, 13], 30)
    # at 20 the text wraps in 5 cells (8 + 5 + 7 = 20); a path never shrinks: drawn wider instead
    assert render.fit_widths(cols[::2], row and [["src/a.py", "path, symbols"]], 20) == ([0, 1], [8, 5], 20)
    assert render.fit_widths(cols[::2], [["src/a/very/long/path.py", "x"]], 20) == ([0, 1], [23, 3], 33)


def test_the_doctests_of_the_cli_helpers_hold() -> None:
    for module in (locate, render, graph, cli):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_piped_output_is_tab_separated_lines(wide: Path) -> None:
    proc = run_cli("query", "signature", "verifier", "-r", str(wide), "-k", "3")
    rows = [ln.split("\t") for ln in proc.stdout.splitlines()]
    assert len(rows) == 3 and all(len(r) == 7 for r in rows) and "┃" not in proc.stdout and proc.stderr == ""
    assert rows[0][0] == "src/platform/webhooks/signature_verifier.py"
    # a pipe into another tool: the paths, then their first lines
    paths = subprocess.run(f"{ORACL} query signature verifier -k 3 | cut -f 1 | head -n 2", shell=True,
                           cwd=wide, capture_output=True, text=True, check=True).stdout.split()
    assert paths == [r[0] for r in rows[:2]]
    hubs = run_cli("hub", "-r", str(wide)).stdout.splitlines()
    assert all(len(ln.split("\t")) == 4 for ln in hubs) and hubs[0].startswith("hub:domain:")
    status = run_cli("status", "-r", str(wide)).stdout.splitlines()
    assert status[-1] == "fresh\tfresh: the build matches the working tree"


def test_fragment_in_a_pipe_is_the_file_itself(wide: Path) -> None:
    long_line = "x = '" + "y" * 300 + "'\n"
    target = wide / "pkg" / "wide_line.py"
    filler = "".join(f"value_{i:04d} = {'z' * 50!r}\n" for i in range(1990))  # ~130 KB: more than a pipe holds
    target.write_text("def f():\n\treturn 1\n" + long_line + filler)
    try:
        build(wide, buffer_pool_bytes=64 << 20, workers=1)
        out = subprocess.run([ORACL, "fragment", "pkg/wide_line.py#L1-3", "-r", str(wide)], capture_output=True,
                             env={**os.environ, "COLUMNS": "80"})
        head = b"".join(target.read_bytes().splitlines(keepends=True)[:3])
        assert out.returncode == 0 and out.stdout == head  # no numbers, padding or wrapping
        whole = run_cli("fragment", "pkg/wide_line.py", "-r", str(wide)).stdout
        assert whole == target.read_text()
        # a reader that stops early (`| head -n 1`) is not an error: exit 0, nothing on stderr
        proc = subprocess.Popen([ORACL, "fragment", "pkg/wide_line.py", "-r", str(wide)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"def f():\n"
        proc.stdout.close()
        assert proc.stderr is not None
        with proc.stderr:
            assert proc.wait(timeout=60) == 0 and proc.stderr.read() == b""
    finally:
        target.unlink()
        build(wide, buffer_pool_bytes=64 << 20, workers=1)


def test_json_everywhere(wide: Path, tmp_path: Path) -> None:
    r = str(wide)
    for args in (("stats",), ("status",), ("health",), ("verify",), ("query", "sign"), ("hub",), ("hub", "core"),
                 ("show", "pkg/auth.py"), ("trace", "pkg/auth.py"), ("related", "pkg/auth.py"),
                 ("fragment", "pkg/auth.py#L1-2"), ("symbols", "sign"), ("callers", "sign"), ("callees", "sign"),
                 ("impact", "pkg/auth.py"), ("cypher", "MATCH (a:Artifact) RETURN count(*) AS n")):
        proc = run_cli(*args, "-r", r, "--json")
        assert proc.returncode == 0, (args, proc.stderr)
        assert isinstance(orjson.loads(proc.stdout), dict | list), args
    keys = orjson.loads(run_cli("keygen", "--out", str(tmp_path / "keys"), "--json").stdout)
    assert Path(keys["private_key"]).is_file() and Path(keys["public_key"]).is_file()
    assert orjson.loads(run_cli("verify", "-r", r, "--json").stdout)["verified"] is True


# ---- 3. a vault that keeps to itself -------------------------------------------------------

def test_the_vault_ignores_itself_for_git(wide: Path) -> None:
    assert (wide / ".oracl" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert git(wide, "status", "--porcelain", "--untracked-files=all") == ""


def _usage_signal(root: Path) -> float:
    doc = orjson.loads(run_cli("show", "pkg/auth.py", "-r", str(root), "--json").stdout)
    return next(b["signal"] for b in doc["priority"]["buckets"] if b["bucket"] == "usage")


def test_the_search_log_can_be_turned_off(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    log = root / ".oracl" / "logs" / "search_history.jsonl"
    assert run_cli("query", "sign", "-r", str(root)).returncode == 0
    assert len(log.read_text().splitlines()) == 1
    # 50 searches that returned pkg/auth.py: being returned is not evidence (design §9), usage stays 0
    log.write_text("".join('{"returned_paths": ["pkg/auth.py"]}\n' for _ in range(50)))
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert _usage_signal(root) == 0.0
    off = {**os.environ, "ORACL_SEARCH_LOG": "0"}
    assert run_cli("query", "sign", "-r", str(root), env=off).returncode == 0
    assert len(log.read_text().splitlines()) == 50  # nothing written
    (root / ".oracl.toml").write_text("search_log = false\n")
    assert run_cli("query", "sign", "-r", str(root)).returncode == 0
    assert len(log.read_text().splitlines()) == 50
    usage = root / ".oracl" / "logs" / "usage.jsonl"
    follow_ups = len(usage.read_text().splitlines())  # the show of _usage_signal, while the log was on
    assert run_cli("show", "pkg/auth.py", "-r", str(root)).returncode == 0
    assert len(usage.read_text().splitlines()) == follow_ups  # nor a follow-up
    on = {**os.environ, "ORACL_SEARCH_LOG": "1"}  # the variable wins over the file
    assert run_cli("query", "sign", "-r", str(root), env=on).returncode == 0
    assert len(log.read_text().splitlines()) == 51


def test_the_search_log_setting_follows_the_file_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from oracl.core.config import search_log_enabled

    monkeypatch.delenv("ORACL_SEARCH_LOG", raising=False)
    assert search_log_enabled(tmp_path) is True
    (tmp_path / ".oracl.toml").write_text("search_log = false\n")
    assert search_log_enabled(tmp_path) is False
    (tmp_path / ".oracl.toml").write_text("search_log = true\n")
    assert search_log_enabled(tmp_path) is True
    (tmp_path / ".oracl.toml").write_text("search_log = 3\n")  # an unreadable setting counts as off
    assert search_log_enabled(tmp_path) is False
    monkeypatch.setenv("ORACL_SEARCH_LOG", "on")
    assert search_log_enabled(tmp_path) is True


# ---- 4. scriptable -------------------------------------------------------------------------

def test_status_check_exit_codes(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "r", SAMPLE)
    build(root, buffer_pool_bytes=64 << 20, workers=1)
    assert run_cli("status", "--check", "-r", str(root)).returncode == 0
    (root / "pkg" / "new.py").write_text("x = 1\n")
    stale = run_cli("status", "--check", "-r", str(root))
    assert stale.returncode == 20 and stale.stdout.splitlines()[-1].startswith("stale\tstale: 1 added")
    assert run_cli("status", "-r", str(root)).returncode == 0  # without --check it only reports


def test_usage_errors_are_one_line_too() -> None:
    for args, line in ((("query", "--bogus", "x"), "Error: No such option: --bogus (oracl query -h for help)"),
                       (("show",), "Error: Missing argument 'PATH' (oracl show -h for help)"),
                       (("nosuch",), "Error: No such command 'nosuch' (oracl -h for help)")):
        proc = run_cli(*args)
        assert (proc.returncode, proc.stderr, proc.stdout) == (2, line + "\n", ""), args


def test_a_negation_is_text_not_an_option(wide: Path) -> None:
    def paths(*words: str) -> list[str]:
        proc = run_cli("query", "-r", str(wide), "--json", *words)
        assert proc.returncode == 0, proc.stderr
        return [r["path"] for r in orjson.loads(proc.stdout)["results"]]

    assert LONG in paths("signature", "fallback")
    assert LONG not in paths("signature", "fallback", "-nesting") == paths("signature", "fallback", "--", "-nesting")


def test_version() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert re.fullmatch(r"oracl \d+\.\d+\.\d+ \(export schema wtls-[\d.]+, kuzu 0\.11\.3, python 3\.\d+\.\d+\)\n",
                        proc.stdout)


def test_help_fits_80_columns_without_placeholders_on_flags() -> None:
    names = [ln.split()[0] for ln in run_cli("--help").stdout.split("Commands:")[1].splitlines() if ln.strip()]
    assert len(names) == 28  # apply, undo and workspace are the last ones added
    names += ["learn review", "learn accept", "learn reject", "workspace add", "workspace remove", "workspace list"]
    for name in [None, *names]:
        text = run_cli(*(name.split() if name else []), "--help", env={**os.environ, "COLUMNS": "200"}).stdout
        assert all(len(ln) <= 80 for ln in text.splitlines()), name
        assert not re.search(r"<\w+(\[\w+\])?>", text), name  # no <bool>, <int>, <list[str]>
        flags = re.findall(r"^\s+(?:-\w, )?(--[\w-]+)(.*)$", text, re.M)
        for flag, rest in flags:
            if flag in ("--json", "--explain", "--full", "--two-layer", "--check", "--help", "--version", "--diff"):
                assert not re.match(r" [A-Z]", rest), (name, flag)


def test_cli_reference_is_up_to_date() -> None:
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is out of date: run python scripts/cli_reference.py")


def test_completion_script_is_offered() -> None:
    proc = run_cli(env={**os.environ, "_ORACL_COMPLETE": "source_bash"})  # what docs/cli.md says to eval
    assert proc.returncode == 0 and "complete -o default -F _oracl_completion oracl" in proc.stdout
    words = subprocess.run([ORACL], env={**os.environ, "_ORACL_COMPLETE": "complete_bash", "COMP_WORDS": "oracl sta",
                                         "COMP_CWORD": "1"}, capture_output=True, text=True)
    assert words.stdout.split() == ["stats", "status"]


# ---- 5. rendering --------------------------------------------------------------------------

def test_trace_marks_only_repeats(wide: Path) -> None:
    lines = [ln.split("\t") for ln in run_cli("trace", "docs/guide.md", "-r", str(wide), "--depth", "3",
                                                "--direction", "both").stdout.splitlines()]
    expanded = [ln[3] for ln in lines if ln[8] == ""]
    assert len(expanded) == len(set(expanded))  # each file is expanded once
    assert all(ln[3] in expanded or ln[3] == "docs/guide.md" for ln in lines if ln[8] == "repeat")
    code, shown = run_tty("trace", "docs/guide.md", "-r", str(wide), "--depth", "3", "--direction", "both", cols=200)
    drawn: set[str] = {"docs/guide.md"}
    for ln in shown.splitlines():
        m = re.search(r"[→←] (\S+)  .*?(\(shown (above|below)\))?$", ln)
        if not m:
            continue
        node, mark = m.group(1), m.group(3)
        if mark is None:
            assert node not in drawn, ln  # a first appearance is never marked
            drawn.add(node)
        else:
            assert (node in drawn) == (mark == "above"), ln


def test_fragments_are_sorted_and_merged_and_show_has_one_row_per_edge(wide: Path) -> None:
    doc = orjson.loads(run_cli("show", "pkg/many.py", "-r", str(wide), "--json").stdout)
    util = [e for e in doc["edges"]["imports"]["out"] if e["target"] == "pkg/util.py"]
    assert len(util) == 1 and util[0]["fragments"] == ["L35-35", "L37-38"]
    rows = [ln.split("\t") for ln in run_cli("show", "pkg/many.py", "-r", str(wide)).stdout.splitlines()
            if ln.startswith("edge\t")]
    keys = [(r[1], r[2], r[3]) for r in rows]
    assert len(keys) == len(set(keys))
    assert ["edge", "imports", "out", "pkg/util.py", f"{util[0]['weight']:.2f}", f"{util[0]['rank']:.3f}",
            "L35-35 L37-38"] in rows
    trace = run_cli("trace", "pkg/many.py", "-r", str(wide), "--depth", "1").stdout
    assert "\tpkg/util.py\timports\t" in trace and "\tL35-35 L37-38\t" in trace
    code, shown = run_tty("show", "pkg/many.py", "-r", str(wide), cols=120)
    assert code == 0 and shown.count("tree: ") == 1


def test_a_hubs_top_member_is_the_first_of_its_listing(wide: Path) -> None:
    hubs = orjson.loads(run_cli("hub", "-r", str(wide), "--json").stdout)["hubs"]
    assert len(hubs) >= 4
    for h in hubs:
        members = orjson.loads(run_cli("hub", h["hub"], "-r", str(wide), "-k", "1", "--json").stdout)["members"]
        assert h["top_member"] == members[0]["path"], h["hub"]
    stats = orjson.loads(run_cli("stats", "-r", str(wide), "--json").stdout)
    assert stats["hubs"] == hubs


def test_the_demo_prints_the_hub_listing_it_promises(wide: Path) -> None:
    demo = (ROOT / "scripts" / "demo.sh").read_text()
    job = demo.split("# the job", 1)[1].split("\n", 1)[1]
    script = job.replace(".venv/bin/oracl", ORACL)
    proc = subprocess.run(["bash", "-c", "set -euo pipefail\nTARGET=\"$1\"\n" + script, "demo", str(wide)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    top = run_cli("hub", "-r", str(wide)).stdout.split("\t", 1)[0]
    members = run_cli("hub", top, "-r", str(wide), "-k", "10").stdout
    assert f"Members of the largest hub, {top} (oracl hub {top.removeprefix('hub:domain:')} -k 10):\n" in proc.stdout
    assert proc.stdout.endswith(members) and "hub\thub:domain:" in proc.stdout


def test_consoles_follow_the_stream_and_the_terminal_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is fixed at import: a console is made for the stream written to now and
    made again when it or a terminal variable changes; unchanged, the same one is reused."""
    import io
    import sys

    monkeypatch.setenv("COLUMNS", "50")
    first = render.out()
    assert first.width == 50 and render.out() is first and render.err() is not first
    monkeypatch.setenv("COLUMNS", "90")
    assert render.out().width == 90 and render.out() is not first
    swapped = io.StringIO()
    monkeypatch.setattr(sys, "stdout", swapped)
    render.plain_line("one line")
    assert swapped.getvalue() == "one line\n"
