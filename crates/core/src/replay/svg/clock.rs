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
    /// A name asked for that the database does not hold (the drawing is then in UTC and says so).
    unknown: Option<String>,
}

/// A zone name the time zone database does not hold.
#[derive(Debug, thiserror::Error)]
#[error("unknown time zone {name:?}: give an IANA name such as Europe/Berlin or America/New_York, or leave it out for UTC")]
pub struct UnknownZone {
    /// The name asked for.
    pub name: String,
}

impl Zone {
    /// UTC, the zone of reports.
    pub fn utc() -> Self {
        Zone { tz: TimeZone::UTC, name: "UTC".into(), unknown: None }
    }

    /// The zone of an IANA name (`Europe/Berlin`), from the system's zoneinfo or the copy
    /// built into the binary.
    pub fn named(name: &str) -> Result<Self, UnknownZone> {
        if name == "UTC" || name == "Etc/UTC" {
            return Ok(Zone::utc());
        }
        let tz = TimeZone::get(name).map_err(|_| UnknownZone { name: name.into() })?;
        Ok(Zone { tz, name: name.into(), unknown: None })
    }

    /// The zone of `name`, else UTC with the reason said under the drawing: a reader whose
    /// zone this machine lacks still gets the timeline, in a zone it names.
    pub fn named_or_utc(name: &str) -> Self {
        Zone::named(name).unwrap_or_else(|e| Zone { unknown: Some(e.name), ..Zone::utc() })
    }

    /// The IANA name the times are written in; `UTC` for UTC, and for an unknown name that
    /// fell back to it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Seconds to add to a UTC instant for this zone's wall clock at that instant.
    pub fn offset(&self, at: Instant) -> Instant {
        Timestamp::from_second(at).map_or(0, |t| Instant::from(self.tz.to_offset(t).seconds()))
    }

    /// How the zone is named under a timeline from `from` to `to`: `UTC`, or `Europe/Berlin
    /// (CET, UTC+01:00)`, with the offset after a clock change inside the window too
    /// (`Europe/Berlin (CEST, UTC+02:00, then CET, UTC+01:00)`).
    pub fn describe(&self, from: Instant, to: Instant) -> String {
        if let Some(name) = &self.unknown {
            // Only a name of IANA characters is repeated into the drawing.
            let plain = name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || "/_+-".contains(c));
            let asked = if plain { format!("\"{name}\"") } else { "asked for".into() };
            return format!("UTC (the time zone {asked} is not known here)");
        }
        if self.tz == TimeZone::UTC {
            return "UTC".into();
        }
        let offset = |at: Instant| {
            let t = Timestamp::from_second(at).ok()?;
            let info = self.tz.to_offset_info(t);
            let seconds = info.offset().seconds();
            let sign = if seconds < 0 { '-' } else { '+' };
            let (h, m) = (seconds.unsigned_abs() / 3600, seconds.unsigned_abs() % 3600 / 60);
            Some(format!("{}, UTC{sign}{h:02}:{m:02}", info.abbreviation()))
        };
        match (offset(from), offset(to)) {
            (Some(a), Some(b)) if a != b => format!("{} ({a}, then {b})", self.name),
            (Some(a), _) => format!("{} ({a})", self.name),
            _ => self.name.clone(),
        }
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

    /// Round times of this zone's wall clock for the axis, at most `most` of them over the
    /// range, and how to write them. They are stepped on the wall clock, so that across a
    /// clock change midnight stays midnight; a round time the change skips is left out.
    pub fn ticks(&self, range: std::ops::Range<Instant>, most: usize) -> (Vec<Instant>, Stamp) {
        const MINUTE: Instant = 60;
        const DAY: Instant = 86_400;
        let span = range.end - range.start;
        let most = most.max(2) as Instant;
        let steps = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 7 * 1440, 14 * 1440, 28 * 1440, 56 * 1440, 91 * 1440];
        let step = steps.iter().map(|m| m * MINUTE).find(|s| span / s < most).unwrap_or(182 * DAY);
        // Wall-clock seconds: the zone's date and time read as if they were UTC.
        let (from, to) = (range.start + self.offset(range.start), range.end + self.offset(range.end));
        let first = from.div_euclid(step) * step + if from.rem_euclid(step) == 0 { 0 } else { step };
        let mut ticks: Vec<Instant> = Vec::new();
        for wall in (0..).map(|i| first + i * step).take_while(|w| *w <= to) {
            if let Some(at) = self.instant_of_wall(wall).filter(|at| (range.start..=range.end).contains(at))
                && ticks.last().is_none_or(|last| *last < at)
            {
                ticks.push(at);
            }
        }
        let format = if span <= DAY {
            Stamp::Time
        } else if step < DAY {
            Stamp::DayTime
        } else {
            Stamp::Day
        };
        (ticks, format)
    }

    /// The instant this zone's wall clock reads `wall` (seconds as if UTC); none when a clock
    /// change skips that time, the earlier when it repeats it.
    fn instant_of_wall(&self, wall: Instant) -> Option<Instant> {
        let civil = Timestamp::from_second(wall).ok()?.to_zoned(TimeZone::UTC).datetime();
        let zoned = self.tz.to_ambiguous_zoned(civil);
        if matches!(zoned.offset(), jiff::tz::AmbiguousOffset::Gap { .. }) {
            return None;
        }
        Some(zoned.earlier().ok()?.timestamp().as_second())
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
        assert_eq!(berlin.describe(BEFORE_SPRING, BEFORE_SPRING), "Europe/Berlin (CET, UTC+01:00)");
        assert_eq!(berlin.describe(BEFORE_SPRING + 3600, BEFORE_SPRING + 7200), "Europe/Berlin (CEST, UTC+02:00)");
        assert_eq!(berlin.describe(BEFORE_SPRING, BEFORE_SPRING + 3600), "Europe/Berlin (CET, UTC+01:00, then CEST, UTC+02:00)");
        assert_eq!(Zone::utc().stamp(BEFORE_SPRING, Stamp::Full), "2026-03-29 00:30");
    }

    #[test]
    fn ticks_fall_on_the_zones_round_times() {
        let india = Zone::named("Asia/Kolkata").unwrap();
        let (ticks, format) = india.ticks(BEFORE_SPRING..BEFORE_SPRING + 6 * 3600, 10);
        assert_eq!(format, Stamp::Time);
        assert!(ticks.iter().all(|t| india.stamp(*t, Stamp::Time).ends_with(":00")), "{ticks:?}");
        assert!(india.ticks(BEFORE_SPRING..BEFORE_SPRING + 6 * 3600, 3).0.len() <= 3, "a narrow drawing gets fewer");
    }

    /// A week across Berlin's autumn change (2026-10-25): every day's tick is that day's
    /// midnight; before, the offset at the start was kept, and after the change the ticks fell
    /// at 23:00 with the day before's date.
    #[test]
    fn daily_ticks_stay_at_midnight_across_a_clock_change() {
        let berlin = Zone::named("Europe/Berlin").unwrap();
        let from = 1_792_620_000; // 2026-10-22 00:00 in Berlin (22:00 UTC the day before)
        let (ticks, format) = berlin.ticks(from..from + 7 * 86_400, 10);
        assert_eq!(format, Stamp::Day);
        let stamps: Vec<String> = ticks.iter().map(|t| berlin.stamp(*t, Stamp::Full)).collect();
        assert_eq!(stamps.len(), 7, "{stamps:?}");
        assert!(stamps.iter().all(|s| s.ends_with(" 00:00")), "{stamps:?}");
        assert_eq!(stamps[3], "2026-10-25 00:00");
        assert_eq!(stamps[4], "2026-10-26 00:00");
        // Hourly across the spring change: 02:00 does not exist that night and is left out.
        let (hours, _) = berlin.ticks(BEFORE_SPRING - 1800..BEFORE_SPRING + 3 * 3600, 4);
        let stamps: Vec<String> = hours.iter().map(|t| berlin.stamp(*t, Stamp::Time)).collect();
        assert_eq!(stamps, ["01:00", "03:00", "04:00", "05:00"]);
    }

    #[test]
    fn an_unknown_zone_is_refused_with_what_to_give_or_drawn_in_utc_saying_so() {
        let e = Zone::named("Mars/Olympus").unwrap_err().to_string();
        assert!(e.contains("Mars/Olympus") && e.contains("IANA"), "{e}");
        let utc = Zone::named_or_utc("Mars/Olympus");
        assert_eq!(utc.stamp(BEFORE_SPRING, Stamp::Full), "2026-03-29 00:30");
        assert_eq!(utc.describe(BEFORE_SPRING, BEFORE_SPRING), "UTC (the time zone \"Mars/Olympus\" is not known here)");
        let odd = Zone::named_or_utc("<b>\r");
        assert_eq!(odd.describe(BEFORE_SPRING, BEFORE_SPRING), "UTC (the time zone asked for is not known here)");
    }
}
