#!/usr/bin/env bash
# The A/B gate of CI: every policy version in policies/ replayed against its predecessor, as the
# built components (what ships, from `cargo policies`), on the scenario traces
# (tests/traces/*.jsonl), the burst family (tests/bursts/*.jsonl) and the CloudWatch series
# (imported into target/ab-traces/), with the limits and waivers of policies/gate.toml. Each
# pair's report (report.md, report.json, one SVG timeline per trace) goes to
# target/ab-report/<candidate>-vs-<baseline>/, kept as the CI artefact. Exits 1 when any
# candidate fails its gate, after gating every pair.
#
#   tests/ab_gate.sh              (after `cargo policies`)
#   CLOUDWATCH_DIR=... tests/ab_gate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
data="${CLOUDWATCH_DIR:-tests/data/cloudwatch}"

cargo build --quiet -p capacity-sentinel --features aws --bin sentinel
sentinel="$target/debug/sentinel"
export RUST_LOG="${RUST_LOG:-warn}"
# The gate replays policies a pull request brought: compiled components are cached for this run
# only, never taken from (or left in) a cache other jobs of this user write (docs/threat-model.md).
if [ -z "${SENTINEL_CACHE_DIR:-}" ]; then
  SENTINEL_CACHE_DIR="$(mktemp -d)"
  export SENTINEL_CACHE_DIR
  trap 'rm -rf "$SENTINEL_CACHE_DIR"' EXIT
fi

shopt -s nullglob
csvs=("$data"/*.csv)
if [ ${#csvs[@]} -eq 0 ]; then
  echo "ab gate: no CloudWatch series in $data (the repository holds them in tests/data/cloudwatch)" >&2
  exit 2
fi
mkdir -p "$target/ab-traces"
traces=()
for trace in tests/traces/*.jsonl tests/bursts/*.jsonl; do
  [[ $trace == *.expected.jsonl ]] || traces+=("$trace")
done
for csv in "${csvs[@]}"; do
  out="$target/ab-traces/$(basename "$csv" .csv).jsonl"
  "$sentinel" trace import --signal cpu_pct --output "$out" "$csv"
  traces+=("$out")
done

component() { # the built component of policies/<version>
  local name
  name=$(sed -n 's/^name *= *"\(.*\)".*/\1/p' "policies/$1/policy.toml" | head -n 1)
  local file="$target/policies/$name-$1.wasm"
  if [ ! -f "$file" ]; then
    echo "ab gate: $file is missing: run \`cargo policies\` first" >&2
    exit 2
  fi
  echo "$file"
}

mapfile -t versions < <(for p in policies/*/policy.toml; do basename "$(dirname "$p")"; done | sort -V)
# Retired versions ([[retire]] in policies/gate.toml) stay in policies/ but leave the chain.
mapfile -t retired < <(awk '/^\[\[/{r=($0 ~ /^\[\[retire\]\]/); next} /^\[/{r=0} r && /^version *=/{gsub(/^[^"]*"|".*$/, ""); print}' policies/gate.toml)
declare -A wasm
for version in "${versions[@]}"; do
  wasm[$version]=$(component "$version") || exit 2
done
failed=0
previous=""
for version in "${versions[@]}"; do
  if printf '%s\n' "${retired[@]}" | grep -qx "$version"; then
    echo "ab gate: $version is retired (policies/gate.toml [[retire]]): not gated"
    continue
  fi
  if [ -n "$previous" ]; then
    report="$target/ab-report/$version-vs-$previous"
    rm -rf "$report"
    mkdir -p "$report"
    echo "ab gate: $version against $previous on ${#traces[@]} traces"
    if "$sentinel" replay --baseline "${wasm[$previous]}" --candidate "${wasm[$version]}" \
        --gate policies/gate.toml --report "$report" --format table "${traces[@]}" > "$report/tables.txt"; then
      echo "ab gate: $version passed (report: $report/report.md)"
    else
      echo "ab gate: $version FAILED against $previous (report: $report/report.md)" >&2
      failed=1
    fi
  fi
  previous="$version"
done
if [ ${#versions[@]} -lt 2 ]; then
  echo "ab gate: only ${#versions[@]} policy version(s) in policies/: nothing to gate"
fi
exit "$failed"
