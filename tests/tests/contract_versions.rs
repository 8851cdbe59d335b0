//! A component built for another major contract is refused at activation, naming both versions
//! (docs/behaviour.md §11.9): contract 2.0.0 changed the records a policy decides with (the
//! decision input says whether a stage is still throttled, the memory when a restore began to
//! hold emergency), and 3.0.0 again (each signal's resolve band, each recent reading's recovery
//! level), so a policy built for 1.x or 2.x would be mis-run and is not run at all.
//!
//! `tests/contracts/<version>/` holds policy 1.0.0 exactly as that contract built it.

use capacity_tests::paths::crate_dir;
use capacity_tests::runtime;
use sentinel::policy::contract::CONTRACT;
use sentinel::policy::{ComponentPolicy, PolicyError, inspect_component};

#[test]
fn policies_built_for_contracts_1_and_2_are_refused_naming_both_versions() {
    assert_eq!(CONTRACT, "3.0.0");
    for old in ["1.0.0", "1.1.0", "2.0.0"] {
        let path = crate_dir().join(format!("contracts/{old}/capacity-policy-1.0.0.wasm"));
        let info = inspect_component(&runtime(), &path).unwrap();
        assert_eq!((info.contract.as_deref(), info.world.as_str()), (Some(old), "policy"));
        let error = ComponentPolicy::load(&runtime(), &path, None).err().expect("refused");
        assert!(matches!(error, PolicyError::ContractMismatch { .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains(&format!("capacity:sentinel@{old}")) && message.contains("capacity:sentinel@3.0.0"), "{message}");
    }
}

#[test]
fn todays_build_is_of_this_contract() {
    let info = inspect_component(&runtime(), &capacity_tests::paths::target_dir().join("policies/capacity-policy-1.0.0.wasm")).unwrap();
    assert_eq!(info.contract.as_deref(), Some(CONTRACT));
}
