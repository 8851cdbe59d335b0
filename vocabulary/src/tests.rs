//! The names on the wire, and the names earlier releases stored, read back.

use super::*;
use serde::Serialize;

#[test]
fn enum_cases_are_written_as_the_behaviour_document_names_them_and_match_name() {
    for s in ProtectionState::ALL {
        assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{}\"", s.name()));
        assert_eq!(ProtectionState::parse(s.name()), Some(s));
    }
    for c in Cause::ALL {
        assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{}\"", c.name()));
    }
    for t in [ThrottleIntent::Engage, ThrottleIntent::Release, ThrottleIntent::None] {
        assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{}\"", t.name()));
    }
    assert_eq!(serde_json::to_string(&AdmissionOutcome::WaitCapacityZero).unwrap(), "\"wait-capacity-zero\"");
    assert_eq!(serde_json::to_string(&PinField::ExpiresAt).unwrap(), "\"expires-at\"");
    assert_eq!(serde_json::to_string(&Signal::Failed("x".into())).unwrap(), r#"{"failed":"x"}"#);
}

#[test]
fn memory_stored_by_an_earlier_release_is_read() {
    let stored = r#"{"state":"Critical","state_since":10,"last_auto_change":null,
        "recent":[{"at":10,"level":"Critical"}],"failed_reads":0,"throttles_engaged":false}"#;
    let memory: Memory = serde_json::from_str(stored).unwrap();
    assert_eq!(memory.state, ProtectionState::Critical);
    assert_eq!(memory.recent[0].level, Level::Critical);
    let signal: Signal = serde_json::from_str(r#"{"Failed":"timeout"}"#).unwrap();
    assert_eq!(signal, Signal::Failed("timeout".into()));
    assert_eq!(serde_json::from_str::<Cause>("\"SpacingWait\"").unwrap(), Cause::SpacingWait);
}

#[test]
fn ranks_follow_the_order_of_the_states() {
    let ranks: Vec<u8> = ProtectionState::ALL.iter().map(|s| s.rank()).collect();
    assert_eq!(ranks, [0, 1, 2, 3]);
    assert_eq!(Level::Critical.as_state(), ProtectionState::Critical);
    assert_eq!(ProtectionState::Emergency.step_down(), ProtectionState::Critical);
    assert_eq!(ProtectionState::Normal.step_down(), ProtectionState::Normal);
}

/// `ALL` lists every case, in rank order: a state or cause added to the enum but not to `ALL`
/// (which names, parses and ranks) fails here.
#[test]
fn all_lists_every_state_and_cause_in_order() {
    use strum::IntoEnumIterator;
    assert_eq!(ProtectionState::iter().collect::<Vec<_>>(), ProtectionState::ALL);
    assert_eq!(Cause::iter().collect::<Vec<_>>(), Cause::ALL);
    for (rank, level) in Level::iter().enumerate() {
        assert_eq!(usize::from(level.rank()), rank);
        assert_eq!(ProtectionState::ALL[rank], level.as_state());
    }
}

/// Every case of every enum is written by its own name and read back.
#[test]
fn every_case_round_trips_by_its_own_name() {
    use strum::IntoEnumIterator;
    fn check<T: IntoEnumIterator + Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>() {
        let written: Vec<String> = T::iter().map(|c| serde_json::to_string(&c).unwrap()).collect();
        let distinct: std::collections::BTreeSet<&String> = written.iter().collect();
        assert_eq!(distinct.len(), written.len(), "{written:?}");
        for (case, text) in T::iter().zip(&written) {
            assert_eq!(serde_json::from_str::<T>(text).unwrap(), case);
        }
    }
    check::<ProtectionState>();
    check::<Level>();
    check::<Cause>();
    check::<ThrottleIntent>();
    check::<AdmissionOutcome>();
    check::<PinField>();
    check::<ChannelVerdict>();
    check::<Channel>();
}

/// The names counters and logs show are the names serde writes.
#[test]
fn channel_words_are_named_as_serde_writes_them() {
    use strum::IntoEnumIterator;
    for v in ChannelVerdict::iter() {
        assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{}\"", v.name()));
    }
    for c in Channel::iter() {
        assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{}\"", c.name()));
    }
}

#[test]
fn memory_stored_before_the_resolve_band_reads_as_the_level_itself() {
    let memory: Memory = serde_json::from_str(
        r#"{"state":"constrained","state_since":10,"last_auto_change":null,
        "recent":[{"at":10,"level":"normal"}],"failed_reads":0,"throttles_engaged":false}"#,
    )
    .unwrap();
    assert_eq!((memory.recent[0].resolve_level, memory.recent[0].recovery_level()), (None, Level::Normal));
    let banded = RecentEntry::resolving(10, Level::Normal, Level::Constrained);
    let written = serde_json::to_string(&banded).unwrap();
    assert_eq!(written, r#"{"at":10,"level":"normal","resolve_level":"constrained"}"#);
    assert_eq!(serde_json::to_string(&RecentEntry::resolving(10, Level::Normal, Level::Normal)).unwrap(), r#"{"at":10,"level":"normal"}"#);
}

#[test]
fn a_resolve_band_is_checked_and_named_by_its_key() {
    let bounds = LevelThresholds { constrained: 70.0, critical: 85.0, resolve_band: 0.0 };
    let file = |cpu: LevelThresholds| -> Thresholds {
        let mut t: Thresholds = serde_json::from_value(serde_json::json!({
            "cpu_pct": bounds, "connections_pct": bounds, "latency_ratio": {"constrained": 1.5, "critical": 2.5},
            "spacing_s": 300, "escalate_readings": 3, "recover_readings": 5, "emergency_after_s": 180,
            "throttle_after_s": 300, "max_gap_s": 90, "release_after_failed_reads": 2, "baseline_min_samples": 60,
            "pin_max_ahead_s": 86400, "pin_reason_max_chars": 500,
            "factors": {"normal": {"bulk": 1.0, "heavy": 1.0, "write": 1.0, "read": 1.0},
                        "constrained": {"bulk": 0.5, "heavy": 0.5, "write": 1.0, "read": 1.0},
                        "critical": {"bulk": 0.0, "heavy": 0.25, "write": 1.0, "read": 1.0},
                        "emergency": {"bulk": 0.0, "heavy": 0.25, "write": 0.5, "read": 0.5}}
        }))
        .unwrap();
        t.cpu_pct = cpu;
        t
    };
    assert_eq!(file(bounds).latency_ratio.resolve_band, 0.0, "absent: 0");
    assert_eq!(file(LevelThresholds { resolve_band: 5.0, ..bounds }).check(), Ok(()));
    for band in [-1.0, f64::NAN, f64::INFINITY, 70.0, 80.0] {
        let err = file(LevelThresholds { resolve_band: band, ..bounds }).check().unwrap_err();
        assert!(err.starts_with("thresholds.cpu_pct.resolve_band: "), "{band}: {err}");
    }
    let written = serde_json::to_string(&bounds).unwrap();
    assert_eq!(written, r#"{"constrained":70.0,"critical":85.0}"#, "a band of 0 is not written: 1.0.0's manifest is unchanged");
}

fn seed_factors() -> StateFactors {
    let f = |bulk, heavy, write, read| Factors { bulk, heavy, write, read };
    StateFactors {
        normal: f(1.0, 1.0, 1.0, 1.0),
        constrained: f(0.5, 0.5, 1.0, 1.0),
        critical: f(0.0, 0.25, 1.0, 1.0),
        emergency: f(0.0, 0.25, 0.5, 0.5),
    }
}

#[test]
fn the_seeds_factors_protect_and_each_state_has_its_own() {
    let factors = seed_factors();
    assert_eq!(factors.check_protection(), Ok(()));
    assert_eq!(factors.of(ProtectionState::Emergency).write, 0.5);
    assert_eq!(factors.of(ProtectionState::Constrained).heavy, 0.5);
    // Equal factors in two states protect no less: the property forbids rising, not staying.
    let mut flat = factors;
    flat.emergency = flat.critical;
    assert_eq!(flat.check_protection(), Ok(()));
}

#[test]
fn factors_that_rise_with_severity_or_let_bulk_work_through_are_refused_naming_lane_and_states() {
    // Every factor 1.0: no protection at all (the security review's policy).
    let mut none = seed_factors();
    none.constrained = none.normal;
    none.critical = none.normal;
    none.emergency = none.normal;
    let error = none.check_protection().unwrap_err();
    assert!(error.contains("thresholds.factors.critical.bulk") && error.contains("must be 0.0"), "{error}");

    let mut heavy_rises = seed_factors();
    heavy_rises.emergency.heavy = 0.5;
    let error = heavy_rises.check_protection().unwrap_err();
    assert!(error.contains("heavy rises from 0.25 in critical to 0.5 in emergency"), "{error}");

    let mut read_rises = seed_factors();
    read_rises.normal.read = 0.9;
    let error = read_rises.check_protection().unwrap_err();
    assert!(error.contains("read rises from 0.9 in normal to 1.0 in constrained"), "{error}");

    let mut bulk_in_emergency = seed_factors();
    bulk_in_emergency.emergency.bulk = 0.1;
    bulk_in_emergency.critical.bulk = 0.1;
    let error = bulk_in_emergency.check_protection().unwrap_err();
    assert!(error.contains("thresholds.factors.critical.bulk: is 0.1"), "{error}");
}

#[test]
fn a_policy_name_is_a_file_name_and_names_no_other_folder() {
    let description = |name: &str| PolicyDescription { name: name.into(), version: "1.4.0".into(), thresholds: default_thresholds() };
    for good in ["capacity-policy", "orders_db.v2", "A1"] {
        assert_eq!(description(good).check(), Ok(()), "{good}");
    }
    for bad in ["../escape/evil", "/etc/evil", "a/b", "a\\b", ".hidden", "-flag", "a..b", "with space", "ü", &"x".repeat(65)] {
        let error = description(bad).check().unwrap_err();
        assert!(error.starts_with("name: ") && error.contains("is not a policy name"), "{bad}: {error}");
    }
}

/// 1.0.0's numbers.
fn default_thresholds() -> Thresholds {
    let bounds = LevelThresholds { constrained: 70.0, critical: 85.0, resolve_band: 0.0 };
    Thresholds {
        cpu_pct: bounds,
        connections_pct: bounds,
        latency_ratio: LevelThresholds { constrained: 1.5, critical: 2.5, resolve_band: 0.0 },
        spacing_s: 300,
        escalate_readings: 3,
        recover_readings: 5,
        emergency_after_s: 180,
        throttle_after_s: 300,
        restore_hold_max_s: 600,
        max_gap_s: 90,
        release_after_failed_reads: 2,
        baseline_min_samples: 60,
        pin_max_ahead_s: 86400,
        pin_reason_max_chars: 500,
        factors: seed_factors(),
        damping: None,
    }
}
