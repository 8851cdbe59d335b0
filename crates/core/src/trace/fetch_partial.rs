//! A fetch written to a file goes first into `OUT.partial`, one whole request at a time, each
//! synced to disk, beside `OUT.partial.json`, which says what is being fetched (the source's
//! fingerprint and the window). The same command run again after a failure goes on after the
//! last step kept. A partial file of another fetch (another source, step or window: a window
//! given as a duration moves with the clock) is refused, saying the command that goes on with it
//! and what to remove to start over: nothing fetched is thrown away unasked. When the window is
//! done the partial file is renamed to `OUT`, so `OUT` is only ever a whole trace.

use super::fetch_window::Window;
use crate::instants::format_rfc3339;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use vocabulary::Instant;

/// Why the partial file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    /// A file operation failed, naming the file.
    #[error("{path}: {error} (check that the folder exists, is writable and has space)")]
    Io {
        /// The file: `OUT.partial`, `OUT.partial.json`, or `OUT` when the finished trace is
        /// renamed into place.
        path: String,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A link or a folder stands where the fetch keeps its own file.
    #[error("{path} is not a regular file (a link, or a folder): the fetch writes only files of its own; remove it and run again")]
    NotAFile {
        /// The name the fetch writes to: `OUT.partial` or `OUT.partial.json`.
        path: String,
    },
    /// The partial file holds something this fetch cannot go on with.
    #[error(
        "{partial} holds a stopped fetch this one cannot go on with: {why}. To go on with it, run the command with {again}; to \
         start over, remove {partial} and {record}"
    )]
    Another {
        /// The partial file, `OUT.partial`.
        partial: String,
        /// The record beside it, `OUT.partial.json`: removed with it to start over.
        record: String,
        /// Why this fetch cannot go on with it: another source or queries, another window or
        /// step, a record missing or unreadable, steps that do not match the window.
        why: String,
        /// The options that go on with it (`--since .. --until .. --step ..s`), or "the window
        /// it was started with" when its record cannot say.
        again: String,
    },
}

/// What `OUT.partial.json` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Fetching {
    source: String,
    from: String,
    until: String,
    step_seconds: u32,
}

/// The partial file being written.
#[derive(Debug)]
pub struct Partial {
    out: PathBuf,
    partial: PathBuf,
    state: PathBuf,
    file: File,
    /// The first step not yet written.
    pub next: Instant,
    /// Steps kept from an earlier run of the same fetch.
    pub kept: u64,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> PartialError + '_ {
    move |error| PartialError::Io { path: path.display().to_string(), error }
}

fn beside(out: &Path, suffix: &str) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

impl Partial {
    /// Opens the partial file of the fetch of `window` from the source with `fingerprint` into
    /// `out`: going on after what an earlier run of the same fetch kept, or starting afresh.
    pub fn open(out: &Path, window: &Window, fingerprint: &str) -> Result<Partial, PartialError> {
        let (partial, state) = (beside(out, ".partial"), beside(out, ".partial.json"));
        // Never through a link planted in the output folder: it could point anywhere.
        for path in [&partial, &state] {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if !meta.is_file() => return Err(PartialError::NotAFile { path: path.display().to_string() }),
                _ => {}
            }
        }
        let fetching = Fetching {
            source: fingerprint.to_string(),
            from: format_rfc3339(window.from),
            until: format_rfc3339(window.until),
            step_seconds: window.step,
        };
        match Partial::resume(&partial, &state, window, &fetching) {
            Ok(Some((file, next, kept))) => {
                tracing::info!(
                    kept,
                    from = %format_rfc3339(next),
                    "going on with the fetch kept in {} ({kept} steps were fetched before)",
                    partial.display()
                );
                return Ok(Partial { out: out.to_path_buf(), partial, state, file, next, kept });
            }
            Ok(None) => {}
            Err((why, recorded)) => {
                let again = recorded.map_or_else(
                    || "the window it was started with".to_string(),
                    |r| format!("--since {} --until {} --step {}s", r.from, r.until, r.step_seconds),
                );
                let (partial, record) = (partial.display().to_string(), state.display().to_string());
                return Err(PartialError::Another { partial, record, why, again });
            }
        }
        // Created new: a link put at either name after the look above fails the fetch.
        let file = OpenOptions::new().write(true).create_new(true).open(&partial).map_err(io(&partial))?;
        let text = serde_json::to_string_pretty(&fetching).unwrap_or_default();
        let mut record = OpenOptions::new().write(true).create_new(true).open(&state).map_err(io(&state))?;
        record.write_all(format!("{text}\n").as_bytes()).map_err(io(&state))?;
        Ok(Partial { out: out.to_path_buf(), partial, state, file, next: window.from, kept: 0 })
    }

    /// The earlier run's file, cut after its last whole line, and the step after that line;
    /// `None` when there is none; why it cannot be used otherwise, with what it records.
    #[allow(clippy::type_complexity, reason = "a private helper's two outcomes, each used once by its caller")]
    fn resume(
        partial: &Path,
        state: &Path,
        window: &Window,
        fetching: &Fetching,
    ) -> Result<Option<(File, Instant, u64)>, (String, Option<Fetching>)> {
        let Ok(recorded) = std::fs::read_to_string(state) else {
            return if partial.exists() { Err((format!("{} is missing", state.display()), None)) } else { Ok(None) };
        };
        let recorded: Fetching = serde_json::from_str(&recorded).map_err(|e| (format!("{} is unreadable ({e})", state.display()), None))?;
        if &recorded != fetching {
            let why = if recorded.source != fetching.source {
                format!("it was fetched from another source or with other queries ({})", recorded.source)
            } else {
                format!(
                    "it is of the window {} to {} every {}s, this one {} to {} every {}s",
                    recorded.from, recorded.until, recorded.step_seconds, fetching.from, fetching.until, fetching.step_seconds
                )
            };
            return Err((why, Some(recorded)));
        }
        let recorded = Some(recorded);
        let fail = |why: String| (why, recorded.clone());
        let text = std::fs::read(partial).map_err(|e| fail(format!("{}: {e}", partial.display())))?;
        let whole = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let kept = text[..whole].iter().filter(|b| **b == b'\n').count() as u64;
        let next = if whole == 0 {
            window.from
        } else {
            let last_start = text[..whole - 1].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let line = String::from_utf8_lossy(&text[last_start..whole]);
            let events = super::parse_trace("partial", &line).map_err(|e| fail(format!("its last whole line does not parse ({e})")))?;
            let at = events.events.first().map(|e| e.at()).ok_or_else(|| fail("its last whole line holds no step".into()))?;
            let on_grid = (at - window.from) % Instant::from(window.step) == 0;
            if at < window.from || at >= window.until || !on_grid || kept != ((at - window.from) / Instant::from(window.step) + 1) as u64 {
                return Err(fail(format!("its steps do not match the window (the last is at {})", format_rfc3339(at))));
            }
            at + Instant::from(window.step)
        };
        let file = OpenOptions::new().append(true).open(partial).map_err(|e| fail(format!("{}: {e}", partial.display())))?;
        file.set_len(whole as u64).map_err(|e| fail(format!("{}: {e}", partial.display())))?;
        Ok(Some((file, next, kept)))
    }

    /// Where the steps go until the fetch is done.
    pub fn path(&self) -> &Path {
        &self.partial
    }

    /// Appends the lines of one request, on disk before this returns; `next` is the step after.
    pub fn append(&mut self, lines: &str, next: Instant) -> Result<(), PartialError> {
        let mut file = &self.file;
        file.write_all(lines.as_bytes()).map_err(io(&self.partial))?;
        self.file.sync_data().map_err(io(&self.partial))?;
        self.next = next;
        Ok(())
    }

    /// The window is whole: the partial file becomes `OUT` and the record goes.
    pub fn finish(self) -> Result<(), PartialError> {
        self.file.sync_all().map_err(io(&self.partial))?;
        std::fs::rename(&self.partial, &self.out).map_err(io(&self.out))?;
        std::fs::remove_file(&self.state).map_err(io(&self.state))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Window = Window { from: 1_789_948_800, until: 1_789_948_800 + 600, step: 60 };

    fn line(at: Instant) -> String {
        format!("{{\"at\":\"{}\",\"reading\":{{\"cpu_pct\":50}}}}\n", format_rfc3339(at))
    }

    #[test]
    fn a_torn_last_line_is_cut_and_the_fetch_goes_on_after_the_last_whole_one() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("history.jsonl");
        let mut partial = Partial::open(&out, &WINDOW, "source A").unwrap();
        assert_eq!((partial.next, partial.kept), (WINDOW.from, 0));
        partial.append(&(line(WINDOW.from) + &line(WINDOW.from + 60)), WINDOW.from + 120).unwrap();
        drop(partial);
        // A crash in the middle of the next write.
        let torn = dir.path().join("history.jsonl.partial");
        std::fs::write(&torn, std::fs::read_to_string(&torn).unwrap() + "{\"at\":\"2026-09-21T00:0").unwrap();

        let mut partial = Partial::open(&out, &WINDOW, "source A").unwrap();
        assert_eq!((partial.next, partial.kept), (WINDOW.from + 120, 2));
        let rest: String = (2..10).map(|i| line(WINDOW.from + i * 60)).collect();
        partial.append(&rest, WINDOW.until).unwrap();
        partial.finish().unwrap();
        let whole: String = (0..10).map(|i| line(WINDOW.from + i * 60)).collect();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);
        assert!(!torn.exists() && !dir.path().join("history.jsonl.partial.json").exists());
    }

    #[test]
    fn a_partial_file_of_another_fetch_or_without_its_record_is_refused_saying_how_to_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("history.jsonl");
        let mut partial = Partial::open(&out, &WINDOW, "source A").unwrap();
        partial.append(&line(WINDOW.from), WINDOW.from + 60).unwrap();
        drop(partial);
        let kept = std::fs::read(dir.path().join("history.jsonl.partial")).unwrap();
        let moved = Window { from: WINDOW.from + 60, until: WINDOW.until + 60, ..WINDOW };
        let err = Partial::open(&out, &moved, "source A").unwrap_err().to_string();
        assert!(err.contains("it is of the window 2026-09-21T00:00:00Z to 2026-09-21T00:10:00Z every 60s"), "{err}");
        assert!(err.contains("run the command with --since 2026-09-21T00:00:00Z --until 2026-09-21T00:10:00Z --step 60s"), "{err}");
        assert!(err.contains("to start over, remove"), "{err}");
        let err = Partial::open(&out, &WINDOW, "source B").unwrap_err().to_string();
        assert!(err.contains("fetched from another source or with other queries (source A)"), "{err}");
        assert_eq!(std::fs::read(dir.path().join("history.jsonl.partial")).unwrap(), kept, "nothing kept is thrown away");
        // Steps that do not fall on the window's grid, or a partial file without its record.
        std::fs::write(dir.path().join("history.jsonl.partial"), line(WINDOW.from + 30)).unwrap();
        assert!(Partial::open(&out, &WINDOW, "source A").unwrap_err().to_string().contains("do not match the window"));
        std::fs::remove_file(dir.path().join("history.jsonl.partial.json")).unwrap();
        let err = Partial::open(&out, &WINDOW, "source A").unwrap_err().to_string();
        assert!(err.contains("history.jsonl.partial.json is missing") && err.contains("the window it was started with"), "{err}");
        // Nothing there: a fresh start.
        std::fs::remove_file(dir.path().join("history.jsonl.partial")).unwrap();
        assert_eq!(Partial::open(&out, &WINDOW, "source A").unwrap().kept, 0);
    }

    #[cfg(unix)]
    #[test]
    fn links_planted_at_the_partial_names_are_refused_and_nothing_is_created_at_their_targets() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("history.jsonl");
        for (name, target) in [("history.jsonl.partial", "victim-a"), ("history.jsonl.partial.json", "victim-b")] {
            std::os::unix::fs::symlink(dir.path().join(target), dir.path().join(name)).unwrap();
            let err = Partial::open(&out, &WINDOW, "source A").unwrap_err().to_string();
            assert!(err.contains(name) && err.contains("is not a regular file"), "{err}");
            assert!(!dir.path().join(target).exists(), "nothing was created at the link's target");
            std::fs::remove_file(dir.path().join(name)).unwrap();
        }
        // A link to a file that exists is refused the same way, and that file is left as it was.
        std::fs::write(dir.path().join("victim-a"), "the victim's own lines\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("victim-a"), dir.path().join("history.jsonl.partial")).unwrap();
        assert!(Partial::open(&out, &WINDOW, "source A").is_err());
        assert_eq!(std::fs::read_to_string(dir.path().join("victim-a")).unwrap(), "the victim's own lines\n");
    }
}
