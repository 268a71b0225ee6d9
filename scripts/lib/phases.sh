# Shared by scripts/prereqs.sh, scripts/test-prereqs.sh and scripts/perflab (sourced, not run):
# each slow step is a phase whose full output goes to one log file, while the screen shows one
# line per phase with its seconds ("apt packages (debootstrap) ... 41 s"). A failed phase prints
# the end of the log and where the whole of it is. Durations are recorded for the next first
# run's estimates in out/build-logs/timings.tsv (`<UTC>\t<key>\t<seconds>\t<note>`, the newest
# line of a key wins; src/host/timings.rs reads the same file).

PHASES_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TIMINGS="$PHASES_ROOT/out/build-logs/timings.tsv"

# phases_log NAME: set PHASES_LOG to out/logs/NAME-<UTC>.log (created on the first phase).
phases_log() {
  PHASES_LOG="$PHASES_ROOT/out/logs/$1-$(date -u +%Y%m%dT%H%M%SZ).log"
}

# phase LABEL CMD...: run CMD with its output in $PHASES_LOG; one line on stderr with the
# seconds it took; on failure the log's last 20 lines and exit with CMD's status.
phase() {
  local label="$1"; shift
  mkdir -p "$(dirname "$PHASES_LOG")"
  local t0=$SECONDS rc=0
  printf '%s ... ' "$label" >&2
  { echo "### $label: $*"; } >>"$PHASES_LOG"
  "$@" >>"$PHASES_LOG" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'FAILED after %d s (exit %d)\n' "$((SECONDS - t0))" "$rc" >&2
    tail -n 20 "$PHASES_LOG" | sed 's/^/  | /' >&2
    echo "  full log: $PHASES_LOG" >&2
    exit "$rc"
  fi
  printf '%d s\n' "$((SECONDS - t0))" >&2
  PHASE_SECONDS=$((SECONDS - t0))
}

# record_timing KEY SECONDS NOTE: append a record for the next estimates.
record_timing() {
  mkdir -p "$(dirname "$TIMINGS")"
  printf '%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$2" "$3" >>"$TIMINGS" || true
}

# recorded_timing KEY: "SECONDS DATE" of the newest record of KEY, or nothing.
recorded_timing() {
  [ -f "$TIMINGS" ] || return 0
  tail -c 65536 "$TIMINGS" | awk -F'\t' -v k="$1" \
    '$2 == k && $1 >= d { d = $1; s = $3 } END { if (d != "") printf "%.0f %s\n", s, substr(d, 1, 10) }'
}

# minutes SECONDS: "6 min 05 s" / "40 s".
minutes() {
  if [ "$1" -ge 60 ]; then printf '%d min %02d s' "$(($1 / 60))" "$(($1 % 60))"; else printf '%d s' "$1"; fi
}

# apt_install LABEL PACKAGES...: one phase for `apt-get update` (once), one for the install,
# without recommended packages (a run needs none of them).
apt_install() {
  local label="$1"; shift
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ -z "${PHASES_APT_UPDATED:-}" ]; then
    phase "apt package lists" $sudo apt-get update -q
    PHASES_APT_UPDATED=1
  fi
  phase "$label ($*)" $sudo env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "$@"
}
