#!/usr/bin/env bash
# Benchmark: `perflab index` over N generated run directories (default 1,000): copies of the
# recorded runs in tests/fixtures/verify spread over 20 experiments, two suites and a year,
# each with its report.json, manifest.json and status.json. Prints the build time (median of
# 5 builds) and the size of index.html.
# Usage: scripts/bench-index.sh [N]   (builds the release binary first; PERFLAB_BIN=path skips it)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000}"
if [ -z "${PERFLAB_BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${PERFLAB_BIN:-$PWD/target/release/perflab}
out=$(mktemp -d /tmp/perflab-bench-index.XXXXXX)
trap 'rm -rf "$out"' EXIT
python3 - "$out" "$n" <<'PY'
import json, os, sys, glob, shutil, datetime
out, n = sys.argv[1], int(sys.argv[2])
runs = sorted(glob.glob("tests/fixtures/verify/*/*/manifest.json"))
t0 = datetime.datetime(2026, 1, 1)
for i in range(n):
    src = os.path.dirname(runs[i % len(runs)])
    exp = os.path.basename(os.path.dirname(src))
    created = t0 + datetime.timedelta(hours=8 * i + i % 7)
    name = created.strftime("%Y%m%dT%H%M%SZ") + f"-r{1 + i % 3}"
    dst = os.path.join(out, exp, name)
    os.makedirs(dst)
    m = json.load(open(os.path.join(src, "manifest.json")))
    m["measurements"]["suite"] = ["trixie", "forky"][(i // len(runs)) % 2]
    m["run_id"], m["created"], m["round"] = name, created.isoformat() + "Z", 1 + i % 3
    json.dump(m, open(os.path.join(dst, "manifest.json"), "w"))
    for f in ("report.json", "status.json"):
        shutil.copy(os.path.join(src, f), dst)
PY
count=$(find "$out" -name manifest.json | wc -l)
"$bin" index --out "$out" >/dev/null 2>&1 # warm the page cache
t=()
for _ in 1 2 3 4 5; do
  s=$(date +%s%N)
  "$bin" index --out "$out" >/dev/null 2>&1
  e=$(date +%s%N)
  t+=($(( (e - s) / 1000000 )))
done
median=$(printf '%s\n' "${t[@]}" | sort -n | sed -n 3p)
bytes=$(stat -c %s "$out/index.html")
gz=$(gzip -c "$out/index.html" | wc -c)
echo "run directories: $count"
echo "perflab index: median ${median} ms over 5 builds (${t[*]} ms)"
echo "index.html: ${bytes} bytes ($(( bytes / 1024 )) KiB), gzip ${gz} bytes"
