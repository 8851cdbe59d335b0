//! The domain types of the pure core. They mirror the WIT records in shape but are plain Rust,
//! so the rules can be tested natively and reused by the host's native modules; `lib.rs`
//! converts them to and from the generated bindings in one place.

pub use crate::thresholds::Factors;

/// Seconds since the Unix epoch, UTC.
pub type Instant = i64;

/// The protection state, ordered by rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    Normal,
    Constrained,
    Critical,
    Emergency,
}

/// The pressure level of one reading (never emergency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Normal,
    Constrained,
    Critical,
}

impl State {
    pub const ALL: [State; 4] = [State::Normal, State::Constrained, State::Critical, State::Emergency];

    pub fn rank(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            State::Normal => "normal",
            State::Constrained => "constrained",
            State::Critical => "critical",
            State::Emergency => "emergency",
        }
    }

    pub fn parse(name: &str) -> Option<State> {
        State::ALL.into_iter().find(|s| s.name() == name)
    }

    /// One rank lower (normal stays normal).
    pub fn step_down(self) -> State {
        match self {
            State::Normal | State::Constrained => State::Normal,
            State::Critical => State::Constrained,
            State::Emergency => State::Critical,
        }
    }
}

impl Level {
    pub fn rank(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        self.as_state().name()
    }

    /// The state this level supports.
    pub fn as_state(self) -> State {
        match self {
            Level::Normal => State::Normal,
            Level::Constrained => State::Constrained,
            Level::Critical => State::Critical,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiLatency {
    pub api: String,
    pub p95_ms: Option<f64>,
    pub baseline_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reading {
    pub cpu_pct: Option<f64>,
    pub connections_pct: Option<f64>,
    pub scaling: Option<bool>,
    pub latency: Vec<ApiLatency>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    Reading(Reading),
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecentEntry {
    pub at: Instant,
    pub level: Level,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Memory {
    pub state: State,
    pub state_since: Instant,
    pub last_auto_change: Option<Instant>,
    pub recent: Vec<RecentEntry>,
    pub failed_reads: u32,
    pub throttles_engaged: bool,
}

impl Memory {
    /// What an absent or unreadable memory starts as.
    pub fn fresh(now: Instant) -> Memory {
        Memory {
            state: State::Normal,
            state_since: now,
            last_auto_change: None,
            recent: Vec::new(),
            failed_reads: 0,
            throttles_engaged: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pin {
    pub state: State,
    pub reason: String,
    pub expires_at: Instant,
    pub actor: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DecisionInput {
    pub now: Instant,
    pub signal: Signal,
    pub memory: Option<Memory>,
    pub pin: Option<Pin>,
    pub throttles_enabled: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    Pinned,
    SignalHeld,
    SignalLostRelease,
    Escalate,
    Emergency,
    Recover,
    SpacingWait,
    RestoreThrottlesFirst,
    Fresh,
    Hold,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::Pinned => "pinned",
            Cause::SignalHeld => "signal-held",
            Cause::SignalLostRelease => "signal-lost-release",
            Cause::Escalate => "escalate",
            Cause::Emergency => "emergency",
            Cause::Recover => "recover",
            Cause::SpacingWait => "spacing-wait",
            Cause::RestoreThrottlesFirst => "restore-throttles-first",
            Cause::Fresh => "fresh",
            Cause::Hold => "hold",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleIntent {
    Engage,
    Release,
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub state: State,
    pub factors: Factors,
    pub changed: bool,
    pub previous: State,
    pub cause: Cause,
    pub level: Option<Level>,
    pub pending: Option<State>,
    pub throttles: ThrottleIntent,
    pub supporting: Vec<RecentEntry>,
    pub memory: Memory,
    pub explanation: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySample {
    pub at: Instant,
    pub p95_ms: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiSamples {
    pub api: String,
    pub samples: Vec<LatencySample>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiBaseline {
    pub api: String,
    pub baseline_ms: Option<f64>,
    pub samples: u32,
}
