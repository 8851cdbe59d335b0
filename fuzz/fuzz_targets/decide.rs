#![no_main]
//! Arbitrary decision inputs through the 1.0.0 and 2.0.0 rules (with `--features host`, their components too).
use fuzz_checks::{inputs::DecideInput, run};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: run::self_check_decide(), |input: DecideInput| run::decide(&input.0));
