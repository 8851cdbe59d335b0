#![no_main]
//! Arbitrary text into the trace parser (invalid UTF-8 as its lossy reading).
use fuzz_checks::run;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| run::trace(&String::from_utf8_lossy(data)));
