//! Reading the traces of a batch once, across cores: the files side by side, and a large file
//! in line-aligned chunks parsed in parallel (a year of minutes is 60 MB of JSON, most of a
//! second on one core). The result is exactly [`read_trace`]'s: same events, and on any
//! problem (a bad line, or time going back across two chunks) the whole file is parsed again
//! in order, so the error names the same first line and field.

use crate::trace::{Trace, TraceError, TraceEvent, parse_trace, read_trace};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Files smaller than this are parsed in one piece.
const CHUNKED_FROM: usize = 4 << 20;

/// Reads and parses every file; the first failing file (in the order given) is the error.
pub fn read_traces(paths: &[PathBuf]) -> Result<Vec<Trace>, TraceError> {
    let parsed: Vec<Result<Trace, TraceError>> = paths.par_iter().map(|p| read_chunked(p)).collect();
    parsed.into_iter().collect()
}

/// [`read_trace`], with a large file parsed in chunks.
pub fn read_chunked(path: &Path) -> Result<Trace, TraceError> {
    let file = path.display().to_string();
    let size = std::fs::metadata(path).map(|m| m.len() as usize).unwrap_or(0);
    if size < CHUNKED_FROM {
        return read_trace(path);
    }
    let text = crate::trace::read_text(path, &file)?;
    let name = path.file_stem().map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
    let mut trace = parse_chunked(&file, &text)?;
    trace.name = name;
    Ok(trace)
}

/// Parses `text` in chunks across the pool; errors name `file`.
pub fn parse_chunked(file: &str, text: &str) -> Result<Trace, TraceError> {
    let chunks = split_lines(text, rayon::current_num_threads() * 4);
    let parsed: Vec<Result<Trace, TraceError>> = chunks.par_iter().map(|chunk| parse_trace(file, chunk)).collect();
    let mut events: Vec<TraceEvent> = Vec::with_capacity(parsed.iter().map(|p| p.as_ref().map_or(0, |t| t.events.len())).sum());
    for part in parsed {
        let Ok(part) = part else { return parse_trace(file, text) };
        if let (Some(last), Some(first)) = (events.last(), part.events.first())
            && first.at() < last.at()
        {
            return parse_trace(file, text);
        }
        events.extend(part.events);
    }
    Ok(Trace { name: file.to_string(), events })
}

/// About `n` pieces of `text`, each ending at a line end (the last at the text's end).
fn split_lines(text: &str, n: usize) -> Vec<&str> {
    let target = text.len().div_ceil(n.max(1)).max(1);
    let mut out = Vec::with_capacity(n);
    let mut rest = text;
    while !rest.is_empty() {
        let cut = match rest.get(target..).and_then(|tail| tail.find('\n')) {
            Some(i) => target + i + 1,
            None => rest.len(),
        };
        let (head, tail) = rest.split_at(cut);
        out.push(head);
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(minute: u32, cpu: u32) -> String {
        format!("{{\"at\":\"2026-10-20T{:02}:{:02}:00Z\",\"reading\":{{\"cpu_pct\":{cpu}}}}}\n", minute / 60, minute % 60)
    }

    #[test]
    fn chunks_end_at_line_ends_and_cover_the_text() {
        let text: String = (0..100).map(|m| line(m, 40)).collect();
        for n in [1, 2, 3, 7, 100, 1000] {
            let chunks = split_lines(&text, n);
            assert_eq!(chunks.concat(), text);
            assert!(chunks.iter().all(|c| c.ends_with('\n')), "n = {n}");
        }
    }

    #[test]
    fn chunked_parse_gives_the_same_events_and_the_same_first_error() {
        let mut text: String = (0..500).map(|m| line(m, m % 100)).collect();
        assert_eq!(parse_chunked("t.jsonl", &text).unwrap().events, parse_trace("t.jsonl", &text).unwrap().events);
        // Time going back near a chunk boundary, and a bad field further on.
        let boundary = split_lines(&text, rayon::current_num_threads() * 4)[0].len();
        text.insert_str(boundary, &line(0, 50));
        text.push_str("{\"at\":\"2026-10-20T23:59:00Z\",\"reading\":{\"cpu_pct\":\"high\"}}\n");
        let chunked = parse_chunked("t.jsonl", &text).unwrap_err().to_string();
        assert_eq!(chunked, parse_trace("t.jsonl", &text).unwrap_err().to_string());
        assert!(chunked.contains("goes backwards"), "{chunked}");
    }
}
