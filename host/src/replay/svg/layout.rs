//! The data side of a timeline: ticks reduced to pixel columns, state bands and their runs,
//! the detail window, and round times for the axis.

use super::COLUMNS;
use crate::replay::timeline::Point;
use time::OffsetDateTime;
use vocabulary::{Instant, ThrottleIntent};

pub type Range = std::ops::Range<Instant>;

/// What one column of pixels holds.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub from: Instant,
    pub to: Instant,
    /// (min, max, sum, count) of CPU, connections, latency ratio.
    pub values: [(f32, f32, f32, u32); 3],
    pub failed: bool,
    /// The highest pinned state's rank in the column.
    pub pin: Option<u8>,
}

/// One policy's band per column.
#[derive(Debug, Clone, Copy, Default)]
pub struct Band {
    /// The highest state's rank.
    pub state: u8,
    /// The throttles engaged in the column.
    pub engage: bool,
    /// The throttles were engaged at the column's end.
    pub engaged: bool,
    /// Flap damping held a recovery in the column.
    pub damping_held: bool,
}

pub type Bands = Vec<Band>;

/// The ticks grouped into at most [`COLUMNS`] columns of equal time.
pub fn columns(points: &[Point], range: std::ops::Range<Instant>) -> Vec<Column> {
    let minutes = ((range.end - range.start) / 60).max(1) as usize;
    let n = minutes.min(COLUMNS);
    let span = (range.end - range.start) as i128;
    let edge = |i: usize| range.start + (i as i128 * span / n as i128) as Instant;
    let empty = (f32::INFINITY, f32::NEG_INFINITY, 0.0, 0);
    let mut out: Vec<Column> =
        (0..n).map(|i| Column { from: edge(i), to: edge(i + 1), values: [empty; 3], failed: false, pin: None }).collect();
    for p in points {
        let c = &mut out[column_of(p.at, &range, n)];
        for (slot, v) in c.values.iter_mut().zip([p.cpu_pct, p.connections_pct, p.latency_ratio]) {
            if v.is_finite() {
                *slot = (slot.0.min(v), slot.1.max(v), slot.2 + v, slot.3 + 1);
            }
        }
        c.failed |= p.failed();
        c.pin = c.pin.max(p.pin);
    }
    out
}

fn column_of(at: Instant, range: &std::ops::Range<Instant>, n: usize) -> usize {
    let offset = (at - range.start).clamp(0, range.end - range.start) as i128;
    ((offset * n as i128 / (range.end - range.start).max(1) as i128) as usize).min(n - 1)
}

pub fn mid(c: &Column) -> Instant {
    (c.from + c.to) / 2
}

/// The runs of consecutive columns with a value of series `i` (a column without one breaks
/// the line: a gap or failed reads).
pub fn runs(columns: &[Column], i: usize) -> Vec<&[Column]> {
    columns.split(|c| c.values[i].3 == 0).filter(|r| !r.is_empty()).collect()
}

/// One policy's band: per column the highest state, an engagement, the engaged flag and a
/// damping hold.
pub fn bands(points: &[Point], columns: &[Column]) -> Bands {
    let (Some(first), Some(last)) = (columns.first(), columns.last()) else { return Vec::new() };
    let range = first.from..last.to;
    let mut out: Bands = vec![Band::default(); columns.len()];
    let mut engaged = false;
    let mut filled = vec![false; columns.len()];
    for p in points {
        let i = column_of(p.at, &range, columns.len());
        match p.throttles {
            ThrottleIntent::Engage => engaged = true,
            ThrottleIntent::Release => engaged = false,
            ThrottleIntent::None => {}
        }
        let b = &mut out[i];
        b.state = if filled[i] { b.state.max(p.state) } else { p.state };
        b.engage |= p.throttles == ThrottleIntent::Engage;
        b.engaged = engaged;
        b.damping_held |= p.damping_held;
        filled[i] = true;
    }
    // A column no tick fell in (a gap) keeps the state before it.
    for i in 1..out.len() {
        if !filled[i] {
            out[i] = Band { state: out[i - 1].state, engaged: out[i - 1].engaged, ..Band::default() };
        }
    }
    out
}

/// Runs of equal values over the columns: (from, to, value).
pub fn spans(columns: &[Column], values: impl Iterator<Item = u8>) -> Vec<(Instant, Instant, u8)> {
    let mut out: Vec<(Instant, Instant, u8)> = Vec::new();
    for (c, v) in columns.iter().zip(values) {
        match out.last_mut() {
            Some(last) if last.2 == v => last.1 = c.to,
            _ => out.push((c.from, c.to, v)),
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    Time,
    DayTime,
    Day,
    Full,
}

/// Round times for the axis, about ten over the range, and how to write them.
pub fn time_ticks(range: Range) -> (Vec<Instant>, Stamp) {
    const MINUTE: Instant = 60;
    const DAY: Instant = 86_400;
    let span = range.end - range.start;
    let steps = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 7 * 1440, 14 * 1440, 28 * 1440, 56 * 1440, 91 * 1440];
    let step = steps.iter().map(|m| m * MINUTE).find(|s| span / s <= 10).unwrap_or(182 * DAY);
    let first = range.start.div_euclid(step) * step + if range.start.rem_euclid(step) == 0 { 0 } else { step };
    let ticks = (0..).map(|i| first + i * step).take_while(|t| *t <= range.end).collect();
    let format = if span <= DAY {
        Stamp::Time
    } else if step < DAY {
        Stamp::DayTime
    } else {
        Stamp::Day
    };
    (ticks, format)
}

pub fn stamp(at: Instant, format: Stamp) -> String {
    let Ok(t) = OffsetDateTime::from_unix_timestamp(at) else { return at.to_string() };
    let (month, day) = (u8::from(t.month()), t.day());
    match format {
        Stamp::Time => format!("{:02}:{:02}", t.hour(), t.minute()),
        Stamp::DayTime => format!("{month:02}-{day:02} {:02}:{:02}", t.hour(), t.minute()),
        Stamp::Day => format!("{}-{month:02}-{day:02}", t.year()),
        Stamp::Full => format!("{}-{month:02}-{day:02} {:02}:{:02}", t.year(), t.hour(), t.minute()),
    }
}

/// The window of the detail view: three hours around the first tick where the policies'
/// states differ (else the baseline's first protection); none for a trace of six hours or less
/// or one that never leaves normal.
pub fn detail_window(timelines: &[&[Point]], range: &Range) -> Option<Range> {
    const WINDOW: Instant = 3 * 3600;
    if range.end - range.start <= 2 * WINDOW {
        return None;
    }
    let base = timelines.first()?;
    let differs = |i: usize| timelines.iter().any(|t| t.get(i).is_some_and(|p| p.state != base[i].state));
    let focus = (0..base.len()).find(|&i| differs(i)).or_else(|| base.iter().position(|p| p.state > 0))?;
    let start = (base[focus].at - WINDOW / 4).clamp(range.start, range.end - WINDOW);
    Some(start..start + WINDOW)
}

/// The points of `points` (in time order) inside `range`.
pub fn within<'a>(points: &'a [Point], range: &Range) -> &'a [Point] {
    let from = points.partition_point(|p| p.at < range.start);
    let to = points.partition_point(|p| p.at < range.end);
    &points[from..to.max(from)]
}
