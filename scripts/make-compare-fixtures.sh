#!/usr/bin/env bash
# Record the compare fixtures under tests/fixtures/compare/ from quick rounds made with
#   perflab run EXP --quick --rounds 3 --no-align --out SRC/<batch> [--set stack.<lab>.burn_us=N]
# Usage: scripts/make-compare-fixtures.sh SRC BATCH...   (e.g. SRC=/work/scratch 2a-base 2a-burn)
# Each run keeps manifest.json, status.json and report.json without the per-second rows and
# log digests (the comparison does not read them): ~10 KB instead of ~50 KB.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$1; shift
for batch in "$@"; do
  for run in "$SRC/$batch"/*/20*; do
    exp=$(basename "$(dirname "$run")")
    dst=$ROOT/tests/fixtures/compare/$batch/$exp/$(basename "$run")
    mkdir -p "$dst"
    cp "$run/manifest.json" "$run/status.json" "$dst/"
    python3 - "$run/report.json" "$dst/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["timeline"], r["per_second"], r["logs"] = [], [], {}
json.dump(r, open(sys.argv[2], "w"), indent=1)
PY
  done
done
