//! Deliberate faults for the host's lifecycle tests, compiled in only by the test-only
//! `fault-*` features (the builder enables them for fixtures under `tests/policies/` alone).
//! Without those features this is a no-op the optimiser removes.

#[allow(unused_variables, reason = "the input is read by the fault-* features only")]
pub fn before_decide(input: &vocabulary::DecisionInput) {
    #[cfg(feature = "fault-loop")]
    {
        let mut n: u64 = 0;
        loop {
            n = core::hint::black_box(n.wrapping_add(1));
        }
    }
    #[cfg(feature = "fault-oom")]
    {
        let mut hoard: Vec<Vec<u8>> = Vec::new();
        loop {
            hoard.push(core::hint::black_box(vec![1u8; 1 << 20]));
        }
    }
    // Traps on a reading with latency for an API named `trap`: an input no conformance
    // vector has, so the version passes activation and fails during a tick.
    #[cfg(feature = "fault-trap-on-api-trap")]
    if let vocabulary::Signal::Reading(r) = &input.signal
        && r.latency.iter().any(|l| l.api == "trap")
    {
        core::arch::wasm32::unreachable();
    }
}
