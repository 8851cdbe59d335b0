//! The capacity policy: the decision, admission, baseline and pin rules of docs/behaviour.md
//! as pure Rust.
//!
//! The rule modules never name a binding type, so they build and test natively and the host
//! reuses them as its native modules. On `wasm32` the `export` layer converts the generated
//! bindings to these types and back and exports one world: `policy` (everything) or
//! `admission-only` (admission alone). Nothing here reads a clock, the environment or a random
//! source: time arrives as data.

pub mod admission;
pub mod assess;
pub mod baseline;
pub mod baseline_window;
pub mod damping;
pub mod decide;
pub mod factor_choice;
pub mod pin;
pub mod planner;
#[cfg(feature = "policy-data")]
pub mod policy_data;
pub mod replay;

/// The version of these rules (names the admission component).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The policy version this build carries, baked in by `build.rs` from `CAPACITY_POLICY`.
pub mod embedded {
    // FlapDamping: named only when the version has damping.
    #[allow(unused_imports, reason = "the generated policy names FlapDamping only when the version has damping")]
    use vocabulary::{Factors, FlapDamping, LevelThresholds, StateFactors, Thresholds};
    include!(concat!(env!("OUT_DIR"), "/embedded_policy.rs"));
}

// The generated ABI glue is the only unsafe code in the guest.
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code, reason = "the generated ABI glue is the guest's only unsafe code")]
mod export;
