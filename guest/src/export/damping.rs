//! The `damping` export (contract 3.2.0): the decision with its flap record carried beside the
//! memory record, and the version's damping numbers. The damping records are converted here,
//! the only place they meet the rules.

use super::Component;
use super::exports::capacity::sentinel::damping as wit;
use super::exports::capacity::sentinel::types;
use super::numbers::thresholds;
use super::policy::{decision_out, input_in, rules};
use vocabulary::{self as core, ChangeDirection};

impl wit::Guest for Component {
    fn parameters() -> Option<wit::FlapDamping> {
        thresholds().damping.map(|d| wit::FlapDamping {
            penalty_per_flap: d.penalty_per_flap,
            flap_window_s: d.flap_window_s,
            half_life_s: d.half_life_s,
            suppress_limit: d.suppress_limit,
            reuse_limit: d.reuse_limit,
            max_penalty: d.max_penalty,
            suppressed_recover_readings: d.suppressed_recover_readings,
        })
    }

    fn decide(input: types::DecisionInput, flap: Option<wit::FlapRecord>) -> wit::DampedDecision {
        let mut input = input_in(input);
        if let Some(memory) = input.memory.as_mut() {
            memory.flap = flap.map(flap_in);
        }
        super::faults::before_decide(&input);
        let mut decision = rules(&input);
        let flap = decision.memory.flap.take().map(flap_out);
        let hold = decision.damping_hold.map(|h| wit::DampingHold {
            penalty: h.penalty,
            suppress_limit: h.suppress_limit,
            reuse_limit: h.reuse_limit,
            reuse_in_s: h.reuse_in_s,
            calm_readings_needed: h.calm_readings_needed,
        });
        wit::DampedDecision { decision: decision_out(decision), flap, hold }
    }
}

fn flap_in(f: wit::FlapRecord) -> core::FlapRecord {
    core::FlapRecord {
        penalty: f.penalty,
        updated_at: f.updated_at,
        suppressed: f.suppressed,
        last_change: f.last_change.map(|c| core::AutoChange {
            at: c.at,
            direction: match c.direction {
                wit::ChangeDirection::Raised => ChangeDirection::Raised,
                wit::ChangeDirection::Lowered => ChangeDirection::Lowered,
            },
        }),
    }
}

fn flap_out(f: core::FlapRecord) -> wit::FlapRecord {
    wit::FlapRecord {
        penalty: f.penalty,
        updated_at: f.updated_at,
        suppressed: f.suppressed,
        last_change: f.last_change.map(|c| wit::AutoChange {
            at: c.at,
            direction: match c.direction {
                ChangeDirection::Raised => wit::ChangeDirection::Raised,
                ChangeDirection::Lowered => wit::ChangeDirection::Lowered,
            },
        }),
    }
}
