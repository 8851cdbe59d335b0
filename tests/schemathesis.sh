#!/usr/bin/env bash
# Fuzzes the contract of `sentinel serve` with schemathesis (from PyPI): starts the server on a
# free 127.0.0.1 port with a temporary config (SQLite store, one published tick, a staff
# token), waits for /healthz, runs every schemathesis check against the server's own
# /openapi.json with the staff token, and stops the server. Any failure fails the script.
#
#   tests/schemathesis.sh [EXTRA SCHEMATHESIS ARGS...]
#   ST_MAX_EXAMPLES=50 (test cases per operation and phase); `--seed N` repeats a run.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v schemathesis >/dev/null || python3 -m pip install --quiet schemathesis
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
build_sentinel

dir=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || echo "schemathesis.sh: sentinel serve exited $? on SIGTERM" >&2
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

# A token known only to this run; the config holds its SHA-256.
token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
hash=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
at=2026-10-20T14:00:00Z
printf '{"at":"%s","reading":{"cpu_pct":72.5,"connections_pct":40}}\n' "$at" >"$dir/trace.jsonl"
cat >"$dir/sentinel.toml" <<EOF
policy = "$policy"
[store]
kind = "sqlite"
path = "state/sentinel.db"
[metrics]
kind = "trace"
path = "trace.jsonl"
[publish.cache]
kind = "file"
path = "out/cache.json"
[publish.parameter]
kind = "file"
path = "out/parameter.json"
[api]
tokens = [{ name = "schemathesis", role = "staff", sha256 = "$hash" }]
EOF
# A pin's expiry window is relative to the server's clock, which a schema cannot state: a pin
# that the schema calls well formed may still be refused by the policy (422, naming the
# field). Half of the generated pins get an expiry inside the window, so that setting and
# replacing pins is exercised too.
expiries=$(python3 -c '
import datetime as d
now = d.datetime.now(d.timezone.utc).replace(microsecond=0)
print(", ".join(chr(34) + (now + d.timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%SZ") + chr(34) for h in (1, 6, 23)))')
cat >"$dir/schemathesis.toml" <<EOF
[dictionaries.expiry]
values = [$expiries]

[[operations]]
include-operation-id = "setPin"
parameters = { "body.expires_at" = { dictionary = "expiry", probability = 0.5 } }
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "403", "422"]
EOF

# One published tick, so that GET /v1/state has a document to answer with.
(cd "$dir" && "$sentinel" tick --config sentinel.toml --at "$at" 2>>serve.log)

start_serve schemathesis.sh "$dir"

echo "schemathesis.sh: fuzzing $url/openapi.json"
# From the temp dir, so that schemathesis' cache (.schemathesis/) goes with it.
cd "$dir"
schemathesis --config-file "$dir/schemathesis.toml" run "$url/openapi.json" \
  --checks all \
  -H "Authorization: Bearer $token" \
  --max-examples "${ST_MAX_EXAMPLES:-50}" \
  --generation-database none \
  --no-color \
  "$@"
