#!/usr/bin/env bash
# Set up a virtual environment with the test extras and run the whole suite.
# This is the README's test command; .ci/run calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
# the web view's browser test drives Debian's headless Chromium (tests/test_web.py)
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
.venv/bin/ruff check oracl tests scripts
.venv/bin/python scripts/typecheck.py  # mypy over oracl/ against a baseline that only shrinks
exec .venv/bin/python -m pytest "$@"
