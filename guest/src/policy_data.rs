//! A policy version's numbers as data: the region of a template component that `sentinel policy
//! build` rewrites, so that a version is built from its `policy.toml` without a compiler
//! (docs/behaviour.md §11.11).
//!
//! The region is [`REGION_LEN`] bytes at a fixed place in the component's data: [`MAGIC`], the
//! payload's length (u32, little-endian), the payload's SHA-256, the payload, then spaces to the
//! end. Rewriting it changes no offset, so the component stays the same component with other
//! numbers. The component verifies the checksum and every number (the same `check` as `cargo
//! policies`) before its first answer, and traps when either fails: a damaged region never
//! decides.
//!
//! The payload is the version's `PolicyDescription` as fixed-width little-endian fields in the
//! order the types declare them (see [`encode`]): the component reads numbers, it parses nothing
//! (the JSON of the first templates made the template 2.5 times the size of a built version).
//! Every field is written and read by destructuring its type whole, so a field added to the
//! vocabulary does not compile here until it has its place.
//!
//! This file is also compiled into `build.rs` (which writes the template's first region), so it
//! names nothing of the crate but the vocabulary.

use sha2::{Digest, Sha256};
use vocabulary::{Factors, FlapDamping, LevelThresholds, PolicyDescription, StateFactors, Thresholds};

/// The region's size in the component.
pub const REGION_LEN: usize = 4096;

/// What the region starts with, where `policy build` finds it. The component itself never
/// compares it (that would put a second copy in its data): it checks the checksum.
/// Version 2: the fixed-width payload (version 1, of the first templates, held JSON).
pub const MAGIC: &[u8; 24] = b"capacity-policy-data/v2\n";

const LENGTH_AT: usize = MAGIC.len();
const CHECKSUM_AT: usize = LENGTH_AT + 4;
const PAYLOAD_AT: usize = CHECKSUM_AT + 32;

/// The most payload a region holds.
pub const MAX_PAYLOAD: usize = REGION_LEN - PAYLOAD_AT;

/// Why a region cannot be written or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataError {
    /// The description is longer than a region holds (its name and version are the only
    /// fields of varying length).
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
                write!(f, "the policy's name, version and numbers take {bytes} bytes, more than the {MAX_PAYLOAD} a template holds")
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
    let payload = payload_of(description);
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
    let description = description_of(payload)?;
    description.check().map_err(DataError::Invalid)?;
    Ok(description)
}

/// Where the one region of `component` starts; none when it has no region or more than one.
pub fn locate(component: &[u8]) -> Option<usize> {
    let mut found = component.windows(MAGIC.len()).enumerate().filter(|(_, w)| w == MAGIC).map(|(at, _)| at);
    let first = found.next()?;
    (found.next().is_none() && first + REGION_LEN <= component.len()).then_some(first)
}

/// The payload: every field of `d` in declaration order; a string as its length (u32) and UTF-8
/// bytes, an `f64` and a `u32` as 8 and 4 little-endian bytes, an `Option` as 0 (none) or 1
/// followed by the value.
fn payload_of(d: &PolicyDescription) -> Vec<u8> {
    let mut w = Vec::with_capacity(512);
    let text = |w: &mut Vec<u8>, s: &str| {
        w.extend_from_slice(&(s.len() as u32).to_le_bytes());
        w.extend_from_slice(s.as_bytes());
    };
    let number = |w: &mut Vec<u8>, v: f64| w.extend_from_slice(&v.to_le_bytes());
    let count = |w: &mut Vec<u8>, v: u32| w.extend_from_slice(&v.to_le_bytes());
    let PolicyDescription { name, version, thresholds } = d;
    text(&mut w, name);
    text(&mut w, version);
    let Thresholds {
        cpu_pct,
        connections_pct,
        latency_ratio,
        spacing_s,
        escalate_readings,
        recover_readings,
        emergency_after_s,
        throttle_after_s,
        restore_hold_max_s,
        max_gap_s,
        release_after_failed_reads,
        baseline_min_samples,
        pin_max_ahead_s,
        pin_reason_max_chars,
        factors,
        damping,
    } = thresholds;
    for LevelThresholds { constrained, critical, resolve_band } in [cpu_pct, connections_pct, latency_ratio] {
        for v in [constrained, critical, resolve_band] {
            number(&mut w, *v);
        }
    }
    for v in [
        spacing_s,
        escalate_readings,
        recover_readings,
        emergency_after_s,
        throttle_after_s,
        restore_hold_max_s,
        max_gap_s,
        release_after_failed_reads,
        baseline_min_samples,
        pin_max_ahead_s,
        pin_reason_max_chars,
    ] {
        count(&mut w, *v);
    }
    let StateFactors { normal, constrained, critical, emergency } = factors;
    for Factors { bulk, heavy, write, read } in [normal, constrained, critical, emergency] {
        for v in [bulk, heavy, write, read] {
            number(&mut w, *v);
        }
    }
    match damping {
        None => w.push(0),
        Some(FlapDamping {
            penalty_per_flap,
            flap_window_s,
            half_life_s,
            suppress_limit,
            reuse_limit,
            max_penalty,
            suppressed_recover_readings,
        }) => {
            w.push(1);
            number(&mut w, *penalty_per_flap);
            count(&mut w, *flap_window_s);
            count(&mut w, *half_life_s);
            for v in [suppress_limit, reuse_limit, max_penalty] {
                number(&mut w, *v);
            }
            match suppressed_recover_readings {
                None => w.push(0),
                Some(n) => {
                    w.push(1);
                    count(&mut w, *n);
                }
            }
        }
    }
    w
}

/// Reads [`payload_of`]'s fields back, in the same order.
struct Fields<'a> {
    bytes: &'a [u8],
}

impl<'a> Fields<'a> {
    fn slice(&mut self, len: usize) -> Result<&'a [u8], DataError> {
        let (head, rest) = self.bytes.split_at_checked(len).ok_or_else(|| DataError::Invalid("the payload ends early".into()))?;
        self.bytes = rest;
        Ok(head)
    }
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DataError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.slice(N)?);
        Ok(out)
    }
    fn number(&mut self) -> Result<f64, DataError> {
        self.take::<8>().map(f64::from_le_bytes)
    }
    fn count(&mut self) -> Result<u32, DataError> {
        self.take::<4>().map(u32::from_le_bytes)
    }
    fn present(&mut self) -> Result<bool, DataError> {
        match self.take::<1>()? {
            [0] => Ok(false),
            [1] => Ok(true),
            [other] => Err(DataError::Invalid(format!("an optional value is marked {other}, not 0 or 1"))),
        }
    }
    fn text(&mut self) -> Result<String, DataError> {
        let len = self.count()? as usize;
        String::from_utf8(self.slice(len)?.to_vec()).map_err(|_| DataError::Invalid("a name is not UTF-8".into()))
    }
    fn level(&mut self) -> Result<LevelThresholds, DataError> {
        Ok(LevelThresholds { constrained: self.number()?, critical: self.number()?, resolve_band: self.number()? })
    }
    fn factors(&mut self) -> Result<Factors, DataError> {
        Ok(Factors { bulk: self.number()?, heavy: self.number()?, write: self.number()?, read: self.number()? })
    }
}

fn description_of(payload: &[u8]) -> Result<PolicyDescription, DataError> {
    let mut f = Fields { bytes: payload };
    let name = f.text()?;
    let version = f.text()?;
    let thresholds = Thresholds {
        cpu_pct: f.level()?,
        connections_pct: f.level()?,
        latency_ratio: f.level()?,
        spacing_s: f.count()?,
        escalate_readings: f.count()?,
        recover_readings: f.count()?,
        emergency_after_s: f.count()?,
        throttle_after_s: f.count()?,
        restore_hold_max_s: f.count()?,
        max_gap_s: f.count()?,
        release_after_failed_reads: f.count()?,
        baseline_min_samples: f.count()?,
        pin_max_ahead_s: f.count()?,
        pin_reason_max_chars: f.count()?,
        factors: StateFactors { normal: f.factors()?, constrained: f.factors()?, critical: f.factors()?, emergency: f.factors()? },
        damping: if f.present()? {
            Some(FlapDamping {
                penalty_per_flap: f.number()?,
                flap_window_s: f.count()?,
                half_life_s: f.count()?,
                suppress_limit: f.number()?,
                reuse_limit: f.number()?,
                max_penalty: f.number()?,
                suppressed_recover_readings: if f.present()? { Some(f.count()?) } else { None },
            })
        } else {
            None
        },
    };
    if !f.bytes.is_empty() {
        return Err(DataError::Invalid(format!("{} bytes follow the last field", f.bytes.len())));
    }
    Ok(PolicyDescription { name, version, thresholds })
}
