//! Property tests of the decision over random traces: random readings and failed reads, random
//! minute gaps (repeats within a minute, missed ticks), optional random pins and switch flips.
//! Cases: `PROPTEST_CASES` (default 1000).

mod common;

use common::*;
use proptest::prelude::*;
use vocabulary::{Cause, Decision, Instant, Level, Memory, ProtectionState, Reading, RecentEntry, Signal, ThrottleIntent};

#[derive(Debug, Clone, Copy)]
enum Kind {
    Level(Level),
    Scaling,
    NonFinite,
    Failed,
}

#[derive(Debug, Clone)]
enum PinOp {
    Keep,
    Set(ProtectionState, i64),
    Remove,
}

#[derive(Debug, Clone)]
struct Ev {
    gap: i64,
    kind: Kind,
    jitter: f64,
    pin: PinOp,
    switch: Option<bool>,
}

fn state() -> impl Strategy<Value = ProtectionState> {
    prop::sample::select(ProtectionState::ALL.to_vec())
}

fn kind(critical: bool) -> BoxedStrategy<Kind> {
    let calm = prop_oneof![
        4 => Just(Kind::Level(Level::Normal)),
        3 => Just(Kind::Level(Level::Constrained)),
        1 => Just(Kind::Scaling),
        1 => Just(Kind::NonFinite),
        1 => Just(Kind::Failed),
    ];
    if critical { prop_oneof![10 => calm, 5 => Just(Kind::Level(Level::Critical))].boxed() } else { calm.boxed() }
}

/// Mostly a minute; sometimes a repeat within the minute, a longer but tolerated gap, or a
/// missed tick.
fn gap() -> impl Strategy<Value = i64> {
    prop_oneof![12 => Just(60i64), 1 => Just(0i64), 2 => 1i64..60, 1 => 61i64..=90, 2 => 91i64..=900]
}

fn pin_op(pins: bool) -> BoxedStrategy<PinOp> {
    if !pins {
        return Just(PinOp::Keep).boxed();
    }
    prop_oneof![
        40 => Just(PinOp::Keep),
        1 => (state(), 1i64..=7200).prop_map(|(s, d)| PinOp::Set(s, d)),
        1 => Just(PinOp::Remove),
    ]
    .boxed()
}

/// Runs of one kind, 1 to 8 ticks each, so streaks (and so every rule) actually happen.
fn trace(critical: bool, pins: bool) -> impl Strategy<Value = Vec<Ev>> {
    let tick = (gap(), 0.0f64..1.0, pin_op(pins), prop_oneof![30 => Just(None), 1 => any::<bool>().prop_map(Some)]);
    prop::collection::vec((kind(critical), prop::collection::vec(tick, 1..8)), 1..25).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(kind, ticks)| ticks.into_iter().map(move |(gap, jitter, pin, switch)| Ev { gap, kind, jitter, pin, switch }))
            .collect()
    })
}

/// A reading of that level, by CPU, connections or latency, somewhere inside the level's band.
fn signal_of(kind: Kind, jitter: f64) -> Signal {
    let band = |level: Level, x: f64| match level {
        Level::Normal => x * 69.9,
        Level::Constrained => 70.0 + x * 14.9,
        Level::Critical => 85.0 + x * 15.0,
    };
    let x = (jitter * 3.0).fract();
    match kind {
        Kind::Failed => Signal::Failed("timeout".into()),
        Kind::NonFinite => Signal::Reading(Reading { cpu_pct: Some(f64::NAN), connections_pct: Some(f64::INFINITY), ..Reading::default() }),
        Kind::Scaling => Signal::Reading(Reading { scaling: Some(true), cpu_pct: Some(x * 60.0), ..Reading::default() }),
        Kind::Level(l) if jitter < 1.0 / 3.0 => Signal::Reading(cpu(band(l, x))),
        Kind::Level(l) if jitter < 2.0 / 3.0 => Signal::Reading(Reading { connections_pct: Some(band(l, x)), ..Reading::default() }),
        Kind::Level(l) => {
            let ratio = band(l, x) / 100.0 * 2.5 / 0.85;
            let ratio = match l {
                Level::Normal => ratio.min(1.49),
                Level::Constrained => ratio.clamp(1.5, 2.49),
                Level::Critical => ratio.max(2.5),
            };
            Signal::Reading(Reading { latency: vec![latency("crm", Some(ratio * 100.0), Some(100.0))], ..Reading::default() })
        }
    }
}

#[derive(Debug, Clone)]
struct Tick {
    now: Instant,
    before: Memory,
    pin_active: bool,
    switch: bool,
    kind: Kind,
    d: Decision,
}

fn run(start: Option<Memory>, switch: bool, events: &[Ev]) -> Vec<Tick> {
    let (mut now, mut memory, mut pinned, mut switch) = (T0, start, None, switch);
    let mut ticks = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        if i > 0 {
            now += ev.gap;
        }
        match ev.pin {
            PinOp::Keep => {}
            PinOp::Set(s, duration) => pinned = Some(pin(s, now + duration)),
            PinOp::Remove => pinned = None,
        }
        switch = ev.switch.unwrap_or(switch);
        let fresh = memory.is_none();
        let d = decide_once(now, signal_of(ev.kind, ev.jitter), memory.clone(), pinned.clone(), switch);
        assert_consistent(&d);
        if d.cause == Cause::Fresh {
            assert!(fresh, "fresh only when memory was absent");
        }
        let before = memory.unwrap_or_else(|| Memory::fresh(now));
        let pin_active = pinned.as_ref().is_some_and(|p| p.expires_at > now);
        memory = Some(d.memory.clone());
        ticks.push(Tick { now, before, pin_active, switch, kind: ev.kind, d });
    }
    ticks
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn no_two_automatic_changes_closer_than_the_spacing(switch: bool, events in trace(true, true)) {
        let mut last_change: Option<Instant> = None;
        for t in run(None, switch, &events) {
            if is_rule_change(t.d.cause) {
                prop_assert!(t.d.changed);
                if let Some(last) = last_change {
                    prop_assert!(t.now - last >= i64::from(T.spacing_s), "{} s after the last change", t.now - last);
                }
                prop_assert_eq!(t.d.memory.last_auto_change, Some(t.now));
            }
            if t.d.changed && (is_rule_change(t.d.cause) || t.d.cause == Cause::SignalLostRelease) {
                last_change = Some(t.now);
            }
            if t.d.cause == Cause::Pinned {
                prop_assert_eq!(t.d.memory.last_auto_change, t.before.last_auto_change, "a pin is not an automatic change");
            }
            if t.d.cause == Cause::SpacingWait {
                prop_assert!(!t.d.changed && t.d.pending.is_some());
            }
        }
    }

    #[test]
    fn emergency_is_entered_only_from_critical_or_by_a_pin(switch: bool, events in trace(true, true)) {
        for t in run(None, switch, &events) {
            if t.d.state == ProtectionState::Emergency && t.d.previous != ProtectionState::Emergency {
                let by_rule = t.d.cause == Cause::Emergency && t.d.previous == ProtectionState::Critical;
                prop_assert!(by_rule || (t.d.cause == Cause::Pinned && t.pin_active), "{}", t.d.explanation);
            }
            if t.d.cause == Cause::Emergency {
                prop_assert!(t.now - t.before.state_since >= i64::from(T.emergency_after_s));
                prop_assert_eq!(t.d.supporting.len(), 3);
                prop_assert!(t.d.supporting.iter().all(|e| e.level == Level::Critical));
            }
        }
    }

    #[test]
    fn automatic_changes_move_as_the_rules_allow(switch: bool, events in trace(true, true)) {
        for t in run(None, switch, &events) {
            let (from, to) = (t.d.previous, t.d.state);
            match t.d.cause {
                Cause::Escalate => prop_assert!(to > from && to <= ProtectionState::Critical),
                Cause::Emergency => prop_assert!(from == ProtectionState::Critical && to == ProtectionState::Emergency),
                Cause::Recover => prop_assert_eq!(to.rank() + 1, from.rank()),
                Cause::SignalLostRelease => prop_assert_eq!(to, ProtectionState::Normal),
                Cause::Pinned => prop_assert!(t.pin_active),
                _ => prop_assert!(!t.d.changed, "{:?} changed the state", t.d.cause),
            }
            if matches!(t.kind, Kind::Failed) && !t.pin_active {
                prop_assert!(matches!(t.d.cause, Cause::SignalHeld | Cause::SignalLostRelease));
            }
        }
    }

    #[test]
    fn without_critical_readings_or_pins_the_state_never_passes_constrained(
        switch: bool,
        events in trace(false, false),
    ) {
        for t in run(None, switch, &events) {
            prop_assert!(t.d.state <= ProtectionState::Constrained, "{}", t.d.explanation);
            prop_assert_eq!(t.d.throttles, ThrottleIntent::None);
        }
    }

    #[test]
    fn scaling_alone_never_passes_constrained(switch: bool, gaps in prop::collection::vec(gap(), 1..60)) {
        let events: Vec<Ev> = gaps
            .into_iter()
            .map(|gap| Ev { gap, kind: Kind::Scaling, jitter: 0.5, pin: PinOp::Keep, switch: None })
            .collect();
        for t in run(None, switch, &events) {
            prop_assert!(t.d.state <= ProtectionState::Constrained);
        }
    }

    #[test]
    fn two_failed_reads_without_a_pin_end_in_normal(
        switch: bool,
        events in trace(true, true),
        gaps in (0i64..=600, 0i64..=600),
    ) {
        let ticks = run(None, switch, &events);
        let last = ticks.last().unwrap();
        let mut sim = Sim::from(last.d.memory.clone()).throttles(last.switch);
        sim.tick_at(last.now + gaps.0, failed());
        let d = sim.tick_at(last.now + gaps.0 + gaps.1, failed());
        prop_assert_eq!(d.cause, Cause::SignalLostRelease);
        prop_assert_eq!(d.state, ProtectionState::Normal);
        prop_assert_eq!(d.factors, T.factors.of(ProtectionState::Normal));
        prop_assert!(!d.memory.throttles_engaged);
    }

    #[test]
    fn throttle_intents_match_the_engaged_flag_and_need_emergency_and_the_switch(
        switch: bool,
        events in trace(true, true),
    ) {
        for t in run(None, switch, &events) {
            let (was, is) = (t.before.throttles_engaged, t.d.memory.throttles_engaged);
            let expected = match (was, is) {
                (false, true) => ThrottleIntent::Engage,
                (true, false) => ThrottleIntent::Release,
                _ => ThrottleIntent::None,
            };
            prop_assert_eq!(t.d.throttles, expected);
            if is {
                prop_assert!(t.switch && t.d.state == ProtectionState::Emergency);
            }
            if t.d.throttles == ThrottleIntent::Engage {
                prop_assert!(t.now - t.d.memory.state_since >= i64::from(T.throttle_after_s));
                let newest: Vec<Level> = t.d.memory.recent.iter().rev().take(3).map(|e| e.level).collect();
                prop_assert!(t.pin_active || newest == vec![Level::Critical; 3]);
            }
            if t.d.state == ProtectionState::Emergency && t.d.cause == Cause::Recover {
                prop_assert!(false, "recover never keeps emergency");
            }
            if t.d.cause == Cause::RestoreThrottlesFirst {
                prop_assert_eq!(t.d.throttles, ThrottleIntent::Release);
                prop_assert_eq!(t.d.state, ProtectionState::Emergency);
            }
        }
    }

    #[test]
    fn the_same_trace_gives_the_same_decisions(switch: bool, events in trace(true, true)) {
        let a: Vec<Decision> = run(None, switch, &events).into_iter().map(|t| t.d).collect();
        let b: Vec<Decision> = run(None, switch, &events).into_iter().map(|t| t.d).collect();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn emergency_steps_down_after_five_straight_minutes_below_critical(
        since in 0i64..100_000,
        last_change in prop::option::of(60i64..100_000),
        engaged: bool,
        switch: bool,
        calm in prop::collection::vec(prop::sample::select(vec![Level::Normal, Level::Constrained]), 6),
        offsets in prop::collection::vec(0i64..=30, 6),
        old in prop::collection::vec((-100_000i64..0, prop::sample::select(vec![Level::Normal, Level::Critical])), 0..8),
    ) {
        let mut m = memory_in(ProtectionState::Emergency);
        m.state_since = T0 - since;
        m.last_auto_change = last_change.map(|ago| T0 - ago);
        m.throttles_engaged = engaged;
        m.recent = old.into_iter().map(|(ago, level)| RecentEntry::new(T0 - MIN + ago, level)).collect();
        let mut sim = Sim::from(m).throttles(switch);
        let ds: Vec<Decision> = (0..6)
            .map(|i| sim.tick_at(T0 + i as i64 * MIN + offsets[i], signal(calm[i])))
            .collect();
        // Five straight minutes below critical step emergency down, one tick later when the
        // throttles stand and must be restored first.
        let stepped = if engaged { &ds[5] } else { &ds[4] };
        prop_assert_eq!(stepped.state, ProtectionState::Critical, "{}", stepped.explanation);
        prop_assert!(ds.iter().all(|d| d.state >= ProtectionState::Critical));
    }
}
