#!/usr/bin/env bash
# Runs every bench binary of the workspace once, as `cargo test --all-targets` does (no
# `--bench` argument: criterion's test mode, each benchmark once; the other benches' small
# smoke runs), from the build `cargo nextest run --workspace --all-targets` made: the same
# cargo selection, so nothing is rebuilt. Each runs in its package's folder, as cargo runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
listed=$SECONDS
# cargo's own lines (a "Compiling" here means the tests' build was not reused) go to the log.
mapfile -t benches < <(cargo test --workspace --all-targets --no-run --message-format=json-render-diagnostics |
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
for entry in "${benches[@]}"; do
  dir=${entry%%$'\t'*}
  exe=${entry#*$'\t'}
  echo "== bench smoke: $(basename "$exe")"
  t0=$SECONDS
  (cd "$dir" && "$exe")
  echo "== bench smoke: $(basename "$exe") took $((SECONDS - t0)) s"
done
echo "bench smoke: ${#benches[@]} benches ran once"
