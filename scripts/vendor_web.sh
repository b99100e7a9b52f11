#!/usr/bin/env bash
# Fetch the web view's graph library from the npm registry and check it against
# oracl/face/web/VENDOR.json: the tarball's and the file's sha256. The package ships the
# result (oracl/face/web/cytoscape.min.js and its licence); nothing is fetched at run time.
#   bash scripts/vendor_web.sh          # check the vendored file against the registry
#   bash scripts/vendor_web.sh --write  # and replace it
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=3.35.0
TARBALL_SHA=058a81a7534777ea68dc737e9b77bd5b701e00acd9bee246245a576eeeac32e6
FILE_SHA=71fa9ebec21a7ca2c40cff6aacc30d1f6464e363662ad4b2c197e1adc770cd94
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "cytoscape@$VERSION" >/dev/null)
echo "$TARBALL_SHA  $work/cytoscape-$VERSION.tgz" | sha256sum -c --quiet
tar -xzf "$work/cytoscape-$VERSION.tgz" -C "$work"
echo "$FILE_SHA  $work/package/dist/cytoscape.min.js" | sha256sum -c --quiet
if [ "${1:-}" = "--write" ]; then
  cp "$work/package/dist/cytoscape.min.js" oracl/face/web/cytoscape.min.js
  cp "$work/package/LICENSE" oracl/face/web/cytoscape.LICENSE
fi
echo "$FILE_SHA  oracl/face/web/cytoscape.min.js" | sha256sum -c --quiet
echo "cytoscape $VERSION: the registry's file and the vendored one match"
