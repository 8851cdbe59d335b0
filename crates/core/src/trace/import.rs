//! `sentinel trace import`: a `timestamp,value` CSV (a CloudWatch, NAB or Prometheus export)
//! becomes a trace with one reading a minute, each value held until the next sample.
//!
//! Streaks count consecutive minutes (docs/behaviour.md §10.2), so a 5-minute series becomes five
//! readings per sample, from the first sample's minute through the last sample's minute.

use std::fmt;
use std::io::Read;
use std::str::FromStr;

use time::PrimitiveDateTime;
use time::macros::format_description;

use super::TraceEvent;
use crate::instants::{format_rfc3339, parse_rfc3339};
use vocabulary::{ApiLatency, Instant, Reading, Signal};

/// The most minutes one import produces: 366 days. A longer span is almost always a wrong
/// timestamp, and would otherwise be filled in minute by minute.
pub(crate) const MAX_MINUTES: i64 = 366 * 1440;

/// Which reading field the CSV's values become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSignal {
    /// `cpu_pct`, a percentage.
    CpuPct,
    /// `connections_pct`, a percentage.
    ConnectionsPct,
    /// `latency:<api>`: that API's `p95_ms`, with no `baseline_ms` (replay computes baselines
    /// from the trace's own history).
    Latency {
        /// The API's name, as the reading's latency entries and the baselines name it.
        api: String,
    },
}

/// A signal name that is not `cpu_pct`, `connections_pct` or `latency:<api>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown signal {0:?}: expected cpu_pct, connections_pct or latency:<api>")]
pub struct ParseImportSignalError(pub String);

impl FromStr for ImportSignal {
    type Err = ParseImportSignalError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cpu_pct" => Ok(ImportSignal::CpuPct),
            "connections_pct" => Ok(ImportSignal::ConnectionsPct),
            _ => match s.strip_prefix("latency:") {
                Some(api) if !api.trim().is_empty() => Ok(ImportSignal::Latency { api: api.to_owned() }),
                _ => Err(ParseImportSignalError(s.to_owned())),
            },
        }
    }
}

impl fmt::Display for ImportSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportSignal::CpuPct => f.write_str("cpu_pct"),
            ImportSignal::ConnectionsPct => f.write_str("connections_pct"),
            ImportSignal::Latency { api } => write!(f, "latency:{api}"),
        }
    }
}

impl ImportSignal {
    fn is_percentage(&self) -> bool {
        !matches!(self, ImportSignal::Latency { .. })
    }

    fn reading(&self, value: f64) -> Reading {
        let mut reading = Reading { cpu_pct: None, connections_pct: None, scaling: None, latency: Vec::new() };
        match self {
            ImportSignal::CpuPct => reading.cpu_pct = Some(value),
            ImportSignal::ConnectionsPct => reading.connections_pct = Some(value),
            ImportSignal::Latency { api } => {
                reading.latency.push(ApiLatency { api: api.clone(), p95_ms: Some(value), baseline_ms: None });
            }
        }
        reading
    }
}

/// What a sample whose timestamp equals the previous sample's means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RepeatedTimestamps {
    /// Refused: the file is ambiguous (the default).
    #[default]
    Refuse,
    /// The last sample of a repeated timestamp wins, as the last sample of any one minute does
    /// (a clock change written in local time repeats timestamps, as NAB's latency series does).
    Last,
}

impl std::str::FromStr for RepeatedTimestamps {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "refuse" => Ok(RepeatedTimestamps::Refuse),
            "last" => Ok(RepeatedTimestamps::Last),
            other => Err(format!("`{other}` is not a way to read repeated timestamps: use refuse or last")),
        }
    }
}

/// Why a CSV could not be imported. `input` names the source, `line` is the CSV line (1-based,
/// the header is line 1).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The CSV itself is malformed or unreadable (I/O, invalid UTF-8, bad quoting).
    #[error("{input}:{}: {error}", .line.map_or_else(|| "?".to_owned(), |l| l.to_string()))]
    Csv {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// The CSV line where it went wrong; `None` when the reader cannot say (shown as `?`).
        line: Option<u64>,
        /// The CSV reader's error.
        error: csv::Error,
    },
    /// The first row is data, not a `timestamp,value` header.
    #[error("{input}:1: expected a header row like timestamp,value, got a sample")]
    MissingHeader {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
    },
    /// A row does not have exactly two fields.
    #[error("{input}:{line}: expected 2 fields (timestamp,value), got {count}")]
    FieldCount {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// The CSV line (1-based, the header is line 1).
        line: u64,
        /// How many fields the row has.
        count: usize,
    },
    /// A timestamp is neither RFC 3339 nor `YYYY-MM-DD HH:MM:SS` (UTC).
    #[error("{input}:{line}: bad timestamp {value:?}: expected YYYY-MM-DD HH:MM:SS (UTC) or RFC 3339")]
    BadTimestamp {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// The CSV line (1-based, the header is line 1).
        line: u64,
        /// The timestamp as written.
        value: String,
    },
    /// A value is not a finite number.
    #[error("{input}:{line}: value {value:?} is not a finite number")]
    NotANumber {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// The CSV line (1-based, the header is line 1).
        line: u64,
        /// The value as written.
        value: String,
    },
    /// A value is outside what the signal allows (0..=100 for a percentage, >= 0 for latency).
    #[error("{input}:{line}: value {value} is outside {range} for {signal}")]
    OutOfRange {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// The CSV line (1-based, the header is line 1).
        line: u64,
        /// The value.
        value: f64,
        /// The values the signal allows, as the message writes them (`0..=100` for a
        /// percentage).
        range: &'static str,
        /// The signal being imported, as named on the command line (`cpu_pct`, `latency:crm`).
        signal: String,
    },
    /// A timestamp is not after the previous sample's.
    #[error("{input}:{line}: timestamp {at} is not after the previous sample's {previous}")]
    NotAscending {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// The CSV line (1-based, the header is line 1).
        line: u64,
        /// This sample's timestamp (RFC 3339).
        at: String,
        /// The previous sample's timestamp (RFC 3339).
        previous: String,
    },
    /// A timestamp equals the previous sample's, and repeats are refused.
    #[error(
        "{input}:{line}: timestamp {at} repeats the previous sample's (often a clock change written in local time): correct the file, or pass --repeated-timestamps last to keep the last sample of each repeated timestamp"
    )]
    Repeated {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// The CSV line (1-based, the header is line 1).
        line: u64,
        /// The repeated timestamp (RFC 3339).
        at: String,
    },
    /// The samples span more than `MAX_MINUTES` minutes (usually one wrong timestamp).
    #[error("{input}: the samples span {minutes} minutes ({first} to {last}), more than the {} (366 days) an import may hold", MAX_MINUTES)]
    TooLong {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
        /// How many minutes the samples span, the first and the last sample's minutes included.
        minutes: i64,
        /// The first sample's minute (RFC 3339).
        first: String,
        /// The last sample's minute (RFC 3339).
        last: String,
    },
    /// The CSV has no samples.
    #[error("{input}: no samples")]
    NoSamples {
        /// The input's name: the `source` given to `import_csv` (the CLI gives the file's path).
        input: String,
    },
}

/// Imports a `timestamp,value` CSV (header row first) as one reading a minute of `signal`.
///
/// Timestamps are `YYYY-MM-DD HH:MM:SS` in UTC (CloudWatch, NAB) or RFC 3339, strictly
/// ascending (`repeated` says what an equal timestamp means). Each sample lands in its minute (seconds dropped); within one minute the last
/// sample wins; each minute's value is held through the minutes up to the next sample's. The
/// result runs from the first sample's minute through the last sample's minute, one tick each.
/// `source` names the input in errors.
pub fn import_csv<R: Read>(
    source: &str,
    reader: R,
    signal: &ImportSignal,
    repeated: RepeatedTimestamps,
) -> Result<Vec<TraceEvent>, ImportError> {
    let csv_error =
        |error: csv::Error| ImportError::Csv { input: source.to_owned(), line: error.position().map(csv::Position::line), error };
    let mut csv = csv::ReaderBuilder::new().has_headers(true).flexible(true).trim(csv::Trim::All).from_reader(reader);
    let header = csv.headers().map_err(csv_error)?;
    if header.get(0).is_some_and(|first| parse_timestamp(first).is_some()) {
        return Err(ImportError::MissingHeader { input: source.to_owned() });
    }

    // (minute, value), minutes strictly ascending.
    let mut minutes: Vec<(Instant, f64)> = Vec::new();
    let mut previous: Option<Instant> = None;
    for record in csv.records() {
        let record = record.map_err(csv_error)?;
        let line = record.position().map_or(0, csv::Position::line);
        let (at, value) = sample(source, line, &record, signal)?;
        if previous == Some(at) && repeated == RepeatedTimestamps::Refuse {
            return Err(ImportError::Repeated { input: source.to_owned(), line, at: format_rfc3339(at) });
        }
        if let Some(previous) = previous.filter(|&p| at < p) {
            return Err(ImportError::NotAscending {
                input: source.to_owned(),
                line,
                at: format_rfc3339(at),
                previous: format_rfc3339(previous),
            });
        }
        previous = Some(at);
        let minute = at - at.rem_euclid(60);
        match minutes.last_mut() {
            Some((last, held)) if *last == minute => *held = value,
            _ => minutes.push((minute, value)),
        }
    }
    let (Some(&(first, _)), Some(&(last, _))) = (minutes.first(), minutes.last()) else {
        return Err(ImportError::NoSamples { input: source.to_owned() });
    };

    let count = (last - first) / 60 + 1;
    if count > MAX_MINUTES {
        return Err(ImportError::TooLong {
            input: source.to_owned(),
            minutes: count,
            first: format_rfc3339(first),
            last: format_rfc3339(last),
        });
    }
    let mut events = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for (i, &(minute, value)) in minutes.iter().enumerate() {
        let until = minutes.get(i + 1).map_or(minute + 60, |&(next, _)| next);
        let reading = signal.reading(value);
        events.extend((minute..until).step_by(60).map(|at| TraceEvent::Tick { at, signal: Signal::Reading(reading.clone()) }));
    }
    Ok(events)
}

/// One checked `timestamp,value` row.
fn sample(source: &str, line: u64, record: &csv::StringRecord, signal: &ImportSignal) -> Result<(Instant, f64), ImportError> {
    if record.len() != 2 {
        return Err(ImportError::FieldCount { input: source.to_owned(), line, count: record.len() });
    }
    let (timestamp, text) = (&record[0], &record[1]);
    let at = parse_timestamp(timestamp).ok_or_else(|| ImportError::BadTimestamp {
        input: source.to_owned(),
        line,
        value: timestamp.to_owned(),
    })?;
    let value = text.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| ImportError::NotANumber {
        input: source.to_owned(),
        line,
        value: text.to_owned(),
    })?;
    let (ok, range) =
        if signal.is_percentage() { ((0.0..=100.0).contains(&value), "0..=100") } else { (value >= 0.0, "0.. (a non-negative latency)") };
    if !ok {
        return Err(ImportError::OutOfRange { input: source.to_owned(), line, value, range, signal: signal.to_string() });
    }
    Ok((at, value))
}

/// `YYYY-MM-DD HH:MM:SS` (UTC, optional fraction) or RFC 3339; sub-seconds truncated.
fn parse_timestamp(s: &str) -> Option<Instant> {
    let naive = format_description!("[year]-[month]-[day] [hour]:[minute]:[second][optional [.[subsecond]]]");
    PrimitiveDateTime::parse(s, &naive).map(|t| t.assume_utc().unix_timestamp()).ok().or_else(|| parse_rfc3339(s).ok())
}

#[cfg(test)]
mod tests;
