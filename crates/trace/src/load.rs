//! Reading the traces of a batch once, across cores: the files side by side, and a large file
//! in line-aligned chunks parsed in parallel (a year of minutes is 60 MB of JSON, most of a
//! second on one core). The result is exactly [`read_trace`]'s: same events, and on any
//! problem (a bad line, or time going back across two chunks) the whole file is parsed again
//! in order, so the error names the same first line and field.
//!
//! [`Blocks`] reads a file a block at a time instead (the streaming replay): each block's lines
//! parsed in parallel the same way, its errors naming the line in the whole file.

use crate::{Trace, TraceError, TraceEvent, parse_block, parse_trace, read_trace, utf8_text};
use rayon::prelude::*;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use vocabulary::Instant;

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
    let text = crate::read_text(path, &file)?;
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

/// Bytes of a file read at a time by [`Blocks`] (then up to the end of the line).
const BLOCK_BYTES: u64 = 4 << 20;

/// A trace file read and parsed a block of lines at a time.
pub struct Blocks {
    file: String,
    reader: BufReader<std::fs::File>,
    /// The number of the next block's first line.
    line: usize,
    /// The time of the last event read.
    previous: Option<Instant>,
    block_bytes: u64,
}

impl Blocks {
    pub fn open(path: &Path) -> Result<Blocks, TraceError> {
        Blocks::with_block_size(path, BLOCK_BYTES)
    }

    /// Blocks of about `block_bytes` (the tests cut small ones).
    pub fn with_block_size(path: &Path, block_bytes: u64) -> Result<Blocks, TraceError> {
        let file = path.display().to_string();
        let opened = std::fs::File::open(path).map_err(|error| TraceError::Io { file: file.clone(), error })?;
        Ok(Blocks { file, reader: BufReader::with_capacity(1 << 20, opened), line: 1, previous: None, block_bytes: block_bytes.max(1) })
    }

    /// The next block's events (none once the file is read); the bytes it took.
    pub fn next_block(&mut self) -> Result<Option<(Vec<TraceEvent>, usize)>, TraceError> {
        let io = |error| TraceError::Io { file: self.file.clone(), error };
        let mut bytes = Vec::with_capacity(self.block_bytes as usize + 4096);
        (&mut self.reader).take(self.block_bytes).read_to_end(&mut bytes).map_err(io)?;
        if bytes.is_empty() {
            return Ok(None);
        }
        if bytes.last() != Some(&b'\n') {
            self.reader.read_until(b'\n', &mut bytes).map_err(|error| TraceError::Io { file: self.file.clone(), error })?;
        }
        let size = bytes.len();
        let text = utf8_text(bytes, &self.file, self.line)?;
        let events = self.parse(&text)?;
        self.line += lines_in(&text);
        if let Some(last) = events.last() {
            self.previous = Some(last.at());
        }
        Ok(Some((events, size)))
    }

    /// The block's lines in pieces across the pool; on any problem the block again in order, so
    /// that the error is the first one.
    fn parse(&self, text: &str) -> Result<Vec<TraceEvent>, TraceError> {
        let pieces = split_lines(text, rayon::current_num_threads() * 2);
        let mut first_lines = Vec::with_capacity(pieces.len());
        let mut line = self.line;
        for piece in &pieces {
            first_lines.push(line);
            line += lines_in(piece);
        }
        let parsed: Vec<Result<Vec<TraceEvent>, TraceError>> =
            pieces.par_iter().zip(&first_lines).map(|(piece, first)| parse_block(&self.file, piece, *first, None)).collect();
        let mut events: Vec<TraceEvent> = Vec::with_capacity(parsed.iter().map(|p| p.as_ref().map_or(0, Vec::len)).sum());
        let mut previous = self.previous;
        for part in parsed {
            let Ok(part) = part else { return parse_block(&self.file, text, self.line, self.previous) };
            if let (Some(last), Some(first)) = (previous, part.first())
                && first.at() < last
            {
                return parse_block(&self.file, text, self.line, self.previous);
            }
            previous = part.last().map(TraceEvent::at).or(previous);
            events.extend(part);
        }
        Ok(events)
    }
}

/// The line ends in `text` (memchr's vector search: a byte-by-byte count was a tenth of a
/// year's replay).
fn lines_in(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
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

    fn all_blocks(path: &Path, block_bytes: u64) -> Result<Vec<TraceEvent>, TraceError> {
        let mut blocks = Blocks::with_block_size(path, block_bytes)?;
        let mut events = Vec::new();
        while let Some((block, _)) = blocks.next_block()? {
            events.extend(block);
        }
        Ok(events)
    }

    #[test]
    fn blocks_give_the_whole_files_events_and_its_first_error_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let good: String = (0..400).map(|m| line(m, m % 100)).collect();
        std::fs::write(&path, &good).unwrap();
        for size in [1, 57, 1000, 1 << 20] {
            assert_eq!(all_blocks(&path, size).unwrap(), read_trace(&path).unwrap().events, "blocks of {size} bytes");
        }
        // A bad field deep in the file, time going back across a block boundary, bytes that are
        // not UTF-8: each named by its line in the whole file, as reading it whole names it.
        let mut bad_field = good.clone();
        bad_field.insert_str(good.len() - 3 * line(0, 1).len(), "{\"at\":\"2026-10-20T06:40:30Z\",\"reading\":{\"cpu_pct\":\"high\"}}\n");
        let mut backwards = good.clone();
        backwards.insert_str(200 * line(0, 1).len(), &line(3, 50));
        let mut binary = good.clone().into_bytes();
        binary.splice(300 * line(0, 1).len()..300 * line(0, 1).len(), [0xff, 0xfe, b'\n']);
        for (what, bytes) in [("bad field", bad_field.into_bytes()), ("backwards", backwards.into_bytes()), ("binary", binary)] {
            std::fs::write(&path, &bytes).unwrap();
            let whole = read_trace(&path).unwrap_err().to_string();
            for size in [1, 57, 1000, 1 << 20] {
                assert_eq!(all_blocks(&path, size).unwrap_err().to_string(), whole, "{what}, blocks of {size} bytes");
            }
        }
    }
}
