#!/usr/bin/env bash
# Cross-language checks: the Python and JavaScript packages under guest/bindings/ run the
# admission component, and the shared vectors (tests/vectors/{admission,planner,factor-choice,decision}) through
# it and the policy world, as the Rust host does in tests/tests/conformance_vectors.rs.
#
# Assumes the components are built (`cargo policies`). Installs what it needs:
#   Python: a venv in target/cross-language/venv with wasmtime 50, pytest, redis, moto[ssm] and
#           the package (pip install guest/bindings/python, which packages the built component)
#   Node:   npm ci in guest/bindings/js (jco, typescript, redis, @aws-sdk/client-ssm), then
#           npm run build (jco transpile) and npm test (tsc --noEmit + node --test)
# Fails on any failure. The reader tests (BulkFactorReader) start redis-server and moto_server on
# free 127.0.0.1 ports; CAPACITY_REQUIRE_SERVERS=1 makes a missing one a failure, not a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

for wasm in capacity-admission-3.1.0.wasm capacity-policy-1.0.0.wasm; do
  if [ ! -f "target/policies/$wasm" ]; then
    echo "cross-language: target/policies/$wasm is missing: run \`cargo policies\` first" >&2
    exit 1
  fi
done

echo "== python: $(python3 --version)"
venv="$root/target/cross-language/venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check 'wasmtime==50.*' 'pytest>=7' 'redis>=4' 'moto[ssm]>=5'
"$py" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$root/guest/bindings/python"
(cd guest/bindings/python && CAPACITY_REQUIRE_SERVERS=1 "$py" -m pytest -q -p no:cacheprovider)

echo "== node: $(node --version)"
(
  cd guest/bindings/js
  npm ci --no-audit --no-fund --loglevel=error
  npm run --silent build
  CAPACITY_REQUIRE_SERVERS=1 npm test --silent
)

echo "cross-language: python and node agree with the vectors"
