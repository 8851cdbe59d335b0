//! Replay's words (docs/behaviour.md §10): the events of a recorded trace, and the compact
//! outcome of each tick that a batch replay hands back instead of the whole decision.

use crate::baseline::ApiBaseline;
use crate::decision::Decision;
use crate::memory::{Memory, Pin};
use crate::reading::Signal;
use crate::state::{Cause, Instant, Level, ProtectionState, ThrottleIntent};
use crate::thresholds::Factors;

/// One line of a trace.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceEvent {
    /// A `reading` or `read_error` line: one tick at `at`.
    Tick { at: Instant, signal: Signal },
    /// A `pin` line: the pin of the ticks from `at` on (`None`: no pin). Replay applies it as
    /// recorded, without validating it again.
    Pin { at: Instant, pin: Option<Pin> },
    /// A `throttles_enabled` line: the stage-throttle switch of the ticks from `at` on.
    Throttles { at: Instant, enabled: bool },
    /// A `stage_restores_fail` line (replay only): from `at` on, every stage restore fails
    /// (`true`, as while API Gateway is unreachable) or succeeds again (`false`).
    StageRestores { at: Instant, fail: bool },
}

impl TraceEvent {
    /// When the event happens.
    pub fn at(&self) -> Instant {
        match self {
            TraceEvent::Tick { at, .. }
            | TraceEvent::Pin { at, .. }
            | TraceEvent::Throttles { at, .. }
            | TraceEvent::StageRestores { at, .. } => *at,
        }
    }
}

/// What a replay keeps of one tick's decision: everything but the memory, the supporting
/// readings and (unless asked for) the explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub state: ProtectionState,
    pub factors: Factors,
    pub changed: bool,
    pub previous: ProtectionState,
    pub cause: Cause,
    pub level: Option<Level>,
    pub pending: Option<ProtectionState>,
    pub throttles: ThrottleIntent,
    /// Emergency is held for a stage restore (the memory's `restore_held_since` is set).
    pub restore_held: bool,
    /// A recovery qualified but flap damping held it (docs/behaviour.md §5.4).
    pub damping_held: bool,
    /// The decision's one line, when the replay asked for explanations.
    pub explanation: Option<String>,
}

impl Outcome {
    /// The outcome of a decision; its explanation kept when `explain`.
    pub fn of(decision: &Decision, explain: bool) -> Outcome {
        Outcome {
            state: decision.state,
            factors: decision.factors,
            changed: decision.changed,
            previous: decision.previous,
            cause: decision.cause,
            level: decision.level,
            pending: decision.pending,
            throttles: decision.throttles,
            restore_held: decision.memory.restore_held_since.is_some(),
            damping_held: decision.damping_hold.is_some(),
            explanation: explain.then(|| decision.explanation.clone()),
        }
    }
}

/// Baselines a replay learnt at the start of an hour; they apply from the tick at `from_tick`
/// (an index into the chunk's outcomes) until the next ones.
#[derive(Debug, Clone, PartialEq)]
pub struct LearntBaselines {
    pub from_tick: u32,
    pub baselines: Vec<ApiBaseline>,
}

/// What one batch of trace events gave: one outcome per tick event, in order, and the
/// baselines learnt on the way.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplayChunk {
    pub outcomes: Vec<Outcome>,
    pub learnt: Vec<LearntBaselines>,
}

/// Where a batch replay starts: a fresh sentinel, or one tick's recorded input to go on from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionStart {
    pub memory: Option<Memory>,
    pub pin: Option<Pin>,
    pub throttles_enabled: bool,
    /// A stage is throttled (its restore still pending) when the first tick is decided.
    pub stages_throttled: bool,
    /// Keep each tick's explanation in its outcome.
    pub explain: bool,
}

impl SessionStart {
    /// A fresh sentinel with the stage-throttle switch as given, without explanations.
    pub fn fresh(throttles_enabled: bool) -> SessionStart {
        SessionStart { throttles_enabled, ..SessionStart::default() }
    }
}

/// The bits of the batch replay's columns (`wit/replay.wit`), written by one side of the
/// boundary and read by the other.
pub mod column_bits {
    /// `tick-columns.flags`.
    pub const CPU: u8 = 1;
    pub const CONNECTIONS: u8 = 2;
    pub const SCALING_PRESENT: u8 = 4;
    pub const SCALING: u8 = 8;
    pub const FAILED: u8 = 16;
    /// `tick-columns.latency-flags`.
    pub const P95: u8 = 1;
    pub const BASELINE: u8 = 2;
    /// `outcome-columns.flags`.
    pub const CHANGED: u8 = 1;
    pub const RESTORE_HELD: u8 = 2;
    /// Flap damping held a recovery (set from contract 3.2.0 on).
    pub const DAMPING_HELD: u8 = 4;
    /// An absent enum in `outcome-columns`.
    pub const NONE: u8 = 255;
}
