#!/usr/bin/env bash
# Policies 1.1.0, 1.2.0 and 1.3.0 from their evidence: the release sentinel (what `cargo install`
# builds) runs the command in each version's README, writing into target/tune-reproduce/<version>
# instead, and the policy it writes must equal policies/<version>/policy.toml byte for byte, its
# figure likewise, and its README too but for the command line, which names the other folders.
# Each sweep's report stays there. 1.2.0 is also tuned as four shards (`--shard I/4`, one after
# another) merged (`--merge`): its reports and policy folder must be the unsharded run's, byte for
# byte.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p capacity-sentinel --bin sentinel
rm -rf "$target/tune-reproduce"

reproduce() { # VERSION EVIDENCE...: the command of policies/VERSION/README.md, rerun
  local version=$1
  shift
  local shipped="sentinel policy tune $* --out target/tune --write policies/$version"
  if ! grep -qxF "$shipped" "policies/$version/README.md"; then
    echo "tune reproduce: policies/$version/README.md does not give the command this script runs:" >&2
    echo "  $shipped" >&2
    exit 1
  fi
  local out="$target/tune-reproduce/$version"
  "$target/release/sentinel" policy tune "$@" --out "$out" --write "$out/$version" --version "$version"
  cmp "$out/$version/policy.toml" "policies/$version/policy.toml"
  cmp "$out/$version/pareto.svg" "policies/$version/pareto.svg"
  diff <(grep -vxF "$shipped" "policies/$version/README.md") <(grep -v '^sentinel policy tune ' "$out/$version/README.md")
  echo "tune reproduce: policy $version and its evidence reproduced (report: $out/report.md)"
}

sharded() { # VERSION EVIDENCE...: the same tuning as four shards and a merge, equal to the whole run
  local version=$1
  shift
  local out="$target/tune-reproduce/$version" shards="$target/tune-reproduce/$version-shards"
  for i in 1 2 3 4; do
    "$target/release/sentinel" policy tune "$@" --shard "$i/4" --out "$shards"
  done
  # The merge is given the whole run's arguments (its reports name them), so the whole run's
  # files are moved aside first and compared after.
  mv "$out" "$out-whole"
  "$target/release/sentinel" policy tune "$@" --merge "$shards" --out "$out" --write "$out/$version" --version "$version" >/dev/null
  diff -r "$out-whole" "$out"
  echo "tune reproduce: $version as four shards merged is the whole run (reports, figure, policy folder), byte for byte"
}

gate=(--gate policies/gate-1.2.0.toml --gate-trace tests/traces --gate-trace tests/data/cloudwatch)

# 1.1.0: segments of the same series on both sides of the split (its README warns: fit).
reproduce 1.1.0 --base policies/1.0.0 --space policies/tune-space.toml --split fraction --segment-days 7 "${gate[@]}" \
  tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv tests/data/cloudwatch

# 1.2.0: judged by series, flap damping in the space (README, "Tuning a policy").
reproduce 1.2.0 --base policies/1.0.0 --space policies/tune-space-damping.toml "${gate[@]}" --repeated-timestamps last \
  tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv tests/data/cloudwatch \
  latency:requests=tests/data/known-cause/ec2_request_latency_system_failure.csv
sharded 1.2.0 --base policies/1.0.0 --space policies/tune-space-damping.toml "${gate[@]}" --repeated-timestamps last \
  tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv tests/data/cloudwatch \
  latency:requests=tests/data/known-cause/ec2_request_latency_system_failure.csv

# 1.3.0: from 1.2.0, judged by series on the real series and the burst family (tests/bursts/),
# gated on the scenarios, the burst family and the CloudWatch series (policies/1.3.0/README.md).
reproduce 1.3.0 --base policies/1.2.0 --space policies/tune-space-bursts.toml --gate policies/gate.toml \
  --gate-trace tests/traces --gate-trace tests/bursts --gate-trace tests/data/cloudwatch --repeated-timestamps last \
  tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv tests/data/cloudwatch \
  latency:requests=tests/data/known-cause/ec2_request_latency_system_failure.csv tests/bursts
