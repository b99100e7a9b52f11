"""How ORACL starts any other program: nothing in an indexed tree ever runs (design §11).

Two kinds of child exist, and each has one door here:

* **Python** (``python_command``): the interpreter runs isolated (``-I``: no working
  directory or script folder on ``sys.path``, no ``PYTHON*`` variables, no user site), and
  its ``sys.path`` is this process's own minus the working directory, with the folder
  ORACL was imported from appended when it is missing. A ``concurrent/``, ``pickle.py``,
  ``sitecustomize.py`` or ``oracl/`` in the tree being indexed is never imported.
* **git** (``git``): a repository's own configuration can name commands that git runs
  while it reads the working tree (``core.fsmonitor``, ``filter.<driver>.clean`` and
  ``process`` through ``.gitattributes``, ``diff.<driver>.textconv``, ``core.pager``,
  hooks). Every call here overrides each of them (the fixed keys with ``-c``; each driver
  the configuration names, whatever its name holds, through ``GIT_CONFIG_COUNT`` /
  ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n``, which take the key whole where ``-c``
  splits it at the first ``=``); both win over every configuration file. Submodules are
  never entered (their own configuration is not ours to read), nothing is read from the
  terminal, no optional lock is taken and nothing pages.

>>> python_command("import sys")[:2] == [sys.executable, "-I"]
True
>>> "core.fsmonitor=false" in git_command("/tmp", "status")
True
>>> env = git_env(("filter.x=y.clean",))
>>> env["GIT_CONFIG_KEY_0"], env["GIT_CONFIG_VALUE_0"], env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]
('filter.x=y.clean', '', 'filter.x=y.required', 'false')
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

# what git would otherwise run on a repository's say (each set empty or off)
_FIXED = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=true",
          "core.sshCommand=false", "core.askPass=", "credential.helper=", "diff.external=",
          "core.untrackedCache=false", "log.showSignature=false", "gpg.program=false",
          "core.alternateRefsCommand=", "protocol.allow=never", "core.quotepath=off",
          # a submodule's own configuration names drivers of its own: never entered
          "diff.ignoreSubmodules=all", "submodule.recurse=false", "status.submoduleSummary=false")
# configuration keys naming a command per driver: ``filter.<name>.clean`` and so on
_DRIVER_KEY = re.compile(r"^(filter\.[^\n]+\.(?:clean|smudge|process)|diff\.[^\n]+\.(?:textconv|command)|"
                         r"merge\.[^\n]+\.driver)$", re.IGNORECASE)
ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat",
       "LC_ALL": "C", "GIT_EXTERNAL_DIFF": "", "GIT_ASKPASS": "",
       "SSH_ASKPASS": "", "GIT_SSH_COMMAND": "false"}


def git_env(drivers: tuple[str, ...] = ()) -> dict[str, str]:
    """This process's environment with git's command hooks turned off and each of
    ``drivers`` (configuration keys naming a command) set empty; a filter is also made
    optional, so that git reads the file as it is instead of failing."""
    pairs: list[tuple[str, str]] = []
    for key in drivers:
        pairs.append((key, ""))
        if key.lower().startswith("filter.") and key.lower().endswith((".clean", ".smudge", ".process")):
            pairs.append((key.rsplit(".", 1)[0] + ".required", "false"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    env.update(ENV)
    env["GIT_CONFIG_COUNT"] = str(len(dict(pairs)))
    for i, (key, value) in enumerate(dict(pairs).items()):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def git_command(root: str | Path, *args: str) -> list[str]:
    """The argument list for ``git -C root ARGS`` with every fixed command hook overridden
    (the drivers a repository names go in ``git_env``)."""
    cmd = ["git", "--no-pager"]
    for item in _FIXED:
        cmd += ["-c", item]
    return [*cmd, "-C", str(root), *args]


def _drivers(root: str | Path) -> tuple[str, ...]:
    """The repository's configured driver commands (filter, diff, merge) by key: reading the
    configuration runs nothing."""
    try:
        out = subprocess.run(["git", "--no-pager", "-C", str(root), "config", "--name-only", "--list", "-z"],
                             capture_output=True, timeout=30, env=git_env(), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ()
    keys = out.stdout.decode("utf-8", "surrogateescape").split("\0")
    return tuple(sorted({k for k in keys if _DRIVER_KEY.match(k)}))


def git(root: str | Path, *args: str, timeout: float = 60, text: bool = False,
        errors: str | None = None) -> subprocess.CompletedProcess[Any]:
    """``git -C root ARGS``, run so that nothing the repository configures is executed.
    Raises OSError / SubprocessError as ``subprocess.run`` does."""
    cmd = git_command(root, *args)
    if text and errors is None:  # a file name that is not UTF-8 is still one line of output
        errors = "surrogateescape"
    return subprocess.run(cmd, capture_output=True, timeout=timeout, env=git_env(_drivers(root)),
                          stdin=subprocess.DEVNULL, text=text, errors=errors)


def import_path() -> list[str]:
    """``sys.path`` for a Python child: this process's, without the working directory
    (``''`` or its absolute form), plus the folder ``oracl`` was imported from."""
    here = os.path.realpath(os.getcwd())
    keep = [p for p in sys.path if p and os.path.isabs(p) and os.path.realpath(p) != here]
    home = str(Path(__file__).resolve().parents[2])  # the folder holding the oracl package
    if home not in keep:
        keep.append(home)  # after the standard library: the tree cannot shadow it from here
    return keep


def python_command(code: str, *args: str) -> list[str]:
    """``python -I -c CODE ARGS`` whose ``sys.path`` is ``import_path()`` (passed after the
    arguments, behind a ``--`` marker, and set before CODE runs)."""
    boot = ("import sys\n"
            "_i = sys.argv.index('--oracl-path')\n"
            "sys.path[:] = sys.argv[_i + 1:]\n"
            "del sys.argv[_i:]\n"
            + code)
    return [sys.executable, "-I", "-c", boot, *args, "--oracl-path", *import_path()]


def die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent dies (Linux PR_SET_PDEATHSIG), and leave at
    once when the parent died before this line ran."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)
