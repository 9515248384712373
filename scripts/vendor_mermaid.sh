#!/usr/bin/env bash
# Refreshes the documentation site's copy of mermaid (docs/assets/javascripts/mermaid.min.js,
# MIT licence in mermaid-LICENSE.txt next to it) from the npm registry, so that diagrams draw
# without any network at view time. Usage: scripts/vendor_mermaid.sh [version] (default: the
# version below). Needs npm.
set -euo pipefail
version="${1:-11.17.2}"
here="$(cd "$(dirname "$0")/.." && pwd)"
dest="$here/docs/assets/javascripts"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "mermaid@$version" >/dev/null && tar xzf mermaid-*.tgz)
cp "$work/package/dist/mermaid.min.js" "$dest/mermaid.min.js"
cp "$work/package/LICENSE" "$dest/mermaid-LICENSE.txt"
echo "mermaid $version -> $dest/mermaid.min.js"
