//! Writes the benchmarks' generated year of minute ticks (`capacity_tests::year`) as a trace
//! file, to reproduce BENCHMARKS.md's replay rows by hand:
//!
//!     cargo run --release -p capacity-tests --example year_trace -- target/tmp/year.jsonl

use capacity_tests::year::{YEAR, synthetic, text};

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: year_trace OUT.jsonl   (writes {YEAR} minute ticks)");
        return std::process::ExitCode::from(2);
    };
    if let Err(e) = std::fs::write(&path, text(&synthetic(YEAR, true))) {
        eprintln!("cannot write {}: {e}", std::path::Path::new(&path).display());
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
