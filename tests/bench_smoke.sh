#!/usr/bin/env bash
# Runs every bench binary of the workspace once, as `cargo test --all-targets` does (no
# `--bench` argument: criterion's test mode, each benchmark once; the other benches' small
# smoke runs), from the build `cargo nextest run --workspace --all-targets` made: the same
# cargo selection, so nothing is rebuilt. Each runs in its package's folder, as cargo runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
listed=$SECONDS
# cargo's own lines go to the log. A "Compiling" here means the tests' build was not reused:
# with BENCH_SMOKE_REUSE_ONLY=1 (tests/run, right after the tests' build) that fails the step.
cargo_log=$(mktemp)
trap 'rm -f "$cargo_log"' EXIT
mapfile -t benches < <(cargo test --workspace --all-targets --no-run --message-format=json-render-diagnostics 2> >(tee "$cargo_log" >&2) |
  python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["bench"] and m.get("executable"):
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])
')
if [ ${#benches[@]} -eq 0 ]; then
  echo "bench smoke: cargo listed no bench binary (cargo test --workspace --all-targets --no-run failed?)" >&2
  exit 1
fi
echo "bench smoke: cargo listed ${#benches[@]} bench binaries in $((SECONDS - listed)) s"
if [ "${BENCH_SMOKE_REUSE_ONLY:-0}" = 1 ] && grep -q "Compiling" "$cargo_log"; then
  echo "bench smoke: cargo compiled again to list the benches (above): something between the tests' build and this step changed what cargo builds (an environment variable a build script tracks, a feature, a file)" >&2
  exit 1
fi
for entry in "${benches[@]}"; do
  dir=${entry%%$'\t'*}
  exe=${entry#*$'\t'}
  echo "== bench smoke: $(basename "$exe")"
  t0=$SECONDS
  (cd "$dir" && "$exe")
  echo "== bench smoke: $(basename "$exe") took $((SECONDS - t0)) s"
done
echo "bench smoke: ${#benches[@]} benches ran once"
