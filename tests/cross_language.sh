#!/usr/bin/env bash
# Cross-language checks: the Python and JavaScript packages under guest/bindings/ run the
# admission component, and the shared vectors (tests/vectors/{admission,planner,factor-choice,decision}) through
# it and the policy world, as the Rust host does in tests/tests/conformance_vectors.rs.
#
# Assumes the components are built (`cargo policies`). Installs what it needs:
#   Python: a venv in target/cross-language/venv with wasmtime 50, pytest, redis, moto[ssm],
#           psycopg[binary] and the package (pip install guest/bindings/python, which packages
#           the built component)
#   Node:   npm ci in guest/bindings/js (jco, typescript, redis, @aws-sdk/client-ssm, pg), then
#           npm run build (jco transpile) and npm test (tsc --noEmit + node --test)
# Fails on any failure. The reader tests (BulkFactorReader) start redis-server and moto_server on
# free 127.0.0.1 ports, the profile tests (WorkspaceProfiles, BulkAdmission) a PostgreSQL cluster
# (initdb, pg_ctl); CAPACITY_REQUIRE_SERVERS=1 makes a missing one a failure, not a skip. Both
# packages run the shared vectors through BulkAdmission against those servers and write their
# results; the two files must be the same byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

for wasm in capacity-admission-3.2.0.wasm capacity-policy-1.0.0.wasm; do
  if [ ! -f "target/policies/$wasm" ]; then
    echo "cross-language: target/policies/$wasm is missing: run \`cargo policies\` first" >&2
    exit 1
  fi
done

echo "== python: $(python3 --version)"
venv="$root/target/cross-language/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check 'wasmtime==50.*' 'pytest>=7' 'redis>=4' 'moto[ssm]>=5' 'psycopg[binary]>=3.1'
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$root/guest/bindings/python"
results="$root/target/cross-language"
rm -f "$results/python-vectors.json" "$results/node-vectors.json"
(cd guest/bindings/python && CAPACITY_REQUIRE_SERVERS=1 CAPACITY_RESULTS_FILE="$results/python-vectors.json" "$py" -m pytest -q -p no:cacheprovider)

echo "== node: $(node --version)"
(
  cd guest/bindings/js
  npm ci --no-audit --no-fund --loglevel=error
  npm run --silent build
  CAPACITY_REQUIRE_SERVERS=1 CAPACITY_RESULTS_FILE="$results/node-vectors.json" npm test --silent
)
if ! cmp -s "$results/python-vectors.json" "$results/node-vectors.json"; then
  echo "cross-language: BulkAdmission gave different results in Python and Node" >&2
  diff -u "$results/python-vectors.json" "$results/node-vectors.json" >&2 || true
  exit 1
fi
echo "cross-language: BulkAdmission: $(grep -c '"case"' "$results/python-vectors.json") vector cases, the same in Python and Node" 

echo "cross-language: python and node agree with the vectors"
