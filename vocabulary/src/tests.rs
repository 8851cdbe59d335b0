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
