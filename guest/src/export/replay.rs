//! The batch replay export (docs/behaviour.md §10.2): the WIT `session` resource around the pure
//! [`crate::replay::Session`]. Ticks arrive column by column and each is written over the
//! previous tick's reading (no allocation per tick once the APIs are known); outcomes leave
//! column by column, an enum as its case's index in WIT (the generated enums are `repr(u8)`).

use super::Component;
use super::exports::capacity::sentinel::replay as wit;
use super::numbers::thresholds;
use super::policy::{cause_out, level_out, memory_in, pin_in, state_out, throttles_out};
use crate::replay::{Change, Session};
use std::cell::RefCell;
use vocabulary::{self as core, Outcome};

use vocabulary::column_bits::{
    BASELINE, CHANGED, CONNECTIONS, CPU, DAMPING_HELD, FAILED, NONE, P95, RESTORE_HELD, SCALING, SCALING_PRESENT,
};

pub struct ReplaySession {
    session: RefCell<Session>,
    /// The API names told so far; a latency entry names one by its index.
    apis: RefCell<Vec<String>>,
}

impl wit::Guest for Component {
    type Session = ReplaySession;
}

impl wit::GuestSession for ReplaySession {
    fn new(start: wit::SessionStart) -> ReplaySession {
        let start = core::SessionStart {
            memory: start.memory.map(memory_in),
            pin: start.pin.map(pin_in),
            throttles_enabled: start.throttles_enabled,
            stages_throttled: start.stages_throttled,
            explain: start.explain,
        };
        ReplaySession { session: RefCell::new(Session::new(start)), apis: RefCell::new(Vec::new()) }
    }

    fn feed(&self, new_apis: Vec<String>, ticks: wit::TickColumns, changes: Vec<wit::ChangeAt>) -> Result<wit::ReplayChunk, String> {
        let mut apis = self.apis.borrow_mut();
        check(&ticks, &changes, apis.len() + new_apis.len())?;
        apis.extend(new_apis);
        let mut session = self.session.borrow_mut();
        let mut outcomes = Columns::with_capacity(ticks.at.len());
        let mut learnt = Vec::new();
        let mut changes = changes.into_iter().peekable();
        let mut failures = ticks.failures.iter();
        let mut latency = 0;
        for (i, &at) in ticks.at.iter().enumerate() {
            while let Some(c) = changes.next_if(|c| c.before_tick as usize == i) {
                session.apply(change_in(c.change));
            }
            let entries = latency..latency + ticks.latency_count[i] as usize;
            latency = entries.end;
            let answer = session.tick(at, |signal| fill(signal, &ticks, i, entries, &apis, &mut failures), thresholds());
            if let Some(baselines) = answer.learnt {
                let baselines = baselines
                    .into_iter()
                    .map(|b| wit::ApiBaseline { api: b.api, baseline_ms: b.baseline_ms, samples: b.samples })
                    .collect();
                learnt.push(wit::LearntBaselines { from_tick: i as u32, baselines });
            }
            outcomes.push(answer.outcome);
        }
        for c in changes {
            session.apply(change_in(c.change));
        }
        Ok(wit::ReplayChunk { outcomes: outcomes.0, learnt })
    }
}

/// Refuses a chunk whose columns disagree, before anything is applied.
fn check(t: &wit::TickColumns, changes: &[wit::ChangeAt], told: usize) -> Result<(), String> {
    let n = t.at.len();
    for (name, len) in [
        ("flags", t.flags.len()),
        ("cpu-pct", t.cpu_pct.len()),
        ("connections-pct", t.connections_pct.len()),
        ("latency-count", t.latency_count.len()),
    ] {
        if len != n {
            return Err(format!("tick column {name} holds {len} entries for {n} ticks"));
        }
    }
    let entries: usize = t.latency_count.iter().map(|c| *c as usize).sum();
    for (name, len) in [
        ("latency-api", t.latency_api.len()),
        ("latency-flags", t.latency_flags.len()),
        ("latency-p95-ms", t.latency_p95_ms.len()),
        ("latency-baseline-ms", t.latency_baseline_ms.len()),
    ] {
        if len != entries {
            return Err(format!("latency column {name} holds {len} entries, the ticks count {entries}"));
        }
    }
    if let Some((j, api)) = t.latency_api.iter().enumerate().find(|(_, api)| **api as usize >= told) {
        return Err(format!("latency entry {j} names API index {api}, but only {told} API names were told"));
    }
    let failed = t.flags.iter().filter(|f| **f & FAILED != 0).count();
    if failed != t.failures.len() {
        return Err(format!("{failed} ticks are failed reads but {} reasons were given", t.failures.len()));
    }
    if let Some(w) = changes.windows(2).find(|w| w[1].before_tick < w[0].before_tick) {
        return Err(format!("changes out of order: before tick {} after one before tick {}", w[1].before_tick, w[0].before_tick));
    }
    if let Some(c) = changes.iter().find(|c| c.before_tick as usize > n) {
        return Err(format!("a change before tick {} of a chunk of {n} ticks", c.before_tick));
    }
    Ok(())
}

/// Writes tick `i` over the previous tick's signal, reusing its latency entries and names.
fn fill<'a>(
    signal: &mut core::Signal,
    t: &wit::TickColumns,
    i: usize,
    entries: std::ops::Range<usize>,
    apis: &[String],
    failures: &mut impl Iterator<Item = &'a String>,
) {
    let flags = t.flags[i];
    if flags & FAILED != 0 {
        *signal = core::Signal::Failed(failures.next().cloned().unwrap_or_default());
        return;
    }
    if !matches!(signal, core::Signal::Reading(_)) {
        *signal = core::Signal::Reading(core::Reading { cpu_pct: None, connections_pct: None, scaling: None, latency: Vec::new() });
    }
    let core::Signal::Reading(r) = signal else { return };
    r.cpu_pct = (flags & CPU != 0).then(|| t.cpu_pct[i]);
    r.connections_pct = (flags & CONNECTIONS != 0).then(|| t.connections_pct[i]);
    r.scaling = (flags & SCALING_PRESENT != 0).then_some(flags & SCALING != 0);
    r.latency.truncate(entries.len());
    for (k, j) in entries.enumerate() {
        let api = &apis[t.latency_api[j] as usize];
        let p95_ms = (t.latency_flags[j] & P95 != 0).then(|| t.latency_p95_ms[j]);
        let baseline_ms = (t.latency_flags[j] & BASELINE != 0).then(|| t.latency_baseline_ms[j]);
        match r.latency.get_mut(k) {
            Some(entry) => {
                if entry.api != *api {
                    entry.api.clone_from(api);
                }
                entry.p95_ms = p95_ms;
                entry.baseline_ms = baseline_ms;
            }
            None => r.latency.push(core::ApiLatency { api: api.clone(), p95_ms, baseline_ms }),
        }
    }
}

fn change_in(c: wit::Change) -> Change {
    match c {
        wit::Change::Pin(pin) => Change::Pin(pin.map(pin_in)),
        wit::Change::Throttles(enabled) => Change::Throttles(enabled),
        wit::Change::StageRestores(fail) => Change::StageRestores(fail),
    }
}

struct Columns(wit::OutcomeColumns);

impl Columns {
    fn with_capacity(n: usize) -> Columns {
        let codes = || Vec::with_capacity(n);
        Columns(wit::OutcomeColumns {
            state: codes(),
            previous: codes(),
            cause: codes(),
            level: codes(),
            pending: codes(),
            throttles: codes(),
            flags: codes(),
            bulk: Vec::with_capacity(n),
            heavy: Vec::with_capacity(n),
            write: Vec::with_capacity(n),
            read: Vec::with_capacity(n),
            explanations: Vec::new(),
        })
    }

    fn push(&mut self, o: Outcome) {
        let c = &mut self.0;
        c.state.push(state_out(o.state) as u8);
        c.previous.push(state_out(o.previous) as u8);
        c.cause.push(cause_out(o.cause) as u8);
        c.level.push(o.level.map_or(NONE, |l| level_out(l) as u8));
        c.pending.push(o.pending.map_or(NONE, |s| state_out(s) as u8));
        c.throttles.push(throttles_out(o.throttles) as u8);
        c.flags.push(
            if o.changed { CHANGED } else { 0 }
                | if o.restore_held { RESTORE_HELD } else { 0 }
                | if o.damping_held { DAMPING_HELD } else { 0 },
        );
        c.bulk.push(o.factors.bulk);
        c.heavy.push(o.factors.heavy);
        c.write.push(o.factors.write);
        c.read.push(o.factors.read);
        if let Some(line) = o.explanation {
            c.explanations.push(line);
        }
    }
}
