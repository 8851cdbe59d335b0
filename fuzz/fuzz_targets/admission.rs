#![no_main]
//! Arbitrary admission requests through the 1.0.0 and 2.0.0 rules (with `--features host`, their components too).
use fuzz_checks::{inputs::AdmissionInput, run};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: run::self_check_admission(), |input: AdmissionInput| run::admission(&input.0));
