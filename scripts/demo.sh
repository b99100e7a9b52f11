#!/usr/bin/env bash
# Set up ORACL and run the main job: build the graph of a folder (default: this
# repository), then print `oracl stats` and the hub listing of the core domain.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
TARGET="${1:-.}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[mcp]"
.venv/bin/oracl build "$TARGET"
.venv/bin/oracl stats "$TARGET"
