//! `--report DIR`: `report.md` (a table a CI job can post on a pull request: baseline against
//! candidate, the difference and a verdict per metric), `report.json` (the same, for machines)
//! and one SVG timeline per trace.

use super::compare::Summary;
use super::gate::{Gate, Regression};
use super::metrics::metric;
use super::metrics::{self, METRICS, Row, Verdict, compare, format_difference, format_value};
use super::svg::{Frame, timeline_svg};
use super::timeline::Timeline;
use crate::policy::PolicyIdentity;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;
use vocabulary::Thresholds;

/// Which policy a report is about, as report.md and report.json name it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyInfo {
    /// Short name in the tables (the version unless given as `LABEL=PATH`).
    pub label: String,
    /// The policy's declared name (`capacity-policy`).
    pub name: String,
    /// The policy's declared version (`1.3.0`).
    pub version: String,
    /// `component` or `native`.
    pub kind: &'static str,
    /// sha256 of the component file, or of the policy.toml for native modules.
    pub digest: String,
}

impl From<&PolicyIdentity> for PolicyInfo {
    fn from(p: &PolicyIdentity) -> PolicyInfo {
        PolicyInfo { label: p.label.clone(), name: p.name.clone(), version: p.version.clone(), kind: p.kind, digest: p.digest.clone() }
    }
}

/// One trace of a report: each policy's summary, the comparison and the gate's findings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceReport {
    /// The trace's name, as the report's heading for it says.
    pub trace: String,
    /// The timeline's file name in the report folder.
    pub svg: Option<String>,
    /// One per policy, baseline first.
    pub summaries: Vec<Summary>,
    /// Baseline against candidate (empty with one policy).
    pub rows: Vec<Row>,
    /// The gate's findings on this trace, waived ones included; empty without a gate.
    pub regressions: Vec<Regression>,
}

/// The gate's verdict over every trace of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateResult {
    /// The gate file, as it was named.
    pub file: String,
    /// Every finding was waived (or there were none): the candidate passes.
    pub passed: bool,
    /// The rules the candidate was judged by.
    pub gate: Gate,
    /// Every trace's findings, in trace order, waived ones included.
    pub regressions: Vec<Regression>,
}

/// Why a report could not be written (the message names the file).
#[derive(Debug, thiserror::Error)]
pub enum ReportWriteError {
    /// The report folder could not be created, or a file in it could not be written.
    #[error("{doing}: {cause}")]
    Io {
        /// What was being done, naming the file (`writing out/report.json`).
        doing: String,
        /// The I/O error it returned.
        cause: std::io::Error,
    },
    /// A timeline figure could not be drawn.
    #[error("{0}")]
    Figure(String),
}

/// An A/B report (or one policy's): the policies, the gate's verdict and every trace, written
/// as report.md, report.json and one SVG timeline per trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Baseline first, then the candidate.
    pub policies: Vec<PolicyInfo>,
    /// The gate's verdict; none when no gate was given.
    pub gate: Option<GateResult>,
    /// One per trace, in the order replayed.
    pub traces: Vec<TraceReport>,
}

impl Report {
    /// Compares each trace's summaries (`summaries[trace][policy]`) and applies the gate.
    pub fn build(policies: &[PolicyIdentity], summaries: Vec<Vec<Summary>>, gate: Option<(&str, &Gate)>) -> Report {
        let mut taken = BTreeSet::new();
        let traces: Vec<TraceReport> = summaries
            .into_iter()
            .map(|summaries| {
                let trace = summaries.first().map(|s| s.trace.clone()).unwrap_or_default();
                let (mut rows, mut regressions) = (Vec::new(), Vec::new());
                if let [baseline, candidate] = summaries.as_slice() {
                    rows = compare(baseline, candidate);
                    if let (Some((_, g)), Some(version)) = (gate, policies.get(1).map(|p| p.version.as_str())) {
                        regressions = g.check(version, baseline, candidate, &mut rows);
                    }
                }
                TraceReport { svg: Some(file_name(&trace, &mut taken)), trace, summaries, rows, regressions }
            })
            .collect();
        let gate = gate.map(|(file, g)| {
            let regressions: Vec<Regression> = traces.iter().flat_map(|t| t.regressions.clone()).collect();
            let passed = regressions.iter().all(|r| r.waived.is_some());
            GateResult { file: file.to_string(), passed, gate: g.clone(), regressions }
        });
        Report { policies: policies.iter().map(PolicyInfo::from).collect(), gate, traces }
    }

    /// The gate's verdict in words (none without a gate).
    pub fn gate_message(&self) -> Option<String> {
        let g = self.gate.as_ref()?;
        let label = |i: usize| self.policies.get(i).map_or("?", |p| p.label.as_str());
        Some(describe(label(0), label(1), &g.regressions))
    }

    /// Writes report.md, report.json and the SVGs (`timelines[trace][policy]`) into `dir`.
    pub fn write(&self, dir: &Path, timelines: &[Vec<&Timeline>], thresholds: &[&Thresholds]) -> Result<(), ReportWriteError> {
        let io = |doing: String| move |cause| ReportWriteError::Io { doing, cause };
        std::fs::create_dir_all(dir).map_err(io(format!("creating report folder {}", dir.display())))?;
        let labels: Vec<String> = self.policies.iter().map(|p| p.label.clone()).collect();
        for (t, lines) in self.traces.iter().zip(timelines) {
            if let Some(file) = &t.svg {
                let svg = timeline_svg(&Frame::report(&t.trace, &labels), &labels, lines, thresholds).map_err(ReportWriteError::Figure)?;
                let path = dir.join(file);
                std::fs::write(&path, svg).map_err(io(format!("writing {}", path.display())))?;
            }
        }
        let json = serde_json::to_string_pretty(self).expect("a report (strings, numbers and lists) serializes");
        std::fs::write(dir.join("report.json"), json + "\n").map_err(io(format!("writing {}/report.json", dir.display())))?;
        std::fs::write(dir.join("report.md"), self.markdown()).map_err(io(format!("writing {}/report.md", dir.display())))?;
        Ok(())
    }

    /// The markdown report.
    pub fn markdown(&self) -> String {
        let label = |i: usize| self.policies.get(i).map_or("?".to_string(), |p| p.label.clone());
        let mut out = String::new();
        if self.policies.len() == 2 {
            out.push_str(&format!("# Replay: candidate `{}` against baseline `{}`\n\n", label(1), label(0)));
        } else {
            out.push_str(&format!("# Replay: `{}`\n\n", label(0)));
        }
        for p in &self.policies {
            out.push_str(&format!("- `{}`: {} {} ({}, sha256 `{}`)\n", p.label, p.name, p.version, p.kind, short(&p.digest)));
        }
        out.push('\n');
        if let Some(g) = &self.gate {
            let failed: Vec<&Regression> = g.regressions.iter().filter(|r| r.waived.is_none()).collect();
            if g.passed {
                out.push_str(&format!("**Gate `{}`: passed.** No invariant broken, no metric beyond its limit.\n\n", g.file));
            } else {
                out.push_str(&format!("**Gate `{}`: FAILED**, {} finding(s):\n\n", g.file, failed.len()));
                for r in &failed {
                    out.push_str(&format!("- `{}`: **{}** ({}) — {}\n", r.trace, r.metric, r.limit_key, r.message));
                }
                out.push('\n');
            }
            let waived: Vec<&Regression> = g.regressions.iter().filter(|r| r.waived.is_some()).collect();
            if !waived.is_empty() {
                out.push_str("Waived by the gate file (reported, not failing):\n\n");
                for r in waived {
                    out.push_str(&format!(
                        "- `{}`: {} — {}; *{}*\n",
                        r.trace,
                        r.metric,
                        r.message,
                        r.waived.as_deref().unwrap_or_default()
                    ));
                }
                out.push('\n');
            }
        }
        if self.policies.len() == 2 {
            out.push_str(&self.overview());
        }
        for t in &self.traces {
            out.push_str(&format!("## {}\n\n", t.trace));
            if let Some(svg) = &t.svg {
                out.push_str(&format!("![timeline of {}]({svg})\n\n", t.trace));
            }
            out.push_str(&detail(t, &self.policies));
            let mut listed = 0;
            for s in &t.summaries {
                for v in s.violations.iter().take(20) {
                    out.push_str(&format!("- `{}` {} at {}: {}\n", s.policy, v.invariant, v.at, v.detail));
                    listed += 1;
                }
                if s.violations.len() > 20 {
                    out.push_str(&format!("- `{}`: {} more violations (report.json lists them all)\n", s.policy, s.violations.len() - 20));
                }
            }
            if listed > 0 {
                out.push('\n');
            }
        }
        out
    }

    /// One line per trace: the gated metrics, baseline → candidate.
    fn overview(&self) -> String {
        const KEYS: [&str; 6] = [
            "minutes_to_protect",
            "minutes_to_first_protection",
            "flaps_per_day",
            "over_protection_minutes",
            "bulk_capacity_minutes",
            "invariant_violations",
        ];
        let mut out = String::from("| trace | ticks |");
        for key in KEYS {
            out.push_str(&format!(" {} |", metrics::metric(key).map_or(key, |m| m.name)));
        }
        out.push_str(" verdict |\n|---|---:|");
        out.push_str(&"---:|".repeat(KEYS.len()));
        out.push_str("---|\n");
        for t in &self.traces {
            let ticks = t.summaries.first().map_or(0, |s| s.ticks);
            out.push_str(&format!("| {} | {ticks} |", t.trace));
            for key in KEYS {
                let (row, m) = (t.rows.iter().find(|r| r.key == key), metrics::metric(key));
                let cell = match (row, m) {
                    (Some(r), Some(m)) => {
                        let text = format!("{} → {}", format_value(r.baseline, m.decimals), format_value(r.candidate, m.decimals));
                        if r.verdict == Verdict::Regressed { format!("**{text}**") } else { text }
                    }
                    _ => "-".into(),
                };
                out.push_str(&format!(" {cell} |"));
            }
            let verdict = if t.regressions.iter().any(|r| r.waived.is_none()) {
                "**regressed**"
            } else if !t.regressions.is_empty() {
                "passes (waived)"
            } else if self.gate.is_some() {
                "passes"
            } else {
                "-"
            };
            out.push_str(&format!(" {verdict} |\n"));
        }
        out.push('\n');
        out
    }
}

/// Every metric of one trace: one column per policy, then difference and verdict.
fn detail(t: &TraceReport, policies: &[PolicyInfo]) -> String {
    let two = t.summaries.len() == 2;
    let mut out = String::from("| metric |");
    for p in policies {
        out.push_str(&format!(" {} |", p.label));
    }
    out.push_str(if two { " difference | verdict |\n|---|---:|---:|---:|---|\n" } else { "\n|---|---:|\n" });
    for (i, m) in METRICS.iter().enumerate() {
        out.push_str(&format!("| {} |", m.name));
        for s in &t.summaries {
            out.push_str(&format!(" {} |", format_value((m.value)(s), m.decimals)));
        }
        if let Some(r) = t.rows.get(i).filter(|_| two) {
            let verdict = match (&r.note, r.verdict) {
                (Some(note), Verdict::Regressed) => format!("**REGRESSED**: {note}"),
                (Some(note), v) => format!("{} ({note})", v.text()),
                (None, v) => v.text().to_string(),
            };
            out.push_str(&format!(" {} | {verdict} |", format_difference(r.difference, m.decimals)));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}

/// A file name for the trace's SVG, unique in the report.
fn file_name(trace: &str, taken: &mut BTreeSet<String>) -> String {
    let stem: String = trace.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let stem = if stem.is_empty() { "trace".to_string() } else { stem };
    let mut name = format!("{stem}.svg");
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{stem}-{n}.svg");
        n += 1;
    }
    name
}

/// The gate's verdict as people read it: one line per regressed metric, then the waived ones.
fn describe(baseline: &str, candidate: &str, regressions: &[Regression]) -> String {
    let (waived, failed): (Vec<&Regression>, Vec<&Regression>) = regressions.iter().partition(|r| r.waived.is_some());
    let mut out = if failed.is_empty() {
        format!("gate passed: {candidate} against {baseline}, no invariant broken and no metric beyond its limit\n")
    } else {
        format!("gate failed: {candidate} regressed against {baseline} ({} finding(s)):\n", failed.len())
    };
    for r in failed {
        let name = metric(r.metric).map_or(r.metric, |m| m.name);
        out.push_str(&format!("  {}: {} ({}): {} [{}]\n", r.trace, r.metric, name, r.message, r.limit_key));
    }
    for r in waived {
        out.push_str(&format!("  waived: {}: {}: {} ({})\n", r.trace, r.metric, r.message, r.waived.as_deref().unwrap_or_default()));
    }
    out
}
