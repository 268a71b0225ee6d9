#!/usr/bin/env bash
# Benchmark: startup of `perflab list` (typed often; goal < 50 ms) against `perflab --version`
# (same binary, no catalog) in the same run. Prints medians and the ratio.
# Usage: scripts/bench-list.sh [RUNS]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-50}"
cargo build --release --quiet
bin=target/release/perflab

median_ms() { # command... -> median wall time in ms over $runs runs
  local -a t=()
  for _ in $(seq "$runs"); do
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1000}'
}

"$bin" list >/dev/null # warm the page cache
base=$(median_ms "$bin" --version)
list=$(median_ms "$bin" list)
json=$(median_ms "$bin" list --json)
echo "runs=$runs"
echo "perflab --version     median ${base} ms (baseline: process start, no catalog)"
echo "perflab list          median ${list} ms"
echo "perflab list --json   median ${json} ms"
awk -v b="$base" -v l="$list" 'BEGIN { printf "list / baseline = %.2fx; catalog work = %.2f ms; goal < 50 ms: %s\n", l/b, l-b, (l < 50 ? "met" : "NOT met") }'
