//! What a candidate version must pass before it may decide: the checks that apply to every
//! version (no trap, the same output twice for the same input, structurally sound decisions,
//! the invariants of docs/behaviour.md §12 over a fixed scenario) and a trial replay of the recorded ticks.

use crate::policy::Policy;
use crate::policy::invariants::InvariantChecker;
use crate::policy::invariants::Tick;
use crate::policy::stepping::{StepError, Stepper};
use crate::ports::memory::TickRecord;
use vocabulary::{Decision, DecisionInput, Memory, Outcome, Reading, SessionStart, Signal, Thresholds};

/// The fixed inputs every version decides before it may run: the inputs of the decision
/// conformance vectors (whose expected outputs belong to 1.0.0), kept with the host so that the
/// binary never reads test fixtures. `tests/tests/conformance_vectors.rs` keeps the two equal.
const FIXED_INPUTS: &str = include_str!("self_check_inputs.json");

/// One fixed input, by name.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedInput {
    /// The name of the conformance vector the input comes from, for messages.
    pub name: String,
    /// What the version must decide (twice, with the same answer).
    pub input: DecisionInput,
}

/// Every fixed input, parsed whole: one that does not parse is an error, never skipped.
pub fn fixed_inputs() -> Result<Vec<FixedInput>, String> {
    serde_json::from_str(FIXED_INPUTS).map_err(|e| format!("the self-check's fixed inputs (self_check_inputs.json) do not parse: {e}"))
}

/// A decision that cannot be right whatever the thresholds.
pub(crate) fn structural(d: &Decision) -> Option<String> {
    let f = &d.factors;
    if [f.bulk, f.heavy, f.write, f.read].iter().any(|v| !v.is_finite() || !(0.0..=1.0).contains(v)) {
        return Some(format!("factors out of [0, 1]: {f:?}"));
    }
    if d.memory.state != d.state {
        return Some(format!("memory.state {:?} differs from state {:?}", d.memory.state, d.state));
    }
    if !d.changed && d.previous != d.state {
        return Some(format!("unchanged but previous {:?} differs from state {:?}", d.previous, d.state));
    }
    if d.explanation.trim().is_empty() {
        return Some("empty explanation".into());
    }
    None
}

/// Runs the checks every version must pass; the number of decisions made.
pub fn self_check(policy: &mut dyn Policy) -> Result<usize, String> {
    let mut calls = 0;
    for FixedInput { name, input } in fixed_inputs()? {
        let first = policy.decide(&input).map_err(|e| format!("conformance input `{name}`: {e}"))?;
        let second = policy.decide(&input).map_err(|e| format!("conformance input `{name}` (second call): {e}"))?;
        calls += 2;
        if first != second {
            return Err(format!("conformance input `{name}`: two calls with the same input gave different decisions"));
        }
        if let Some(why) = structural(&first) {
            return Err(format!("conformance input `{name}`: {why}"));
        }
    }
    let thresholds = thresholds(policy)?;
    let mut checker = InvariantChecker::new(&thresholds);
    let mut memory: Option<Memory> = None;
    for (at, reading) in scenario() {
        let input = DecisionInput {
            now: at,
            signal: Signal::Reading(reading.clone()),
            memory: memory.take(),
            pin: None,
            throttles_enabled: false,
            stages_throttled: false,
        };
        let d = policy.decide(&input).map_err(|e| format!("conformance scenario at {at}: {e}"))?;
        calls += 1;
        if let Some(why) = structural(&d) {
            return Err(format!("conformance scenario at {at}: {why}"));
        }
        let tick = Tick { at, reading: Some(&reading), pin: None, throttles_enabled: false, outcome: &Outcome::of(&d, false) };
        if let Some(v) = checker.check(&tick) {
            return Err(format!("conformance scenario: {} at {}: {}", v.invariant, v.at, v.detail));
        }
        memory = Some(d.memory);
    }
    Ok(calls)
}

/// Replays recorded ticks (oldest first) with the candidate's own memory, through the replay's
/// engine as every replay runs (baselines learnt from the ticks' own latency, pins and the
/// switch from their records on), tick by tick so that a failure names its tick; refuses a trap,
/// a structurally unsound outcome or an invariant break. The number of ticks replayed.
pub(crate) fn trial_replay(policy: &mut dyn Policy, records: &[TickRecord]) -> Result<usize, String> {
    let thresholds = thresholds(policy)?;
    let mut checker = InvariantChecker::new(&thresholds);
    let events = crate::trace::recorded::events(records);
    let start = SessionStart { explain: true, ..SessionStart::fresh(false) };
    let mut stepper = Stepper::tick_by_tick(policy, "recorded ticks", start);
    let mut ticks = 0;
    let mut refused: Option<String> = None;
    stepper
        .feed(&events, &mut |tick| {
            if refused.is_some() {
                return;
            }
            ticks += 1;
            let at = crate::instants::format_rfc3339(tick.at);
            if let Some(why) = unsound(tick.outcome) {
                refused = Some(format!("trial replay, recorded tick at {at}: {why}"));
            } else if let Some(v) = checker.check(&tick) {
                refused = Some(format!("trial replay: {} at {}: {}", v.invariant, v.at, v.detail));
            }
        })
        .map_err(|e| match e {
            StepError::Policy { at, source, .. } => format!("trial replay, recorded tick at {at}: {source}"),
            other @ StepError::Lease { .. } => format!("trial replay: {other}"),
        })?;
    refused.map_or(Ok(ticks), Err)
}

/// What [`structural`] checks that an outcome shows: factors in [0, 1], an unchanged state that
/// is its previous one, an explanation.
fn unsound(o: &Outcome) -> Option<String> {
    let f = &o.factors;
    if [f.bulk, f.heavy, f.write, f.read].iter().any(|v| !v.is_finite() || !(0.0..=1.0).contains(v)) {
        return Some(format!("factors out of [0, 1]: {f:?}"));
    }
    if !o.changed && o.previous != o.state {
        return Some(format!("unchanged but previous {:?} differs from state {:?}", o.previous, o.state));
    }
    if o.explanation.as_deref().is_none_or(|e| e.trim().is_empty()) {
        return Some("empty explanation".into());
    }
    None
}

fn thresholds(policy: &mut dyn Policy) -> Result<Thresholds, String> {
    Ok(policy.describe().map_err(|e| format!("describe: {e}"))?.thresholds)
}

/// A quiet hour, a CPU incident rising through every level, and the recovery: one reading a
/// minute from a fixed instant.
fn scenario() -> Vec<(i64, Reading)> {
    let start = 1_792_500_000;
    let cpu = |m: i64| match m {
        0..10 => 40.0,
        10..30 => 96.0,
        30..40 => 78.0,
        _ => 30.0,
    };
    (0..70)
        .map(|m| (start + m * 60, Reading { cpu_pct: Some(cpu(m)), connections_pct: Some(30.0), scaling: Some(false), latency: vec![] }))
        .collect()
}
