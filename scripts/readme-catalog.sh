#!/usr/bin/env bash
# Regenerate the catalog table in README.md from `perflab list --markdown` (between the markers).
set -euo pipefail
cd "$(dirname "$0")/.."
table=$(cargo run --quiet -- list --markdown)
python3 - "$table" <<'PY'
import sys
table = sys.argv[1] + "\n"
s = open("README.md").read()
b, e = "<!-- catalog:begin -->\n", "<!-- catalog:end -->"
i, j = s.index(b) + len(b), s.index(e)
open("README.md", "w").write(s[:i] + table + s[j:])
PY
echo "README.md catalog table updated"
