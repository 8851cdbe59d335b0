//! A component built for an older contract runs correctly, and one built for another major
//! version is refused at activation naming both versions (docs/behaviour.md §11.9).
//!
//! `tests/contracts/1.0.0/` holds policy 1.0.0 exactly as contract 1.0.0 built it. It must decide
//! every vector, pin and admission exactly as today's build of the same policy does.

use capacity_tests::paths::{crate_dir, files_ending};
use capacity_tests::{component, runtime};
use sentinel::policy::contract::CONTRACT;
use sentinel::policy::{ComponentPolicy, Policy, PolicyError, inspect_component};
use vocabulary::{AdmissionRequest, DecisionInput, PinRequest};

fn old_component() -> std::path::PathBuf {
    crate_dir().join("contracts/1.0.0/capacity-policy-1.0.0.wasm")
}

fn inputs<T: serde::de::DeserializeOwned>(kind: &str) -> Vec<T> {
    files_ending(&crate_dir().join("vectors").join(kind), ".json")
        .iter()
        .flat_map(|file| {
            let cases: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            cases.into_iter().map(|c| serde_json::from_value(c["input"].clone()).unwrap())
        })
        .collect()
}

#[test]
fn a_policy_built_for_contract_1_0_0_decides_as_todays_build_of_it() {
    let info = inspect_component(&runtime(), &old_component()).unwrap();
    assert_eq!((info.contract.as_deref(), info.world.as_str()), (Some("1.0.0"), "policy"));
    assert_ne!(CONTRACT, "1.0.0", "this test is about an older contract");
    let mut old = ComponentPolicy::load(&runtime(), &old_component(), Some("contract-1.0.0")).unwrap();
    let mut today = component("1.0.0");
    assert_eq!(old.describe().unwrap(), today.describe().unwrap());
    let decisions: Vec<DecisionInput> = inputs("decision");
    assert!(decisions.len() > 50);
    for input in &decisions {
        assert_eq!(old.decide(input).unwrap(), today.decide(input).unwrap(), "{input:?}");
    }
    let requests: Vec<AdmissionRequest> = inputs("admission");
    for r in &requests {
        assert_eq!(old.resolve_budget(r).unwrap(), today.resolve_budget(r).unwrap());
    }
    #[derive(serde::Deserialize)]
    struct PinCase {
        request: PinRequest,
        now: i64,
    }
    for p in inputs::<PinCase>("pins") {
        assert_eq!(old.validate_pin(&p.request, p.now).unwrap(), today.validate_pin(&p.request, p.now).unwrap());
    }
}

/// The same component with its exports renamed to contract 2.0.0 (same length, so the binary
/// stays valid): refused before anything runs, and the message names both contracts.
#[test]
fn a_component_of_another_major_contract_is_refused_naming_both_versions() {
    let bytes = std::fs::read(old_component()).unwrap();
    let (from, to) = (b"capacity:sentinel/", "@1.0.0");
    let mut renamed = bytes.clone();
    let mut count = 0;
    for i in 0..renamed.len() {
        if renamed[i..].starts_with(from)
            && let Some(at) = renamed[i..].iter().take(64).position(|&b| b == b'@')
            && renamed[i + at..].starts_with(to.as_bytes())
        {
            renamed[i + at + 1] = b'2';
            count += 1;
        }
    }
    assert!(count >= 7, "renamed {count} export names");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contract-2.wasm");
    std::fs::write(&path, &renamed).unwrap();
    let info = inspect_component(&runtime(), &path).unwrap();
    assert_eq!(info.contract.as_deref(), Some("2.0.0"));
    let error = ComponentPolicy::load(&runtime(), &path, None).err().expect("refused");
    assert!(matches!(error, PolicyError::ContractMismatch { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("capacity:sentinel@2.0.0") && message.contains(&format!("capacity:sentinel@{CONTRACT}")), "{message}");
}
