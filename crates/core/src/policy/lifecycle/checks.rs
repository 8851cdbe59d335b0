//! What a candidate version must pass before it may decide: the checks that apply to every
//! version (no trap, the same output twice for the same input, structurally sound decisions,
//! the invariants of docs/behaviour.md §12 over a fixed scenario) and a trial replay of the recorded ticks.

use crate::policy::Policy;
use crate::policy::invariants::InvariantChecker;
use crate::policy::invariants::Tick;
use crate::ports::memory::TickRecord;
use vocabulary::{Decision, DecisionInput, Memory, Outcome, Reading, Signal, Thresholds};

/// The fixed inputs every version decides before it may run: the inputs of the decision
/// conformance vectors (whose expected outputs belong to 1.0.0), kept with the host so that the
/// binary never reads test fixtures. `tests/tests/conformance_vectors.rs` keeps the two equal.
const FIXED_INPUTS: &str = include_str!("self_check_inputs.json");

/// One fixed input, by name.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedInput {
    pub name: String,
    pub input: DecisionInput,
}

/// Every fixed input, parsed whole: one that does not parse is an error, never skipped.
pub fn fixed_inputs() -> Result<Vec<FixedInput>, String> {
    serde_json::from_str(FIXED_INPUTS).map_err(|e| format!("the self-check's fixed inputs (self_check_inputs.json) do not parse: {e}"))
}

/// A decision that cannot be right whatever the thresholds.
pub fn structural(d: &Decision) -> Option<String> {
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

/// Replays recorded ticks (oldest first) with the candidate's own memory, refusing a trap or
/// an invariant break; the number of ticks replayed.
pub fn trial_replay(policy: &mut dyn Policy, records: &[TickRecord]) -> Result<usize, String> {
    let thresholds = thresholds(policy)?;
    let mut checker = InvariantChecker::new(&thresholds);
    let mut memory: Option<Memory> = None;
    for record in records {
        let at = crate::instants::format_rfc3339(record.at);
        let input = DecisionInput {
            now: record.at,
            signal: record.signal.clone(),
            memory: memory.take(),
            pin: record.pin.clone(),
            throttles_enabled: record.throttles_enabled,
            stages_throttled: false,
        };
        let d = policy.decide(&input).map_err(|e| format!("trial replay, recorded tick at {at}: {e}"))?;
        if let Some(why) = structural(&d) {
            return Err(format!("trial replay, recorded tick at {at}: {why}"));
        }
        let reading: Option<&Reading> = match &record.signal {
            Signal::Reading(r) => Some(r),
            Signal::Failed(_) => None,
        };
        let tick = Tick {
            at: record.at,
            reading,
            pin: record.pin.as_ref(),
            throttles_enabled: record.throttles_enabled,
            outcome: &Outcome::of(&d, false),
        };
        if let Some(v) = checker.check(&tick) {
            return Err(format!("trial replay: {} at {}: {}", v.invariant, v.at, v.detail));
        }
        memory = Some(d.memory);
    }
    Ok(records.len())
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
