//! A policy version's numbers as data: the region of a template component that `sentinel policy
//! build` rewrites, so that a version is built from its `policy.toml` without a compiler
//! (docs/behaviour.md §11.11).
//!
//! The region is [`REGION_LEN`] bytes at a fixed place in the component's data: [`MAGIC`], the
//! payload's length (u32, little-endian), the payload's SHA-256, the payload (the version's
//! `PolicyDescription` as JSON), then spaces to the end. Rewriting it changes no offset, so the
//! component stays the same component with other numbers. The component verifies the checksum
//! and every number (the same `check` as `cargo policies`) before its first answer, and traps
//! when either fails: a damaged region never decides.
//!
//! This file is also compiled into `build.rs` (which writes the template's first region), so it
//! names nothing of the crate but the vocabulary.

use sha2::{Digest, Sha256};
use vocabulary::PolicyDescription;

/// The region's size in the component.
pub const REGION_LEN: usize = 4096;

/// What the region starts with, where `policy build` finds it. The component itself never
/// compares it (that would put a second copy in its data): it checks the checksum.
pub const MAGIC: &[u8; 24] = b"capacity-policy-data/v1\n";

const LENGTH_AT: usize = MAGIC.len();
const CHECKSUM_AT: usize = LENGTH_AT + 4;
const PAYLOAD_AT: usize = CHECKSUM_AT + 32;

/// The most payload a region holds.
pub const MAX_PAYLOAD: usize = REGION_LEN - PAYLOAD_AT;

/// Why a region cannot be written or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataError {
    /// The description's JSON is longer than a region holds.
    TooLarge { bytes: usize },
    /// The length field points past the region.
    Length { bytes: usize },
    /// The payload is not what its checksum says: the region was damaged.
    Checksum,
    /// The payload is not a policy description, or one of its numbers is refused.
    Invalid(String),
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataError::TooLarge { bytes } => {
                write!(f, "the policy's numbers take {bytes} bytes as JSON, more than the {MAX_PAYLOAD} a template holds")
            }
            DataError::Length { bytes } => write!(f, "the policy data says it is {bytes} bytes, more than its region holds"),
            DataError::Checksum => write!(f, "the policy data does not match its SHA-256: the component was damaged"),
            DataError::Invalid(why) => write!(f, "the policy data is refused: {why}"),
        }
    }
}

impl std::error::Error for DataError {}

/// The region holding `description` (checked first, as `cargo policies` checks a file).
pub fn encode(description: &PolicyDescription) -> Result<Vec<u8>, DataError> {
    description.check().map_err(DataError::Invalid)?;
    let payload = serde_json::to_vec(description).map_err(|e| DataError::Invalid(e.to_string()))?;
    if payload.len() > MAX_PAYLOAD {
        return Err(DataError::TooLarge { bytes: payload.len() });
    }
    let mut region = vec![b' '; REGION_LEN];
    region[..LENGTH_AT].copy_from_slice(MAGIC);
    region[LENGTH_AT..CHECKSUM_AT].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    region[CHECKSUM_AT..PAYLOAD_AT].copy_from_slice(&Sha256::digest(&payload));
    region[PAYLOAD_AT..PAYLOAD_AT + payload.len()].copy_from_slice(&payload);
    Ok(region)
}

/// The description a region holds, its checksum and every number verified.
pub fn decode(region: &[u8]) -> Result<PolicyDescription, DataError> {
    let header = region.get(..PAYLOAD_AT).ok_or(DataError::Length { bytes: region.len() })?;
    let mut length = [0u8; 4];
    length.copy_from_slice(&header[LENGTH_AT..CHECKSUM_AT]);
    let bytes = u32::from_le_bytes(length) as usize;
    if bytes > MAX_PAYLOAD {
        return Err(DataError::Length { bytes });
    }
    let payload = region.get(PAYLOAD_AT..PAYLOAD_AT + bytes).ok_or(DataError::Length { bytes })?;
    if Sha256::digest(payload).as_slice() != &header[CHECKSUM_AT..PAYLOAD_AT] {
        return Err(DataError::Checksum);
    }
    let description: PolicyDescription = serde_json::from_slice(payload).map_err(|e| DataError::Invalid(e.to_string()))?;
    description.check().map_err(DataError::Invalid)?;
    Ok(description)
}

/// Where the one region of `component` starts; none when it has no region or more than one.
pub fn locate(component: &[u8]) -> Option<usize> {
    let mut found = component.windows(MAGIC.len()).enumerate().filter(|(_, w)| w == MAGIC).map(|(at, _)| at);
    let first = found.next()?;
    (found.next().is_none() && first + REGION_LEN <= component.len()).then_some(first)
}
