#!/usr/bin/env bash
# Benchmark: does sampling the server side cost dockerd (and so the measured system) CPU?
# Runs the same experiment alternately with and without the container samplers and reports
# dockerd's and perflab's own CPU (from each run's manifest, sampled from /proc, which is not
# Docker's API) as a ratio against the samplers-off baseline of the same invocation.
# Usage: scripts/bench-samplers.sh [EXPERIMENT] [PAIRS]   (default: demo-open, 2 pairs)
set -euo pipefail
cd "$(dirname "$0")/.."
exp=${1:-demo-open}
pairs=${2:-2}
cargo build --release --locked --bins >&2
out=$(mktemp -d)
for i in $(seq "$pairs"); do
  for mode in on off; do
    flag=(); [ "$mode" = off ] && flag=(--no-samplers)
    ./target/release/perflab --quiet run "$exp" --no-align --out "$out/$mode-$i" "${flag[@]}" >/dev/null
  done
done
python3 - "$out" "$exp" <<'PY'
import glob, json, sys, statistics
out, exp = sys.argv[1], sys.argv[2]
rows = {"on": [], "off": []}
for mode in rows:
    for m in sorted(p for p in glob.glob(f"{out}/{mode}-*/{exp}/*/manifest.json") if "/latest/" not in p):
        meas = json.load(open(m))["measurements"]
        rows[mode].append((meas.get("dockerd_cpu_pct_of_core"), meas.get("perflab_cpu_pct_of_core")))
def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.mean(xs) if xs else float("nan")
print(f"experiment {exp}, {len(rows['on'])} runs with samplers, {len(rows['off'])} without")
print(f"{'samplers':<9} {'dockerd % of a core':>20} {'perflab % of a core':>20}")
for mode in ("off", "on"):
    d = mean(r[0] for r in rows[mode]); p = mean(r[1] for r in rows[mode])
    print(f"{mode:<9} {d:>20.2f} {p:>20.2f}")
d_off = mean(r[0] for r in rows["off"]); d_on = mean(r[0] for r in rows["on"])
print(f"dockerd on/off ratio: {d_on / d_off:.2f}" if d_off > 0 else f"dockerd on - off: {d_on - d_off:+.2f} points")
PY
rm -rf "$out"
