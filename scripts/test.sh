#!/usr/bin/env bash
# The project's test command (README.md): installs what a run and the tests need on a fresh Debian
# machine with Docker, builds the lab images when missing (`perflab build`), runs cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."

# The test build needs a few GB (five test binaries, line tables only): say so before it fails
# at the link with "No space left on device".
free_kb=$(df -Pk . | awk 'NR==2 {print $4}')
echo "disk free for the build: $((free_kb / 1024 / 1024)) GB" >&2
if [ "$free_kb" -lt $((6 * 1024 * 1024)) ]; then
  echo "warning: under 6 GB free here; the test build may not fit (cargo clean, docker builder prune)" >&2
fi

bash scripts/prereqs.sh
bash scripts/test-prereqs.sh
bash scripts/prereqs-scaleout.sh

# The binary first, then the lab images in the background (`perflab build`: content-addressed,
# a no-op in seconds when every image of the suite exists; on a fresh machine minutes of
# downloads and installs inside containers) while the test binaries compile and the tests
# that start no Docker run (docs/ci-time.md); then, still beside them, the Docker tests that
# judge no measured figure. The tests that measure wait for both.
start=$(date +%s)
cargo build --locked --bin perflab
echo "the binary: $(( $(date +%s) - start )) s" >&2
mkdir -p target/tmp
# Where the time went: every test that holds a Docker binary's `serial()` lock appends its
# seconds to target/tmp/test-times.tsv; printed, slowest first, however the tests end.
times=target/tmp/test-times.tsv
rm -f "$times"
print_times() {
  [ -s "$times" ] || return 0
  echo "the Docker and browser tests, slowest first (seconds; $times):" >&2
  sort -t$'\t' -k3,3 -rn "$times" | awk -F'\t' '{printf "  %7.1f  %-8s %s %s\n", $3, $1, $2, ($4 == "ok" ? "" : "(" $4 ")")}' >&2
  awk -F'\t' '{s[$1] += $3} END {for (b in s) printf "  %7.1f  %s in all\n", s[b], b}' "$times" | sort -rn >&2
}
images_log=target/tmp/perflab-build.log
lane_log=target/tmp/docker-lane.log
rm -f "$lane_log"
# The Docker tests that judge no measured figure (`stacks`, `scaleout`, `runs`' `bookkeeping::`
# modules: lifecycle, interrupts, sweeps, second endpoints, compare's bookkeeping) run in this
# lane once the images exist, beside the tests that start no Docker (docs/ci-time.md). Given a
# filter, the script only builds the images here.
lane=1
[ "$#" -eq 0 ] || lane=0
(
  s=$(date +%s)
  ./target/debug/perflab build --suite "${PERFLAB_SUITE:-trixie}" >"$images_log" 2>&1 || exit 3
  echo "perflab build: $(( $(date +%s) - s )) s (beside the test build)" >>"$images_log"
  [ "$lane" = 1 ] || exit 0
  s=$(date +%s)
  rc=0
  for t in "--test stacks" "--test scaleout" "--test runs bookkeeping::"; do
    # shellcheck disable=SC2086 # the binary and its filter are two words
    cargo test --locked $t >>"$lane_log" 2>&1 || rc=1
  done
  echo "the lane (stacks, scaleout, runs' bookkeeping): $(( $(date +%s) - s )) s" >>"$lane_log"
  exit "$rc"
) &
docker_pid=$!
# however the script ends, the build and the lane (cargo and its test binaries) do not outlive
# it, and the slowest tests are printed
kill_tree() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
  kill -TERM "$1" 2>/dev/null || true
}
on_exit() {
  kill_tree "$docker_pid"
  print_times
}
trap on_exit EXIT
# Waits for the images (and, without a filter, the lane); prints their logs.
docker_done() {
  local rc=0
  wait "$docker_pid" || rc=$?
  cat "$images_log" >&2
  [ "$rc" != 3 ] || { echo "perflab build failed: the Docker tests cannot run" >&2; exit 1; }
  [ ! -s "$lane_log" ] || cat "$lane_log"
  [ "$rc" = 0 ] || { echo "the Docker lane failed (exit $rc): $lane_log" >&2; exit 1; }
}
start=$(date +%s)
cargo test --locked --no-run
echo "the test build: $(( $(date +%s) - start )) s" >&2

if [ "$#" -gt 0 ]; then
  docker_done
  cargo test --locked "$@"
else
  # First what measures nothing (docs/ci-time.md): the unit tests and `offline`, and beside
  # them, from the start, `offline`'s 20,000-run test (one CPU-bound child process at a time,
  # minutes in a debug build; in the same libtest run it would start late and run alone at
  # the end). None of them starts Docker or takes the host lock, so sharing the two CPUs (with
  # each other and with the Docker lane, which judges no measured figure) only slows them; the
  # 20,000-run test's bounds are CPU and wall time far above a shared host's.
  # They run at a lower priority (nice 10): the Docker lane beside them is the longer part and
  # mostly waits on containers, so giving it the CPUs first ends both sooner.
  big=out_scale::twenty_thousand_runs
  nice -n 10 cargo test --locked --test offline "$big" -- --exact >target/tmp/out-scale.log 2>&1 &
  big_pid=$!
  failed=0
  nice -n 10 cargo test --locked --lib --bins --test offline -- --skip "$big" || failed=1
  # On the CPU the rest leaves while the 20,000-run test ends alone: the doc tests, and the
  # browser's tests on recorded pages (headless Chromium, no Docker, no lock, nothing timed;
  # `report_browser_run`, a real measured run, waits for the Docker binaries).
  nice -n 10 cargo test --locked --doc || failed=1
  nice -n 10 cargo test --locked --test browser report_browser:: || failed=1
  wait "$big_pid" || failed=1
  cat target/tmp/out-scale.log
  [ "$failed" = 0 ] || exit 1
  docker_done
  # Then the tests that measure, with nothing beside them (each binary runs its tests one at
  # a time: `serial()`).
  cargo test --locked --test browser --test runs -- --skip report_browser:: --skip bookkeeping::
fi
echo "test build: $(du -sh target 2>/dev/null | cut -f1) in target/" >&2
