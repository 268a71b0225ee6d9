#!/usr/bin/env bash
# Rewrite the generated parts of docs/ from the code: docs/reference/cli.md (perflab's clap
# command tree), the catalog table in docs/catalog.md (`perflab list --markdown`), the `--set`
# bounds table in docs/reference/experiment-yaml.md and the contents in docs/README.md.
# tests/offline/docs.rs holds the one implementation and fails while any of them is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
PERFLAB_BLESS=1 cargo test --quiet --test offline docs::generated_docs_are_current >/dev/null
cargo test --quiet --test offline docs:: >/dev/null
echo "docs/ regenerated and checked (links, README size, generated parts)"
