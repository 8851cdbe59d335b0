//! One SVG timeline per trace (plotters, SVG backend): the readings as lines on top (CPU and
//! connections in %, the worst latency ratio on the right axis), the baseline's CPU thresholds
//! dashed, pins shaded, failed reads as red ticks; below, one band per policy coloured by state
//! with its throttle engagements (▼), engaged spans (black bar) and recoveries held by flap
//! damping (violet bar along its top edge), and with two policies a
//! last band showing where the candidate is more (blue) or less (magenta) protective.
//!
//! Long traces are drawn per pixel column: readings as their min-max range and mean, states as
//! the highest state of the column, so a one-minute escalation in a year stays visible. A trace
//! longer than six hours gets a second, three-hour view where the policies first differ (or
//! the baseline first protects), outlined on the first.

mod clock;
mod layout;
mod legend;
#[cfg(test)]
mod tests;
mod thresholds;

pub use clock::{UnknownZone, Zone};

use super::timeline::{Point, Timeline};
use clock::Stamp;
use layout::{Bands, Column, Focus, NO_STATE, Present, Range, bands, columns, detail_window, mid, runs, spans, within};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vocabulary::{Instant, Thresholds};

const LEFT: u32 = 150;
const RIGHT: u32 = 80;
const STATE_COLOURS: [RGBColor; 4] = [RGBColor(215, 236, 211), RGBColor(255, 213, 79), RGBColor(251, 140, 0), RGBColor(211, 47, 47)];
const STATE_NAMES: [&str; 4] = ["normal", "constrained", "critical", "emergency"];
const CPU: RGBColor = RGBColor(31, 119, 180);
const CONNECTIONS: RGBColor = RGBColor(148, 103, 189);
const LATENCY: RGBColor = RGBColor(44, 160, 44);
const FAILED: RGBColor = RGBColor(198, 40, 40);
const MORE: RGBColor = RGBColor(21, 101, 192);
const LESS: RGBColor = RGBColor(173, 20, 87);
/// The top edge of a band where flap damping held a recovery.
const DAMPED: RGBColor = RGBColor(69, 39, 160);

/// How a timeline is framed: its title, its width in pixels and the zone its times are
/// written in.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Drawn above the period line; the console's card has its own heading.
    pub title: Option<String>,
    /// Width of the drawing in pixels, held between [`Frame::MIN_WIDTH`] and
    /// [`Frame::MAX_WIDTH`] when drawn.
    pub width: u32,
    /// The zone the times are written in (said under the title).
    pub zone: Zone,
    /// What the second timeline is, in the difference band's legend: "candidate" in a report,
    /// "shadow" in the console.
    pub compared: &'static str,
}

impl Frame {
    /// A report's timeline width, in pixels.
    pub const REPORT_WIDTH: u32 = 1400;
    /// The narrowest timeline drawn, in pixels; a narrower frame is widened to it.
    pub const MIN_WIDTH: u32 = 640;
    /// The widest timeline drawn, in pixels; a wider frame is narrowed to it.
    pub const MAX_WIDTH: u32 = 2400;

    /// A report's frame: titled with the trace and the policies, 1400 pixels, in UTC.
    pub fn report(trace: &str, labels: &[String]) -> Self {
        Frame {
            title: Some(format!("trace {trace}: {}", labels.join(" vs "))),
            width: Self::REPORT_WIDTH,
            zone: Zone::utc(),
            compared: "candidate",
        }
    }
}

/// The SVG of one trace's timelines, `labels[i]` naming `timelines[i]` with `thresholds[i]`;
/// the first is the baseline, whose readings are drawn.
pub fn timeline_svg(frame: &Frame, labels: &[String], timelines: &[&Timeline], thresholds: &[&Thresholds]) -> Result<String, String> {
    let what = frame.title.clone().unwrap_or_else(|| "the timeline".into());
    // plotters panics on some degenerate ranges; a report must fail with a message instead.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render(frame, labels, timelines, thresholds)))
        .unwrap_or_else(|_| Err(format!("drawing {what}: the plotting library panicked")))
}

/// What every part of one drawing shares.
struct Drawing<'a, 'b> {
    root: &'a Area<'b>,
    labels: &'a [String],
    thresholds: &'a [&'a Thresholds],
    zone: &'a Zone,
    /// Pixel columns of the plot.
    columns: usize,
}

fn render(frame: &Frame, labels: &[String], timelines: &[&Timeline], thresholds: &[&Thresholds]) -> Result<String, String> {
    let what = frame.title.clone().unwrap_or_else(|| "the timeline".into());
    let points: Vec<&[Point]> = timelines.iter().map(|t| t.points.as_slice()).collect();
    let (Some(first), Some(last)) = (points.first().and_then(|p| p.first()), points.first().and_then(|p| p.last())) else {
        return Ok(format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"10\" y=\"25\" font-family=\"sans-serif\" font-size=\"15\">{}: no ticks</text></svg>\n",
            what.replace('&', "&amp;").replace('<', "&lt;")
        ));
    };
    let width = frame.width.clamp(Frame::MIN_WIDTH, Frame::MAX_WIDTH);
    let whole = first.at..(last.at + 60).max(first.at + 120);
    let detail = detail_window(&points, &whole);
    let mut present = Present::of(&points);
    // Drawn per pixel column (more minutes than columns): the readings' min-max band is shown.
    present.ranged = columns(points[0], whole.clone(), (width.clamp(Frame::MIN_WIDTH, Frame::MAX_WIDTH) - LEFT - RIGHT) as usize).len()
        < points[0].len();
    let rows = points.len() + usize::from(points.len() == 2);
    let bands_height = 40 + 34 * rows as u32;
    let sections = 1 + u32::from(detail.is_some());
    let heading = if detail.is_some() { HEADING } else { 0 };
    let title = if frame.title.is_some() { TITLE } else { PERIOD };
    let (left, right) = (LEFT as i32, (width - RIGHT) as i32);
    let legend_height = legend::height(&present, frame.compared, left, right);
    let height = title + sections * (READINGS + bands_height + heading) + legend_height;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        let fail = |e: Failure| format!("drawing {what}: {e}");
        root.fill(&WHITE).map_err(|e| fail(e.into()))?;
        let (top, mut rest) = root.split_vertically(title);
        if let Some(t) = &frame.title {
            top.draw_text(t, &bold(22, HPos::Left, VPos::Center), (left, 20)).map_err(|e| fail(e.into()))?;
        }
        let period = format!(
            "{} to {}, times in {}, {} ticks",
            frame.zone.stamp(whole.start, Stamp::Full),
            frame.zone.stamp(last.at, Stamp::Full),
            frame.zone.describe(whole.start, last.at),
            points[0].len()
        );
        top.draw_text(&period, &font(15, HPos::Left, VPos::Center), (left, title as i32 - 14)).map_err(|e| fail(e.into()))?;
        let mut views = vec![("the whole window".to_string(), whole.clone())];
        if let Some((d, focus)) = &detail {
            let why = match focus {
                Focus::Differ => "where the policies first differ",
                Focus::Protects => "where protection first begins",
            };
            views.push((
                format!("detail: {} to {}, {why}", frame.zone.stamp(d.start, Stamp::Full), frame.zone.stamp(d.end, Stamp::Full)),
                d.clone(),
            ));
        }
        let drawing = Drawing { root: &root, labels, thresholds, zone: &frame.zone, columns: (width - LEFT - RIGHT) as usize };
        for (i, (name, range)) in views.iter().enumerate() {
            let (head, below) = rest.split_vertically(heading);
            let (readings, below) = below.split_vertically(READINGS);
            let (bands, below) = below.split_vertically(bands_height);
            rest = below;
            if heading > 0 {
                head.draw_text(name, &bold(16, HPos::Left, VPos::Bottom), (left, heading as i32 - 4)).map_err(|e| fail(e.into()))?;
            }
            let shown: Vec<&[Point]> = points.iter().map(|p| within(p, range)).collect();
            let marked = if i == 0 { detail.as_ref().map(|(d, _)| d.clone()) } else { None };
            view(&drawing, &readings, &bands, &shown, range.clone(), marked).map_err(fail)?;
        }
        legend::draw(&rest, &present, frame.compared, left, right).map_err(fail)?;
        root.present().map_err(|e| fail(e.into()))?;
    }
    Ok(out)
}

const TITLE: u32 = 64;
const PERIOD: u32 = 32;
const HEADING: u32 = 28;
const READINGS: u32 = 300;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Failure = Box<dyn std::error::Error>;

/// plotters' SVG backend writes a font's size divided by 1.24: this many pixels are asked for.
fn pixels(size: u32) -> f64 {
    f64::from(size) * 1.24
}

fn font(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
    ("sans-serif", pixels(size)).into_font().color(&BLACK).pos(Pos::new(h, v))
}

fn bold(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
    ("sans-serif", pixels(size)).into_font().style(FontStyle::Bold).color(&BLACK).pos(Pos::new(h, v))
}

/// One view of the trace over `range`: readings above, bands below; `marked` outlines the
/// detail window on the whole-trace view.
fn view(
    d: &Drawing<'_, '_>,
    readings: &Area<'_>,
    bands: &Area<'_>,
    points: &[&[Point]],
    range: Range,
    marked: Option<Range>,
) -> Result<(), Failure> {
    let columns = columns(points[0], range.clone(), d.columns);
    draw_readings(d, readings, points[0], &columns, range.clone(), marked)?;
    draw_bands(d, bands, points, &columns, range)?;
    Ok(())
}

/// The axes' numbers, at the size asked for (no position: plotters places them).
fn axis_text() -> TextStyle<'static> {
    ("sans-serif", pixels(13)).into_font().color(&BLACK)
}

fn draw_readings(
    d: &Drawing<'_, '_>,
    area: &Area<'_>,
    points: &[Point],
    columns: &[Column],
    range: Range,
    marked: Option<Range>,
) -> Result<(), Failure> {
    let root = d.root;
    let has = |i: usize| columns.iter().any(|c| c.values[i].3 > 0);
    let max_ratio = columns.iter().map(|c| c.values[2].1).filter(|v| v.is_finite()).fold(3.0f32, f32::max) as f64 * 1.05;
    let mut chart = ChartBuilder::on(area)
        .margin_right(10)
        .margin_top(6)
        .set_label_area_size(LabelAreaPosition::Left, LEFT - 10)
        .set_label_area_size(LabelAreaPosition::Right, RIGHT)
        .set_label_area_size(LabelAreaPosition::Bottom, 26)
        .build_cartesian_2d(range.clone(), 0f64..105f64)?
        .set_secondary_coord(range.clone(), 0f64..max_ratio);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2)
        .x_label_formatter(&|_| String::new())
        .x_label_style(axis_text())
        .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .y_label_style(axis_text())
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    // The axes' names beside their numbers (plotters puts them at the label area's far edge).
    let (x0, middle) = chart.backend_coord(&(range.start, 52.5));
    let (x1, _) = chart.backend_coord(&(range.end, 52.5));
    let sideways = |turn: FontTransform| font(14, HPos::Center, VPos::Center).transform(turn);
    root.draw_text("CPU / connections %", &sideways(FontTransform::Rotate270), (x0 - 46, middle))?;
    if has(2) {
        chart.configure_secondary_axes().y_labels(6).label_style(axis_text()).draw()?;
        root.draw_text("worst latency ratio (p95 / baseline)", &sideways(FontTransform::Rotate90), (x1 + 50, middle))?;
    }
    for (from, to, pin) in spans(columns, columns.iter().map(|c| c.pin.map_or(0, |p| p + 1))) {
        if pin > 0 {
            chart.draw_series(std::iter::once(Rectangle::new([(from, 0.0), (to, 105.0)], BLACK.mix(0.1).filled())))?;
            let (x0, y0) = chart.backend_coord(&(from, 105.0));
            let (x1, _) = chart.backend_coord(&(to, 105.0));
            if x1 - x0 > 100 {
                root.draw_text(&format!("pinned {}", STATE_NAMES[pin as usize - 1]), &font(13, HPos::Left, VPos::Top), (x0 + 4, y0 + 4))?;
            }
        }
    }
    time_grid(d, &chart, range.clone(), 0.0..105.0)?;
    let ranged = columns.len() < points.len();
    for (i, colour) in [(0, CPU), (1, CONNECTIONS), (2, LATENCY)] {
        for run in runs(columns, i) {
            let mean: Vec<(Instant, f64)> = run.iter().map(|c| (mid(c), (c.values[i].2 / c.values[i].3 as f32) as f64)).collect();
            let mut outline: Vec<(Instant, f64)> = run.iter().map(|c| (mid(c), c.values[i].1 as f64)).collect();
            outline.extend(run.iter().rev().map(|c| (mid(c), c.values[i].0 as f64)));
            let width = if i == 2 { 1 } else { 2 };
            if let [only] = mean.as_slice() {
                let dot = Circle::new(*only, 2, colour.filled());
                if i == 2 {
                    chart.draw_secondary_series(std::iter::once(dot))?
                } else {
                    chart.draw_series(std::iter::once(dot))?
                };
                continue;
            }
            if i == 2 {
                if ranged {
                    chart.draw_secondary_series(std::iter::once(Polygon::new(outline, colour.mix(0.2).filled())))?;
                }
                chart.draw_secondary_series(LineSeries::new(mean, colour.stroke_width(width)))?;
            } else {
                if ranged {
                    chart.draw_series(std::iter::once(Polygon::new(outline, colour.mix(0.2).filled())))?;
                }
                chart.draw_series(LineSeries::new(mean, colour.stroke_width(width)))?;
            }
        }
    }
    // The boundaries over the readings, their labels on white over everything.
    thresholds::draw(d, &mut chart, columns, range.clone())?;
    if let Some(m) = marked {
        chart.draw_series(std::iter::once(Rectangle::new([(m.start, 0.5), (m.end, 104.5)], BLACK.stroke_width(1))))?;
        let (x0, y) = chart.backend_coord(&(m.start, 104.5));
        let (x1, _) = chart.backend_coord(&(m.end, 104.5));
        let (plot_left, plot_right) = (chart.backend_coord(&(range.start, 0.0)).0, chart.backend_coord(&(range.end, 0.0)).0);
        // Inside the window's top left corner where it fits, else beside it: never over the
        // axis's numbers.
        let wide = 44;
        let from = if x1 - x0 >= wide + 8 {
            x0 + 3
        } else if x1 + 3 + wide <= plot_right {
            x1 + 3
        } else {
            (x0 - 3 - wide).max(plot_left + 2)
        };
        root.draw(&Rectangle::new([(from, y + 2), (from + wide, y + 18)], WHITE.filled()))?;
        root.draw_text("detail", &font(12, HPos::Left, VPos::Top), (from + 4, y + 4))?;
    }
    chart.draw_series(
        columns.iter().filter(|c| c.failed).map(|c| PathElement::new(vec![(mid(c), 0.0), (mid(c), 7.0)], FAILED.stroke_width(2))),
    )?;
    Ok(())
}

/// Vertical grid lines at the zone's round times, labelled under the plot.
fn time_grid<Y: plotters::coord::ranged1d::Ranged<ValueType = f64>>(
    d: &Drawing<'_, '_>,
    chart: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<plotters::coord::types::RangedCoordi64, Y>>,
    range: Range,
    y: std::ops::Range<f64>,
) -> Result<(), Failure> {
    // A label is about 90 pixels wide at most: no more of them than fit, and ten at the most.
    let (ticks, format) = d.zone.ticks(range, (d.columns / 90).clamp(3, 10));
    for at in ticks {
        let (x, top) = chart.backend_coord(&(at, y.end));
        let (_, bottom) = chart.backend_coord(&(at, y.start));
        d.root.draw(&PathElement::new(vec![(x, top), (x, bottom)], BLACK.mix(0.12)))?;
        d.root.draw(&PathElement::new(vec![(x, bottom), (x, bottom + 4)], BLACK))?;
        d.root.draw_text(&d.zone.stamp(at, format), &font(13, HPos::Center, VPos::Top), (x, bottom + 6))?;
    }
    Ok(())
}

fn draw_bands(d: &Drawing<'_, '_>, area: &Area<'_>, points: &[&[Point]], columns: &[Column], range: Range) -> Result<(), Failure> {
    let (root, labels) = (d.root, d.labels);
    let two = points.len() == 2;
    let rows = points.len() + usize::from(two);
    let mut chart = ChartBuilder::on(area)
        .margin_right(10)
        .margin_top(6)
        .set_label_area_size(LabelAreaPosition::Left, LEFT - 10)
        .set_label_area_size(LabelAreaPosition::Right, RIGHT)
        .set_label_area_size(LabelAreaPosition::Bottom, 26)
        .build_cartesian_2d(range.clone(), 0f64..rows as f64)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_y_axis()
        .x_labels(2)
        .x_label_formatter(&|_| String::new())
        .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
        .draw()?;
    for (from, to, pin) in spans(columns, columns.iter().map(|c| u8::from(c.pin.is_some()))) {
        if pin == 1 {
            chart.draw_series(std::iter::once(Rectangle::new([(from, 0.0), (to, rows as f64)], BLACK.mix(0.1).filled())))?;
        }
    }
    let bands: Vec<Bands> = points.iter().map(|p| bands(p, columns)).collect();
    for (i, band) in bands.iter().enumerate() {
        let top = (rows - i) as f64 - 0.12;
        let bottom = top - 0.76;
        for (from, to, state) in spans(columns, band.iter().map(|b| b.state)).into_iter().filter(|(_, _, s)| *s != NO_STATE) {
            chart.draw_series(std::iter::once(Rectangle::new([(from, bottom), (to, top)], STATE_COLOURS[state as usize].filled())))?;
        }
        for (from, to, engaged) in spans(columns, band.iter().map(|b| u8::from(b.engaged))) {
            if engaged == 1 {
                chart.draw_series(std::iter::once(Rectangle::new([(from, bottom), (to, bottom + 0.14)], BLACK.filled())))?;
            }
        }
        for (from, to, held) in spans(columns, band.iter().map(|b| u8::from(b.damping_held))) {
            if held == 1 {
                chart.draw_series(std::iter::once(Rectangle::new([(from, top - 0.14), (to, top)], DAMPED.filled())))?;
            }
        }
        chart.draw_series(
            columns.iter().zip(band).filter(|(_, b)| b.engage).map(|(c, _)| TriangleMarker::new((mid(c), top - 0.12), 5, BLACK.filled())),
        )?;
        let (x, y) = chart.backend_coord(&(range.start, (top + bottom) / 2.0));
        root.draw_text(&labels[i], &font(15, HPos::Right, VPos::Center), (x - 8, y))?;
    }
    if two {
        let sides = bands[0].iter().zip(&bands[1]).map(|(b, c)| {
            if b.state == NO_STATE || c.state == NO_STATE { 1 } else { 1 + u8::from(c.state > b.state) - u8::from(c.state < b.state) }
        });
        for (from, to, side) in spans(columns, sides) {
            if side != 1 {
                let colour = if side == 2 { MORE } else { LESS };
                chart.draw_series(std::iter::once(Rectangle::new([(from, 0.2), (to, 0.8)], colour.filled())))?;
            }
        }
        chart.draw_series(std::iter::once(PathElement::new(vec![(range.start, 0.5), (range.end, 0.5)], BLACK.mix(0.3))))?;
        let (x, y) = chart.backend_coord(&(range.start, 0.5));
        root.draw_text("difference", &font(15, HPos::Right, VPos::Center), (x - 8, y))?;
    }
    time_grid(d, &chart, range, 0.0..rows as f64)?;
    Ok(())
}
