#!/usr/bin/env bash
# Set up ORACL and run the main job: build the graph of a folder (default: this
# repository), print `oracl stats` (counts and every domain hub), then the members of
# the largest hub – found by piping `oracl hub` (tab-separated in a pipe) into cut.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
TARGET="${1:-.}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[mcp]"
# the job (tests/test_cli_ergonomics.py runs these lines on a small repository)
.venv/bin/oracl build "$TARGET"
.venv/bin/oracl stats "$TARGET"
TOP="$(.venv/bin/oracl hub -r "$TARGET" | head -n 1 | cut -f 1)"
echo "Members of the largest hub, $TOP (oracl hub ${TOP#hub:domain:} -k 10):"
.venv/bin/oracl hub "$TOP" -r "$TARGET" -k 10
