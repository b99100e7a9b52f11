#!/usr/bin/env bash
# One cold `oracl build --json` after each kind of change, in order: an edit, an add, an
# edit, a delete, a rename, an edit; prints the seconds and what the build says of its
# symbols and its database. WORKSPACE must already be built by the same ORACL command.
#
#   bash scripts/bench_changes.sh ORACL_COMMAND WORKSPACE
#   bash scripts/bench_changes.sh .venv/bin/oracl /tmp/ws20k
set -euo pipefail
oracl="$1"; ws="$2"
out="$(mktemp)"; trap 'rm -f "$out"' EXIT
run() {
  local t0 t1
  t0=$(date +%s.%N); "$oracl" build "$ws" --json > "$out" 2>/dev/null; t1=$(date +%s.%N)
  python3 - "$out" "$t0" "$t1" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[4]}: {float(sys.argv[3]) - float(sys.argv[2]):.2f} s | {d['symbols_mode']} | {d['database_mode']}")
PY
}
f=$(find "$ws" -path "$ws/.oracl" -prune -o -name "*.py" -print | sort | head -1)
dir=$(dirname "$f")
echo "# e" >> "$f"; run "edit (warm-up)"
cp "$f" "$dir/added_one.py"; run "add one file"
echo "# e2" >> "$f"; run "edit after the add"
rm "$dir/added_one.py"; run "delete one file"
mv "$f" "$dir/renamed_one.py"; run "rename one file"
echo "# e3" >> "$dir/renamed_one.py"; run "edit after the rename"
