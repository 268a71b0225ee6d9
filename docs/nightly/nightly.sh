#!/usr/bin/env bash
# perflab's nightly (docs/history.md): the systemd service, the cron line and the CI job all
# run this. 1. rebuild the suite's images from today's Debian archive; 2. run the matrix
# (`perflab run`: one round of each experiment of the target); 3. `perflab history --check`,
# whose exit code this script returns (0: no new regression, 1: a regression after the last
# acknowledged change point; acknowledge it with `perflab history ack EXP POINT`).
set -euo pipefail
perflab=${PERFLAB:-./target/release/perflab}
suite=${PERFLAB_SUITE:-forky}
target=${PERFLAB_TARGET:-php}
out=${PERFLAB_OUT:-out}

# 1. New packages: perflab's image tags hash the recipes, not the archive, so `perflab build`
# alone keeps yesterday's images. `--refresh` asks Debian, in a throwaway container of each image,
# whether an installed package has a newer candidate; only those images (and, when the base has
# one, every image built FROM it) are built again, without the build cache, under the same tags.
# Each run's manifest then records the new versions (`components`).
"$perflab" build --suite "$suite" --refresh

# 2. The matrix: one round of each experiment; a failed round is not the history's news.
"$perflab" run "$target" --suite "$suite" --out "$out" || echo "note: a round failed (see $out)" >&2

# 3. The history: its pages, and the alert.
"$perflab" history "$target" --suite "$suite" --out "$out" --pages --check
