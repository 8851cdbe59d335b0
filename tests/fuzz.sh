#!/usr/bin/env bash
# The fuzz targets of fuzz/ (see fuzz/README.md): builds them with cargo-fuzz and runs each for
# FUZZ_SECONDS (default 20), one per core at a time, on its committed seeds (fuzz/seeds/<target>)
# and the corpus earlier runs grew (fuzz/corpus/<target>, gitignored). Fails on any crash: a
# panic, a broken invariant, and with the host build a policy trap or timeout or a component
# answering differently from the native rules.
#
# By default the targets that need no part of the sentinel: decide, admission and planner on the
# rules' native code, trace_parser on the trace format crate (a build of about a minute on 2
# cores). FUZZ_HOST=1 builds with `--features host` (the sentinel's whole dependency tree, several
# minutes): each structured input also through the built components, and config_parser too.
# tests/run uses the default; its workspace tests replay every target's seeds and corpus through
# the host build's checks (tests/tests/fuzz_seeds.rs).
#
# cargo-fuzz runs here on stable Rust with `--sanitizer none` (`-s none`): its default,
# AddressSanitizer, needs nightly's -Zsanitizer, and these targets are safe Rust hunting for
# panics and wrong answers, not memory errors. No nightly, no RUSTC_BOOTSTRAP. `--dev` builds
# with fuzz/Cargo.toml's dev profile (debug assertions and overflow checks on, only the hot
# crates optimised); every cargo fuzz command must then say --dev too.
#
# A long run of one target, on both cores, until stopped or an hour has passed:
#   cd fuzz && cargo fuzz run --dev -s none decide corpus/decide seeds/decide -- \
#       -max_total_time=3600 -jobs=2 -workers=2 -timeout=10
# (add `--features host` after `-s none` for the components; the parser targets add
# -dict=dicts/<target>.dict). A crash is saved as fuzz/artifacts/<target>/crash-<sha1>;
# reproduce it with
#   cd fuzz && cargo fuzz run --dev -s none <target> artifacts/<target>/crash-<sha1>
# and print the generated input with `cargo fuzz fmt --dev -s none <target> <file>`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds="${FUZZ_SECONDS:-20}"
targets=(decide admission planner trace_parser)
features=()
if [ "${FUZZ_HOST:-0}" = 1 ]; then
  targets+=(config_parser)
  features=(--features host)
fi
cargo_fuzz_version=0.13.2

if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $cargo_fuzz_version" ]; then
  echo "fuzz: installing cargo-fuzz $cargo_fuzz_version (about a minute)"
  cargo install cargo-fuzz --version "$cargo_fuzz_version" --locked --quiet
fi

if [ ${#features[@]} -gt 0 ]; then
  # The components cargo policies built (in the main target dir), then the fuzz crate's own dir.
  policies_dir="${CARGO_TARGET_DIR:-$root/target}/policies"
  case "$policies_dir" in /*) ;; *) policies_dir="$root/$policies_dir" ;; esac
  if [ ! -f "$policies_dir/capacity-policy-1.0.0.wasm" ] || [ ! -f "$policies_dir/capacity-policy-2.0.0.wasm" ]; then
    cargo policies
  fi
  export FUZZ_POLICIES_DIR="$policies_dir"
fi
export CARGO_TARGET_DIR="$root/fuzz/target"

cd fuzz
started=$(date +%s)
cargo fuzz build --dev -s none "${features[@]}"
echo "fuzz: targets built in $(( $(date +%s) - started )) s"
# FUZZ_BUILD_ONLY=1: the build alone (tests/run builds the targets in the background, then runs them).
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

logs="$root/fuzz/target/logs"
mkdir -p "$logs"
# One target per core at a time (each libFuzzer run is one process on one core).
parallel=$(nproc 2>/dev/null || echo 1)
fuzz_one() { # TARGET: runs it for $seconds; its log is $logs/TARGET.log
  local target=$1
  mkdir -p "corpus/$target"
  local args=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1)
  [ -f "dicts/$target.dict" ] && args+=(-dict="dicts/$target.dict")
  cargo fuzz run --dev -s none "${features[@]}" "$target" "corpus/$target" "seeds/$target" -- "${args[@]}" >"$logs/$target.log" 2>&1
}
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do
    wait -n || true
  done
  rm -f "$logs/$target.rc"
  (
    rc=0
    fuzz_one "$target" || rc=$?
    echo "$rc" >"$logs/$target.rc"
  ) &
done
wait
failed=()
for target in "${targets[@]}"; do
  if [ "$(cat "$logs/$target.rc" 2>/dev/null)" = 0 ]; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$target.log")
    echo "fuzz: $target: ${runs:-?} runs in ${seconds} s, no crash"
  else
    tail -n 80 "$logs/$target.log"
    echo "fuzz: $target FAILED; the input is under fuzz/artifacts/$target/ (full log: $logs/$target.log)"
    failed+=("$target")
  fi
done
[ ${#failed[@]} -eq 0 ] || exit 1
echo "fuzz: finished in $(( $(date +%s) - started )) s"
