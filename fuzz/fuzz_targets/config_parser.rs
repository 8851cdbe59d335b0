#![no_main]
//! Arbitrary text into the config loader (invalid UTF-8 as its lossy reading).
use fuzz_checks::run;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| run::config(&String::from_utf8_lossy(data)));
