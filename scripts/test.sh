#!/usr/bin/env bash
# The project's test command (README.md): installs what the tests need, builds images when missing, runs cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked "$@"
