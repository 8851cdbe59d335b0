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
            // Each cause once: a typed error that names its cause in its own text would
            // otherwise be followed by that cause again.
            let err: &(dyn std::error::Error + 'static) = e.as_ref();
            eprintln!("error: {}", sentinel_core::error_chain::chain(err));
            ExitCode::from(2)
        }
    }
}
