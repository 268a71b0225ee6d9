#!/usr/bin/env bash
# Regenerate docs/example/report.html, the example the README's quick start links, from the
# recorded exp1 run in tests/fixtures/example (`perflab report DIR --html-only` on a copy of it).
# tests/offline/report_example.rs checks that the committed page is what this produces, so re-run it
# after a change to report.html's rendering (or to exp1's claims) and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --bin perflab
src=$(find tests/fixtures/example -mindepth 2 -maxdepth 2 -type d | sort | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dst="$tmp/$(basename "$(dirname "$src")")/$(basename "$src")"
mkdir -p "$dst"
cp "$src"/*.json "$dst"/
./target/debug/perflab report "$dst" --html-only >/dev/null
mkdir -p docs/example
cp "$dst/report.html" docs/example/report.html
echo "docs/example/report.html regenerated from $src"
