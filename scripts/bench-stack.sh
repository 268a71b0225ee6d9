#!/usr/bin/env bash
# Benchmark of the image and stack layer on this host (not a test): cold build of every image of
# one suite, warm `perflab build` no-op, `perflab up php|node|demo` to ready, image sizes.
# Usage: scripts/bench-stack.sh [SUITE] [--cold]
#   --cold removes this suite's perflab images first (only images tagged perflab/*:<suite>-*).
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE="${1:-trixie}"
COLD="${2:-}"
cargo build --locked --bins >/dev/null 2>&1 || cargo build --locked --bins
P=./target/debug/perflab   # the time goes to Docker, not to perflab
OUT="out/bench-stack-$SUITE-$(date -u +%Y%m%dT%H%M%SZ).txt"
mkdir -p out
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "$*" | tee -a "$OUT"; }

log "perflab stack benchmark: suite $SUITE, host $(nproc) CPUs, $(date -u +%FT%TZ)"
log "docker: $(docker version --format '{{.Server.Version}} (API {{.Server.APIVersion}})')"

if [ "$COLD" = "--cold" ]; then
  ids=$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -E "^perflab/[a-z0-9-]+:$SUITE-" || true)
  [ -n "$ids" ] && docker rmi $ids >/dev/null
  t0=$(now); $P build --suite "$SUITE" -q >/dev/null; t1=$(now)
  log "cold build (debootstrap + 6 images): $(secs "$t0" "$t1") s   (goal < 360 s)"
fi

t0=$(now); $P build --suite "$SUITE" -q >/dev/null; t1=$(now)
log "warm build no-op:                     $(secs "$t0" "$t1") s   (goal < 3 s)"
for i in 2 3; do
  t0=$(now); $P build --suite "$SUITE" -q >/dev/null; t1=$(now)
  log "warm build no-op (repeat $i):          $(secs "$t0" "$t1") s"
done

for lab in php node demo; do
  for i in 1 2 3; do
    t0=$(now)
    out=$($P up "$lab" --suite "$SUITE" -q)
    line=$(printf '%s\n' "$out" | sed -n 1p)
    t1=$(now)
    run=$(echo "$line" | sed -n 's/.*run id \([^,]*\),.*/\1/p')
    inner=$(echo "$line" | sed -n 's/.*ready in \([0-9.]*\) s.*/\1/p')
    log "up $lab to ready (run $i):             $(secs "$t0" "$t1") s wall, stack start ${inner} s   (goal < 20 s)"
    t0=$(now); $P down "$run" 2>/dev/null; t1=$(now)
    log "down $lab:                            $(secs "$t0" "$t1") s"
  done
done

log "image sizes:"
$P build --suite "$SUITE" -q | tee -a "$OUT"
echo "written: $OUT" >&2
