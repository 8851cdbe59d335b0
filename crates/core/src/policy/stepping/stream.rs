//! One policy's replay as a stream of chunks (docs/behaviour.md §10.2): events go to the
//! policy's batch session (or, for a component without one, to [`PerTick`]) a chunk at a time,
//! and each answer is walked beside its events to hand every tick to a sink with what it was
//! decided on: the reading with the learnt baselines filled in, the pin and the switch.

use super::per_tick::PerTick;
use crate::policy::invariants::Tick;
use crate::policy::{Policy, PolicyError, ReplaySession};
use std::collections::BTreeMap;
use vocabulary::{Pin, Reading, ReplayChunk, SessionStart, Signal, TraceEvent};

/// Events per call into the policy: large enough that the boundary is crossed rarely, small
/// enough that a chunk's outcomes stay a few hundred kilobytes.
pub const CHUNK_EVENTS: usize = 4096;

/// One policy's replay session, fed a chunk at a time, with what walking its answers needs from one
/// chunk to the next: the pin, the switch and the baselines learnt last.
pub struct Stream<'p> {
    /// The policy's label, for errors.
    label: String,
    session: Box<dyn ReplaySession + 'p>,
    pin: Option<Pin>,
    throttles_enabled: bool,
    /// The baselines learnt last, by API.
    learnt: BTreeMap<String, f64>,
}

/// Where the walk of one answer is: the next outcome and the next learnt baselines.
#[derive(Debug, Default)]
pub(super) struct Cursor {
    tick: usize,
    learnt: usize,
}

impl<'p> Stream<'p> {
    /// The batch session when the policy has one, else tick by tick.
    pub fn open(policy: &'p mut dyn Policy, throttles_enabled: bool) -> Result<Stream<'p>, PolicyError> {
        let label = policy.identity().label.clone();
        let session = if policy.replays_in_batch() {
            policy.batch_session(SessionStart::fresh(throttles_enabled))?
        } else {
            Box::new(PerTick::new(policy, SessionStart::fresh(throttles_enabled)))
        };
        Ok(Stream::over(label, session, throttles_enabled))
    }

    /// Tick by tick through `decide` from `start`, whatever the policy offers (the reference path).
    pub fn per_tick_from(policy: &'p mut dyn Policy, start: SessionStart) -> Stream<'p> {
        let label = policy.identity().label.clone();
        let throttles_enabled = start.throttles_enabled;
        Stream::over(label, Box::new(PerTick::new(policy, start)), throttles_enabled)
    }

    fn over(label: String, session: Box<dyn ReplaySession + 'p>, throttles_enabled: bool) -> Stream<'p> {
        Stream { label, session, pin: None, throttles_enabled, learnt: BTreeMap::new() }
    }

    /// Replays `events` (a chunk of a trace, in order) and hands each tick to `sink`.
    pub fn feed(&mut self, events: &[TraceEvent], sink: &mut dyn FnMut(Tick<'_>)) -> Result<(), PolicyError> {
        let answer = self.answer(events)?;
        let mut cursor = Cursor::default();
        for event in events {
            self.walk(event, &answer, &mut cursor, sink);
        }
        Ok(())
    }

    /// The policy's answer to a chunk, checked to hold one outcome per tick.
    pub(super) fn answer(&mut self, events: &[TraceEvent]) -> Result<ReplayChunk, PolicyError> {
        let chunk = self.session.feed(events)?;
        let ticks = events.iter().filter(|e| matches!(e, TraceEvent::Tick { .. })).count();
        if chunk.outcomes.len() != ticks {
            return Err(PolicyError::ReplayRefused {
                policy: self.label.clone(),
                message: format!("the policy answered {} outcomes for {ticks} ticks", chunk.outcomes.len()),
            });
        }
        Ok(chunk)
    }

    /// Applies one event of the chunk `answer` answered; a tick goes to `sink`.
    pub(super) fn walk(&mut self, event: &TraceEvent, answer: &ReplayChunk, cursor: &mut Cursor, sink: &mut dyn FnMut(Tick<'_>)) {
        match event {
            TraceEvent::Pin { pin, .. } => self.pin = pin.clone(),
            TraceEvent::Throttles { enabled, .. } => self.throttles_enabled = *enabled,
            TraceEvent::StageRestores { .. } => {}
            TraceEvent::Tick { at, signal } => {
                while let Some(learnt) = answer.learnt.get(cursor.learnt).filter(|l| l.from_tick as usize <= cursor.tick) {
                    self.learnt = learnt.baselines.iter().filter_map(|b| b.baseline_ms.map(|ms| (b.api.clone(), ms))).collect();
                    cursor.learnt += 1;
                }
                let filled: Reading;
                let reading = match signal {
                    Signal::Reading(r) if r.latency.iter().any(|l| l.baseline_ms.is_none()) => {
                        filled = self.fill(r);
                        Some(&filled)
                    }
                    Signal::Reading(r) => Some(r),
                    Signal::Failed(_) => None,
                };
                let outcome = &answer.outcomes[cursor.tick];
                cursor.tick += 1;
                sink(Tick { at: *at, reading, pin: self.pin.as_ref(), throttles_enabled: self.throttles_enabled, outcome });
            }
        }
    }

    /// The reading as the policy saw it: each API without a baseline given the learnt one.
    fn fill(&self, reading: &Reading) -> Reading {
        let mut reading = reading.clone();
        for latency in &mut reading.latency {
            if latency.baseline_ms.is_none() {
                latency.baseline_ms = self.learnt.get(&latency.api).copied();
            }
        }
        reading
    }
}
