# Sourced by tests/run and .ci/run: `step NAME COMMAND...` runs one step of the run and records
# its wall time; the table of every step's time is printed when the run ends, failed or not, so
# the next slow step is visible in CI's log, with the disk space left after each step (a full
# disk fails a build with "No space left on device" or a linker bus error; the column shows
# which step filled it).
#
#   step "fmt" cargo fmt --all --check
#   trap 'steps_table tests/run' EXIT      (each caller installs its own trap)

step_times=()

step() {
  local name=$1
  shift
  local t0=$SECONDS rc=0
  echo "== step: $name"
  "$@" || rc=$?
  local verdict=ok
  [ "$rc" -eq 0 ] || verdict="FAILED (exit $rc)"
  local free_gb
  free_gb=$(df -Pk . 2>/dev/null | awk 'NR==2 {printf "%.1f", $4 / 1048576}')
  step_times+=("$(printf '%6d s  %6s GB free  %s  %s' $((SECONDS - t0)) "${free_gb:-?}" "$name" "$verdict")")
  return "$rc"
}

steps_table() {
  [ ${#step_times[@]} -gt 0 ] || return 0
  echo "== $1: time per step (wall clock) and the disk space left after it"
  printf '%s\n' "${step_times[@]}"
  printf '%6d s  total\n' "$SECONDS"
}
