//! `sentinel completions SHELL` and `sentinel man`: shell completions and the man page,
//! generated from the same clap definition the binary parses (clap_complete, clap_mangen), so
//! they never disagree with it. README, "Shell completions and the man page".

use anyhow::Context;
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    let mut command = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "sentinel", &mut script);
    print(&script)
}

/// Prints the man page (roff) of `sentinel`, or with `out_dir` writes it and one page per
/// command (`sentinel-policy-tune.1`, ...) there, the pages the first one refers to.
pub fn man(out_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    // `sentinel help COMMAND` stays a command; in the pages it would be one without a page.
    let command = super::Cli::command().disable_help_subcommand(true);
    let Some(dir) = out_dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        return print(&page);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}: choose a folder you can write", dir.display()))?;
    clap_mangen::generate_to(command, dir).with_context(|| format!("writing the man pages into {}", dir.display()))?;
    tracing::info!("man pages written to {} (read one with `man -l {}/sentinel.1`)", dir.display(), dir.display());
    Ok(ExitCode::SUCCESS)
}

fn print(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}
