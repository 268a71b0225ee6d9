#!/usr/bin/env bash
# Benchmark: what does k6's own web dashboard (`perflab run --k6-dashboard`) cost the load
# generator? Runs the same experiment alternately without and with it and compares the k6
# container's CPU per step (cgroup samples, the report's k6% column), per request, and its
# peak memory. Pairs alternate the order (off/on, then on/off) so a drift over time does not
# land on one side.
# Usage: scripts/bench-k6-dashboard.sh [EXPERIMENT] [PAIRS] [-- extra run flags]
#        (default: demo-open, 3 pairs; PERFLAB=path/to/perflab skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
exp=${1:-demo-open}
pairs=${2:-3}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = -- ] && shift
if [ -z "${PERFLAB:-}" ]; then
  cargo build --release --locked --bins >&2
  PERFLAB=./target/release/perflab
fi
out=$(mktemp -d)
for i in $(seq "$pairs"); do
  order="off on"; [ $((i % 2)) = 0 ] && order="on off"
  for mode in $order; do
    flag=(); [ "$mode" = on ] && flag=(--k6-dashboard)
    "$PERFLAB" --quiet run "$exp" --no-align --out "$out/$mode-$i" "${flag[@]}" "$@" >/dev/null
  done
done
python3 - "$out" "$exp" <<'PY'
import glob, json, sys, statistics
out, exp = sys.argv[1], sys.argv[2]
runs = {"off": [], "on": []}
mem = {"off": [], "on": []}
for mode in runs:
    for p in sorted(glob.glob(f"{out}/{mode}-*/{exp}/*/report.json")):
        if "/latest/" in p:
            continue
        steps = json.load(open(p))["steps"]
        runs[mode].append({s["name"]: s for s in steps})
        peak = 0
        for line in open(p.replace("report.json", "samples/cgroup.jsonl")):
            rec = json.loads(line)
            if rec.get("role") == "k6" and rec.get("mem_bytes"):
                peak = max(peak, rec["mem_bytes"])
        mem[mode].append(peak / 2**20)
def k6(s):
    return (s.get("server") or {}).get("cpu_pct", {}).get("k6")
def ms_per_req(s):
    c = k6(s)
    return c * 10 * s["window_s"] / s["requests"] if c is not None and s["requests"] else None
def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.mean(xs) if xs else float("nan")
names = list(runs["off"][0]) if runs["off"] else []
print(f"experiment {exp}: {len(runs['off'])} runs without the dashboard, {len(runs['on'])} with it")
print(f"{'step':<14}{'k6 % off':>10}{'k6 % on':>10}{'diff':>8}{'ms/req off':>12}{'ms/req on':>11}")
tot = {"off": [], "on": []}
for n in names:
    row = {m: [r[n] for r in runs[m] if n in r] for m in runs}
    c = {m: mean(k6(s) for s in row[m]) for m in runs}
    q = {m: mean(ms_per_req(s) for s in row[m]) for m in runs}
    for m in runs:
        tot[m].append(c[m])
    print(f"{n:<14}{c['off']:>10.1f}{c['on']:>10.1f}{c['on'] - c['off']:>+8.1f}{q['off']:>12.3f}{q['on']:>11.3f}")
off, on = mean(tot["off"]), mean(tot["on"])
print(f"{'mean of steps':<14}{off:>10.1f}{on:>10.1f}{on - off:>+8.1f}  (points of one core; ratio {on / off:.2f})")
for m in runs:
    per_run = [mean(k6(s) for s in r.values()) for r in runs[m]]
    print(f"per run, {m}: k6 % " + ", ".join(f"{x:.1f}" for x in per_run)
          + "; peak memory MiB " + ", ".join(f"{x:.0f}" for x in mem[m]))
PY
echo "run directories kept in $out" >&2
