//! One function per target: run the input, compare, check, and [`fail`] on any problem. The
//! `self_check_*` functions run once when a target starts: the checks must pass on every
//! conformance vector's real answer and must catch a deliberately broken one, so a check that
//! cannot fail (or that disagrees with the vetted goldens) stops the run at once.

use crate::check;
use crate::diff::differences;
use crate::fail;
use crate::inputs::vectors;
use crate::policies::{Answer, pairs};
use std::fmt::Debug;
use vocabulary::{AdmissionOutcome, DecisionInput, ProtectionState, ThrottleIntent};

fn report(target: &str, version: &str, input: &dyn Debug, problems: Vec<String>) {
    fail(&format!("{target} (policy {version})"), input, &problems);
}

pub fn decide(input: &DecisionInput) {
    for pair in pairs().iter_mut() {
        let Answer { value: d, mut problems } = pair.decide(input);
        problems.extend(check::decision::violations(input, &d, &pair.thresholds));
        report("decide", pair.version, input, problems);
    }
}

pub fn admission(request: &vocabulary::AdmissionRequest) {
    for pair in pairs().iter_mut() {
        let Answer { value: r, mut problems } = pair.resolve_budget(request);
        problems.extend(check::admission::violations(request, &r));
        report("admission", pair.version, request, problems);
    }
}

pub fn planner(request: &vocabulary::PlanRequest) {
    for pair in pairs().iter_mut() {
        let Answer { value: plan, mut problems } = pair.plan(request);
        let Answer { value: again, problems: again_problems } = pair.plan(request);
        problems.extend(again_problems);
        problems.extend(differences(&plan, &again).into_iter().map(|d| format!("not deterministic: {d}")));
        problems.extend(check::planner::violations(request, &plan));
        report("planner", pair.version, request, problems);
    }
}

pub fn trace(text: &str) {
    fail("trace_parser", &text, &check::trace::violations(text));
}

#[cfg(feature = "host")]
pub fn config(text: &str) {
    fail("config_parser", &text, &check::config::violations(text));
}

pub fn self_check_decide() {
    crate::diff::self_check();
    for pair in pairs().iter_mut() {
        let t = pair.thresholds;
        for input in vectors::decisions() {
            let Answer { value: d, problems } = pair.decide(input);
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
            let Answer { value: r, problems } = pair.resolve_budget(request);
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
            let Answer { value: plan, problems } = pair.plan(request);
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

/// The fuzz targets by name, in the order `tests/fuzz.sh` runs them (`config_parser` only with
/// the `host` feature).
pub const TARGETS: &[&str] = &["decide", "admission", "planner", "trace_parser", "config_parser"];

/// Runs one saved input (a seed, a corpus entry or a crash file) through `target` exactly as its
/// fuzz target does: the structured targets read their input with `arbitrary_take_rest`, as
/// libfuzzer-sys's `fuzz_target!` does, the parsers the bytes' lossy UTF-8 text. The target's
/// self-check runs once per process first. Panics (with [`fail`]'s message) on any problem;
/// `Err` names an unknown target.
pub fn replay(target: &str, bytes: &[u8]) -> Result<(), String> {
    use crate::inputs::{AdmissionInput, DecideInput, PlanInput};
    use arbitrary::{Arbitrary, Unstructured};
    use std::sync::Once;
    static DECIDE: Once = Once::new();
    static ADMISSION: Once = Once::new();
    static PLANNER: Once = Once::new();
    let input = || Unstructured::new(bytes);
    match target {
        "decide" => {
            DECIDE.call_once(self_check_decide);
            if let Ok(i) = DecideInput::arbitrary_take_rest(input()) {
                decide(&i.0);
            }
        }
        "admission" => {
            ADMISSION.call_once(self_check_admission);
            if let Ok(i) = AdmissionInput::arbitrary_take_rest(input()) {
                admission(&i.0);
            }
        }
        "planner" => {
            PLANNER.call_once(self_check_planner);
            if let Ok(i) = PlanInput::arbitrary_take_rest(input()) {
                planner(&i.0);
            }
        }
        "trace_parser" => trace(&String::from_utf8_lossy(bytes)),
        #[cfg(feature = "host")]
        "config_parser" => config(&String::from_utf8_lossy(bytes)),
        other => {
            return Err(format!("no fuzz target {other:?} in this build (targets: {TARGETS:?}; config_parser needs the `host` feature)"));
        }
    }
    Ok(())
}
