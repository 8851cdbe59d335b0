#!/usr/bin/env bash
# Drives the web console of `sentinel serve` in a real Chromium (Playwright for Python, with
# Debian's /usr/bin/chromium; no browser is downloaded): builds the binary, fills a temporary
# SQLite store with three hours of ticks ending now (cpu rising in the last hour), starts the
# server on a free 127.0.0.1 port with a staff and a viewer token and an OpenID Connect issuer
# of its own (tests/browser/make_jwt.py), waits for /healthz, runs tests/browser/test_console.py
# and stops the server. Any failure fails the script. Screenshots of each step (and the server's
# log) go to $ARTIFACTS (default target/browser-artifacts).
#
#   tests/browser.sh [EXTRA PYTEST ARGS...]
#   CHROMIUM=/path/to/chromium (default /usr/bin/chromium)
set -euo pipefail
cd "$(dirname "$0")/.."

chromium="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || { echo "browser.sh: no Chromium at $chromium (apt-get install chromium, or set CHROMIUM)" >&2; exit 1; }
# pip's playwright brings the driver only; the browser is Debian's. No __pycache__ in the tree.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PYTHONDONTWRITEBYTECODE=1
python3 -c 'import playwright' 2>/dev/null || python3 -m pip install --quiet playwright
python3 -c 'import pytest' 2>/dev/null || python3 -m pip install --quiet pytest
python3 -c 'import jwt, cryptography' 2>/dev/null || python3 -m pip install --quiet PyJWT cryptography
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
build_sentinel
artifacts="${ARTIFACTS:-$PWD/target/browser-artifacts}"
mkdir -p "$artifacts"
artifacts=$(cd "$artifacts" && pwd)
rm -f "$artifacts"/[0-9][0-9]-*.png "$artifacts"/serve.log "$artifacts"/run.log

dir=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid" || echo "browser.sh: sentinel serve exited $? on SIGTERM" >&2
  fi
  cp "$dir"/serve.log "$dir"/run.log "$artifacts"/ 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# Tokens known only to this run; the config holds their SHA-256.
staff_token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
viewer_token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
staff_hash=$(printf %s "$staff_token" | sha256sum | cut -d' ' -f1)
viewer_hash=$(printf %s "$viewer_token" | sha256sum | cut -d' ' -f1)
# An issuer of this run only: its public key in jwks.json, one staff token (sub u-1234).
issuer="https://login.browser-test.invalid/realms/ops"
oidc_jwt=$(python3 tests/browser/make_jwt.py --jwks "$dir/jwks.json" --issuer "$issuer" --audience capacity-sentinel)

# The active version and the one in shadow, unsigned (the server listens on loopback only).
mkdir -p "$dir/policies"
for version in 1.0.0 1.1.0; do
  cp "$(dirname "$policy")/capacity-policy-$version.wasm" "$(dirname "$policy")/capacity-policy-$version.manifest.json" "$dir/policies/"
done
cat >"$dir/sentinel.toml" <<EOF
[policies]
dir = "policies"
allow_unsigned = true
active = "1.0.0"
shadow = "1.1.0"
state_dir = "private"
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
tokens = [
  { name = "browser-staff", role = "staff", sha256 = "$staff_hash" },
  { name = "browser-viewer", role = "viewer", sha256 = "$viewer_hash" },
]
[api.oidc]
issuer = "$issuer"
audience = "capacity-sentinel"
jwks_file = "jwks.json"
roles_claim = "roles"
staff_roles = ["sentinel-staff"]
viewer_roles = ["sentinel-viewer"]
algorithms = ["EdDSA"]
EOF

# Three hours of readings, one a minute, ending this minute: calm, then cpu rising from 40 % to
# 92 % over the last hour, so that the state escalates and the timeline has something to show.
python3 - "$dir/trace.jsonl" <<'EOF'
import datetime as d, json, sys
now = d.datetime.now(d.timezone.utc).replace(second=0, microsecond=0)
with open(sys.argv[1], "w") as f:
    for left in range(180, -1, -1):
        cpu = 40.0 if left >= 60 else 40.0 + 52.0 * (60 - left) / 60
        connections = 35.0 + (left * 7 % 11) / 2
        at = (now - d.timedelta(minutes=left)).strftime("%Y-%m-%dT%H:%M:%SZ")
        f.write(json.dumps({"at": at, "reading": {"cpu_pct": round(cpu, 1), "connections_pct": connections}}, separators=(",", ":")) + "\n")
EOF
# The 181 minutes of the trace, decided and stored as fast as the simulated clock allows.
(cd "$dir" && "$sentinel" run --config sentinel.toml --speed 100000 --ticks 181 >>run.log 2>&1) || {
  cat "$dir/run.log" >&2
  echo "browser.sh: sentinel run failed" >&2
  exit 1
}

(cd "$dir" && "$sentinel" policy shadow-report --config sentinel.toml --json >shadow-report.json 2>>run.log) || {
  cat "$dir/run.log" >&2
  echo "browser.sh: sentinel policy shadow-report failed" >&2
  exit 1
}

start_serve browser.sh "$dir"

echo "browser.sh: driving the console at $url/ in $chromium; screenshots in $artifacts"
SENTINEL_URL="$url" \
  STAFF_TOKEN="$staff_token" \
  VIEWER_TOKEN="$viewer_token" \
  OIDC_STAFF_JWT="$oidc_jwt" \
  DB_PATH="$dir/state/sentinel.db" \
  SHADOW_REPORT="$dir/shadow-report.json" \
  ARTIFACTS="$artifacts" \
  CHROMIUM="$chromium" \
  python3 -m pytest -q -p no:cacheprovider tests/browser/test_console.py "$@"
