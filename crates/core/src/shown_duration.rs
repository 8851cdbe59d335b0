//! A duration as people read it: humantime's text (`20s`, `1h 30m`, `500ms`) with a space
//! before the longer units (`1 day`, `7 days 2h`), which `humantime` alone runs together
//! (`7days`). The text still parses back as a duration in a config.

use std::time::Duration;

/// `d` as people read it (`20s`, `1h 30m`, `7 days 2h`): for messages and help text, and still
/// parseable as a duration in a config.
pub fn duration(d: Duration) -> String {
    humantime::format_duration(d)
        .to_string()
        .split(' ')
        .map(|part| {
            let digits = part.chars().take_while(char::is_ascii_digit).count();
            let unit = &part[digits..];
            if digits > 0 && matches!(unit, "day" | "days" | "week" | "weeks" | "month" | "months" | "year" | "years") {
                format!("{} {unit}", &part[..digits])
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_units_get_a_space_and_the_text_parses_back() {
        let day = 86_400;
        for (secs, shown) in [(20, "20s"), (5400, "1h 30m"), (day, "1 day"), (7 * day, "7 days"), (7 * day + 7200, "7 days 2h")] {
            let d = Duration::from_secs(secs);
            assert_eq!(duration(d), shown);
            assert_eq!(humantime::parse_duration(&duration(d)), Ok(d), "{shown} parses back");
        }
        assert_eq!(duration(Duration::from_millis(500)), "500ms");
    }
}
