#!/usr/bin/env bash
# The A/B gate of a policy repository's pull request, as the workflows in this folder run it
# (github-actions.yml, gitlab-ci.yml); it needs only an installed `sentinel`, git and bash.
#
# Every version folder (<policies>/<version>/policy.toml) the change adds or edits against the
# base is built with `sentinel policy build` and replayed over the base's traces and those the
# change adds (a trace the change removes or edits is replayed as the base has it) (and,
# with SENTINEL_CONFIG, a `sentinel trace fetch` of recent history) beside its baseline with
# `sentinel replay --baseline --candidate --gate --report`. The baseline and the gate come from
# the base, never from the change itself: an edited version is judged against what it was, a
# new one against the newest version below it at the base, by the base's gate file. A new
# version with none below it is replayed alone and must break no invariant. The reports, the
# built components and the comment to post land in --out; the exit status is the verdict.
# Run the base's copy of this script, not the change's (the recipes do): a change must not
# bring the code that judges it.
#
#   deploy/ci/policy-gate.sh --base REF [--policies policies] [--gate policies/gate.toml]
#                            [--traces traces]... [--out gate-report]
#   SENTINEL=path/to/sentinel (default: sentinel on PATH)
#   SENTINEL_CONFIG=sentinel.toml FETCH_SINCE=7d: add the live config's recent history
#
# Exit 0: every changed version passes (or none changed); 1: a gate failed; 2: the gate could
# not be run (bad usage, no merge base, a version that does not build, a replay or fetch that
# failed): the comment and stderr say which.
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
# Paths as git names them: from the top of the repository, without ./ or a trailing /.
normal() { local p=${1#./}; echo "${p%/}"; }
policies=$(normal "$policies")
gate=$(normal "${gate:-$policies/gate.toml}")
[ ${#traces[@]} -gt 0 ] || traces=(traces)
# The output folder holds only what this run writes: a link in it (one a change committed, say,
# comment.md -> /proc/self/environ) would be written through or posted.
if [ -L "$out" ] || { [ -d "$out" ] && [ -n "$(find "$out" -type l -print -quit)" ]; }; then
  echo "policy-gate.sh: --out $out is or holds a symbolic link: give a folder of the job's own (outside the checkout)" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
comment="$out/comment.md"
rm -f "$comment"
printf '## Policy gate\n\n' >"$comment"
fail() { # MESSAGE: said on stderr and in the comment, exit 2
  echo "policy-gate.sh: $1" >&2
  printf 'The gate could not be run: %s\n' "$1" >>"$comment"
  exit 2
}
[ -n "$base" ] || fail "--base REF is needed: the branch the change goes into (origin/main)"
top=$(git rev-parse --show-toplevel 2>/dev/null) || fail "$(pwd) is not in a git repository"
cd "$top"
command -v "$sentinel" >/dev/null || fail "no sentinel at '$sentinel': install it, or set SENTINEL"
git rev-parse --verify --quiet "$base^{commit}" >/dev/null || fail "--base $base is no commit here: fetch it (actions/checkout with fetch-depth: 0)"
merge_base=$(git merge-base "$base" HEAD) || fail "$base and HEAD have no common history: fetch the whole history (fetch-depth: 0, GIT_DEPTH: 0)"
ls "$policies"/*/policy.toml >/dev/null 2>&1 || fail "no version folders ($policies/<version>/policy.toml): give --policies DIR"
# What the change brings is data, read by the sentinel; a link among it could make the job read
# (and report) any file of the runner, so a change holding one is not judged.
links=$(git ls-files -s -- "$policies" "${traces[@]}" | awk '$1 == "120000" {print $4}')
[ -z "$links" ] || fail "the change holds symbolic links (${links//$'\n'/, }): a policy repository holds plain files; replace them"
# Every path of the change (NUL-separated, so no name is quoted or split) must be plain: a name
# git quotes (a tab, a newline, a byte outside ASCII) could slip past the parsing below or write
# into the comment.
while IFS= read -r -d '' path; do
  [[ $path =~ ^[A-Za-z0-9._/-]+$ ]] || fail "the change names a file outside letters, digits, '.', '_', '-' and '/': $(printf '%q' "$path"); rename it"
done < <(git diff -z --name-only "$merge_base" HEAD -- "$policies" "$gate" "${traces[@]}")
# With SENTINEL_CONFIG, history is read with the base's config only: a change cannot point the
# job's credentials at another server.
if [ -n "${SENTINEL_CONFIG:-}" ] && ! git diff --quiet "$merge_base" HEAD -- "$SENTINEL_CONFIG"; then
  fail "the change edits $SENTINEL_CONFIG, which the gate reads history with: change it in its own pull request first"
fi
# The base's gate file; the change's own only when the base has none yet (it is then shown).
if git cat-file -e "$merge_base:$gate" 2>/dev/null; then
  git show "$merge_base:$gate" >"$out/gate.toml"
else
  [ -f "$gate" ] || fail "no gate file at $gate: give --gate FILE"
  cp "$gate" "$out/gate.toml"
  echo "The base has no $gate: the change's own gate file judges it." >>"$comment"
fi
# The traces: the base's set, as the base has them, and the traces the change adds. A change
# cannot loosen its own gate by removing or editing traces: a removed trace is still replayed
# (from the base), an edited one as it was at the base; both are listed in the comment, and the
# change's edits judge the next change. A folder stands for its traces (*.jsonl, expected
# outputs aside).
is_trace() { [[ $1 == *.jsonl && $1 != *.expected.jsonl ]]; }
files=() added=() removed=() edited=()
base_traces="$out/base-traces"
rm -rf "$base_traces"
for t in "${traces[@]}"; do
  t=$(normal "$t")
  at_base=()
  if [ "$(git cat-file -t "$merge_base:$t" 2>/dev/null)" = tree ]; then
    while IFS= read -r -d '' f; do is_trace "$f" && at_base+=("$t/$f"); done < <(git ls-tree -z --name-only "$merge_base:$t")
  elif git cat-file -e "$merge_base:$t" 2>/dev/null; then
    at_base+=("$t")
  fi
  in_change=()
  if [ -d "$t" ]; then
    for f in "$t"/*.jsonl; do [ -f "$f" ] && is_trace "$f" && in_change+=("$f"); done
  elif [ -f "$t" ]; then
    in_change+=("$t")
  fi
  [ ${#at_base[@]} -gt 0 ] || [ ${#in_change[@]} -gt 0 ] || fail "no traces at $t, at the base or in the change: give --traces DIR"
  for f in "${at_base[@]}"; do
    mkdir -p "$base_traces/$(dirname "$f")"
    git show "$merge_base:$f" >"$base_traces/$f"
    files+=("$base_traces/$f")
    if [ ! -f "$f" ]; then
      removed+=("$f")
    elif ! cmp -s "$f" "$base_traces/$f"; then
      edited+=("$f")
    fi
  done
  for f in "${in_change[@]}"; do
    git cat-file -e "$merge_base:$f" 2>/dev/null || { files+=("$f"); added+=("$f"); }
  done
done
[ ${#files[@]} -gt 0 ] || fail "no traces (*.jsonl) in ${traces[*]}"
trace_notes() { # the traces the change added, removed or edited, for the comment
  [ ${#added[@]} -eq 0 ] || printf 'Traces the change adds (judged too): %s\n' "${added[*]}"
  [ ${#removed[@]} -eq 0 ] || printf 'Traces the change removes (still judged, as the base has them): %s\n' "${removed[*]}"
  [ ${#edited[@]} -eq 0 ] || printf 'Traces the change edits (judged as the base has them; the edit judges the next change): %s\n' "${edited[*]}"
}

# The versions the change adds or edits (a removed one is not judged), in version order.
diff=$(git diff --name-only "$merge_base" HEAD -- "$policies") || fail "git diff against $base failed (above)"
changed=()
while read -r v; do
  [ -n "$v" ] && [ -f "$policies/$v/policy.toml" ] && changed+=("$v")
done < <(printf '%s\n' "$diff" | sed -n "s#^$policies/\([^/]*\)/.*#\1#p" | sort -uV)
# Every changed path was checked plain above, so none is quoted here.
if [ ${#changed[@]} -eq 0 ]; then
  echo "No policy version changed against $base." >>"$comment"
  if [ -n "$(git diff --name-only "$merge_base" HEAD -- "$gate" "${traces[@]}")" ]; then
    echo "The gate file or the traces changed: they judge the next version." >>"$comment"
  fi
  echo "policy-gate.sh: no policy version changed against $base"
  exit 0
fi

# Recent history from the live metrics, when the job may read them.
if [ -n "${SENTINEL_CONFIG:-}" ]; then
  "$sentinel" trace fetch --config "$SENTINEL_CONFIG" --since "${FETCH_SINCE:-7d}" -o "$out/history.jsonl" --quiet ||
    fail "sentinel trace fetch --config $SENTINEL_CONFIG failed (above): check the config, or unset SENTINEL_CONFIG"
  files+=("$out/history.jsonl")
fi

# build FOLDER NAME: builds a version folder into $out/build/NAME/ and prints the component.
build() {
  local into="$out/build/$2"
  rm -rf "$into"
  "$sentinel" policy build "$1" -o "$into" >/dev/null || fail "$1 does not build (above)"
  local built=("$into"/*.wasm)
  echo "${built[0]}"
}
# The version folders at the base, in version order.
mapfile -t at_base < <(git ls-tree --name-only "$merge_base:$policies" 2>/dev/null | sort -V)
notes=$(trace_notes)
if [ -n "$notes" ]; then
  printf '%s\n\n' "$notes" >>"$comment"
  printf '%s\n' "$notes" | sed 's/^/policy-gate.sh: /'
fi
echo "| version | against | verdict |" >>"$comment"
echo "|---|---|---|" >>"$comment"
failed=0
for version in "${changed[@]}"; do
  candidate=$(build "$policies/$version" "$version")
  # The baseline, from the base: the version itself when the change edits it, else the newest below.
  below=
  if git cat-file -e "$merge_base:$policies/$version/policy.toml" 2>/dev/null; then
    below=$version
  else
    for v in "${at_base[@]}"; do
      git cat-file -e "$merge_base:$policies/$v/policy.toml" 2>/dev/null || continue
      [ "$(printf '%s\n%s\n' "$v" "$version" | sort -V | head -n1)" = "$v" ] && [ "$v" != "$version" ] && below=$v
    done
  fi
  report="$out/$version"
  rm -rf "$report"
  set +e
  if [ -n "$below" ]; then
    mkdir -p "$out/base/$below"
    git show "$merge_base:$policies/$below/policy.toml" >"$out/base/$below/policy.toml"
    baseline=$(build "$out/base/$below" "base-$below")
    against="$below (at $base)"
    "$sentinel" replay --baseline "$baseline" --candidate "$candidate" --gate "$out/gate.toml" --report "$report" "${files[@]}" \
      >"$out/$version.log" 2>&1
    status=$?
  else
    mkdir -p "$report"
    against="none (invariants only)"
    "$sentinel" replay --policy "$candidate" --fail-on-violation --format markdown "${files[@]}" >"$report/report.md" 2>"$out/$version.log"
    status=$?
  fi
  set -e
  case $status in
    0) verdict="passed" ;;
    1) verdict="**failed**"; failed=1 ;;
    *) cat "$out/$version.log" >&2; fail "replaying $version failed (exit $status, above)" ;;
  esac
  echo "| $version | $against | $verdict |" >>"$comment"
  echo "policy-gate.sh: $version against $against: ${verdict//\*/}"
done
for version in "${changed[@]}"; do
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
echo "The timelines (SVG) are in the job's artifacts, under $(basename "$out")/<version>/." >>"$comment"
exit $failed
