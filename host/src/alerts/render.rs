//! The rules of [`super::rules`] as a Prometheus rules file (YAML; every string is written as a
//! JSON string, which YAML reads as a double-quoted scalar), with every duration divided by a
//! time scale.

use super::rules::{AlertRule, RULES};

/// The group name in the rules file.
pub const GROUP: &str = "capacity-sentinel";

/// How much faster than real time the watched sentinel runs (`sentinel run --speed`): 1 in
/// production.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeScale(f64);

/// A `--time-scale` that is not a number from 1 to 3600; it holds the value given.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("--time-scale must be a number from 1 to 3600 (how many times faster than real time the sentinel runs), got {0}")]
pub struct BadTimeScale(pub f64);

impl TimeScale {
    /// Real time: every duration as written, for a sentinel in production.
    pub const REAL_TIME: TimeScale = TimeScale(1.0);

    /// The scale for a sentinel that runs `factor` times faster than real time
    /// (`sentinel run --speed`); refused unless `factor` is a number from 1 to 3600.
    pub fn new(factor: f64) -> Result<TimeScale, BadTimeScale> {
        if factor.is_finite() && (1.0..=3600.0).contains(&factor) { Ok(TimeScale(factor)) } else { Err(BadTimeScale(factor)) }
    }

    /// `seconds` divided by the scale, never below one second.
    fn seconds(self, seconds: u32) -> u64 {
        ((f64::from(seconds) / self.0).round() as u64).max(1)
    }

    /// `seconds` scaled, as a PromQL duration (`3m`, `90s`, `1h`).
    fn duration(self, seconds: u32) -> String {
        let s = self.seconds(seconds);
        match s {
            s if s % 3600 == 0 => format!("{}h", s / 3600),
            s if s % 60 == 0 => format!("{}m", s / 60),
            s => format!("{s}s"),
        }
    }
}

/// The expression with its `{S:n}` and `{D:n}` durations written out at `scale`.
pub fn expression(rule: &AlertRule, scale: TimeScale) -> String {
    let mut out = String::new();
    let mut rest = rule.expr;
    while let Some(start) = rest.find('{') {
        let (before, after) = rest.split_at(start);
        let placeholder = after.strip_prefix("{S:").map(|a| ('S', a)).or_else(|| after.strip_prefix("{D:").map(|a| ('D', a)));
        let Some((kind, tail)) = placeholder else {
            // A label matcher's brace: copy it.
            out.push_str(before);
            out.push('{');
            rest = &after[1..];
            continue;
        };
        let end = tail.find('}').unwrap_or_else(|| panic!("alert {}: unclosed duration placeholder", rule.name));
        let seconds: u32 = tail[..end].parse().unwrap_or_else(|_| panic!("alert {}: a duration placeholder needs seconds", rule.name));
        out.push_str(before);
        match kind {
            'S' => out.push_str(&scale.seconds(seconds).to_string()),
            _ => out.push_str(&scale.duration(seconds)),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The whole rules file.
pub fn rules_file(scale: TimeScale) -> String {
    let quoted = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let mut out = String::from(
        "# Alert rules for the capacity sentinel (docs/behaviour.md §7.1). Written by `sentinel alert-rules`;\n\
         # regenerate rather than edit (a test keeps this file equal to the command's output).\n",
    );
    if scale != TimeScale::REAL_TIME {
        out.push_str(&format!("# Every duration divided by {} (--time-scale): for a sentinel run with --speed {}.\n", scale.0, scale.0));
    }
    out.push_str(&format!("groups:\n  - name: {}\n    rules:\n", quoted(GROUP)));
    for rule in RULES {
        out.push_str(&format!("      - alert: {}\n", rule.name));
        out.push_str(&format!("        expr: {}\n", quoted(&expression(rule, scale))));
        if let Some(for_s) = rule.for_s {
            out.push_str(&format!("        for: {}\n", scale.duration(for_s)));
        }
        out.push_str(&format!("        labels:\n          severity: {}\n", rule.severity.name()));
        out.push_str(&format!(
            "        annotations:\n          summary: {}\n          description: {}\n",
            quoted(rule.summary),
            quoted(rule.description)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_divided_by_the_scale_and_never_vanish() {
        let fast = TimeScale::new(60.0).unwrap();
        assert_eq!(fast.duration(600), "10s");
        assert_eq!(fast.duration(86_400), "24m");
        assert_eq!(fast.seconds(30), 1, "half a second rounds up to the shortest duration");
        assert_eq!(TimeScale::REAL_TIME.duration(3600), "1h");
        assert_eq!(TimeScale::REAL_TIME.duration(90), "90s");
    }

    #[test]
    fn placeholders_are_replaced_and_label_matchers_kept() {
        let rule = RULES.iter().find(|r| r.name == "SentinelNotPublishing").unwrap();
        let real = expression(rule, TimeScale::REAL_TIME);
        assert!(real.contains("[168h]"), "a week of lookback: {real}");
        assert!(real.ends_with("> 180"), "{real}");
        let fast = expression(rule, TimeScale::new(60.0).unwrap());
        assert!(fast.contains("[168m]") && fast.ends_with("> 3"), "{fast}");
        let matcher = RULES.iter().find(|r| r.name == "SentinelEmergencyProlonged").unwrap();
        assert_eq!(expression(matcher, TimeScale::REAL_TIME), "sentinel_in_state{state=\"emergency\"} == 1");
        for rule in RULES {
            let text = expression(rule, TimeScale::new(7.0).unwrap());
            assert!(!text.contains("{S:") && !text.contains("{D:"), "{}: {text}", rule.name);
        }
    }

    #[test]
    fn a_scale_outside_one_to_an_hour_is_refused_naming_the_flag() {
        for bad in [0.0, 0.5, -1.0, f64::NAN, f64::INFINITY, 3601.0] {
            let err = TimeScale::new(bad).unwrap_err().to_string();
            assert!(err.starts_with("--time-scale must be"), "{err}");
        }
    }
}
