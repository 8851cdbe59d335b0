//! One function per target: run the input, compare, check, and [`fail`] on any problem. The
//! `self_check_*` functions run once when a target starts: the checks must pass on every
//! conformance vector's real answer and must catch a deliberately broken one, so a check that
//! cannot fail (or that disagrees with the vetted goldens) stops the run at once.

use crate::check;
use crate::diff::differences;
use crate::fail;
use crate::inputs::vectors;
use crate::policies::{Pair, pairs};
use sentinel::policy::Policy;
use std::fmt::Debug;
use vocabulary::{AdmissionOutcome, DecisionInput, ProtectionState, ThrottleIntent};

/// Calls `call` on the component (it must not trap or time out) and on the native modules,
/// and returns the component's answer with every difference between the two.
fn both<T: serde::Serialize + PartialEq>(
    pair: &mut Pair,
    what: &str,
    call: impl Fn(&mut dyn Policy) -> Result<T, sentinel::policy::PolicyError>,
) -> (T, Vec<String>) {
    let component = call(pair.component.as_mut()).unwrap_or_else(|e| panic!("{} {what}: {e}", pair.version));
    let native = call(pair.native.as_mut()).unwrap_or_else(|e| panic!("{} native {what}: {e}", pair.version));
    let problems = differences(&native, &component).into_iter().map(|d| format!("component vs native: {d}")).collect();
    (component, problems)
}

fn report(target: &str, version: &str, input: &dyn Debug, problems: Vec<String>) {
    fail(&format!("{target} (policy {version})"), input, &problems);
}

pub fn decide(input: &DecisionInput) {
    for pair in pairs().iter_mut() {
        let (d, mut problems) = both(pair, "decide", |p| p.decide(input));
        problems.extend(check::decision::violations(input, &d, &pair.thresholds));
        report("decide", pair.version, input, problems);
    }
}

pub fn admission(request: &vocabulary::AdmissionRequest) {
    for pair in pairs().iter_mut() {
        let (r, mut problems) = both(pair, "resolve-budget", |p| p.resolve_budget(request));
        problems.extend(check::admission::violations(request, &r));
        report("admission", pair.version, request, problems);
    }
}

pub fn planner(request: &vocabulary::PlanRequest) {
    for pair in pairs().iter_mut() {
        let (plan, mut problems) = both(pair, "plan", |p| p.plan(request));
        let again = pair.component.plan(request).unwrap_or_else(|e| panic!("{} plan: {e}", pair.version));
        problems.extend(differences(&plan, &again).into_iter().map(|d| format!("not deterministic: {d}")));
        problems.extend(check::planner::violations(request, &plan));
        report("planner", pair.version, request, problems);
    }
}

pub fn trace(text: &str) {
    fail("trace_parser", &text, &check::trace::violations(text));
}

pub fn config(text: &str) {
    fail("config_parser", &text, &check::config::violations(text));
}

pub fn self_check_decide() {
    crate::diff::self_check();
    for pair in pairs().iter_mut() {
        let t = pair.thresholds;
        for input in vectors::decisions() {
            let (d, problems) = both(pair, "decide", |p| p.decide(input));
            report("decide self-check: a vector's decision", pair.version, input, problems);
            report("decide self-check: a vector's decision", pair.version, input, check::decision::violations(input, &d, &t));
            let mut broken = [d.clone(), d.clone(), d.clone()];
            broken[0].state = if d.state == ProtectionState::Critical { ProtectionState::Normal } else { ProtectionState::Critical };
            broken[1].throttles = if d.throttles == ThrottleIntent::Engage { ThrottleIntent::None } else { ThrottleIntent::Engage };
            broken[2].memory.recent.push(vocabulary::RecentEntry::new(input.now, vocabulary::Level::Critical));
            for b in &broken {
                assert!(!check::decision::violations(input, b, &t).is_empty(), "the decision checks miss {b:?} for {input:?}");
            }
        }
    }
}

pub fn self_check_admission() {
    for pair in pairs().iter_mut() {
        for request in vectors::admissions() {
            let (r, problems) = both(pair, "resolve-budget", |p| p.resolve_budget(request));
            report("admission self-check: a vector", pair.version, request, problems);
            report("admission self-check: a vector", pair.version, request, check::admission::violations(request, &r));
            let mut broken = r;
            broken.admit += 1;
            broken.outcome = AdmissionOutcome::Admit;
            assert!(!check::admission::violations(request, &broken).is_empty(), "the admission checks miss {broken:?}");
        }
    }
}

pub fn self_check_planner() {
    for pair in pairs().iter_mut() {
        for request in vectors::plans() {
            let (plan, problems) = both(pair, "plan", |p| p.plan(request));
            report("planner self-check: a vector", pair.version, request, problems);
            report("planner self-check: a vector", pair.version, request, check::planner::violations(request, &plan));
            if let Some(waiting) = plan.waiting.first() {
                let mut broken = plan.clone();
                broken.admitted.push(broken.waiting.remove(0).id);
                assert!(!check::planner::violations(request, &broken).is_empty(), "the planner checks miss admitting {:?}", waiting.id);
            }
        }
    }
}
