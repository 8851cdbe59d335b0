//! RFC 3339 text for [`Instant`]s (unix seconds, UTC), as traces and published documents use it.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, UtcOffset};

use vocabulary::Instant;

/// Parses an RFC 3339 date-time (`2026-10-20T14:03:00Z`, `2026-10-20T16:03:00+02:00`) into unix
/// seconds. The offset is required (`Z` or `±HH:MM`); the date and time are separated by `T`
/// (or `t`, or the space RFC 3339 permits); a sub-second part is accepted and truncated, and a
/// leap second `:60` counts as `:59`. The instant must fall within the years 0000 to 9999 in
/// UTC, which [`format_rfc3339`] writes: `9999-12-31T23:59:59-01:00` (year 10000 in UTC) is
/// refused, so every instant read here is written back as it was read.
pub fn parse_rfc3339(s: &str) -> Result<Instant, String> {
    // The time crate accepts any byte as the date/time separator; RFC 3339 names only these.
    if !matches!(s.as_bytes().get(10), Some(b'T' | b't' | b' ')) {
        return Err(format!("expected an RFC 3339 time like 2026-10-20T14:03:00Z, got {s:?}"));
    }
    let at = OffsetDateTime::parse(s, &Rfc3339)
        .map(OffsetDateTime::unix_timestamp)
        .map_err(|e| format!("expected an RFC 3339 time like 2026-10-20T14:03:00Z, got {s:?} ({e})"))?;
    if !(FIRST_WRITABLE..=LAST_WRITABLE).contains(&at) {
        return Err(format!(
            "expected an RFC 3339 time like 2026-10-20T14:03:00Z, got {s:?} (in UTC it falls outside the years 0000 to 9999)"
        ));
    }
    Ok(at)
}

/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the instants RFC 3339 can write in UTC.
const FIRST_WRITABLE: Instant = -62_167_219_200;
const LAST_WRITABLE: Instant = 253_402_300_799;

/// Formats unix seconds as RFC 3339 in UTC with seconds precision: `2026-10-20T14:03:00Z`.
///
/// RFC 3339 covers the years 0000 to 9999 only; an instant outside them (never produced by
/// [`parse_rfc3339`], but a stored memory or pin may hold one) is written as `@<seconds>` so
/// that it is still visible, not silently clamped.
pub fn format_rfc3339(at: Instant) -> String {
    let format = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    OffsetDateTime::from_unix_timestamp(at)
        .ok()
        .map(|t| t.to_offset(UtcOffset::UTC))
        .filter(|t| (0..=9999).contains(&t.year()))
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_else(|| format!("@{at}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Instant = 1_792_504_980; // 2026-10-20T14:03:00Z

    #[test]
    fn parses_utc() {
        assert_eq!(parse_rfc3339("2026-10-20T14:03:00Z"), Ok(AT));
        assert_eq!(parse_rfc3339("2026-10-20t14:03:00z"), Ok(AT));
        assert_eq!(parse_rfc3339("2026-10-20 14:03:00Z"), Ok(AT));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Ok(0));
    }

    #[test]
    fn parses_offsets() {
        assert_eq!(parse_rfc3339("2026-10-20T16:03:00+02:00"), Ok(AT));
        assert_eq!(parse_rfc3339("2026-10-20T09:33:00-04:30"), Ok(AT));
        assert_eq!(parse_rfc3339("2026-10-20T14:03:00+00:00"), Ok(AT));
    }

    #[test]
    fn truncates_sub_seconds() {
        assert_eq!(parse_rfc3339("2026-10-20T14:03:00.999Z"), Ok(AT));
        assert_eq!(parse_rfc3339("2026-10-20T14:03:59.5+00:00"), Ok(AT + 59));
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59.5Z"), Ok(-1));
    }

    #[test]
    fn rejects_non_rfc3339() {
        for bad in [
            "",
            "high",
            "2026-10-20T14:03:00",      // no offset
            "2026-10-20T14:03Z",        // no seconds
            "2026-10-20X14:03:00Z",     // odd separator
            "2026-13-20T14:03:00Z",     // month
            "2026-10-20T24:00:00Z",     // hour
            "2026-10-20T14:03:00+2:00", // offset digits
            " 2026-10-20T14:03:00Z",
            "2026-10-20T14:03:00Z ",
            "1792677780",
        ] {
            let err = parse_rfc3339(bad).unwrap_err();
            assert!(err.contains("expected an RFC 3339 time"), "{bad:?}: {err}");
            assert!(err.contains(&format!("{bad:?}")), "{bad:?}: {err}");
        }
    }

    #[test]
    fn formats_utc_seconds() {
        assert_eq!(format_rfc3339(AT), "2026-10-20T14:03:00Z");
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn round_trips() {
        for at in [AT, 0, -62_167_219_200, 253_402_300_799, 951_782_400] {
            assert_eq!(parse_rfc3339(&format_rfc3339(at)), Ok(at), "{at}");
        }
    }

    #[test]
    fn refuses_offsets_that_leave_the_years_rfc3339_can_write() {
        // Found by fuzzing the trace parser: these parsed, then were written back as `@<seconds>`.
        for bad in ["9999-12-31T23:59:59-23:59", "9999-12-31T23:30:00-00:30", "0000-01-01T00:00:00+00:01"] {
            let err = parse_rfc3339(bad).unwrap_err();
            assert!(err.contains("outside the years 0000 to 9999"), "{bad:?}: {err}");
        }
        assert_eq!(parse_rfc3339("9999-12-31T23:59:59Z"), Ok(253_402_300_799));
        assert_eq!(parse_rfc3339("9999-12-31T23:59:59+01:00"), Ok(253_402_297_199));
        assert_eq!(parse_rfc3339("0000-01-01T00:00:00Z"), Ok(-62_167_219_200));
        assert_eq!(parse_rfc3339("0000-01-01T00:30:00+00:30"), Ok(-62_167_219_200));
    }

    #[test]
    fn out_of_range_is_visible() {
        assert_eq!(format_rfc3339(253_402_300_800), "@253402300800"); // 10000-01-01
        assert_eq!(format_rfc3339(i64::MAX), format!("@{}", i64::MAX));
        assert_eq!(format_rfc3339(i64::MIN), format!("@{}", i64::MIN));
    }
}
