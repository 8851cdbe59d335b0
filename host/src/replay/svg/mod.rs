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

mod layout;

use super::timeline::{Point, Timeline};
use layout::{Bands, Column, Range, Stamp, bands, columns, detail_window, mid, runs, spans, stamp, time_ticks, within};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use vocabulary::{Instant, Thresholds};

const WIDTH: u32 = 1400;
const LEFT: u32 = 150;
const RIGHT: u32 = 80;
const COLUMNS: usize = (WIDTH - LEFT - RIGHT) as usize;
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

/// The SVG of one trace's timelines, `labels[i]` naming `timelines[i]` with `thresholds[i]`;
/// the first is the baseline, whose readings are drawn.
pub fn timeline_svg(trace: &str, labels: &[String], timelines: &[&Timeline], thresholds: &[&Thresholds]) -> Result<String, String> {
    // plotters panics on some degenerate ranges; a report must fail with a message instead.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render(trace, labels, timelines, thresholds)))
        .unwrap_or_else(|_| Err(format!("drawing {trace}: the plotting library panicked")))
}

fn render(trace: &str, labels: &[String], timelines: &[&Timeline], thresholds: &[&Thresholds]) -> Result<String, String> {
    let points: Vec<&[Point]> = timelines.iter().map(|t| t.points.as_slice()).collect();
    let (Some(first), Some(last)) = (points.first().and_then(|p| p.first()), points.first().and_then(|p| p.last())) else {
        return Ok(format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"10\" y=\"25\">trace {}: no ticks</text></svg>\n",
            trace.replace('&', "&amp;").replace('<', "&lt;")
        ));
    };
    let whole = first.at..(last.at + 60).max(first.at + 120);
    let detail = detail_window(&points, &whole);
    let rows = points.len() + usize::from(points.len() == 2);
    let bands_height = 36 + 32 * rows as u32;
    let sections = 1 + u32::from(detail.is_some());
    let height = TITLE + sections * (READINGS + bands_height + HEADING) + LEGEND;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        let fail = |e: Failure| format!("drawing {trace}: {e}");
        root.fill(&WHITE).map_err(|e| fail(e.into()))?;
        let (title, mut rest) = root.split_vertically(TITLE);
        let heading = format!("trace {trace}: {}", labels.join(" vs "));
        title.draw_text(&heading, &bold(22, HPos::Left, VPos::Center), (LEFT as i32, 20)).map_err(|e| fail(e.into()))?;
        let period = format!("{} to {} UTC, {} ticks", stamp(whole.start, Stamp::Full), stamp(last.at, Stamp::Full), points[0].len());
        title.draw_text(&period, &font(14, HPos::Left, VPos::Center), (LEFT as i32, 44)).map_err(|e| fail(e.into()))?;
        let mut views = vec![("whole trace".to_string(), whole.clone())];
        if let Some(d) = &detail {
            views.push((
                format!("detail: {} to {}, where the policies first differ", stamp(d.start, Stamp::Full), stamp(d.end, Stamp::Full)),
                d.clone(),
            ));
        }
        for (i, (name, range)) in views.iter().enumerate() {
            let (heading, below) = rest.split_vertically(HEADING);
            let (readings, below) = below.split_vertically(READINGS);
            let (bands, below) = below.split_vertically(bands_height);
            rest = below;
            heading.draw_text(name, &bold(15, HPos::Left, VPos::Bottom), (LEFT as i32, HEADING as i32 - 4)).map_err(|e| fail(e.into()))?;
            let shown: Vec<&[Point]> = points.iter().map(|p| within(p, range)).collect();
            let marked = if i == 0 { detail.clone() } else { None };
            view(&root, &readings, &bands, labels, &shown, thresholds, range.clone(), marked).map_err(fail)?;
        }
        draw_legend(&rest, points.len() == 2).map_err(fail)?;
        root.present().map_err(|e| fail(e.into()))?;
    }
    Ok(out)
}

const TITLE: u32 = 56;
const HEADING: u32 = 26;
const READINGS: u32 = 300;
const LEGEND: u32 = 64;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Failure = Box<dyn std::error::Error>;
/// Draws one legend mark at (x, y).
type Mark<'a> = Box<dyn Fn(i32, i32) -> Result<(), Failure> + 'a>;

fn font(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK).pos(Pos::new(h, v))
}

fn bold(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
    ("sans-serif", size).into_font().style(FontStyle::Bold).color(&BLACK).pos(Pos::new(h, v))
}

/// One view of the trace over `range`: readings above, bands below; `marked` outlines the
/// detail window on the whole-trace view.
#[expect(clippy::too_many_arguments, reason = "one view is the drawing areas, the series and the window: a struct would only rename them")]
fn view(
    root: &Area<'_>,
    readings: &Area<'_>,
    bands: &Area<'_>,
    labels: &[String],
    points: &[&[Point]],
    thresholds: &[&Thresholds],
    range: Range,
    marked: Option<Range>,
) -> Result<(), Failure> {
    let columns = columns(points[0], range.clone());
    draw_readings(root, readings, labels, points[0], &columns, thresholds, range.clone(), marked)?;
    draw_bands(root, bands, labels, points, &columns, range)?;
    Ok(())
}

#[expect(clippy::too_many_arguments, reason = "the readings panel draws from the same parts as `view`, passed on unchanged")]
fn draw_readings(
    root: &Area<'_>,
    area: &Area<'_>,
    labels: &[String],
    points: &[Point],
    columns: &[Column],
    thresholds: &[&Thresholds],
    range: Range,
    marked: Option<Range>,
) -> Result<(), Failure> {
    let has = |i: usize| columns.iter().any(|c| c.values[i].3 > 0);
    let max_ratio = columns.iter().map(|c| c.values[2].1).filter(|v| v.is_finite()).fold(3.0f32, f32::max) as f64 * 1.05;
    let mut chart = ChartBuilder::on(area)
        .margin_right(10)
        .margin_top(6)
        .set_label_area_size(LabelAreaPosition::Left, LEFT - 10)
        .set_label_area_size(LabelAreaPosition::Right, RIGHT)
        .set_label_area_size(LabelAreaPosition::Bottom, 24)
        .build_cartesian_2d(range.clone(), 0f64..105f64)?
        .set_secondary_coord(range.clone(), 0f64..max_ratio);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(2)
        .x_label_formatter(&|_| String::new())
        .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
        .y_desc("CPU / connections %")
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    if has(2) {
        chart.configure_secondary_axes().y_desc("worst latency ratio (p95 / baseline)").y_labels(6).draw()?;
    }
    for (from, to, pin) in spans(columns, columns.iter().map(|c| c.pin.map_or(0, |p| p + 1))) {
        if pin > 0 {
            chart.draw_series(std::iter::once(Rectangle::new([(from, 0.0), (to, 105.0)], BLACK.mix(0.1).filled())))?;
            let (x0, y0) = chart.backend_coord(&(from, 105.0));
            let (x1, _) = chart.backend_coord(&(to, 105.0));
            if x1 - x0 > 90 {
                root.draw_text(&format!("pinned {}", STATE_NAMES[pin as usize - 1]), &font(12, HPos::Left, VPos::Top), (x0 + 4, y0 + 4))?;
            }
        }
    }
    time_grid(root, &chart, range.clone(), 0.0..105.0)?;
    // Each policy's boundaries for the signals drawn: CPU (else connections) constrained and
    // critical on the left axis, the latency ratio's critical on the right; the baseline's
    // solid and labelled on the left, the candidate's dashed and labelled on the right.
    // A signal's boundaries are drawn when it comes near them (80 % of the lowest constrained
    // boundary) or is the only signal: far-off lines only clutter.
    let peak = |i: usize| columns.iter().map(|c| c.values[i].1).filter(|v| v.is_finite()).fold(f32::MIN, f32::max) as f64;
    let near = |i: usize, lowest: f64| has(i) && ((0..3).filter(|&j| has(j)).count() == 1 || peak(i) >= 0.8 * lowest);
    let lowest = |f: fn(&Thresholds) -> f64| thresholds.iter().map(|t| f(t)).fold(f64::MAX, f64::min);
    let percent = if near(0, lowest(|t| t.cpu_pct.constrained)) {
        Some((0, "CPU"))
    } else if near(1, lowest(|t| t.connections_pct.constrained)) {
        Some((1, "connections"))
    } else {
        None
    };
    let latency = near(2, lowest(|t| t.latency_ratio.constrained));
    for (p, t) in thresholds.iter().enumerate().take(2) {
        let mut lines: Vec<(f64, String, RGBColor, bool)> = Vec::new();
        if let Some((signal, name)) = percent {
            let b = if signal == 0 { t.cpu_pct } else { t.connections_pct };
            lines.push((b.constrained, format!("{name} constrained"), STATE_COLOURS[1], false));
            lines.push((b.critical, format!("{name} critical"), STATE_COLOURS[2], false));
        }
        if latency {
            lines.push((t.latency_ratio.critical, "latency critical".into(), LATENCY, true));
        }
        for (value, what, colour, secondary) in lines {
            let (left, right) = ((range.start, value), (range.end, value));
            let style = colour.stroke_width(if p == 0 { 1 } else { 2 });
            match (p == 0, secondary) {
                (true, false) => chart.draw_series(std::iter::once(PathElement::new(vec![left, right], style)))?,
                (true, true) => chart.draw_secondary_series(std::iter::once(PathElement::new(vec![left, right], style)))?,
                (false, false) => chart.draw_series(std::iter::once(DashedPathElement::new(vec![left, right], 6, 4, style)))?,
                (false, true) => chart.draw_secondary_series(std::iter::once(DashedPathElement::new(vec![left, right], 6, 4, style)))?,
            };
            let at = if p == 0 { left } else { right };
            let (x, y) = if secondary { chart.borrow_secondary().backend_coord(&at) } else { chart.backend_coord(&at) };
            let label = font(11, if p == 0 { HPos::Left } else { HPos::Right }, VPos::Bottom).color(&RGBColor(90, 60, 0));
            root.draw_text(&format!("{} {what} {value}", labels[p]), &label, (if p == 0 { x + 4 } else { x - 4 }, y - 2))?;
        }
    }
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
    if let Some(m) = marked {
        chart.draw_series(std::iter::once(Rectangle::new([(m.start, 0.5), (m.end, 104.5)], BLACK.stroke_width(1))))?;
        let (x, y) = chart.backend_coord(&(m.start, 104.5));
        root.draw_text("detail", &font(11, HPos::Right, VPos::Top), (x - 3, y + 2))?;
    }
    chart.draw_series(
        columns.iter().filter(|c| c.failed).map(|c| PathElement::new(vec![(mid(c), 0.0), (mid(c), 7.0)], FAILED.stroke_width(2))),
    )?;
    Ok(())
}

/// Vertical grid lines at round times, labelled under the plot.
fn time_grid<Y: plotters::coord::ranged1d::Ranged<ValueType = f64>>(
    root: &Area<'_>,
    chart: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<plotters::coord::types::RangedCoordi64, Y>>,
    range: Range,
    y: std::ops::Range<f64>,
) -> Result<(), Failure> {
    let (ticks, format) = time_ticks(range);
    for at in ticks {
        let (x, top) = chart.backend_coord(&(at, y.end));
        let (_, bottom) = chart.backend_coord(&(at, y.start));
        root.draw(&PathElement::new(vec![(x, top), (x, bottom)], BLACK.mix(0.12)))?;
        root.draw(&PathElement::new(vec![(x, bottom), (x, bottom + 4)], BLACK))?;
        root.draw_text(&stamp(at, format), &font(12, HPos::Center, VPos::Top), (x, bottom + 6))?;
    }
    Ok(())
}

fn draw_bands(
    root: &Area<'_>,
    area: &Area<'_>,
    labels: &[String],
    points: &[&[Point]],
    columns: &[Column],
    range: Range,
) -> Result<(), Failure> {
    let two = points.len() == 2;
    let rows = points.len() + usize::from(two);
    let mut chart = ChartBuilder::on(area)
        .margin_right(10)
        .margin_top(6)
        .set_label_area_size(LabelAreaPosition::Left, LEFT - 10)
        .set_label_area_size(LabelAreaPosition::Right, RIGHT)
        .set_label_area_size(LabelAreaPosition::Bottom, 24)
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
        for (from, to, state) in spans(columns, band.iter().map(|b| b.state)) {
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
        root.draw_text(&labels[i], &font(14, HPos::Right, VPos::Center), (x - 8, y))?;
    }
    if two {
        let sides = bands[0].iter().zip(&bands[1]).map(|(b, c)| 1 + u8::from(c.state > b.state) - u8::from(c.state < b.state));
        for (from, to, side) in spans(columns, sides) {
            if side != 1 {
                let colour = if side == 2 { MORE } else { LESS };
                chart.draw_series(std::iter::once(Rectangle::new([(from, 0.2), (to, 0.8)], colour.filled())))?;
            }
        }
        chart.draw_series(std::iter::once(PathElement::new(vec![(range.start, 0.5), (range.end, 0.5)], BLACK.mix(0.3))))?;
        let (x, y) = chart.backend_coord(&(range.start, 0.5));
        root.draw_text("difference", &font(14, HPos::Right, VPos::Center), (x - 8, y))?;
    }
    time_grid(root, &chart, range, 0.0..rows as f64)?;
    Ok(())
}

fn draw_legend(area: &Area<'_>, two: bool) -> Result<(), Failure> {
    let text = font(13, HPos::Left, VPos::Center);
    let row = |y: i32, items: Vec<(Mark<'_>, &str)>| -> Result<(), Failure> {
        let mut x = LEFT as i32;
        for (mark, label) in items {
            mark(x, y)?;
            area.draw_text(label, &text, (x + 20, y))?;
            x += 40 + (6.6 * label.chars().count() as f64) as i32;
        }
        Ok(())
    };
    let swatch = |colour: RGBColor| -> Mark<'_> {
        Box::new(move |x, y| Ok(area.draw(&Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.filled()))?))
    };
    let mut states: Vec<(Mark<'_>, &str)> = STATE_COLOURS.iter().zip(STATE_NAMES).map(|(c, n)| (swatch(*c), n)).collect();
    states.push((Box::new(|x, y| Ok(area.draw(&Rectangle::new([(x, y - 6), (x + 14, y + 6)], BLACK.mix(0.1).filled()))?)), "pinned"));
    if two {
        states.push((swatch(MORE), "candidate more protective"));
        states.push((swatch(LESS), "candidate less protective"));
    }
    row(16, states)?;
    let line = |colour: RGBColor| -> Mark<'_> {
        Box::new(move |x, y| Ok(area.draw(&PathElement::new(vec![(x, y), (x + 14, y)], colour.stroke_width(2)))?))
    };
    row(
        42,
        vec![
            (line(CPU), "CPU %"),
            (line(CONNECTIONS), "connections %"),
            (line(LATENCY), "latency ratio (right axis)"),
            (
                Box::new(|x, y| Ok(area.draw(&PathElement::new(vec![(x + 7, y - 7), (x + 7, y + 7)], FAILED.stroke_width(2)))?)),
                "failed read",
            ),
            (Box::new(|x, y| Ok(area.draw(&TriangleMarker::new((x + 7, y), 5, BLACK.filled()))?)), "throttles engage"),
            (Box::new(|x, y| Ok(area.draw(&Rectangle::new([(x, y + 2), (x + 14, y + 6)], BLACK.filled()))?)), "throttles engaged"),
            (
                Box::new(|x, y| Ok(area.draw(&Rectangle::new([(x, y - 6), (x + 14, y - 2)], DAMPED.filled()))?)),
                "recovery held by flap damping",
            ),
        ],
    )?;
    Ok(())
}
