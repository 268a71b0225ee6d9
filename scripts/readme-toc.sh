#!/usr/bin/env bash
# Regenerate the table of contents in README.md (between the toc markers) from its `##` and
# `###` headings; tests/cli_readme.rs holds the one implementation and checks it stays in sync.
set -euo pipefail
cd "$(dirname "$0")/.."
PERFLAB_README_TOC=write cargo test --quiet --test cli_readme readme_opens_with_a_quick_start >/dev/null
echo "README.md table of contents updated"
