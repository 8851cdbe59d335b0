//! The replay's progress bar on stderr: drawn for a long run when asked and stderr is a
//! terminal, hidden otherwise.

use indicatif::{ProgressBar, ProgressStyle};

/// What a bar counts.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Ticks of traces in memory (drawn from 100,000).
    Ticks,
    /// Bytes of files streamed (drawn from 16 MB).
    Bytes,
}

pub fn bar(wanted: bool, total: u64, unit: Unit) -> ProgressBar {
    let (least, template) = match unit {
        Unit::Ticks => (100_000, "replay [{bar:30}] {human_pos}/{human_len} ticks, {elapsed} (eta {eta})"),
        Unit::Bytes => (16 << 20, "replay [{bar:30}] {bytes}/{total_bytes}, {elapsed} (eta {eta})"),
    };
    if !wanted || total < least || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
