//! The comparison metrics as one table: each with a stable key (report.json, the gate file),
//! a name people read, which direction is better, and how a [`Summary`] gives its value. The
//! report, the markdown table and the gate all read this table, so they never disagree.

use super::compare::Summary;
use serde::Serialize;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Less is better (transitions, flaps, delays, over-protection, violations).
    Lower,
    /// More is better (bulk capacity-minutes).
    Higher,
    /// Descriptive only (time in a state, what the trace itself holds).
    Neither,
}

/// One metric of the comparison: its key, its name, which way is better, how to show it and
/// how to read it from a [`Summary`].
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// The stable key in report.json and gate files (`flaps_per_day`).
    pub key: &'static str,
    /// What people read in tables and reports (`flaps per day`).
    pub name: &'static str,
    /// Which way the metric improves; decides a row's verdict.
    pub better: Better,
    /// Decimal places shown.
    pub decimals: usize,
    /// Reads the metric from a summary; none when it does not apply (no critical reading,
    /// protection never came).
    pub value: fn(&Summary) -> Option<f64>,
}

fn count(n: u64) -> Option<f64> {
    Some(n as f64)
}

/// Every metric of the comparison (docs/behaviour.md §10.4), in the order tables show them.
pub const METRICS: &[Metric] = &[
    Metric { key: "ticks", name: "ticks (minutes)", better: Better::Neither, decimals: 0, value: |s| count(s.ticks) },
    Metric { key: "transitions", name: "transitions", better: Better::Lower, decimals: 0, value: |s| count(s.transitions) },
    Metric { key: "flaps", name: "flaps (undone within 15 min)", better: Better::Lower, decimals: 0, value: |s| count(s.flaps) },
    Metric { key: "flaps_per_day", name: "flaps per day", better: Better::Lower, decimals: 2, value: |s| Some(s.flaps_per_day()) },
    Metric { key: "minutes_normal", name: "minutes normal", better: Better::Neither, decimals: 0, value: |s| count(s.minutes[0]) },
    Metric {
        key: "minutes_constrained",
        name: "minutes constrained",
        better: Better::Neither,
        decimals: 0,
        value: |s| count(s.minutes[1]),
    },
    Metric { key: "minutes_critical", name: "minutes critical", better: Better::Neither, decimals: 0, value: |s| count(s.minutes[2]) },
    Metric { key: "minutes_emergency", name: "minutes emergency", better: Better::Neither, decimals: 0, value: |s| count(s.minutes[3]) },
    Metric {
        key: "minutes_to_protect",
        name: "minutes from first critical reading to protection",
        better: Better::Lower,
        decimals: 0,
        value: |s| s.minutes_to_protect.map(|m| m as f64),
    },
    Metric {
        key: "minutes_to_first_protection",
        name: "minutes from trace start to first protection",
        better: Better::Neither,
        decimals: 0,
        value: |s| s.minutes_to_first_protection().map(|m| m as f64),
    },
    Metric {
        key: "over_protection_minutes",
        name: "over-protection (minutes protected on normal readings)",
        better: Better::Lower,
        decimals: 0,
        value: |s| count(s.over_protection_minutes),
    },
    Metric {
        key: "bulk_capacity_minutes",
        name: "bulk capacity-minutes",
        better: Better::Higher,
        decimals: 1,
        value: |s| Some(s.bulk_capacity_minutes),
    },
    Metric {
        key: "bulk_minutes_withheld_per_day",
        name: "bulk capacity-minutes withheld per day (a shorter trace counts as a day)",
        better: Better::Lower,
        decimals: 1,
        value: |s| Some(s.bulk_minutes_withheld_per_day()),
    },
    Metric {
        key: "incidents",
        name: "incidents (changes from normal into protection)",
        better: Better::Neither,
        decimals: 0,
        value: |s| count(s.incidents),
    },
    Metric { key: "failed_reads", name: "failed reads", better: Better::Neither, decimals: 0, value: |s| count(s.failed_reads) },
    Metric {
        key: "throttle_engagements",
        name: "throttle engagements",
        better: Better::Neither,
        decimals: 0,
        value: |s| count(s.throttle_engagements),
    },
    Metric {
        key: "throttle_releases",
        name: "throttle releases",
        better: Better::Neither,
        decimals: 0,
        value: |s| count(s.throttle_releases),
    },
    Metric {
        key: "minutes_held_for_restore",
        name: "minutes emergency held for a stage restore",
        better: Better::Lower,
        decimals: 0,
        value: |s| count(s.minutes_held_for_restore),
    },
    Metric {
        key: "minutes_held_by_damping",
        name: "minutes a recovery was held by flap damping",
        better: Better::Neither,
        decimals: 0,
        value: |s| count(s.minutes_held_by_damping),
    },
    Metric {
        key: "invariant_violations",
        name: "invariant violations",
        better: Better::Lower,
        decimals: 0,
        value: |s| count(s.violations.len() as u64),
    },
];

/// The metric with this key.
pub fn metric(key: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.key == key)
}

/// How the candidate compares on one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The candidate improved on the baseline.
    Better,
    /// The candidate did worse, not (or not yet) judged beyond a gate limit.
    Worse,
    /// Both have the same value.
    Same,
    /// A descriptive metric that changed.
    Changed,
    /// No value on one side (no critical reading, no protection).
    NotApplicable,
    /// Worse beyond the gate's limit.
    Regressed,
    /// Worse beyond the gate's limit, accepted by a waiver.
    Waived,
}

impl Verdict {
    /// The verdict as the report's tables write it (`better`, `n/a`, `REGRESSED`, ...).
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Changed => "changed",
            Verdict::NotApplicable => "n/a",
            Verdict::Regressed => "REGRESSED",
            Verdict::Waived => "waived",
        }
    }
}

/// One metric, baseline against candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The metric's stable key ([`Metric::key`]).
    pub key: &'static str,
    /// The metric's name as people read it.
    pub name: &'static str,
    /// Which way the metric improves.
    pub better: Better,
    /// The baseline's value; none when the metric does not apply to it.
    pub baseline: Option<f64>,
    /// The candidate's value; none when the metric does not apply to it.
    pub candidate: Option<f64>,
    /// Candidate minus baseline.
    pub difference: Option<f64>,
    /// How the candidate compares; the gate marks it `Regressed` or `Waived` when it finds a
    /// regression on this metric.
    pub verdict: Verdict,
    /// Why the verdict, when the numbers alone do not say (never protected, gate limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Every metric of two summaries of the same trace (gate verdicts not yet applied).
pub fn compare(baseline: &Summary, candidate: &Summary) -> Vec<Row> {
    METRICS
        .iter()
        .map(|m| {
            let (b, c) = ((m.value)(baseline), (m.value)(candidate));
            let difference = b.zip(c).map(|(b, c)| c - b);
            let mut note = None;
            let verdict = match (difference, m.better) {
                (Some(d), _) if d.abs() < 1e-9 => Verdict::Same,
                (Some(_), Better::Neither) => Verdict::Changed,
                (Some(d), Better::Lower) => {
                    if d < 0.0 {
                        Verdict::Better
                    } else {
                        Verdict::Worse
                    }
                }
                (Some(d), Better::Higher) => {
                    if d > 0.0 {
                        Verdict::Better
                    } else {
                        Verdict::Worse
                    }
                }
                (None, _) if m.key == "minutes_to_protect" && candidate.never_protected() && !baseline.never_protected() => {
                    note = Some("the candidate never protected after a critical reading".into());
                    Verdict::Worse
                }
                (None, _) if m.key == "minutes_to_protect" && baseline.never_protected() && c.is_some() => {
                    note = Some("the baseline never protected after a critical reading".into());
                    Verdict::Better
                }
                (None, _) => Verdict::NotApplicable,
            };
            if m.key == "minutes_to_first_protection" {
                note = match (b, c) {
                    (Some(b), Some(c)) if c > b => Some(format!("the candidate protects {} min later", c - b)),
                    (Some(b), Some(c)) if c < b => Some(format!("the candidate protects {} min earlier", b - c)),
                    (Some(_), None) => Some("only the baseline reaches critical".into()),
                    (None, Some(_)) => Some("only the candidate reaches critical".into()),
                    _ => None,
                };
            }
            Row { key: m.key, name: m.name, better: m.better, baseline: b, candidate: c, difference, verdict, note }
        })
        .collect()
}

/// A value as the tables show it.
pub(crate) fn format_value(value: Option<f64>, decimals: usize) -> String {
    match value {
        None => "-".into(),
        Some(v) => format!("{v:.decimals$}"),
    }
}

/// A difference with its sign (`+3`, `-0.5`, `0`).
pub(crate) fn format_difference(value: Option<f64>, decimals: usize) -> String {
    match value {
        None => "-".into(),
        Some(v) if v.abs() < 1e-9 => "0".into(),
        Some(v) => format!("{v:+.decimals$}"),
    }
}
