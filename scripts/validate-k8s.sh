#!/usr/bin/env bash
# Validate `perflab export k8s` manifests offline (needs scripts/prereqs-scaleout.sh's PyPI
# validators): scripts/validate-k8s.sh DIR
set -euo pipefail
exec python3 "$(dirname "$0")/validate-k8s.py" "$@"
