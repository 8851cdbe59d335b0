//! `sentinel`: the capacity sentinel's command line. Parsing and dispatch live in `cli`; this
//! file only sets up logging and turns an error into a message and an exit code.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = capacity_sentinel::cli::Cli::parse();
    capacity_sentinel::cli::init_logging(&cli);
    match capacity_sentinel::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
