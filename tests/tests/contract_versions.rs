//! A component built for another major contract is refused at activation, naming both versions
//! (docs/behaviour.md §11.9): contract 2.0.0 changed the records a policy decides with (the
//! decision input says whether a stage is still throttled, the memory when a restore began to
//! hold emergency), and 3.0.0 again (each signal's resolve band, each recent reading's recovery
//! level), so a policy built for 1.x or 2.x would be mis-run and is not run at all. Contract
//! 3.1.0 only added the batch `replay` session: a policy built for 3.0.0 runs, and replay takes
//! it tick by tick with the same outcomes. Contract 3.2.0 only added `damping`: a policy built
//! for 3.1.0 runs without damping (it has none), in batch as before.
//!
//! `tests/contracts/<version>/` holds policy 1.0.0 exactly as that contract built it.

use capacity_tests::paths::crate_dir;
use capacity_tests::policies::ReplayPath;
use capacity_tests::{native, replay_lines, replay_outcomes, runtime};
use sentinel_core::policy::contract::CONTRACT;
use sentinel_core::policy::{ComponentPolicy, Policy, PolicyError, inspect_component};
use sentinel_core::trace::read_trace;
use vocabulary::{ApiBaseline, Outcome};

/// A component built before 2026-12-05 wrote a pin's expiry in its explanation as unix seconds
/// (`pinned by ops until 1792505400`); today's writes RFC 3339 (`until 2026-10-20T14:10:00Z`).
/// Its outcomes in today's words, so that everything else is compared exactly.
fn in_todays_words(
    (outcomes, baselines): (Vec<Outcome>, Vec<(usize, Vec<ApiBaseline>)>),
) -> (Vec<Outcome>, Vec<(usize, Vec<ApiBaseline>)>) {
    let reword = |text: String| {
        let Some(at) = text.find(" until ") else { return text };
        let start = at + " until ".len();
        let digits = text[start..].chars().take_while(char::is_ascii_digit).count();
        match text[start..start + digits].parse::<i64>() {
            Ok(unix) if digits > 0 => {
                format!("{}{}{}", &text[..start], sentinel_core::instants::format_rfc3339(unix), &text[start + digits..])
            }
            _ => text,
        }
    };
    let outcomes = outcomes.into_iter().map(|o| Outcome { explanation: o.explanation.map(reword), ..o }).collect();
    (outcomes, baselines)
}

#[test]
fn policies_built_for_contracts_1_and_2_are_refused_naming_both_versions() {
    assert_eq!(CONTRACT, "3.2.0");
    for old in ["1.0.0", "1.1.0", "2.0.0"] {
        let path = crate_dir().join(format!("contracts/{old}/capacity-policy-1.0.0.wasm"));
        let info = inspect_component(&runtime(), &path).unwrap();
        assert_eq!((info.contract.as_deref(), info.world.as_str()), (Some(old), "policy"));
        let error = ComponentPolicy::load(&runtime(), &path, None).err().expect("refused");
        assert!(matches!(error, PolicyError::ContractMismatch { .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains(&format!("capacity:sentinel@{old}")) && message.contains("capacity:sentinel@3.2.0"), "{message}");
    }
}

#[test]
fn todays_build_is_of_this_contract() {
    let info = inspect_component(&runtime(), &capacity_tests::paths::target_dir().join("policies/capacity-policy-1.0.0.wasm")).unwrap();
    assert_eq!(info.contract.as_deref(), Some(CONTRACT));
}

#[test]
fn a_policy_built_for_contract_3_0_0_runs_and_replays_tick_by_tick_alike() {
    let path = crate_dir().join("contracts/3.0.0/capacity-policy-1.0.0.wasm");
    let info = inspect_component(&runtime(), &path).unwrap();
    assert_eq!(info.contract.as_deref(), Some("3.0.0"));
    let mut old: Box<dyn Policy> = Box::new(ComponentPolicy::load(&runtime(), &path, Some("1.0.0")).expect("a 3.0.0 policy runs"));
    assert!(!old.replays_in_batch(), "a 3.0.0 component has no replay session");
    let error = old.batch_session(Default::default()).err().expect("no session");
    assert!(matches!(error, PolicyError::NoBatchReplay { .. }), "{error}");
    let mut current = native("1.0.0");
    for name in ["incident", "latency_learnt", "pins", "throttles"] {
        let trace = read_trace(&crate_dir().join(format!("traces/{name}.jsonl"))).unwrap();
        assert_eq!(replay_lines(&trace, &mut old, true), replay_lines(&trace, &mut current, true), "{name}: sentinel replay");
        let by_tick = in_todays_words(replay_outcomes(&trace, old.as_mut(), true, ReplayPath::PerTick, 64));
        let batch = replay_outcomes(&trace, current.as_mut(), true, ReplayPath::Batch, 64);
        assert_eq!(by_tick, batch, "{name}: outcomes and learnt baselines");
    }
}

#[test]
fn a_policy_built_for_contract_3_1_0_runs_without_damping_and_replays_in_batch_alike() {
    let path = crate_dir().join("contracts/3.1.0/capacity-policy-1.0.0.wasm");
    let info = inspect_component(&runtime(), &path).unwrap();
    assert_eq!(info.contract.as_deref(), Some("3.1.0"));
    let mut old: Box<dyn Policy> = Box::new(ComponentPolicy::load(&runtime(), &path, Some("1.0.0")).expect("a 3.1.0 policy runs"));
    assert!(old.replays_in_batch(), "a 3.1.0 component has its replay session");
    assert_eq!(old.describe().unwrap().thresholds.damping, None, "a 3.1.0 component has no damping");
    let mut current = native("1.0.0");
    for name in ["incident", "flapping", "latency_learnt", "pins", "throttles"] {
        let trace = read_trace(&crate_dir().join(format!("traces/{name}.jsonl"))).unwrap();
        assert_eq!(replay_lines(&trace, &mut old, true), replay_lines(&trace, &mut current, true), "{name}: sentinel replay");
        let batch = in_todays_words(replay_outcomes(&trace, old.as_mut(), true, ReplayPath::Batch, 64));
        let by_tick = replay_outcomes(&trace, current.as_mut(), true, ReplayPath::PerTick, 64);
        assert_eq!(batch, by_tick, "{name}: outcomes and learnt baselines");
    }
}
