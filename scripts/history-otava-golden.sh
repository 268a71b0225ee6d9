#!/usr/bin/env bash
# Regenerate tests/fixtures/history/otava-golden.json: installs apache-otava 0.8.0 and
# otava-test-data from PyPI into a scratch venv and runs scripts/history-otava-golden.py.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q 'apache-otava==0.8.0' 'otava-test-data'
# exp1-made.csv: `perflab history exp1 --csv` over 45 nights made from exp1's recorded round
# (2.7 % noise, php8.4-fpm 8.4.28 and 9 % more CPU from night 31): Otava imports it itself
"$venv/bin/python" "$here/scripts/history-otava-golden.py" \
  "$here/tests/fixtures/history/otava-golden.json" "$here/tests/fixtures/history/exp1-made.csv"
