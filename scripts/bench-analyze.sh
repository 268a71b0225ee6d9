#!/usr/bin/env bash
# Benchmark `perflab analyze` on a ~1,000,000-request k6 CSV (gzip), against the decompression
# floor (`zcat | wc -l`) and a straightforward Python csv-module analyzer, from one run.
# Goals (2-core machine): analyze <= 1.3 x floor, >= 5 x faster than Python, peak RSS <= 100 MB.
#   scripts/bench-analyze.sh [COPIES=600]   (the big CSV is cached under target/bench/)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COPIES=${1:-600}
SRC=$ROOT/tests/fixtures/k6/stepped-open.csv.gz
DIR=$ROOT/target/bench
BIG=$DIR/requests-x$COPIES.csv.gz
mkdir -p "$DIR"

echo "== building the release binary" >&2
(cd "$ROOT" && cargo build --release --quiet)
BIN=$ROOT/target/release/perflab

if [ ! -s "$BIG" ]; then
  echo "== generating $BIG: $COPIES copies of $(basename "$SRC"), copy k shifted by k ms" >&2
  # Overlaying shifted copies keeps the step windows intact: the same run at COPIES x the rate.
  zcat "$SRC" | awk -F, -v OFS=, -v CONVFMT=%.0f -v OFMT=%.0f -v n="$COPIES" '
    NR == 1 { print; next }
    { line[++m] = $0 }
    END { for (k = 0; k < n; k++) for (i = 1; i <= m; i++) { $0 = line[i]; $2 = sprintf("%.0f", $2 + k); print } }' \
    | gzip -6 > "$BIG.tmp"
  mv "$BIG.tmp" "$BIG"
fi

# time_it LABEL CMD...: wall seconds and peak RSS (KiB) via /usr/bin/time -v.
time_it() {
  local label=$1; shift
  local log; log=$(mktemp)
  /usr/bin/time -v "$@" >/dev/null 2>"$log" || { cat "$log" >&2; exit 1; }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log")
  rm -f "$log"
  printf '%s %s %s\n' "$label" "$wall" "$rss"
}

SIZE=$(du -m "$BIG" | cut -f1)
LINES_CMD="zcat '$BIG' | wc -l"
echo "== input: $BIG ($SIZE MB gzip)" >&2
read -r _ T_FLOOR RSS_FLOOR < <(time_it floor sh -c "$LINES_CMD")
read -r _ T_PERFLAB RSS_PERFLAB < <(time_it perflab "$BIN" analyze "$BIG" --slo-ms 200 --json)
read -r _ T_PY RSS_PY < <(time_it python python3 "$ROOT/scripts/bench-analyze.py" "$BIG")
REQ=$("$BIN" analyze "$BIG" --slo-ms 200 --json | python3 -c 'import json,sys; print(sum(s["requests"] for s in json.load(sys.stdin)["steps"]))')
LINES=$(zcat "$BIG" | wc -l)

awk -v req="$REQ" -v lines="$LINES" -v mb="$SIZE" -v tf="$T_FLOOR" -v tp="$T_PERFLAB" -v ty="$T_PY" \
    -v rf="$RSS_FLOOR" -v rp="$RSS_PERFLAB" -v ry="$RSS_PY" 'BEGIN {
  printf "input: %d requests, %d lines, %d MB gzip\n", req, lines, mb
  printf "%-28s %8s %10s\n", "", "wall s", "peak RSS"
  printf "%-28s %8.2f %7.1f MB\n", "zcat | wc -l (floor)", tf, rf / 1024
  printf "%-28s %8.2f %7.1f MB\n", "perflab analyze --json", tp, rp / 1024
  printf "%-28s %8.2f %7.1f MB\n", "python csv analyzer", ty, ry / 1024
  printf "perflab / floor  = %.2f  (goal <= 1.3)\n", tp / tf
  printf "python / perflab = %.1f  (goal >= 5)\n", ty / tp
  printf "perflab peak RSS = %.1f MB (goal <= 100)\n", rp / 1024
}'
