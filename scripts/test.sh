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

cargo build --locked --bins
# Content-addressed: a no-op in a few seconds when every image of the suite exists.
start=$(date +%s)
./target/debug/perflab build --suite "${PERFLAB_SUITE:-trixie}"
echo "perflab build: $(( $(date +%s) - start )) s" >&2

cargo test --locked "$@"
echo "test build: $(du -sh target 2>/dev/null | cut -f1) in target/" >&2
