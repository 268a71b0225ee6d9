#!/usr/bin/env bash
# Regenerate docs/img/report.png, the README's screenshot of docs/example/report.html: headless
# Chromium at 1280 x 1600. Re-run after scripts/make-example-report.sh changes the example;
# tests/offline/docs.rs keeps the file under 300 KB.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/docs/img/report.png"
mkdir -p docs/img
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1280,1600 --screenshot="$out" "file://$PWD/docs/example/report.html" 2>/dev/null
echo "docs/img/report.png: $(stat -c %s "$out") bytes"
