#![no_main]
//! Arbitrary plan requests through the 1.0.0 and 2.0.0 rules (with `--features host`, their components too).
use fuzz_checks::{inputs::PlanInput, run};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: run::self_check_planner(), |input: PlanInput| run::planner(&input.0));
