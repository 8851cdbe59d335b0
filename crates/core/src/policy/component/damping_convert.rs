//! The `damping` interface's records (contract 3.2.0) lowered and lifted: the flap record the
//! host persists in the vocabulary's memory crosses beside the `memory` record, and a held
//! recovery comes back beside the decision. The mirror image of the guest's
//! `export/damping.rs`.

use super::bindings as w;
use vocabulary as v;

pub(crate) fn parameters_from_wit(d: w::FlapDamping) -> v::FlapDamping {
    v::FlapDamping {
        penalty_per_flap: d.penalty_per_flap,
        flap_window_s: d.flap_window_s,
        half_life_s: d.half_life_s,
        suppress_limit: d.suppress_limit,
        reuse_limit: d.reuse_limit,
        max_penalty: d.max_penalty,
        suppressed_recover_readings: d.suppressed_recover_readings,
    }
}

pub(crate) fn flap_to_wit(f: &v::FlapRecord) -> w::FlapRecord {
    w::FlapRecord {
        penalty: f.penalty,
        updated_at: f.updated_at,
        suppressed: f.suppressed,
        last_change: f.last_change.map(|c| w::AutoChange {
            at: c.at,
            direction: match c.direction {
                v::ChangeDirection::Raised => w::ChangeDirection::Raised,
                v::ChangeDirection::Lowered => w::ChangeDirection::Lowered,
            },
        }),
    }
}

fn flap_from_wit(f: w::FlapRecord) -> v::FlapRecord {
    v::FlapRecord {
        penalty: f.penalty,
        updated_at: f.updated_at,
        suppressed: f.suppressed,
        last_change: f.last_change.map(|c| v::AutoChange {
            at: c.at,
            direction: match c.direction {
                w::ChangeDirection::Raised => v::ChangeDirection::Raised,
                w::ChangeDirection::Lowered => v::ChangeDirection::Lowered,
            },
        }),
    }
}

/// The decision with its flap record put back into its memory and its hold, if any.
pub(crate) fn damped_decision_from_wit(d: w::DampedDecision) -> v::Decision {
    let mut decision = super::convert::decision_from_wit(d.decision);
    decision.memory.flap = d.flap.map(flap_from_wit);
    decision.damping_hold = d.hold.map(|h| v::DampingHold {
        penalty: h.penalty,
        suppress_limit: h.suppress_limit,
        reuse_limit: h.reuse_limit,
        reuse_in_s: h.reuse_in_s,
        calm_readings_needed: h.calm_readings_needed,
    });
    decision
}
