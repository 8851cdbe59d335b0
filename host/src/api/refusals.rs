//! How many refused pin changes of one caller are written to the audit: at most
//! [`PER_MINUTE`] a minute each. A verified caller may still hammer the API (a viewer's script
//! in a loop); beyond the allowance its refusals are counted
//! (`sentinel_api_refusals_unaudited_total`) and logged once a minute instead, so the audit
//! keeps a record of the attempt without one caller growing the store or pushing the real
//! changes off the first page.

use sentinel_core::sync::Lock;
use std::collections::HashMap;
use vocabulary::Instant;

/// Refusals of one caller audited per minute.
pub const PER_MINUTE: u32 = 10;
/// Callers remembered before the stale ones are forgotten.
const REMEMBERED: usize = 1024;

/// Each caller's refusals audited in the current minute, by actor; callers of earlier minutes are
/// forgotten once 1024 are remembered.
#[derive(Debug)]
pub struct RefusalAllowance {
    by_actor: Lock<HashMap<String, Window>>,
}

impl Default for RefusalAllowance {
    fn default() -> RefusalAllowance {
        RefusalAllowance { by_actor: Lock::new("pin refusals per caller", HashMap::new()) }
    }
}

#[derive(Debug, Clone, Copy)]
struct Window {
    minute: Instant,
    written: u32,
    /// Refusals over the allowance this minute.
    dropped: u32,
}

/// What to do with one refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Write it to the audit.
    Audit,
    /// Over the allowance: count it; `first` says whether it is the first this minute (log it).
    OverAllowance {
        /// Whether this is the caller's first refusal over the allowance this minute: the one to log.
        first: bool,
    },
}

impl RefusalAllowance {
    /// Takes one refusal of `actor` at `now` (unix seconds) from the allowance of that minute:
    /// `Audit` for the first `PER_MINUTE`, then `OverAllowance`.
    pub fn take(&self, actor: &str, now: Instant) -> Verdict {
        let minute = now.div_euclid(60) * 60;
        let mut by_actor = self.by_actor.lock();
        if by_actor.len() >= REMEMBERED && !by_actor.contains_key(actor) {
            by_actor.retain(|_, w| w.minute == minute);
        }
        let window = by_actor.entry(actor.to_string()).or_insert(Window { minute, written: 0, dropped: 0 });
        if window.minute != minute {
            *window = Window { minute, written: 0, dropped: 0 };
        }
        if window.written < PER_MINUTE {
            window.written += 1;
            return Verdict::Audit;
        }
        window.dropped += 1;
        Verdict::OverAllowance { first: window.dropped == 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_a_minute_per_caller_then_counted_and_the_next_minute_starts_afresh() {
        let a = RefusalAllowance::default();
        let t = 1_800_000_000;
        for _ in 0..PER_MINUTE {
            assert_eq!(a.take("dash", t), Verdict::Audit);
        }
        assert_eq!(a.take("dash", t + 30), Verdict::OverAllowance { first: true });
        assert_eq!(a.take("dash", t + 31), Verdict::OverAllowance { first: false });
        assert_eq!(a.take("alice", t + 31), Verdict::Audit, "another caller has its own allowance");
        assert_eq!(a.take("dash", t + 60), Verdict::Audit);
    }

    #[test]
    fn many_callers_do_not_grow_it_without_bound() {
        let a = RefusalAllowance::default();
        for i in 0..5 * REMEMBERED {
            a.take(&format!("caller-{i}"), 1_800_000_000 + (i as i64 / REMEMBERED as i64) * 60);
        }
        assert!(a.by_actor.lock().len() <= REMEMBERED + 1);
    }
}
