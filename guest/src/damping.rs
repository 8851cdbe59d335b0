//! docs/behaviour.md §5.4: flap damping, after BGP route-flap damping (RFC 2439). An automatic
//! change that reverses the previous one within the flap window adds a penalty; the penalty
//! halves every half-life; once a flap brings it to the suppress limit, recovery from
//! constrained or critical is held until it has decayed below the reuse limit. Escalation is
//! never held, nor recovery from emergency (its stage throttles hurt the API's users), nor a pin
//! or a signal-loss release.
//!
//! The decay is computed from the penalty's last update each time it is needed, with the `libm`
//! crate's `exp2` and `log2`: the same bits natively and in the component, where the platform's
//! own maths library could differ in the last place.

use vocabulary::{AutoChange, ChangeDirection, DampingHold, FlapDamping, FlapRecord, Instant};

/// The penalty decayed to `now` (time going backwards leaves it as it is).
pub fn decayed(record: &FlapRecord, now: Instant, d: &FlapDamping) -> f64 {
    let dt = now.saturating_sub(record.updated_at);
    if dt <= 0 {
        return record.penalty;
    }
    record.penalty * libm::exp2(-(dt as f64) / f64::from(d.half_life_s))
}

/// Whether recovery is suppressed this tick: while suppressed and the decayed penalty is still at
/// or above the reuse limit (the caller then asks for the longer calm, or holds). Below it, the
/// suppression is lifted (and stays lifted until a flap brings the penalty back to the suppress
/// limit).
pub fn recovery_hold(flap: &mut Option<FlapRecord>, now: Instant, d: &FlapDamping) -> Option<DampingHold> {
    let record = flap.as_mut().filter(|r| r.suppressed)?;
    let penalty = decayed(record, now, d);
    if penalty < d.reuse_limit {
        record.suppressed = false;
        return None;
    }
    let reuse_in = f64::from(d.half_life_s) * libm::log2(penalty / d.reuse_limit);
    let reuse_in_s = libm::ceil(reuse_in).clamp(1.0, f64::from(u32::MAX)) as u32;
    Some(DampingHold {
        penalty,
        suppress_limit: d.suppress_limit,
        reuse_limit: d.reuse_limit,
        reuse_in_s,
        calm_readings_needed: d.suppressed_recover_readings,
    })
}

/// After an automatic change: a flap when it reverses the previous automatic change within the
/// flap window, which adds the penalty (up to the maximum) and suppresses recovery once it
/// reaches the suppress limit.
pub fn record_change(flap: &mut Option<FlapRecord>, direction: ChangeDirection, now: Instant, d: &FlapDamping) {
    let record = flap.get_or_insert(FlapRecord { penalty: 0.0, updated_at: now, suppressed: false, last_change: None });
    let reversed =
        record.last_change.is_some_and(|last| last.direction != direction && now.saturating_sub(last.at) <= i64::from(d.flap_window_s));
    if reversed {
        let penalty = (decayed(record, now, d) + d.penalty_per_flap).min(d.max_penalty);
        record.penalty = penalty;
        record.updated_at = now;
        if penalty >= d.suppress_limit {
            record.suppressed = true;
        }
    }
    record.last_change = Some(AutoChange { at: now, direction });
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: FlapDamping = FlapDamping {
        penalty_per_flap: 1.0,
        flap_window_s: 1800,
        half_life_s: 600,
        suppress_limit: 2.0,
        reuse_limit: 0.5,
        max_penalty: 4.0,
        suppressed_recover_readings: None,
    };

    fn record(penalty: f64, updated_at: Instant, suppressed: bool) -> Option<FlapRecord> {
        Some(FlapRecord { penalty, updated_at, suppressed, last_change: None })
    }

    #[test]
    fn the_penalty_halves_every_half_life() {
        let r = record(4.0, 0, false).unwrap();
        assert_eq!(decayed(&r, 600, &D), 2.0);
        assert_eq!(decayed(&r, 1200, &D), 1.0);
        assert_eq!(decayed(&r, -60, &D), 4.0);
    }

    #[test]
    fn reversals_within_the_window_add_the_penalty_and_suppress_at_the_limit() {
        let mut flap = None;
        record_change(&mut flap, ChangeDirection::Raised, 0, &D);
        assert_eq!(flap.unwrap().penalty, 0.0, "a first change is no flap");
        record_change(&mut flap, ChangeDirection::Lowered, 300, &D);
        assert_eq!(flap.unwrap().penalty, 1.0);
        assert!(!flap.unwrap().suppressed);
        record_change(&mut flap, ChangeDirection::Raised, 300, &D);
        assert_eq!(flap.unwrap().penalty, 2.0);
        assert!(flap.unwrap().suppressed);
        for _ in 0..5 {
            record_change(&mut flap, ChangeDirection::Lowered, 300, &D);
            record_change(&mut flap, ChangeDirection::Raised, 300, &D);
        }
        assert_eq!(flap.unwrap().penalty, 4.0, "capped at max_penalty");
    }

    #[test]
    fn a_change_in_the_same_direction_or_after_the_window_is_no_flap() {
        let mut flap = None;
        record_change(&mut flap, ChangeDirection::Raised, 0, &D);
        record_change(&mut flap, ChangeDirection::Raised, 60, &D);
        record_change(&mut flap, ChangeDirection::Lowered, 60 + 1801, &D);
        assert_eq!(flap.unwrap().penalty, 0.0);
    }

    #[test]
    fn a_held_recovery_says_when_the_penalty_reaches_the_reuse_limit_and_is_released_below_it() {
        let mut flap = record(2.0, 0, true);
        let hold = recovery_hold(&mut flap, 0, &D).unwrap();
        assert_eq!(hold.reuse_in_s, 1200, "2.0 to 0.5 is two half-lives");
        assert!(recovery_hold(&mut flap, 1199, &D).is_some());
        assert!(recovery_hold(&mut flap, 1201, &D).is_none());
        assert!(!flap.unwrap().suppressed, "lifted below the reuse limit");
        assert!(recovery_hold(&mut flap, 0, &D).is_none(), "stays lifted until a flap suppresses again");
        assert!(recovery_hold(&mut None, 0, &D).is_none());
    }
}
