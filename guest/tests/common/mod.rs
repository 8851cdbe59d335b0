//! Helpers shared by the integration tests: readings of a given level, memories in a given
//! state, and a small simulator that runs minute ticks and threads the memory from one decision
//! into the next.
#![allow(dead_code, reason = "each test binary uses part of the shared helpers")]

use capacity_guest::decide::decide;
use capacity_guest::embedded::THRESHOLDS;
use vocabulary::Thresholds;
use vocabulary::{ApiLatency, Cause, Decision, DecisionInput, Instant, Level, Memory, Pin, ProtectionState, Reading, RecentEntry, Signal};

/// Policy 1.0.0, the numbers of docs/behaviour.md §13.
pub const T: Thresholds = THRESHOLDS;
/// 2026-10-20T14:00:00Z, the start of a clock hour.
pub const T0: Instant = 1_792_504_800;
pub const MIN: i64 = 60;
pub const HOUR: i64 = 3600;

/// A CPU-only reading at `cpu` percent.
pub fn cpu(cpu: f64) -> Reading {
    Reading { cpu_pct: Some(cpu), ..Reading::default() }
}

/// A reading that assesses to `level` (by CPU: 10, 75 or 90 percent).
pub fn reading(level: Level) -> Reading {
    cpu(match level {
        Level::Normal => 10.0,
        Level::Constrained => 75.0,
        Level::Critical => 90.0,
    })
}

pub fn latency(api: &str, p95_ms: Option<f64>, baseline_ms: Option<f64>) -> ApiLatency {
    ApiLatency { api: api.into(), p95_ms, baseline_ms }
}

pub fn signal(level: Level) -> Signal {
    Signal::Reading(reading(level))
}

pub fn failed() -> Signal {
    Signal::Failed("timeout".into())
}

/// A memory in `state`, entered (automatically) an hour before `T0`, with nothing recent.
pub fn memory_in(state: ProtectionState) -> Memory {
    Memory {
        state,
        state_since: T0 - HOUR,
        last_auto_change: Some(T0 - HOUR),
        recent: Vec::new(),
        failed_reads: 0,
        throttles_engaged: false,
        restore_held_since: None,
        flap: None,
    }
}

/// Recent entries of these levels, one a minute, the newest one minute before `next_tick`.
pub fn recent_before(next_tick: Instant, levels: &[Level]) -> Vec<RecentEntry> {
    let n = levels.len() as i64;
    levels.iter().enumerate().map(|(i, &level)| RecentEntry::new(next_tick - (n - i as i64) * MIN, level)).collect()
}

pub fn pin(state: ProtectionState, expires_at: Instant) -> Pin {
    Pin { state, reason: "incident 4411".into(), expires_at, actor: "ops@example.com".into() }
}

/// One decision with v1 thresholds.
pub fn decide_once(now: Instant, signal: Signal, memory: Option<Memory>, pin: Option<Pin>, throttles: bool) -> Decision {
    decide_with_stages(now, signal, memory, pin, throttles, false)
}

/// One decision with v1 thresholds, saying whether a stage is still throttled.
pub fn decide_with_stages(
    now: Instant,
    signal: Signal,
    memory: Option<Memory>,
    pin: Option<Pin>,
    throttles: bool,
    stages_throttled: bool,
) -> Decision {
    let input = DecisionInput { now, signal, memory, pin, throttles_enabled: throttles, stages_throttled };
    decide(&input, &T)
}

/// Runs ticks, threading each decision's memory into the next tick. `now` is the time of the
/// next tick; each tick advances it by one minute unless the test moves it.
#[derive(Debug, Clone)]
pub struct Sim {
    pub now: Instant,
    pub memory: Option<Memory>,
    pub pin: Option<Pin>,
    pub throttles: bool,
    /// Whether a stage is still throttled at the start of the next tick; `None`: as the live
    /// sentinel leaves them when every stage change succeeds (throttled while the policy wants it).
    pub stages_throttled: Option<bool>,
    pub log: Vec<Decision>,
}

impl Sim {
    /// No memory yet (the first tick starts fresh) at `T0`.
    pub fn fresh() -> Sim {
        Sim { now: T0, memory: None, pin: None, throttles: false, stages_throttled: None, log: Vec::new() }
    }

    /// Continues from `memory`, the next tick at `T0`.
    pub fn from(memory: Memory) -> Sim {
        Sim { memory: Some(memory), ..Sim::fresh() }
    }

    /// A state entered an hour ago with the newest `levels` already recent (one a minute).
    pub fn in_state(state: ProtectionState, levels: &[Level]) -> Sim {
        let mut m = memory_in(state);
        m.recent = recent_before(T0, levels);
        Sim::from(m)
    }

    pub fn throttles(mut self, on: bool) -> Sim {
        self.throttles = on;
        self
    }

    /// One tick at `now`, then `now` moves on a minute.
    pub fn tick(&mut self, signal: Signal) -> Decision {
        let stages = self.stages_throttled.unwrap_or_else(|| self.memory.as_ref().is_some_and(|m| m.throttles_engaged));
        let d = decide_with_stages(self.now, signal, self.memory.clone(), self.pin.clone(), self.throttles, stages);
        self.memory = Some(d.memory.clone());
        self.log.push(d.clone());
        self.now += MIN;
        d
    }

    /// One tick at `at` (which becomes the current time), then a minute on.
    pub fn tick_at(&mut self, at: Instant, signal: Signal) -> Decision {
        self.now = at;
        self.tick(signal)
    }

    pub fn read(&mut self, level: Level) -> Decision {
        self.tick(signal(level))
    }

    pub fn fail(&mut self) -> Decision {
        self.tick(failed())
    }

    /// A tick for each level, in order; the decisions.
    pub fn reads(&mut self, levels: &[Level]) -> Vec<Decision> {
        levels.iter().map(|&l| self.read(l)).collect()
    }

    /// `n` ticks of the same level.
    pub fn repeat(&mut self, level: Level, n: usize) -> Vec<Decision> {
        (0..n).map(|_| self.read(level)).collect()
    }

    /// The time of the last tick run.
    pub fn last_at(&self) -> Instant {
        self.now - MIN
    }

    pub fn state(&self) -> ProtectionState {
        self.memory.as_ref().map_or(ProtectionState::Normal, |m| m.state)
    }

    pub fn mem(&self) -> &Memory {
        self.memory.as_ref().expect("a tick has run")
    }
}

/// The checks every decision must pass, whatever the input.
pub fn assert_consistent(d: &Decision) {
    assert_eq!(d.state, d.memory.state, "decision and memory agree on the state");
    assert_eq!(d.factors, T.factors.of(d.state), "factors are those of the state");
    assert_eq!(d.changed, d.state != d.previous, "changed means state differs from previous");
    assert!(d.memory.recent.len() <= T.escalate_readings.max(T.recover_readings) as usize);
    assert!(!d.explanation.contains('\n'), "the explanation is one line");
}

/// Whether a cause is one of the automatic changes (spacing applies to the first three).
pub fn is_rule_change(cause: Cause) -> bool {
    matches!(cause, Cause::Escalate | Cause::Emergency | Cause::Recover)
}

/// Proptest cases: `PROPTEST_CASES` from the environment, 1000 by default.
pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

/// The proptest configuration of every property file: [`cases`] cases, and a failing case
/// saved next to the test file (`<file>.regressions`) to be replayed first on later runs.
pub fn config() -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::WithSource("regressions"))),
        ..proptest::test_runner::Config::with_cases(cases())
    }
}
