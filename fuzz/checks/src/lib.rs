//! What the fuzz targets check. Each target under `fuzz/fuzz_targets/` is a few lines: build an
//! input, run it, and panic with [`fail`] when a check reports anything, which libFuzzer
//! records as a crash with the input that caused it. The workspace's tests replay the committed
//! seeds and any corpus through the same functions (`tests/tests/fuzz_seeds.rs`).
//!
//! - [`policies`]: the 1.0.0 and 2.0.0 rules' native code, and with the `host` feature the
//!   built components beside them (long-lived instances, loaded as the host loads them), opened
//!   once per process.
//! - [`diff`]: a NaN-aware, field-by-field comparison of any two values of a generated type.
//! - [`inputs`]: vocabulary values (`vocabulary`) from fuzzer bytes, biased toward the
//!   boundaries the rules care about, with the conformance vectors as starting points.
//! - [`check`]: what must hold of each output, stated from docs/behaviour.md §3 to §5, §9 and §10
//!   and computed independently of the guest's code.

pub mod check;
pub mod diff;
pub mod inputs;
pub mod policies;
pub mod run;

use std::fmt::Debug;

/// Panics (a libFuzzer crash) when `problems` is not empty, naming the target, each problem
/// and the input.
pub fn fail(target: &str, input: &dyn Debug, problems: &[String]) {
    if !problems.is_empty() {
        const SHOWN: usize = 4000;
        let mut input = format!("{input:#?}");
        if let Some((cut, _)) = input.char_indices().nth(SHOWN) {
            let rest = input[cut..].chars().count();
            input = format!("{}... ({rest} more characters: the crash file holds the whole input)", &input[..cut]);
        }
        panic!("{target}: {} problem(s):\n  - {}\ninput: {input}", problems.len(), problems.join("\n  - "));
    }
}
