#!/usr/bin/env bash
# Policy 1.1.0 from its evidence: the release sentinel (what `cargo install` builds) runs the
# command in policies/1.1.0/README.md, writing into target/tune-reproduce/ instead, and the
# policy it writes must equal policies/1.1.0/policy.toml byte for byte, its figure likewise,
# and its README too but for the command line, which names the other folders. The sweep's
# report stays there.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
evidence=(--base policies/1.0.0 --space policies/tune-space.toml --split fraction --segment-days 7
  --gate policies/gate.toml --gate-trace tests/traces --gate-trace tests/data/cloudwatch
  tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv tests/data/cloudwatch)
shipped="sentinel policy tune ${evidence[*]} --out target/tune --write policies/1.1.0"
if ! grep -qxF "$shipped" policies/1.1.0/README.md; then
  echo "tune reproduce: policies/1.1.0/README.md does not give the command this script runs:" >&2
  echo "  $shipped" >&2
  exit 1
fi
cargo build --quiet --release -p capacity-sentinel --bin sentinel
out="$target/tune-reproduce"
rm -rf "$out"
"$target/release/sentinel" policy tune "${evidence[@]}" --out "$out" --write "$out/1.1.0" --version 1.1.0
cmp "$out/1.1.0/policy.toml" policies/1.1.0/policy.toml
cmp "$out/1.1.0/pareto.svg" policies/1.1.0/pareto.svg
diff <(grep -vxF "$shipped" policies/1.1.0/README.md) <(grep -v '^sentinel policy tune ' "$out/1.1.0/README.md")
echo "tune reproduce: policy 1.1.0 and its evidence reproduced (report: $out/report.md)"

# The damping frontier in the README ("Tuning a policy"): the same evidence over
# policies/tune-space-damping.toml must draw policies/tune-damping-frontier.svg byte for byte.
damping_out="$target/tune-damping-reproduce"
rm -rf "$damping_out"
"$target/release/sentinel" policy tune --base policies/1.0.0 --space policies/tune-space-damping.toml \
  --gate policies/gate.toml --gate-trace tests/traces --gate-trace tests/data/cloudwatch --out "$damping_out" \
  tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv tests/data/cloudwatch
cmp "$damping_out/pareto.svg" policies/tune-damping-frontier.svg
echo "tune reproduce: the damping frontier reproduced (report: $damping_out/report.md)"
