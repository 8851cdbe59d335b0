//! The data side of a timeline: ticks reduced to pixel columns, state bands and their runs,
//! the detail window, and what the trace holds (for the legend).

use crate::replay::timeline::Point;
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

/// The ticks grouped into at most `most` columns of equal time (one per pixel).
pub fn columns(points: &[Point], range: std::ops::Range<Instant>, most: usize) -> Vec<Column> {
    let minutes = ((range.end - range.start) / 60).max(1) as usize;
    let n = minutes.min(most.max(1));
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
pub(crate) fn bands(points: &[Point], columns: &[Column]) -> Bands {
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
    // A column no tick fell in (a gap) keeps the state before it; columns before the first
    // tick (a shadow that started later than the window) have none.
    let first = filled.iter().position(|f| *f).unwrap_or(out.len());
    for (i, band) in out.iter_mut().enumerate().take(first) {
        *band = Band { state: NO_STATE, ..Band::default() };
        filled[i] = true;
    }
    for i in 1..out.len() {
        if !filled[i] {
            out[i] = Band { state: out[i - 1].state, engaged: out[i - 1].engaged, ..Band::default() };
        }
    }
    out
}

/// The state of a column before a timeline's first tick: nothing is drawn there.
pub(crate) const NO_STATE: u8 = u8::MAX;

/// Runs of equal values over the columns: (from, to, value).
pub(crate) fn spans(columns: &[Column], values: impl Iterator<Item = u8>) -> Vec<(Instant, Instant, u8)> {
    let mut out: Vec<(Instant, Instant, u8)> = Vec::new();
    for (c, v) in columns.iter().zip(values) {
        match out.last_mut() {
            Some(last) if last.2 == v => last.1 = c.to,
            _ => out.push((c.from, c.to, v)),
        }
    }
    out
}

/// Why the detail view looks where it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The policies' states first differ there.
    Differ,
    /// The first policy first protects there.
    Protects,
}

/// The window of the detail view: three hours around the first tick where the policies'
/// states differ (else the first policy's first protection); none for a trace of six hours or
/// less or one that never leaves normal.
pub(crate) fn detail_window(timelines: &[&[Point]], range: &Range) -> Option<(Range, Focus)> {
    const WINDOW: Instant = 3 * 3600;
    if range.end - range.start <= 2 * WINDOW {
        return None;
    }
    let base = timelines.first()?;
    // By time: a second timeline may start later (a shadow) or miss a minute.
    let differs =
        |i: usize| timelines.iter().any(|t| t.binary_search_by_key(&base[i].at, |p| p.at).is_ok_and(|j| t[j].state != base[i].state));
    let (focus, why) = match (0..base.len()).find(|&i| differs(i)) {
        Some(i) => (i, Focus::Differ),
        None => (base.iter().position(|p| p.state > 0)?, Focus::Protects),
    };
    let start = (base[focus].at - WINDOW / 4).clamp(range.start, range.end - WINDOW);
    Some((start..start + WINDOW, why))
}

/// The points of `points` (in time order) inside `range`.
pub fn within<'a>(points: &'a [Point], range: &Range) -> &'a [Point] {
    let from = points.partition_point(|p| p.at < range.start);
    let to = points.partition_point(|p| p.at < range.end);
    &points[from..to.max(from)]
}

/// What a timeline holds, so that its legend names only that.
#[derive(Debug, Clone, Copy, Default)]
pub struct Present {
    /// CPU, connections, latency ratio.
    pub signals: [bool; 3],
    pub failed: bool,
    pub pinned: bool,
    pub throttles: bool,
    pub damping_held: bool,
    /// Two policies: the difference band.
    pub two: bool,
    /// More minutes than pixel columns: each column's readings drawn as a min-max band.
    pub ranged: bool,
}

impl Present {
    pub fn of(timelines: &[&[Point]]) -> Self {
        let mut out = Present { two: timelines.len() == 2, ..Present::default() };
        for p in timelines.first().copied().unwrap_or_default() {
            for (seen, v) in out.signals.iter_mut().zip([p.cpu_pct, p.connections_pct, p.latency_ratio]) {
                *seen |= v.is_finite();
            }
            out.failed |= p.failed();
            out.pinned |= p.pin.is_some();
        }
        for p in timelines.iter().flat_map(|t| t.iter()) {
            out.throttles |= p.throttles == ThrottleIntent::Engage;
            out.damping_held |= p.damping_held;
        }
        out
    }
}
