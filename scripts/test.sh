#!/usr/bin/env bash
# The project's test command (README.md): installs what a run and the tests need on a fresh Debian
# machine with Docker, builds the lab images when missing (`perflab build`), runs cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/prereqs.sh
bash scripts/test-prereqs.sh
bash scripts/prereqs-scaleout.sh

cargo build --locked --bins
# Content-addressed: a no-op in a few seconds when every image of the suite exists.
start=$(date +%s)
./target/debug/perflab build --suite "${PERFLAB_SUITE:-trixie}"
echo "perflab build: $(( $(date +%s) - start )) s" >&2

cargo test --locked "$@"
# The printed tables of docs/regression.md (about a minute): the simulation that the ignored
# test prints runs in CI too, so it cannot rot unseen.
cargo test --locked --test compare_power -- --ignored print_the_tables
