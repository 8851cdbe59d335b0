//! The time axis of a timeline: the zone its times are written in (UTC in reports, the
//! reader's own zone in the console), round times for the grid, and how each is written.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use vocabulary::Instant;

/// The zone a timeline's times are written in.
#[derive(Debug, Clone)]
pub struct Zone {
    tz: TimeZone,
    /// The IANA name, `UTC` for UTC.
    name: String,
}

/// A zone name the time zone database does not hold.
#[derive(Debug, thiserror::Error)]
#[error("unknown time zone {name:?}: give an IANA name such as Europe/Berlin or America/New_York, or leave it out for UTC")]
pub struct UnknownZone {
    pub name: String,
}

impl Zone {
    pub fn utc() -> Self {
        Zone { tz: TimeZone::UTC, name: "UTC".into() }
    }

    /// The zone of an IANA name (`Europe/Berlin`), from the system's zoneinfo or the copy
    /// built into the binary.
    pub fn named(name: &str) -> Result<Self, UnknownZone> {
        if name == "UTC" || name == "Etc/UTC" {
            return Ok(Zone::utc());
        }
        let tz = TimeZone::get(name).map_err(|_| UnknownZone { name: name.into() })?;
        Ok(Zone { tz, name: name.into() })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Seconds to add to a UTC instant for this zone's wall clock at that instant.
    pub fn offset(&self, at: Instant) -> Instant {
        Timestamp::from_second(at).map_or(0, |t| Instant::from(self.tz.to_offset(t).seconds()))
    }

    /// How the zone is named under a timeline: `UTC`, or `Europe/Berlin (CET, UTC+01:00)` as
    /// it stands at `at`.
    pub fn describe(&self, at: Instant) -> String {
        let Ok(t) = Timestamp::from_second(at) else { return self.name.clone() };
        if self.tz == TimeZone::UTC {
            return "UTC".into();
        }
        let info = self.tz.to_offset_info(t);
        let seconds = info.offset().seconds();
        let sign = if seconds < 0 { '-' } else { '+' };
        let (h, m) = (seconds.unsigned_abs() / 3600, seconds.unsigned_abs() % 3600 / 60);
        format!("{} ({}, UTC{sign}{h:02}:{m:02})", self.name, info.abbreviation())
    }

    /// `at` written as `format` on this zone's wall clock.
    pub fn stamp(&self, at: Instant, format: Stamp) -> String {
        let Ok(t) = Timestamp::from_second(at) else { return at.to_string() };
        let t = t.to_zoned(self.tz.clone());
        let (year, month, day, hour, minute) = (t.year(), t.month(), t.day(), t.hour(), t.minute());
        match format {
            Stamp::Time => format!("{hour:02}:{minute:02}"),
            Stamp::DayTime => format!("{month:02}-{day:02} {hour:02}:{minute:02}"),
            Stamp::Day => format!("{year}-{month:02}-{day:02}"),
            Stamp::Full => format!("{year}-{month:02}-{day:02} {hour:02}:{minute:02}"),
        }
    }

    /// Round times of this zone's wall clock for the axis, about ten over the range, and how
    /// to write them.
    pub fn ticks(&self, range: std::ops::Range<Instant>) -> (Vec<Instant>, Stamp) {
        const MINUTE: Instant = 60;
        const DAY: Instant = 86_400;
        let span = range.end - range.start;
        let steps = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 7 * 1440, 14 * 1440, 28 * 1440, 56 * 1440, 91 * 1440];
        let step = steps.iter().map(|m| m * MINUTE).find(|s| span / s <= 10).unwrap_or(182 * DAY);
        // Rounded on the wall clock at the start: midnight is the zone's midnight.
        let offset = self.offset(range.start);
        let start = range.start + offset;
        let first = start.div_euclid(step) * step + if start.rem_euclid(step) == 0 { 0 } else { step } - offset;
        let ticks = (0..).map(|i| first + i * step).take_while(|t| *t <= range.end).collect();
        let format = if span <= DAY {
            Stamp::Time
        } else if step < DAY {
            Stamp::DayTime
        } else {
            Stamp::Day
        };
        (ticks, format)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    Time,
    DayTime,
    Day,
    Full,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-03-29 00:30 UTC: Berlin moves from CET to CEST at 01:00 UTC.
    const BEFORE_SPRING: Instant = 1_774_744_200;

    #[test]
    fn a_named_zone_writes_its_own_wall_clock_across_a_clock_change() {
        let berlin = Zone::named("Europe/Berlin").unwrap();
        assert_eq!(berlin.stamp(BEFORE_SPRING, Stamp::Full), "2026-03-29 01:30");
        assert_eq!(berlin.stamp(BEFORE_SPRING + 3600, Stamp::Full), "2026-03-29 03:30");
        assert_eq!(berlin.describe(BEFORE_SPRING), "Europe/Berlin (CET, UTC+01:00)");
        assert_eq!(berlin.describe(BEFORE_SPRING + 3600), "Europe/Berlin (CEST, UTC+02:00)");
        assert_eq!(Zone::utc().stamp(BEFORE_SPRING, Stamp::Full), "2026-03-29 00:30");
    }

    #[test]
    fn ticks_fall_on_the_zones_round_times() {
        let india = Zone::named("Asia/Kolkata").unwrap();
        let (ticks, format) = india.ticks(BEFORE_SPRING..BEFORE_SPRING + 6 * 3600);
        assert_eq!(format, Stamp::Time);
        assert!(ticks.iter().all(|t| india.stamp(*t, Stamp::Time).ends_with(":00")), "{ticks:?}");
    }

    #[test]
    fn an_unknown_zone_is_refused_with_what_to_give() {
        let e = Zone::named("Mars/Olympus").unwrap_err().to_string();
        assert!(e.contains("Mars/Olympus") && e.contains("IANA"), "{e}");
    }
}
