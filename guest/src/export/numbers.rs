//! The numbers this component decides by: baked in as constants by `cargo policies`, or, in the
//! template `sentinel policy build` rewrites (feature `policy-data`), read from its policy data
//! region once, before the first answer, checksum and every number verified.

use vocabulary::Thresholds;

#[cfg(not(feature = "policy-data"))]
pub(super) fn thresholds() -> &'static Thresholds {
    &crate::embedded::THRESHOLDS
}

/// The version's name and number.
#[cfg(not(feature = "policy-data"))]
pub(super) fn identity() -> (&'static str, &'static str) {
    (crate::embedded::NAME, crate::embedded::VERSION)
}

#[cfg(feature = "policy-data")]
pub(super) fn thresholds() -> &'static Thresholds {
    &data::description().thresholds
}

#[cfg(feature = "policy-data")]
pub(super) fn identity() -> (&'static str, &'static str) {
    let d = data::description();
    (&d.name, &d.version)
}

#[cfg(feature = "policy-data")]
mod data {
    use crate::policy_data::{REGION_LEN, decode};
    use std::sync::OnceLock;
    use vocabulary::PolicyDescription;

    /// The region `sentinel policy build` rewrites: the numbers of the file it was built from.
    #[used]
    static POLICY_DATA: [u8; REGION_LEN] = crate::embedded::POLICY_DATA;

    pub(super) fn description() -> &'static PolicyDescription {
        static PARSED: OnceLock<PolicyDescription> = OnceLock::new();
        PARSED.get_or_init(|| {
            // Read as the file holds it, never as compiled: the compiler must not fold the
            // template's first numbers into the code. The region's address is read volatile,
            // so the optimiser cannot know which bytes it points to (a volatile read of the
            // array itself was compiled as 4,096 single-byte copies: 86 KB of code).
            #[allow(unsafe_code, reason = "the one read of the template's policy data region, argued below")]
            // SAFETY: the address read is that of POLICY_DATA, an initialized static that is
            // never written: the reference is valid and shared for the program's life.
            let region: &[u8; REGION_LEN] = unsafe { &*core::ptr::read_volatile(&(&raw const POLICY_DATA)) };
            // A damaged region traps here: the host refuses a component whose first call traps.
            decode(region).unwrap_or_else(|e| panic!("{e}"))
        })
    }
}
