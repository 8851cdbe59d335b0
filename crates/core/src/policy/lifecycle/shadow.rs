//! Shadow mode: a second version decides every tick on the same inputs, with its own memory,
//! and is never published. Its memory is a file in the private state directory
//! (`<state_dir>/shadow/<version>.memory.json`), its decisions and how they compare with the
//! active one's a JSON Lines log beside it (`shadow/<version>.jsonl`), which `policy
//! shadow-report` reads. Never in the policy directory, which others write (a link planted
//! there was followed and overwrote the policy state); every file is created 0600 and never
//! opened through a symbolic link. The directory is checked (created 0700 when missing) when
//! the shadow opens, and again only after a write fails, before that write is tried once more.

use super::private_dir;
use crate::plain_files;
use crate::policy::Policy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use vocabulary::{Decision, DecisionInput, Factors, Memory};

/// The shadow version in a running sentinel: it decides every tick on the active version's
/// input with its own memory, records each decision and how it compares, and is never published.
pub struct Shadow {
    /// The shadow version, loaded and checked as any candidate is.
    pub policy: Box<dyn Policy>,
    /// Its version, as configured (`policies.shadow`).
    pub version: String,
    memory: Option<Memory>,
    memory_path: PathBuf,
    log_path: PathBuf,
}

/// One tick of the shadow beside the active version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShadowLine {
    /// The tick's instant, RFC 3339.
    pub at: String,
    /// The version that decided the tick and was published.
    pub active_version: String,
    /// The shadow's version.
    pub shadow_version: String,
    /// The active decision's state (`normal`, `constrained`, `critical` or `emergency`).
    pub active_state: String,
    /// The shadow's state for the same input.
    pub shadow_state: String,
    /// The factors the active version published.
    pub active_factors: Factors,
    /// The factors the shadow would have published.
    pub shadow_factors: Factors,
    /// The fields that differ (`state`, `factors`, `throttles`); empty: the same decision.
    pub diverged: Vec<String>,
}

/// Where shadows keep their files: `shadow/` in the private state directory.
pub(crate) fn shadow_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("shadow")
}

/// The decision log of the shadow `version`: `<state_dir>/shadow/<version>.jsonl`.
pub fn log_path(state_dir: &Path, version: &str) -> PathBuf {
    shadow_dir(state_dir).join(format!("{version}.jsonl"))
}

/// The largest saved shadow memory read back (a memory is well under a kilobyte).
const MEMORY_LIMIT: u64 = 1 << 20;

impl Shadow {
    /// A shadow with the memory it saved last in `state_dir` (none: it starts fresh). Its
    /// directory is checked here; when it is not usable the first tick's write says why.
    pub fn open(state_dir: &Path, version: &str, policy: Box<dyn Policy>) -> Shadow {
        let memory_path = shadow_dir(state_dir).join(format!("{version}.memory.json"));
        let memory = plain_files::read_whole(&memory_path, MEMORY_LIMIT).ok().and_then(|t| serde_json::from_slice(&t).ok());
        if let Err(e) = private_dir::ensure(&shadow_dir(state_dir)) {
            tracing::warn!("shadow {version}: its directory is not usable yet ({e}); it is checked again when a tick's record fails");
        }
        Shadow { policy, version: version.into(), memory, memory_path, log_path: log_path(state_dir, version) }
    }

    /// Decides `input` with the shadow's own memory, records it, and says what diverged.
    pub fn step(&mut self, input: &DecisionInput, active: &Decision, active_version: &str) -> Result<ShadowLine, String> {
        let input = DecisionInput { memory: self.memory.take(), ..input.clone() };
        let d = self.policy.decide(&input).map_err(|e| e.to_string())?;
        let mut diverged = Vec::new();
        if d.state != active.state {
            diverged.push("state".to_string());
        }
        if d.factors != active.factors {
            diverged.push("factors".to_string());
        }
        if d.throttles != active.throttles {
            diverged.push("throttles".to_string());
        }
        let line = ShadowLine {
            at: crate::instants::format_rfc3339(input.now),
            active_version: active_version.into(),
            shadow_version: self.version.clone(),
            active_state: active.state.name().into(),
            shadow_state: d.state.name().into(),
            active_factors: active.factors,
            shadow_factors: d.factors,
            diverged,
        };
        self.memory = Some(d.memory);
        if let Err(e) = self.persist(&line) {
            tracing::warn!("shadow {}: cannot record its tick: {e}", self.version);
        }
        Ok(line)
    }

    /// Appends `line` to the log, then saves the memory.
    fn persist(&self, line: &ShadowLine) -> std::io::Result<()> {
        let line = serde_json::to_string(line).map_err(std::io::Error::other)? + "\n";
        self.retried(|| plain_files::open_append(&self.log_path)?.write_all(line.as_bytes()))?;
        let memory = serde_json::to_string(&self.memory).map_err(std::io::Error::other)?;
        self.retried(|| private_dir::write_atomically(&self.memory_path, memory.as_bytes()))
    }

    /// `write`, and when it fails (the directory removed or replaced since the last check),
    /// the directory checked again (created when missing) and `write` tried once more.
    fn retried(&self, write: impl Fn() -> std::io::Result<()>) -> std::io::Result<()> {
        let Err(first) = write() else { return Ok(()) };
        let dir = self.memory_path.parent().unwrap_or(Path::new("."));
        private_dir::ensure(dir).map_err(|e| std::io::Error::other(format!("{first}; and {e}")))?;
        write()
    }
}

/// What `policy shadow-report` prints.
#[derive(Debug, Default, Serialize)]
pub struct ShadowReport {
    /// The shadow version reported on.
    pub shadow_version: String,
    /// The ticks in its log.
    pub ticks: usize,
    /// The ticks whose shadow decision differed from the active one.
    pub divergent_ticks: usize,
    /// `divergent_ticks / ticks`, from 0 to 1 (0 without ticks).
    pub divergence_ratio: f64,
    /// Field -> ticks where it differed.
    pub by_field: BTreeMap<String, usize>,
    /// `active-state -> shadow-state` -> ticks, for the ticks whose state differed.
    pub state_pairs: BTreeMap<String, usize>,
    /// The instant of the first divergent tick, RFC 3339 (none: no divergence).
    pub first_divergence: Option<String>,
    /// The instant of the last divergent tick, RFC 3339 (none: no divergence).
    pub last_divergence: Option<String>,
    /// The longest run of consecutive divergent ticks.
    pub longest_run: usize,
    /// The active versions the shadow ran beside, in the order they first appear (more than one: a
    /// version was activated during the shadow period).
    pub active_versions: Vec<String>,
}

/// Why a shadow's log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ShadowLogError {
    /// The log cannot be read (most often: the shadow has not ticked yet).
    #[error("no shadow log for {version} at {path} ({message}): is {version} configured as `shadow` and has the sentinel ticked since?")]
    Missing {
        /// The shadow version.
        version: String,
        /// Where its log was looked for.
        path: std::path::PathBuf,
        /// The read's error.
        message: String,
    },
    /// A line of the log is not a shadow line.
    #[error("{path}:{line}: {message}")]
    BadLine {
        /// The log file.
        path: std::path::PathBuf,
        /// The line's number, from 1.
        line: usize,
        /// The parser's error.
        message: String,
    },
}

/// The lines of a shadow's log in `state_dir`, oldest first.
pub fn lines(state_dir: &Path, version: &str) -> Result<Vec<ShadowLine>, ShadowLogError> {
    let path = log_path(state_dir, version);
    let text = std::fs::read_to_string(&path).map_err(|e| ShadowLogError::Missing {
        version: version.to_string(),
        path: path.clone(),
        message: e.to_string(),
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| ShadowLogError::BadLine { path: path.clone(), line: n + 1, message: e.to_string() })
        })
        .collect()
}

/// What the shadow did live, counted as a replay counts it: state changes, and minutes in
/// normal, constrained, critical and emergency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveCounts {
    /// State changes, counted from normal as a replay starts.
    pub transitions: u64,
    /// Ticks (one a minute) in normal, constrained, critical and emergency, in that order.
    pub minutes: [u64; 4],
}

impl LiveCounts {
    /// Counts the shadow's own states over `lines` (its log, oldest first).
    pub fn of(lines: &[ShadowLine]) -> LiveCounts {
        let mut counts = LiveCounts { transitions: 0, minutes: [0; 4] };
        let mut previous: Option<&str> = None;
        for line in lines {
            let rank = ["normal", "constrained", "critical", "emergency"].iter().position(|s| *s == line.shadow_state);
            if let Some(rank) = rank {
                counts.minutes[rank] += 1;
            }
            // A replay starts in normal: the first tick changes state unless it stays there.
            if line.shadow_state != previous.unwrap_or("normal") {
                counts.transitions += 1;
            }
            previous = Some(&line.shadow_state);
        }
        counts
    }
}

/// Summarizes the `lines` of a shadow's log ([`lines`]).
pub fn report(version: &str, lines: &[ShadowLine]) -> ShadowReport {
    let mut r = ShadowReport { shadow_version: version.into(), ..ShadowReport::default() };
    let mut run = 0;
    for line in lines {
        r.ticks += 1;
        if !r.active_versions.contains(&line.active_version) {
            r.active_versions.push(line.active_version.clone());
        }
        if line.diverged.is_empty() {
            run = 0;
            continue;
        }
        r.divergent_ticks += 1;
        run += 1;
        r.longest_run = r.longest_run.max(run);
        r.first_divergence.get_or_insert_with(|| line.at.clone());
        r.last_divergence = Some(line.at.clone());
        for field in &line.diverged {
            *r.by_field.entry(field.clone()).or_default() += 1;
        }
        if line.active_state != line.shadow_state {
            *r.state_pairs.entry(format!("{} -> {}", line.active_state, line.shadow_state)).or_default() += 1;
        }
    }
    r.divergence_ratio = if r.ticks == 0 { 0.0 } else { r.divergent_ticks as f64 / r.ticks as f64 };
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Limits, Runtime};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_directory_is_made_at_the_open_and_made_again_when_a_write_finds_it_gone() {
        let root = tempfile::tempdir().unwrap();
        let state = root.path().join("state");
        let component = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/policies/capacity-policy-1.0.0.wasm");
        let runtime = Runtime::new(Limits::default()).unwrap();
        let open = || crate::policy::open(&component.display().to_string(), &runtime).expect("run `cargo policies` first");
        let input = super::super::checks::fixed_inputs().unwrap().remove(0).input;
        let active = open().decide(&input).unwrap();
        let mut shadow = Shadow::open(&state, "1.0.0", open());
        let dir = shadow_dir(&state);
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700, "made private at the open");
        shadow.step(&input, &active, "1.0.0").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        // The append fails (no directory): the directory is checked, made again, and the
        // append tried once more, so this tick's record is not lost.
        shadow.step(&input, &active, "1.0.0").unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700, "made private again");
        let log = std::fs::read_to_string(log_path(&state, "1.0.0")).unwrap();
        assert_eq!(log.lines().count(), 1, "the tick after the removal is recorded:\n{log}");
        assert!(dir.join("1.0.0.memory.json").is_file(), "and its memory saved");
    }
}
