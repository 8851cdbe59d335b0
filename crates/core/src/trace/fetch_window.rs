//! The window `sentinel trace fetch` asks for: `--since` (a duration before the end, or an RFC
//! 3339 time), `--until` (an RFC 3339 time, the current minute by default; not included) and
//! `--step`, both ends put on the step's grid (whole minutes for the default step), and how it
//! is cut into requests a server accepts.

use crate::instants::{format_rfc3339, parse_rfc3339};
use std::time::Duration;
use vocabulary::Instant;

/// The longest step: the live sentinel reads once a minute; a coarser trace still replays.
const LONGEST_STEP: Duration = Duration::from_secs(3600);

/// A window of history: every `step` seconds from `from` (included) to `until` (not included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The first step (Unix seconds, on the step's grid).
    pub from: Instant,
    /// The end, not included (Unix seconds, on the step's grid).
    pub until: Instant,
    /// Seconds between steps, from 1 to 3600 (60 for the live sentinel's one reading a minute).
    pub step: u32,
}

impl Window {
    /// The window the options name at `now`, or what is wrong with them and what to write.
    pub fn new(since: &str, until: Option<&str>, step: Duration, now: Instant) -> Result<Window, String> {
        if step.subsec_nanos() != 0 || step.is_zero() || step > LONGEST_STEP {
            return Err(format!(
                "--step {}: expected whole seconds from 1s to 1h (the live sentinel reads once a minute: 1m)",
                crate::shown_duration::duration(step)
            ));
        }
        let step_secs = step.as_secs() as u32;
        let on_grid = |at: Instant| at - at.rem_euclid(Instant::from(step_secs));
        let until = match until {
            None => on_grid(now),
            Some(text) => {
                let at = parse_rfc3339(text).map_err(|e| format!("--until: {e}"))?;
                if at > now {
                    return Err(format!(
                        "--until {text} is after now ({}): history ends at the current minute; leave --until out to fetch up to it",
                        format_rfc3339(now)
                    ));
                }
                on_grid(at)
            }
        };
        let from = match parse_rfc3339(since) {
            Ok(at) => on_grid(at),
            Err(_) => {
                let back = humantime::parse_duration(since).map_err(|e| {
                    format!("--since {since:?}: expected a duration before --until such as 30d or 12h, or an RFC 3339 time ({e})")
                })?;
                on_grid(until - i64::try_from(back.as_secs()).unwrap_or(i64::MAX / 2))
            }
        };
        if from >= until {
            return Err(format!(
                "the window from {} to {} holds no step of {}: --since must come before --until",
                format_rfc3339(from),
                format_rfc3339(until),
                crate::shown_duration::duration(step)
            ));
        }
        Ok(Window { from, until, step: step_secs })
    }

    /// How many steps the window holds.
    pub fn steps(&self) -> u64 {
        ((self.until - self.from) / Instant::from(self.step)) as u64
    }

    /// The requests from `first` on, each of at most `per_request` steps: (first step, last
    /// step), both included.
    pub fn requests(&self, first: Instant, per_request: u64) -> Vec<(Instant, Instant)> {
        let step = Instant::from(self.step);
        let span = step * per_request.max(1) as Instant;
        let mut out = Vec::new();
        let mut start = first;
        while start < self.until {
            let end = (start + span).min(self.until) - step;
            out.push((start, end));
            start = end + step;
        }
        out
    }

    /// `2026-10-01T00:00:00Z to 2026-10-31T00:00:00Z every 1m`.
    pub fn describe(&self) -> String {
        format!(
            "{} to {} every {}",
            format_rfc3339(self.from),
            format_rfc3339(self.until),
            crate::shown_duration::duration(Duration::from_secs(u64::from(self.step)))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Instant = 1_790_000_000 + 17; // 2026-09-21T14:13:37Z
    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn a_duration_counts_back_from_the_current_minute() {
        let w = Window::new("30d", None, MINUTE, NOW).unwrap();
        assert_eq!(w.until, NOW - NOW % 60);
        assert_eq!(w.until - w.from, 30 * 86_400);
        assert_eq!(w.steps(), 43_200);
        let w = Window::new("90m", Some("2026-10-01T00:00:30Z"), MINUTE, NOW + 86_400 * 30).unwrap();
        assert_eq!(w.describe(), "2026-09-30T22:30:00Z to 2026-10-01T00:00:00Z every 1m");
    }

    #[test]
    fn times_are_put_on_the_grid() {
        let w = Window::new("2026-09-20T10:00:59+02:00", Some("2026-09-21T00:00:00Z"), MINUTE, NOW).unwrap();
        assert_eq!(w.describe(), "2026-09-20T08:00:00Z to 2026-09-21T00:00:00Z every 1m");
        let w = Window::new("1h", Some("2026-09-21T00:07:00Z"), Duration::from_secs(300), NOW).unwrap();
        assert_eq!(w.describe(), "2026-09-20T23:05:00Z to 2026-09-21T00:05:00Z every 5m");
    }

    #[test]
    fn bad_windows_say_what_to_write() {
        let err = |since: &str, until: Option<&str>, step: Duration| Window::new(since, until, step, NOW).unwrap_err();
        assert!(
            err("yesterday", None, MINUTE).starts_with("--since \"yesterday\": expected a duration"),
            "{}",
            err("yesterday", None, MINUTE)
        );
        assert!(err("1d", Some("tomorrow"), MINUTE).starts_with("--until: expected an RFC 3339 time"));
        assert!(err("1d", Some("2030-01-01T00:00:00Z"), MINUTE).contains("is after now (2026-09-21T14:13:37Z)"));
        assert!(err("0s", None, MINUTE).contains("holds no step of 1m: --since must come before --until"));
        assert!(err("1d", None, Duration::from_millis(1500)).starts_with("--step 1s 500ms: expected whole seconds"));
        assert!(err("1d", None, Duration::from_secs(7200)).starts_with("--step 2h: expected whole seconds from 1s to 1h"));
        assert!(err("1d", None, Duration::ZERO).starts_with("--step 0s"));
    }

    #[test]
    fn requests_cover_the_window_once_within_the_limit() {
        let w = Window { from: 0, until: 600, step: 60 };
        assert_eq!(w.requests(0, 4), vec![(0, 180), (240, 420), (480, 540)]);
        assert_eq!(w.requests(240, 100), vec![(240, 540)]);
        assert_eq!(w.requests(600, 4), vec![]);
        let month = Window::new("30d", None, MINUTE, NOW).unwrap();
        let requests = month.requests(month.from, 1440);
        assert_eq!(requests.len(), 30);
        let covered: i64 = requests.iter().map(|(a, b)| (b - a) / 60 + 1).sum();
        assert_eq!(covered, 43_200);
        assert!(requests.windows(2).all(|p| p[1].0 == p[0].1 + 60));
    }
}
