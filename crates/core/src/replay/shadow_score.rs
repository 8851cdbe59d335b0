//! The shadow's evidence (docs/behaviour.md §11.9): what the shadow version decided live over
//! its shadow period, scored with the A/B comparison's and the tuner's measures (flaps per day,
//! bulk capacity lost, protection delay, invariants) against the active version, and judged by
//! a gate. `policy shadow-report` prints it, `policy promote` activates a version only when it
//! passes, and the console's policies section shows it (`GET /v1/policies/shadow/scorecard`).
//!
//! The store's tick records of the shadow period (the readings as the sentinel saw them, pins,
//! the switch) are replayed through both versions, each loaded from the policy directory only
//! after its manifest and signature hold. The replayed shadow must agree with the shadow's live
//! log (its transitions and its minutes in each state): then the scorecard is the score of what
//! the shadow did live; when it does not, the evidence says so and does not count.
//!
//! The callers read the records (from the store they hold): [`ShadowPeriod::reach_back`] says
//! how far back.

use crate::error_chain::chain;
use crate::instants::parse_rfc3339;
use crate::policy::lifecycle::LifecycleError;
use crate::policy::lifecycle::shadow::{self, LiveCounts, ShadowLine};
use crate::policy::lifecycle::{self, manifest};
use crate::policy::settings::PoliciesConfig;
use crate::policy::source::PolicySource;
use crate::policy::{Limits, Runtime};
use crate::ports::memory::TickRecord;
use crate::replay::compare::Summary;
use crate::replay::gate::Gate;
use crate::replay::job::{self, Job};
use crate::replay::lane::Options;
use crate::replay::report::Report;
use crate::trace::Trace;
use std::time::Duration;
use vocabulary::Instant;

/// Why a shadow could not be scored. Each message is whole (causes included), so it is shown as
/// it is.
#[derive(Debug, thiserror::Error)]
pub enum ShadowScoreError {
    /// The shadow's log holds no line: the shadow has not decided a tick yet.
    #[error("the shadow log of {version} is empty: has the sentinel ticked with shadow = \"{version}\"?")]
    EmptyLog {
        /// The shadow version whose log is empty.
        version: String,
    },
    /// The time of the log's first or last line is not an RFC 3339 time (the message quotes it).
    #[error("{0}")]
    BadTime(String),
    /// The shadow's log is missing or holds a line that cannot be read.
    #[error(transparent)]
    Log(#[from] shadow::ShadowLogError),
    /// The configured `public_key`, which manifests are checked against, could not be read.
    #[error(transparent)]
    Trust(#[from] LifecycleError),
    /// The policy directory holds no manifest of a version to replay (the shadow or the
    /// active one).
    #[error("{dir} holds no manifest of version {version}")]
    NoManifest {
        /// The policy directory.
        dir: std::path::PathBuf,
        /// The version without a manifest.
        version: String,
    },
    /// A version's manifest or signature does not hold, so it is not loaded.
    #[error("{version} is refused: {message}")]
    Refused {
        /// The version refused.
        version: String,
        /// Why its integrity or signature check refused it.
        message: String,
    },
    /// None of the store's tick records given falls inside the shadow period.
    #[error("the store holds no tick record of the shadow period ({first} to {last})")]
    NoRecords {
        /// The period's first tick, as the log writes it.
        first: String,
        /// The period's last tick, as the log writes it.
        last: String,
    },
    /// The policy runtime, loading a version, or the replay (the message holds the causes).
    #[error("{0}")]
    Replay(String),
}

/// A shadow's live log: every tick it decided beside the active version, oldest first.
pub struct ShadowPeriod {
    /// The shadow version the log is of.
    pub version: String,
    /// Every tick the shadow decided, oldest first, beside the active version's decision.
    pub lines: Vec<ShadowLine>,
    /// The first and the last tick of the log.
    pub from: Instant,
    /// The last tick of the log (unix seconds).
    pub to: Instant,
}

impl ShadowPeriod {
    /// The log of `version` in the private state directory; refused when it is empty.
    pub fn read(state_dir: &std::path::Path, version: &str) -> Result<ShadowPeriod, ShadowScoreError> {
        ShadowPeriod::of(version, shadow::lines(state_dir, version)?)
    }

    /// The period of a log's `lines` ([`shadow::lines`]); refused when there are none.
    pub fn of(version: &str, lines: Vec<ShadowLine>) -> Result<ShadowPeriod, ShadowScoreError> {
        let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
            return Err(ShadowScoreError::EmptyLog { version: version.to_string() });
        };
        let (from, to) =
            (parse_rfc3339(&first.at).map_err(ShadowScoreError::BadTime)?, parse_rfc3339(&last.at).map_err(ShadowScoreError::BadTime)?);
        Ok(ShadowPeriod { version: version.to_string(), lines, from, to })
    }

    /// How far back from `now` the store's records must be read to hold the whole period:
    /// the store counts back from its newest record, which may be well after the period ended
    /// (the shadow turned off, promote run days later).
    pub fn reach_back(&self, now: Instant) -> Duration {
        let back = (now - self.from).max(self.to - self.from);
        Duration::from_secs(u64::try_from(back).unwrap_or(0) + 60)
    }

    /// The version the period's last tick was decided by.
    pub fn active_version(&self) -> &str {
        self.lines.last().map_or("", |l| l.active_version.as_str())
    }
}

/// The scorecard of one shadow period.
pub struct Evidence {
    /// The shadow version scored (the candidate).
    pub shadow_version: String,
    /// The version active through the period, its baseline.
    pub active_version: String,
    /// First and last tick of the shadow period, as the log writes them.
    pub period: (String, String),
    /// The store's tick records replayed: the period's length in minutes.
    pub ticks: u64,
    /// Active (baseline) and shadow (candidate), over the shadow period.
    pub report: Report,
    /// Whether the replayed shadow decided as the live shadow did; why not, when it did not.
    pub agreement: Result<(), String>,
}

impl Evidence {
    /// The gate passed and the scorecard is the shadow's live behaviour.
    pub fn passes(&self) -> bool {
        self.agreement.is_ok() && self.report.gate.as_ref().is_some_and(|g| g.passed)
    }

    /// The active version's and the shadow's summaries.
    pub fn summaries(&self) -> (&Summary, &Summary) {
        let runs = &self.report.traces[0].summaries;
        (&runs[0], &runs[1])
    }

    /// The days the period covers, at least one (flaps are counted per day).
    pub fn days(&self) -> f64 {
        (self.ticks as f64 / 1440.0).max(1.0)
    }

    /// What a person reads: the period, the measures side by side, the agreement, the verdict.
    pub fn text(&self) -> String {
        let (active, shadow) = self.summaries();
        let days = self.days();
        let mut out = format!(
            "scorecard of shadow {} against active {} over {} ticks ({} to {}):\n",
            self.shadow_version, self.active_version, self.ticks, self.period.0, self.period.1
        );
        let row = |name: &str, a: String, s: String| format!("  {name:<28} {a:>12} {s:>12}\n");
        out.push_str(&row("", self.active_version.clone(), self.shadow_version.clone()));
        out.push_str(&row("flaps per day", fmt(active.flaps as f64 / days), fmt(shadow.flaps as f64 / days)));
        out.push_str(&row("transitions", active.transitions.to_string(), shadow.transitions.to_string()));
        out.push_str(&row("bulk capacity-minutes", fmt(active.bulk_capacity_minutes), fmt(shadow.bulk_capacity_minutes)));
        out.push_str(&row("minutes to protect", minutes(active.minutes_to_protect), minutes(shadow.minutes_to_protect)));
        out.push_str(&row(
            "over-protection minutes",
            active.over_protection_minutes.to_string(),
            shadow.over_protection_minutes.to_string(),
        ));
        out.push_str(&row("invariant violations", active.violations.len().to_string(), shadow.violations.len().to_string()));
        match &self.agreement {
            Ok(()) => out.push_str("  the replay decided as the shadow did live: this is the shadow's own record\n"),
            Err(why) => out.push_str(&format!("  NOT the shadow's live record: {why}\n")),
        }
        match (self.report.gate_message(), &self.report.gate) {
            (Some(message), Some(_)) => out.push_str(&message),
            _ => out.push_str("  no gate given (--gate GATE.toml judges it)\n"),
        }
        out
    }
}

fn fmt(v: f64) -> String {
    format!("{v:.2}")
}

fn minutes(v: Option<i64>) -> String {
    v.map_or_else(|| "-".into(), |m| m.to_string())
}

/// The component of `version` in the policy directory, its manifest and signature checked.
fn verified(p: &PoliciesConfig, version: &str) -> Result<std::path::PathBuf, ShadowScoreError> {
    let trust = lifecycle::trust(p)?;
    let (entries, _) = manifest::scan(&p.dir);
    let entry = entries
        .into_iter()
        .find(|e| e.manifest.version == version)
        .ok_or_else(|| ShadowScoreError::NoManifest { dir: p.dir.clone(), version: version.to_string() })?;
    manifest::verify(&entry, &trust).map_err(|e| ShadowScoreError::Refused { version: version.to_string(), message: e.to_string() })?;
    Ok(entry.component_path)
}

/// Scores `period` on the store's `records` (any window holding it, oldest first) against the
/// version active through it, judged by `gate` (its name and its rules) when one is given.
pub fn score(
    p: &PoliciesConfig,
    limits: Limits,
    period: &ShadowPeriod,
    records: Vec<TickRecord>,
    gate: Option<(String, Gate)>,
) -> Result<Evidence, ShadowScoreError> {
    let version = period.version.as_str();
    let active_version = period.active_version().to_string();
    // A period scored against one baseline: a log that names several active versions (an
    // activation during the shadow period) is not one comparison.
    let mut baselines: Vec<&str> = period.lines.iter().map(|l| l.active_version.as_str()).collect();
    baselines.dedup();
    let records: Vec<_> = records.into_iter().filter(|r| (period.from..=period.to).contains(&r.at)).collect();
    let (first, last) = (&period.lines[0].at, &period.lines[period.lines.len() - 1].at);
    if records.is_empty() {
        return Err(ShadowScoreError::NoRecords { first: first.clone(), last: last.clone() });
    }
    let runtime = Runtime::new(limits).map_err(|e| ShadowScoreError::Replay(chain(&e)))?;
    let mut sources = Vec::new();
    for v in [active_version.as_str(), version] {
        let path = verified(p, v)?;
        let source = PolicySource::open(&format!("{v}={}", path.display()), &runtime)
            .map_err(|e| ShadowScoreError::Replay(format!("loading {v}: {}", chain(&e))))?;
        sources.push(source);
    }
    let trace = Trace { name: format!("shadow-{version}"), events: crate::trace::recorded::events(&records) };
    let options = Options {
        throttles: records.first().is_some_and(|r| r.throttles_enabled),
        floors: gate.as_ref().map(|(_, g)| g.invariants).unwrap_or_default(),
        timelines: false,
        progress: false,
    };
    let replayed = job::replay(Job { files: &[], recorded: Some(trace), sources: &sources, options }, None)
        .map_err(|e| ShadowScoreError::Replay(chain(&e)))?;
    let summaries: Vec<Vec<Summary>> = replayed.into_iter().map(|(_, runs)| runs.into_iter().map(|r| r.summary).collect()).collect();
    let identities: Vec<_> = sources.iter().map(|s| s.identity().clone()).collect();
    let report = Report::build(&identities, summaries, gate.as_ref().map(|(name, g)| (name.as_str(), g)));
    let live = LiveCounts::of(&period.lines);
    let replayed_shadow = &report.traces[0].summaries[1];
    let agreement = if baselines.len() > 1 {
        Err(format!(
            "the active version changed during the shadow period ({}): let the shadow run beside one active version",
            baselines.join(" -> ")
        ))
    } else if live.transitions == replayed_shadow.transitions && live.minutes == replayed_shadow.minutes {
        Ok(())
    } else {
        Err(format!(
            "live {} transitions and minutes per state {:?}, replayed {} and {:?} (were ticks recorded while the shadow \
             was off, or its memory reset?)",
            live.transitions, live.minutes, replayed_shadow.transitions, replayed_shadow.minutes
        ))
    };
    Ok(Evidence {
        shadow_version: version.to_string(),
        active_version,
        period: (first.clone(), last.clone()),
        ticks: records.len() as u64,
        report,
        agreement,
    })
}
