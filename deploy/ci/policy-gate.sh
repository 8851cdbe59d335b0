#!/usr/bin/env bash
# The A/B gate of a policy repository's pull request, as the workflows in this folder run it
# (github-actions.yml, gitlab-ci.yml); it needs only an installed `sentinel`, git and bash.
#
# Every version folder (<policies>/<version>/policy.toml) the change touches against the base
# is built with `sentinel policy build`, and replayed beside the version below it (built the
# same way) over the repository's traces (and, with SENTINEL_CONFIG, a `sentinel trace fetch`
# of recent history) with `sentinel replay --baseline --candidate --gate --report`. A version
# with none below it is replayed alone and must break no invariant. The reports, built
# components and the comment to post land in --out; the exit status is the verdict.
#
#   deploy/ci/policy-gate.sh --base REF [--policies policies] [--gate policies/gate.toml]
#                            [--traces traces]... [--out gate-report]
#   SENTINEL=path/to/sentinel (default: sentinel on PATH)
#   SENTINEL_CONFIG=sentinel.toml FETCH_SINCE=7d: add the live config's recent history
#
# Exit 0: every changed version passes (or none changed); 1: a gate failed; 2: bad usage or a
# version that does not build (its error says which key).
set -euo pipefail

base= policies=policies gate= out=gate-report
traces=()
while [ $# -gt 0 ]; do
  case $1 in
    --base) base=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --gate) gate=$2; shift 2 ;;
    --traces) traces+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "policy-gate.sh: unknown argument $1 (see the usage at the top of this file)" >&2; exit 2 ;;
  esac
done
sentinel=${SENTINEL:-sentinel}
gate=${gate:-$policies/gate.toml}
[ ${#traces[@]} -gt 0 ] || traces=(traces)
fail() { echo "policy-gate.sh: $1" >&2; exit 2; }
[ -n "$base" ] || fail "--base REF is needed: the branch the change goes into (origin/main)"
command -v "$sentinel" >/dev/null || fail "no sentinel at '$sentinel': install it, or set SENTINEL"
git rev-parse --verify --quiet "$base^{commit}" >/dev/null || fail "--base $base is no commit here: fetch it (actions/checkout with fetch-depth: 0)"
[ -f "$gate" ] || fail "no gate file at $gate: give --gate FILE"
# A folder stands for its traces (*.jsonl, expected outputs aside).
files=()
for t in "${traces[@]}"; do
  [ -e "$t" ] || fail "no traces at $t: give --traces DIR"
  if [ -d "$t" ]; then
    for f in "$t"/*.jsonl; do [[ -f $f && $f != *.expected.jsonl ]] && files+=("$f"); done
  else
    files+=("$t")
  fi
done
[ ${#files[@]} -gt 0 ] || fail "no traces (*.jsonl) in ${traces[*]}"
traces=("${files[@]}")

mkdir -p "$out/build"
comment="$out/comment.md"
# The versions the change touches that still exist, in version order.
mapfile -t changed < <(git diff --name-only "$base"...HEAD -- "$policies" |
  sed -n "s#^$policies/\([^/]*\)/.*#\1#p" | sort -uV |
  while read -r v; do [ -f "$policies/$v/policy.toml" ] && echo "$v"; done)
{
  echo "## Policy gate"
  echo
} >"$comment"
if [ ${#changed[@]} -eq 0 ]; then
  echo "No policy version changed against $base." >>"$comment"
  echo "policy-gate.sh: no policy version changed against $base"
  exit 0
fi

# Recent history from the live metrics, when the job may read them.
if [ -n "${SENTINEL_CONFIG:-}" ]; then
  "$sentinel" trace fetch --config "$SENTINEL_CONFIG" --since "${FETCH_SINCE:-7d}" -o "$out/history.jsonl" --quiet
  traces+=("$out/history.jsonl")
fi

mapfile -t all < <(for d in "$policies"/*/; do [ -f "$d/policy.toml" ] && basename "$d"; done | sort -V)
failed=0
echo "| version | against | verdict |" >>"$comment"
echo "|---|---|---|" >>"$comment"
details=()
for version in "${changed[@]}"; do
  "$sentinel" policy build "$policies/$version" -o "$out/build" >/dev/null || fail "$policies/$version does not build (above)"
  candidate=$(ls "$out/build"/*-"$version".wasm)
  below=
  for v in "${all[@]}"; do
    [ "$v" = "$version" ] && break
    below=$v
  done
  report="$out/$version"
  if [ -n "$below" ]; then
    "$sentinel" policy build "$policies/$below" -o "$out/build" >/dev/null || fail "$policies/$below does not build (above)"
    baseline=$(ls "$out/build"/*-"$below".wasm)
    set +e
    "$sentinel" replay --baseline "$baseline" --candidate "$candidate" --gate "$gate" --report "$report" "${traces[@]}" \
      >"$out/$version.log" 2>&1
    status=$?
    set -e
    against=$below
  else
    mkdir -p "$report"
    set +e
    "$sentinel" replay --policy "$candidate" --fail-on-violation --format markdown "${traces[@]}" >"$report/report.md" 2>"$out/$version.log"
    status=$?
    set -e
    against="(none: invariants only)"
  fi
  case $status in
    0) verdict="passed" ;;
    1) verdict="**failed**"; failed=1 ;;
    *) cat "$out/$version.log" >&2; fail "replaying $version failed (exit $status, above)" ;;
  esac
  echo "| $version | $against | $verdict |" >>"$comment"
  details+=("$version")
  echo "policy-gate.sh: $version against $against: ${verdict//\*/}"
done
for version in "${details[@]}"; do
  {
    echo
    echo "<details><summary>$version: the report</summary>"
    echo
    cat "$out/$version/report.md"
    echo
    echo "</details>"
  } >>"$comment"
done
echo >>"$comment"
echo "The timelines (SVG) are in the job's artifacts, under $out/<version>/." >>"$comment"
exit $failed
