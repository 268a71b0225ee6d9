#!/usr/bin/env bash
# What only the tests need, beyond scripts/prereqs.sh (what a run needs): headless Chromium
# (tests/report_browser*.rs render report.html and out/index.html), the docker and git command
# lines (tests compare the engine's view and the checkout's commit), promtool (Debian's
# prometheus: the live OpenMetrics text). scripts/test.sh calls it.
# The installer's output goes to out/logs/test-prereqs-<UTC>.log; one line per phase on screen.
set -euo pipefail
source "$(dirname "$0")/lib/phases.sh"
phases_log test-prereqs
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v docker >/dev/null 2>&1 || missing+=(docker.io)
command -v git >/dev/null 2>&1 || missing+=(git)
# systemd-analyze verify checks the nightly recipe's units (tests/offline/history_nightly.rs)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# promtool checks the OpenMetrics text of `perflab run --prometheus` (tests/offline/live_server.rs,
# tests/browser/live_browser.rs)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing what the tests need; the installer's output goes to $PHASES_LOG" >&2
  apt_install "apt packages for the tests" "${missing[@]}"
fi
# On a systemd host Debian's prometheus starts its server, which would scrape every 15 s beside
# the measurements: the tests need only promtool.
if [[ " ${missing[*]:-} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
