#!/usr/bin/env bash
# Regenerate tests/fixtures/history/otava-golden.json: installs apache-otava 0.8.0 and
# otava-test-data from PyPI into a scratch venv and runs scripts/history-otava-golden.py.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q 'apache-otava==0.8.0' 'otava-test-data'
"$venv/bin/python" "$here/scripts/history-otava-golden.py" "$here/tests/fixtures/history/otava-golden.json"
