//! Batch replay through a component (docs/behaviour.md §10.2): one `session` resource in the
//! component's instance, fed a chunk of events a call. API names cross once: the session keeps
//! each name's index and a tick's latency carries only the index.

use super::bindings::TickColumns;
use super::replay_convert::{chunk_from_wit, empty_columns, events_to_wit, start_to_wit};
use super::{ComponentPolicy, PolicyError};
use crate::policy::ReplaySession;
use vocabulary::{ReplayChunk, SessionStart, TraceEvent};
use wasmtime::component::ResourceAny;

pub struct ComponentSession<'p> {
    policy: &'p mut ComponentPolicy,
    /// None once a call failed: the instance, and the session in it, were discarded.
    resource: Option<ResourceAny>,
    /// The API names told to the component, each known by its index (a trace names a few, so
    /// a scan beats hashing the name of every latency entry).
    apis: Vec<String>,
    /// The columns of the last chunk, whose buffers the next one reuses.
    ticks: TickColumns,
}

impl<'p> ComponentSession<'p> {
    pub fn open(policy: &'p mut ComponentPolicy, start: &SessionStart) -> Result<ComponentSession<'p>, PolicyError> {
        let start = start_to_wit(start);
        let resource = policy.call("replay.session", |w, s| match &w.replay {
            Some(replay) => replay.session().call_constructor(s, &start),
            None => Err(wasmtime::format_err!("the component exports no replay interface")),
        })?;
        Ok(ComponentSession { policy, resource: Some(resource), apis: Vec::new(), ticks: empty_columns() })
    }
}

impl ReplaySession for ComponentSession<'_> {
    fn feed(&mut self, events: &[TraceEvent]) -> Result<ReplayChunk, PolicyError> {
        let label = || self.policy.identity.label.clone();
        let Some(resource) = self.resource else {
            return Err(PolicyError::ReplayRefused { policy: label(), message: "the session ended at an earlier failure".into() });
        };
        let mut new_apis = Vec::new();
        let mut index_of = |api: &str| match self.apis.iter().position(|known| known == api) {
            Some(index) => index as u32,
            None => {
                let index = u32::try_from(self.apis.len()).unwrap_or(u32::MAX);
                self.apis.push(api.to_string());
                new_apis.push(api.to_string());
                index
            }
        };
        let changes = events_to_wit(events, &mut self.ticks, &mut index_of);
        let ticks = &self.ticks;
        let answer = self.policy.call("replay.session.feed", |w, s| match &w.replay {
            Some(replay) => replay.session().call_feed(s, resource, &new_apis, ticks, &changes),
            None => Err(wasmtime::format_err!("the component exports no replay interface")),
        });
        match answer {
            Ok(Ok(chunk)) => chunk_from_wit(chunk).map_err(|message| {
                self.close();
                PolicyError::ReplayRefused {
                    policy: self.policy.identity.label.clone(),
                    message: format!("its answer is malformed: {message}"),
                }
            }),
            Ok(Err(message)) => {
                self.close();
                Err(PolicyError::ReplayRefused { policy: self.policy.identity.label.clone(), message })
            }
            Err(e) => {
                self.resource = None;
                Err(e)
            }
        }
    }
}

impl ComponentSession<'_> {
    /// Frees the session inside the instance (its memory and latency window), if it still lives.
    fn close(&mut self) {
        if let (Some(resource), Some((store, _))) = (self.resource.take(), self.policy.live.as_mut()) {
            // A failure here leaves garbage in an instance that is healthy otherwise; the
            // instance is discarded so that it cannot grow across many replays.
            if resource.resource_drop(&mut *store).is_err() {
                self.policy.live = None;
            }
        }
    }
}

impl Drop for ComponentSession<'_> {
    fn drop(&mut self) {
        self.close();
    }
}
