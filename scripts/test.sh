#!/usr/bin/env bash
# Set up a virtual environment with the test extras and run the whole suite.
# This is the README's test command; .ci/run calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
.venv/bin/ruff check oracl tests scripts
exec .venv/bin/python -m pytest "$@"
