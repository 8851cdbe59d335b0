//! Many traces through several policies at once: every (trace, policy) pair is one job on the
//! rayon pool. A component is compiled once ([`PolicySource`]); each worker checks out its own
//! long-lived instance from a pool (calls need `&mut`) and gives it back after the job, so a
//! run creates at most one instance per policy and worker thread.

use super::compare::{Accumulator, Summary};
use super::timeline::Timeline;
use super::{CHUNK_EVENTS, ReplayError, Stream};
use crate::instants::format_rfc3339;
use crate::policy::invariants::Floors;
use crate::policy::lifecycle::cache;
use crate::policy::{self, ComponentPolicy, Policy, PolicyError, PolicyIdentity, Runtime};
use crate::trace::{Trace, TraceEvent};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use vocabulary::Thresholds;
use wasmtime::component::Component;

/// A policy as given on the command line, ready to open any number of instances.
pub struct PolicySource {
    spec: String,
    kind: SourceKind,
    identity: PolicyIdentity,
    thresholds: Thresholds,
    idle: Mutex<Vec<Box<dyn Policy>>>,
}

enum SourceKind {
    /// Compiled once; each instance is a fresh store of the same component.
    Component { runtime: Arc<Runtime>, path: PathBuf, component: Component, digest: String, label: Option<String> },
    /// Native modules: each instance reads the policy file again (a few microseconds).
    Native { runtime: Arc<Runtime> },
}

impl std::fmt::Debug for PolicySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySource").field("spec", &self.spec).field("identity", &self.identity).finish_non_exhaustive()
    }
}

impl PolicySource {
    /// Opens `[LABEL=]PATH` as [`policy::open`] does, compiling a component only once.
    pub fn open(spec: &str, runtime: &Arc<Runtime>) -> Result<PolicySource, PolicyError> {
        let (label, path) = match spec.split_once('=') {
            Some((label, path)) if !label.is_empty() && !label.contains('/') => (Some(label.to_string()), path),
            _ => (None, spec),
        };
        let path = PathBuf::from(path);
        let kind = if path.extension().is_some_and(|e| e == "wasm") {
            let bytes = std::fs::read(&path).map_err(|source| PolicyError::Read { path: path.clone(), source })?;
            let digest = hex::encode(Sha256::digest(&bytes));
            // Compiled once per version and engine, then loaded from the user's cache.
            let (component, origin) = cache::load_bytes(cache::user_cache_dir().as_deref(), runtime, &path, &bytes, &digest)
                .map_err(|e| PolicyError::Compile { path: path.clone(), message: e.root_cause().to_string() })?;
            tracing::debug!(policy = %path.display(), origin = %origin.describe(), "component loaded");
            SourceKind::Component { runtime: runtime.clone(), path, component, digest, label }
        } else {
            SourceKind::Native { runtime: runtime.clone() }
        };
        let mut first = instantiate(&kind, spec)?;
        let thresholds = first.describe()?.thresholds;
        Ok(PolicySource { spec: spec.to_string(), identity: first.identity().clone(), kind, thresholds, idle: Mutex::new(vec![first]) })
    }

    pub fn identity(&self) -> &PolicyIdentity {
        &self.identity
    }

    pub fn label(&self) -> &str {
        &self.identity.label
    }

    /// The thresholds the policy declares (what its invariants are checked against).
    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// An idle instance, or a new one; give it back with [`PolicySource::give_back`].
    pub fn take(&self) -> Result<Box<dyn Policy>, PolicyError> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match idle {
            Some(p) => Ok(p),
            None => instantiate(&self.kind, &self.spec),
        }
    }

    pub fn give_back(&self, policy: Box<dyn Policy>) {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).push(policy);
    }
}

fn instantiate(kind: &SourceKind, spec: &str) -> Result<Box<dyn Policy>, PolicyError> {
    match kind {
        SourceKind::Component { runtime, path, component, digest, label } => {
            Ok(Box::new(ComponentPolicy::from_component(runtime, path, component, digest.clone(), label.as_deref())?))
        }
        SourceKind::Native { runtime } => policy::open(spec, runtime),
    }
}

/// How a batch replays.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// The emergency stage-throttle switch before the first line.
    pub throttles: bool,
    /// The least INV-01 accepts.
    pub floors: Floors,
    /// Keep each run's [`Timeline`] (for reports).
    pub timelines: bool,
    /// Show a progress bar on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
}

/// One policy's replay of one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub summary: Summary,
    pub timeline: Option<Timeline>,
}

/// Runs every trace through every policy in parallel: `result[trace][policy]`, in the order
/// given. The first failing job's error is returned.
pub fn run_all(traces: &[Trace], sources: &[PolicySource], options: Options) -> Result<Vec<Vec<Run>>, ReplayError> {
    let ticks_per_policy: u64 =
        traces.iter().map(|t| t.events.iter().filter(|e| matches!(e, TraceEvent::Tick { .. })).count() as u64).sum();
    let bar = progress_bar(options.progress, ticks_per_policy * sources.len() as u64);
    let mut jobs: Vec<(usize, usize)> = (0..traces.len()).flat_map(|t| (0..sources.len()).map(move |p| (t, p))).collect();
    // The longest first, so that one long trace does not start last on an idle pool.
    jobs.sort_by_key(|&(t, _)| std::cmp::Reverse(traces[t].events.len()));
    let done: Vec<((usize, usize), Run)> = jobs
        .into_par_iter()
        .map(|(t, p)| {
            let source = &sources[p];
            let mut policy =
                source.take().map_err(|e| ReplayError::Policy { trace: traces[t].name.clone(), at: "start".into(), source: e })?;
            let run = replay_one(&traces[t], policy.as_mut(), source, options, &bar);
            source.give_back(policy);
            Ok(((t, p), run?))
        })
        .collect::<Result<_, ReplayError>>()?;
    bar.finish_and_clear();
    let mut out: Vec<Vec<Option<Run>>> = traces.iter().map(|_| sources.iter().map(|_| None).collect()).collect();
    for ((t, p), run) in done {
        out[t][p] = Some(run);
    }
    Ok(out.into_iter().map(|runs| runs.into_iter().map(|r| r.expect("every job ran")).collect()).collect())
}

/// One trace through one policy instance: its summary and, when asked, its timeline.
pub fn replay_one(
    trace: &Trace,
    policy: &mut dyn Policy,
    source: &PolicySource,
    options: Options,
    bar: &ProgressBar,
) -> Result<Run, ReplayError> {
    let mut acc = Accumulator::with_floors(source.label(), &trace.name, source.thresholds(), &options.floors);
    let mut timeline = options.timelines.then(Timeline::default);
    let failed = |events: &[TraceEvent], source| ReplayError::Policy {
        trace: trace.name.clone(),
        at: events.first().map(|e| format_rfc3339(e.at())).unwrap_or_default(),
        source,
    };
    let mut stream = Stream::open(policy, options.throttles).map_err(|e| failed(&trace.events, e))?;
    let mut pending = 0u64;
    for events in trace.events.chunks(CHUNK_EVENTS) {
        stream
            .feed(events, &mut |tick| {
                pending += 1;
                acc.add(&tick);
                if let Some(t) = &mut timeline {
                    t.add(&tick);
                }
            })
            .map_err(|e| failed(events, e))?;
        bar.inc(pending);
        pending = 0;
    }
    bar.inc(pending);
    Ok(Run { summary: acc.finish(), timeline })
}

/// A bar over `total` ticks for a long run (from 100,000 ticks) when asked and stderr is a
/// terminal; hidden otherwise.
fn progress_bar(wanted: bool, total: u64) -> ProgressBar {
    if !wanted || total < 100_000 || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("replay [{bar:30}] {human_pos}/{human_len} ticks, {elapsed} (eta {eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
