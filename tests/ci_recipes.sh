#!/usr/bin/env bash
# The policy gate recipes of deploy/ci/ as an operator's CI runs them: the workflow files are
# validated against their schemas (check-jsonschema's GitHub workflow and GitLab CI schemas,
# from PyPI; a broken copy of each must be refused, so the check can fail), and their one
# script, deploy/ci/policy-gate.sh, runs in a sample policy repository made here the way an
# operator's looks, made by `sentinel init --policy-repo` (policies/<version>/policy.toml,
# policies/gate.toml, traces/, ci/) with the built `sentinel` alone:
#   - a branch that changes no version: nothing to judge, exit 0;
#   - a branch adding 1.4.0 (`policy new` from 1.3.0, CPU constrained at 82 %): built, judged
#     against 1.3.0, passed, exit 0, the comment and the report with its timelines written;
#   - a branch adding a 1.4.0 that constrains at 30 % CPU and loosening the gate file: judged
#     by the base's gate, which fails it, exit 1, the comment names it;
#   - a branch adding 1.4.0 (82 %) and 1.5.0 (30 %) at once: each against the base's 1.3.0
#     (not 1.5.0 against the new 1.4.0), one passed, one failed;
#   - a branch editing 1.0.0 itself to 30 %: judged against the base's 1.0.0, failed;
#   - a branch whose 1.4.0 has critical below constrained: refused naming the key, exit 2,
#     the comment saying the gate could not be run;
#   - a branch with no history in common with the base: refused, exit 2;
#   - a branch raising every threshold out of reach, deleting every trace but the calm one,
#     editing another, and replacing ci/policy-gate.sh with one that passes everything, run as
#     each recipe's gate step runs it (the step's own lines, against an `origin` remote): the
#     base's script and the base's traces judge it, so it fails, and the comment lists the
#     traces it removed and edited;
#   - a change holding a symbolic link, or a file name outside plain characters, and an output
#     folder holding a link: refused, exit 2.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1
command -v check-jsonschema >/dev/null || python3 -m pip install --quiet check-jsonschema
# shellcheck source=tests/serve_lib.sh
. tests/serve_lib.sh
build_sentinel
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "ci_recipes.sh: $1" >&2; exit 1; }

# The workflow files against their schemas, and a broken copy of each refused.
check-jsonschema --builtin-schema vendor.github-workflows deploy/ci/github-actions.yml
check-jsonschema --builtin-schema vendor.gitlab-ci deploy/ci/gitlab-ci.yml
# The tuning recipes: shards on the CI's matrix, merged in a following job.
check-jsonschema --builtin-schema vendor.github-workflows deploy/ci/github-actions-tune.yml
check-jsonschema --builtin-schema vendor.gitlab-ci deploy/ci/gitlab-ci-tune.yml
sed 's/^    runs-on:/    run-on:/' deploy/ci/github-actions.yml >"$work/broken-actions.yml"
sed 's/^  script:/  scripts:/' deploy/ci/gitlab-ci.yml >"$work/broken-gitlab.yml"
! check-jsonschema --builtin-schema vendor.github-workflows "$work/broken-actions.yml" >/dev/null 2>&1 ||
  fail "a workflow without runs-on passed the schema check: the check cannot fail"
! check-jsonschema --builtin-schema vendor.gitlab-ci "$work/broken-gitlab.yml" >/dev/null 2>&1 ||
  fail "a GitLab job without script passed the schema check: the check cannot fail"

# The sample policy repository, as an operator makes it: `sentinel init --policy-repo` (1.0.0
# to 1.3.0, the gate, the scenario traces, the recipes and their script).
repo="$work/policy-repo"
"$sentinel" init --policy-repo "$repo" >/dev/null
for f in ci/policy-gate.sh ci/gitlab-ci.yml .github/workflows/policy-gate.yml; do
  [ -f "$repo/$f" ] || fail "init --policy-repo wrote no $f"
done
cmp -s "$repo/ci/policy-gate.sh" deploy/ci/policy-gate.sh || fail "init --policy-repo's ci/policy-gate.sh is not deploy/ci/policy-gate.sh"
[ -x "$repo/ci/policy-gate.sh" ] || fail "ci/policy-gate.sh is not executable"
cd "$repo"
git init -q -b main
git -c user.name=ci -c user.email=ci@example.invalid add -A
git -c user.name=ci -c user.email=ci@example.invalid commit -qm "1.0.0"
# The hosted repository the recipes fetch the base from (origin/main).
git clone -q --bare . "$work/origin.git"
git remote add origin "$work/origin.git"
git fetch -q origin
commit() { git -c user.name=ci -c user.email=ci@example.invalid add -A && git -c user.name=ci -c user.email=ci@example.invalid commit -qm "$1"; }
gate() { # EXPECTED_STATUS: runs the recipe's script against main
  local status=0
  SENTINEL="$sentinel" ci/policy-gate.sh --base main --out gate-report >"$work/gate.out" 2>&1 || status=$?
  [ "$status" = "$1" ] || { cat "$work/gate.out" >&2; fail "policy-gate.sh exited $status on $(git branch --show-current), not $1"; }
}

git checkout -q -b docs-only
echo "# Our thresholds" >README.md
commit "a README"
gate 0
grep -q "No policy version changed against main" gate-report/comment.md || fail "no 'nothing changed' comment"

git checkout -q -b raise-cpu main
"$sentinel" policy new 1.4.0 --from 1.3.0 --purpose "Constrain at 82 % CPU." >/dev/null
sed -i 's/cpu_pct = { constrained = 80.0/cpu_pct = { constrained = 82.0/' policies/1.4.0/policy.toml
grep -q "constrained = 82.0" policies/1.4.0/policy.toml || fail "1.4.0 was not edited"
commit "1.4.0: constrain at 82 % CPU"
rm -rf gate-report
gate 0
grep -qF "| 1.4.0 | 1.3.0 (at main) | passed |" gate-report/comment.md || { cat gate-report/comment.md; fail "1.4.0 is not shown passed"; }
grep -qF ': passed.**' gate-report/1.4.0/report.md || fail "the report does not say the gate passed"
ls gate-report/1.4.0/*.svg >/dev/null 2>&1 || fail "no timelines in the report"
[ -f gate-report/build/1.4.0/capacity-policy-1.4.0.manifest.json ] || fail "1.4.0 was not built with its manifest"

git checkout -q -b constrain-early main
"$sentinel" policy new 1.4.0 --from 1.3.0 >/dev/null
sed -i 's/cpu_pct = { constrained = 80.0/cpu_pct = { constrained = 30.0/' policies/1.4.0/policy.toml
sed -i 's/^max_bulk_capacity_loss_pct_of_day = 1$/max_bulk_capacity_loss_pct_of_day = 100/; s/^max_calm_protection_minutes_per_incident = 10$/max_calm_protection_minutes_per_incident = 100000/' policies/gate.toml
grep -qx 'max_bulk_capacity_loss_pct_of_day = 100' policies/gate.toml || fail "the change did not loosen the gate file's capacity limit"
commit "1.4.0: constrain at 30 % CPU, and a gate that lets it"
rm -rf gate-report
gate 1
grep -qF "| 1.4.0 | 1.3.0 (at main) | **failed** |" gate-report/comment.md || { cat gate-report/comment.md; fail "1.4.0 is not shown failed by the base's gate"; }
grep -qF ': FAILED**' gate-report/1.4.0/report.md || fail "the report does not say the gate failed"

git checkout -q -b two-versions main
"$sentinel" policy new 1.4.0 --from 1.3.0 >/dev/null
sed -i 's/cpu_pct = { constrained = 80.0/cpu_pct = { constrained = 82.0/' policies/1.4.0/policy.toml
"$sentinel" policy new 1.5.0 --from 1.3.0 >/dev/null
sed -i 's/cpu_pct = { constrained = 80.0/cpu_pct = { constrained = 30.0/' policies/1.5.0/policy.toml
commit "1.4.0 and 1.5.0"
rm -rf gate-report
gate 1
grep -qF "| 1.4.0 | 1.3.0 (at main) | passed |" gate-report/comment.md || { cat gate-report/comment.md; fail "1.4.0 is not judged against 1.3.0"; }
grep -qF "| 1.5.0 | 1.3.0 (at main) | **failed** |" gate-report/comment.md || { cat gate-report/comment.md; fail "1.5.0 is not judged against the base's 1.3.0"; }

git checkout -q -b edit-released main
sed -i 's/cpu_pct = { constrained = 70.0/cpu_pct = { constrained = 30.0/' policies/1.0.0/policy.toml
commit "1.0.0 edited in place"
rm -rf gate-report
gate 1
grep -qF "| 1.0.0 | 1.0.0 (at main) | **failed** |" gate-report/comment.md || { cat gate-report/comment.md; fail "the edit of 1.0.0 is not judged against what it was"; }

git checkout -q -b broken main
"$sentinel" policy new 1.4.0 --from 1.3.0 >/dev/null
sed -i 's/cpu_pct = { constrained = 80.0, critical = 85.0/cpu_pct = { constrained = 80.0, critical = 60.0/' policies/1.4.0/policy.toml
commit "1.4.0: a typo"
rm -rf gate-report
gate 2
grep -q "thresholds.cpu_pct: constrained must not exceed critical" "$work/gate.out" || { cat "$work/gate.out"; fail "the broken version's key is not named"; }
grep -q "The gate could not be run: policies/1.4.0 does not build" gate-report/comment.md || { cat gate-report/comment.md; fail "the comment does not say why the gate could not run"; }

git checkout -q --orphan unrelated
commit "a history of its own"
rm -rf gate-report
gate 2
grep -q "no common history" "$work/gate.out" || { cat "$work/gate.out"; fail "a missing merge base is not named"; }
# The gate step of a recipe, as its CI runs it: the step's own lines, in the checkout.
recipe_gate() { # RECIPE EXPECTED_STATUS
  python3 - "$root/deploy/ci/$1" >"$work/step.sh" <<'PY'
import sys
try:
    from ruamel.yaml import YAML
    doc = YAML(typ="safe").load(open(sys.argv[1]))
except ImportError:
    import yaml
    doc = yaml.safe_load(open(sys.argv[1]))
if "jobs" in doc:
    print(next(s["run"] for s in doc["jobs"]["gate"]["steps"] if s.get("name") == "Policy gate"))
else:
    print("\n".join(doc["policy-gate"]["script"]))
PY
  local status=0
  env SENTINEL="$sentinel" BASE_REF=main RUNNER_TEMP="$work/runner" CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main \
    bash -eo pipefail "$work/step.sh" >"$work/gate.out" 2>&1 || status=$?
  [ "$status" = "$2" ] || { cat "$work/gate.out" >&2; fail "the $1 gate step exited $status on $(git branch --show-current), not $2"; }
}
mkdir -p "$work/runner"
git checkout -q -b loosen-by-deleting main
"$sentinel" policy new 1.4.0 --from 1.3.0 >/dev/null
sed -i 's/cpu_pct = { constrained = 80.0, critical = 85.0/cpu_pct = { constrained = 99.8, critical = 99.9/; s/connections_pct = { constrained = 70.0, critical = 85.0/connections_pct = { constrained = 99.8, critical = 99.9/; s/latency_ratio = { constrained = 1.5, critical = 2.5/latency_ratio = { constrained = 50.0, critical = 60.0/' policies/1.4.0/policy.toml
[ "$(grep -c "critical = 99.9" policies/1.4.0/policy.toml)" = 2 ] || fail "the thresholds were not raised"
git rm -q traces/incident.jsonl traces/flapping.jsonl traces/signal_loss.jsonl
cp traces/quiet_day.jsonl traces/direct_critical.jsonl
printf '#!/usr/bin/env bash\necho "policy-gate.sh: everything passes"\nmkdir -p gate-report && echo passed >gate-report/comment.md\n' >ci/policy-gate.sh
commit "1.4.0: thresholds out of reach, the traces that show it removed, a gate that passes"
# Judged by its own script and traces it would pass: what the recipes must not do.
SENTINEL="$sentinel" bash ci/policy-gate.sh --base main --out gate-report >/dev/null 2>&1 || fail "the change's own gate script did not pass it: the test proves nothing"
for recipe in github-actions.yml gitlab-ci.yml; do
  # GitHub's recipe writes its report outside the checkout, GitLab's inside (artifacts must be).
  report=gate-report
  [ "$recipe" = github-actions.yml ] && report="$work/runner/gate-report"
  rm -rf gate-report "$work/runner/gate-report"
  recipe_gate "$recipe" 1
  grep -qF "| 1.4.0 | 1.3.0 (at origin/main) | **failed** |" "$report/comment.md" || { cat "$report/comment.md"; fail "$recipe: 1.4.0 is not failed by the base's script and traces"; }
  grep -qF "Traces the change removes (still judged, as the base has them): traces/flapping.jsonl traces/incident.jsonl traces/signal_loss.jsonl" "$report/comment.md" ||
    { cat "$report/comment.md"; fail "$recipe: the removed traces are not listed"; }
  grep -qF "Traces the change edits (judged as the base has them; the edit judges the next change): traces/direct_critical.jsonl" "$report/comment.md" ||
    { cat "$report/comment.md"; fail "$recipe: the edited trace is not listed"; }
done

# What a change may not hold: a link (it could make the job read any file of the runner and post
# it), a file name git would quote (it slipped past the list of changed versions), a link
# planted in the output folder (the comment would be written through it, or posted from it).
git checkout -q -b a-link main
ln -s /proc/self/environ traces/environ.jsonl
commit "a trace that is a link"
rm -rf gate-report
gate 2
grep -q "the change holds symbolic links (traces/environ.jsonl)" "$work/gate.out" || { cat "$work/gate.out"; fail "a linked trace is not refused"; }
git checkout -q -b odd-name main
# git quotes a name outside ASCII ("policies/\303\251/..."): the list of changed versions missed
# it, and the gate said "No policy version changed" and passed.
mkdir -p "policies/é"
cp policies/1.0.0/policy.toml "policies/é/policy.toml"
sed -i 's/version = "1.0.0"/version = "1.4.0"/; s/critical = 85.0/critical = 99.0/' "policies/é/policy.toml"
commit "a version folder named outside ASCII"
rm -rf gate-report
gate 2
grep -q "names a file outside letters, digits" "$work/gate.out" || { cat "$work/gate.out"; fail "a folder named outside ASCII is not refused"; }
git checkout -q main
rm -rf gate-report
mkdir -p gate-report
ln -s /proc/self/environ gate-report/comment.md
gate 2
grep -q "is or holds a symbolic link" "$work/gate.out" || { cat "$work/gate.out"; fail "a link in the output folder is not refused"; }
rm -rf gate-report
cd "$root"
echo "ci_recipes.sh: the workflows validate, and the gate script passed, failed and refused as it should on the sample repository"
