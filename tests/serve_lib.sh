# Sourced by tests/schemathesis.sh and tests/browser.sh: the built `sentinel` and the 1.0.0
# component, and a `sentinel serve` on a free 127.0.0.1 port that answers /healthz.
#
#   build_sentinel               sets $policy (the 1.0.0 component) and $sentinel (the binary)
#   start_serve NAME DIR         serves DIR/sentinel.toml, logging to DIR/serve.log; sets $pid
#                                and $url; NAME prefixes its errors. The caller's trap stops $pid.

build_sentinel() {
  policy="$PWD/target/policies/capacity-policy-1.0.0.wasm"
  [ -f "$policy" ] || cargo policies
  cargo build --quiet -p capacity-sentinel --features aws --bin sentinel
  local target_dir
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  sentinel="$target_dir/debug/sentinel"
}

start_serve() {
  local name=$1 dir=$2
  "$sentinel" serve --config "$dir/sentinel.toml" --addr 127.0.0.1:0 2>>"$dir/serve.log" &
  pid=$!
  url=
  for _ in $(seq 1 300); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$dir/serve.log" | head -n1 || true)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$dir/serve.log" >&2; echo "$name: sentinel serve did not start" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$dir/serve.log" >&2; echo "$name: sentinel serve did not log its address" >&2; exit 1; }
  for _ in $(seq 1 100); do
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$url/healthz" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$name: sentinel serve at $url did not answer /healthz" >&2
  exit 1
}
