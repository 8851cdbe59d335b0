//! The bench-only echo (`bench-echo` feature, fixture `tests/policies/9.9.0`): a `decide` that
//! runs no rule. It takes the input through the same conversions as the real export and
//! answers a decision of the same shape as a steady-state hold: the memory handed in (or a
//! fresh one), its state and factors, and an explanation as long as a typical one. The host
//! measures it as the no-op that lifts and lowers the same types (`bench/`, the performance budget); it is
//! never shipped (the builder takes `bench-*` features only for fixtures under tests/).

use vocabulary::Thresholds;
use vocabulary::{Cause, Decision, DecisionInput, Level, Memory, Signal, ThrottleIntent};

pub fn echo(input: &DecisionInput, t: &Thresholds) -> Decision {
    let memory = input.memory.clone().unwrap_or_else(|| Memory::fresh(input.now));
    let state = memory.state;
    Decision {
        state,
        factors: t.factors.of(state),
        changed: false,
        previous: state,
        cause: Cause::Hold,
        level: matches!(input.signal, Signal::Reading(_)).then_some(Level::Normal),
        pending: None,
        throttles: ThrottleIntent::None,
        supporting: Vec::new(),
        memory,
        explanation: String::from("constrained held (hold); reading constrained"),
        damping_hold: None,
    }
}
