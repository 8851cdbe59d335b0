//! How replay results are printed: the JSON line per tick of docs/behaviour.md §10.3, and summary
//! tables (plain text or markdown) with a comparison when two policies ran.

use super::Tick;
use super::compare::Summary;
use super::metrics::{METRICS, format_difference, format_value};
use crate::instants::format_rfc3339;
use serde::Serialize;
use vocabulary::Factors;

/// One tick as docs/behaviour.md §10.3 prints it.
#[derive(Debug, Serialize)]
pub struct TickLine<'a> {
    /// The policy's label (its version unless given as `LABEL=PATH`).
    pub policy: &'a str,
    /// The tick's time, RFC 3339 in UTC (`2026-10-20T14:03:00Z`).
    pub at: String,
    /// The protection state decided (`normal`, `constrained`, `critical`, `emergency`).
    pub state: &'static str,
    /// The state changed at this tick (a transition).
    pub changed: bool,
    /// Why the decision was taken (`escalate`, `recover`, `pinned`, ..., docs/behaviour.md §5).
    pub cause: &'static str,
    /// The reading's level as the policy assessed it; none (`null`) for a failed read.
    pub level: Option<&'static str>,
    /// The workload factors published at this tick (bulk, heavy, write, read).
    pub factors: Factors,
    /// What the tick asked of the emergency stage throttles (`engage`, `release`, `none`).
    pub throttles: &'static str,
}

/// One policy's tick as its JSON line (docs/behaviour.md §10.3), without the newline.
pub fn tick_line(policy: &str, tick: &Tick<'_>) -> String {
    let d = tick.outcome;
    let line = TickLine {
        policy,
        at: format_rfc3339(tick.at),
        state: d.state.name(),
        changed: d.changed,
        cause: d.cause.name(),
        level: d.level.map(|n| n.name()),
        factors: d.factors,
        throttles: d.throttles.name(),
    };
    serde_json::to_string(&line).expect("a tick line always serializes")
}

/// How a summary table is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableStyle {
    /// Plain text, columns aligned with spaces, for a terminal (`--format table`).
    Plain,
    /// A markdown table, e.g. for a pull request comment (`--format markdown`).
    Markdown,
}

/// The rows of a summary: metric name and its value as text, plus a number for differences.
fn rows(s: &Summary) -> Vec<(&'static str, String, Option<f64>, usize)> {
    METRICS
        .iter()
        .map(|m| {
            let value = (m.value)(s);
            (m.name, format_value(value, m.decimals), value, m.decimals)
        })
        .collect()
}

/// A table of one or more summaries of the same trace, side by side; with exactly two, a
/// difference column (second minus first), then the second's violations listed.
pub fn table(trace: &str, summaries: &[Summary], style: TableStyle) -> String {
    let mut header = vec![format!("trace {trace}")];
    header.extend(summaries.iter().map(|s| s.policy.clone()));
    let two = summaries.len() == 2;
    if two {
        header.push("difference".into());
    }
    let per_policy: Vec<_> = summaries.iter().map(rows).collect();
    let mut body: Vec<Vec<String>> = Vec::new();
    for (i, (name, _, _, decimals)) in per_policy[0].iter().enumerate() {
        let mut row = vec![name.to_string()];
        row.extend(per_policy.iter().map(|r| r[i].1.clone()));
        if two {
            row.push(match (per_policy[0][i].2, per_policy[1][i].2) {
                (Some(a), Some(b)) => format_difference(Some(b - a), *decimals),
                _ => "-".into(),
            });
        }
        body.push(row);
    }
    let mut out = render(&header, &body, style);
    for s in summaries {
        for v in &s.violations {
            out.push_str(&format!("{}: {} at {}: {}\n", s.policy, v.invariant, v.at, v.detail));
        }
    }
    out
}

fn render(header: &[String], body: &[Vec<String>], style: TableStyle) -> String {
    let mut out = String::new();
    match style {
        TableStyle::Markdown => {
            out.push_str(&format!("| {} |\n", header.join(" | ")));
            out.push_str(&format!(
                "|{}\n",
                header.iter().enumerate().map(|(i, _)| if i == 0 { "---|" } else { "---:|" }).collect::<String>()
            ));
            for row in body {
                out.push_str(&format!("| {} |\n", row.join(" | ")));
            }
        }
        TableStyle::Plain => {
            let widths: Vec<usize> = (0..header.len())
                .map(|c| std::iter::once(&header[c]).chain(body.iter().map(|r| &r[c])).map(|s| s.chars().count()).max().unwrap_or(0))
                .collect();
            let line = |cells: &[String]| {
                cells
                    .iter()
                    .enumerate()
                    .map(|(c, s)| if c == 0 { format!("{s:<w$}", w = widths[c]) } else { format!("{s:>w$}", w = widths[c]) })
                    .collect::<Vec<_>>()
                    .join("  ")
                    .trim_end()
                    .to_string()
                    + "\n"
            };
            out.push_str(&line(header));
            for row in body {
                out.push_str(&line(row));
            }
        }
    }
    out
}
