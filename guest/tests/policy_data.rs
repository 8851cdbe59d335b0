//! The template's policy data region (src/policy_data.rs): every version's numbers go in and
//! come out unchanged, and a region that is damaged, short, or carries more than its fields is
//! refused, never read as other numbers.

use capacity_guest::policy_data::{DataError, MAGIC, REGION_LEN, decode, encode, locate};
use sha2::{Digest, Sha256};
use std::path::Path;
use vocabulary::PolicyDescription;

const PAYLOAD_AT: usize = MAGIC.len() + 4 + 32;

fn descriptions() -> Vec<(String, PolicyDescription)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for folder in ["policies", "tests/policies"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let file = entry.unwrap().path().join("policy.toml");
            if file.is_file() {
                let text = std::fs::read_to_string(&file).unwrap();
                found.push((file.display().to_string(), toml::from_str(&text).unwrap()));
            }
        }
    }
    assert!(found.len() >= 10, "the versions and the test versions: found {}", found.len());
    found
}

/// A region holding `payload` as it is, its length and checksum made to match it.
fn region_with(payload: &[u8]) -> Vec<u8> {
    let mut region = vec![b' '; REGION_LEN];
    region[..MAGIC.len()].copy_from_slice(MAGIC);
    region[MAGIC.len()..MAGIC.len() + 4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    region[MAGIC.len() + 4..PAYLOAD_AT].copy_from_slice(&Sha256::digest(payload));
    region[PAYLOAD_AT..PAYLOAD_AT + payload.len()].copy_from_slice(payload);
    region
}

fn payload_of(region: &[u8]) -> Vec<u8> {
    let len = u32::from_le_bytes(region[MAGIC.len()..MAGIC.len() + 4].try_into().unwrap()) as usize;
    region[PAYLOAD_AT..PAYLOAD_AT + len].to_vec()
}

#[test]
fn every_version_and_every_damping_variant_comes_back_unchanged() {
    let mut all = descriptions();
    // Damping with and without its optional longer calm, whichever the files happen to hold.
    let (_, with_damping) = all.iter().find(|(_, d)| d.thresholds.damping.is_some()).cloned().expect("a version with damping");
    let calm = with_damping.thresholds.recover_readings;
    for readings in [None, Some(calm + 1), Some(calm + 7)] {
        let mut d = with_damping.clone();
        d.thresholds.damping.as_mut().unwrap().suppressed_recover_readings = readings;
        all.push((format!("damping, suppressed_recover_readings {readings:?}"), d));
    }
    for (name, description) in all {
        let region = encode(&description).unwrap();
        assert_eq!(region.len(), REGION_LEN);
        assert_eq!(locate(&region), Some(0), "{name}");
        assert_eq!(decode(&region).as_ref(), Ok(&description), "{name}");
    }
}

#[test]
fn a_short_payload_trailing_bytes_a_bad_option_mark_or_a_bad_number_are_refused() {
    let (_, description) = descriptions().into_iter().find(|(_, d)| d.thresholds.damping.is_none()).unwrap();
    let payload = payload_of(&encode(&description).unwrap());
    let invalid = |payload: &[u8]| match decode(&region_with(payload)) {
        Err(DataError::Invalid(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    };
    for cut in [0, 3, 10, payload.len() / 2, payload.len() - 1] {
        assert!(invalid(&payload[..cut]).contains("ends early"), "cut at {cut}");
    }
    let mut longer = payload.clone();
    longer.push(0);
    assert!(invalid(&longer).contains("follow the last field"));
    // The last byte is damping's presence mark (0: none).
    let mut marked = payload.clone();
    *marked.last_mut().unwrap() = 2;
    assert!(invalid(&marked).contains("marked 2"));
    // cpu_pct.constrained (after the name and version) set to NaN: the numbers' own check.
    let mut nan = payload.clone();
    let at = 4 + description.name.len() + 4 + description.version.len();
    nan[at..at + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    assert!(invalid(&nan).contains("thresholds.cpu_pct"), "{}", invalid(&nan));
    // A name that is not UTF-8.
    let mut name = payload.clone();
    name[4] = 0xFF;
    assert!(invalid(&name).contains("UTF-8"));
}

#[test]
fn a_changed_byte_without_its_checksum_is_refused_and_a_longer_length_too() {
    let (_, description) = descriptions().remove(0);
    let region = encode(&description).unwrap();
    let mut damaged = region.clone();
    damaged[PAYLOAD_AT + 30] ^= 0x01;
    assert_eq!(decode(&damaged), Err(DataError::Checksum));
    let mut long = region.clone();
    long[MAGIC.len()..MAGIC.len() + 4].copy_from_slice(&(REGION_LEN as u32).to_le_bytes());
    assert!(matches!(decode(&long), Err(DataError::Length { .. })));
}
