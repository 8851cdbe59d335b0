//! The policies' boundaries over the readings, and where their labels go: above their line
//! where there is room, else below it, else below the label before; so that no two labels on
//! one side overlap and none sits on its own line, each on white over the readings.

use super::{Column, Drawing, Failure, LATENCY, Range, STATE_COLOURS, font};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use vocabulary::Thresholds;

/// A label's height in pixels, and its gap from the line.
pub const HEIGHT: i32 = 16;
const GAP: i32 = 3;

/// The top of each label's box, for lines at pixel rows `lines` (any order) on one side.
pub fn tops(lines: &[i32]) -> Vec<i32> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| lines[i]);
    let mut out = vec![0; lines.len()];
    let mut taken = i32::MIN;
    for i in order {
        let (above, below) = (lines[i] - GAP - HEIGHT, lines[i] + GAP);
        out[i] = if above >= taken { above } else { below.max(taken) };
        taken = out[i] + HEIGHT;
    }
    out
}

type DualReadings<'a, 'b> = plotters::chart::DualCoordChartContext<
    'a,
    SVGBackend<'b>,
    plotters::coord::cartesian::Cartesian2d<plotters::coord::types::RangedCoordi64, plotters::coord::types::RangedCoordf64>,
    plotters::coord::cartesian::Cartesian2d<plotters::coord::types::RangedCoordi64, plotters::coord::types::RangedCoordf64>,
>;

/// Each policy's boundaries for the signals drawn: CPU (else connections) constrained and
/// critical on the left axis, the latency ratio's critical on the right; the baseline's solid
/// and labelled at the left end, the candidate's dashed and labelled at the right end.
/// A signal's boundaries are drawn when it comes near them (80 % of the lowest constrained
/// boundary) or is the only signal: far-off lines only clutter.
pub(super) fn draw(d: &Drawing<'_, '_>, chart: &mut DualReadings<'_, '_>, columns: &[Column], range: Range) -> Result<(), Failure> {
    let has = |i: usize| columns.iter().any(|c| c.values[i].3 > 0);
    let peak = |i: usize| columns.iter().map(|c| c.values[i].1).filter(|v| v.is_finite()).fold(f32::MIN, f32::max) as f64;
    let near = |i: usize, lowest: f64| has(i) && ((0..3).filter(|&j| has(j)).count() == 1 || peak(i) >= 0.8 * lowest);
    let lowest = |f: fn(&Thresholds) -> f64| d.thresholds.iter().map(|t| f(t)).fold(f64::MAX, f64::min);
    let percent = if near(0, lowest(|t| t.cpu_pct.constrained)) {
        Some((0, "CPU"))
    } else if near(1, lowest(|t| t.connections_pct.constrained)) {
        Some((1, "connections"))
    } else {
        None
    };
    let latency = near(2, lowest(|t| t.latency_ratio.constrained));
    // Every line first, then every label over them all: a label is never crossed by the other
    // policy's line.
    let mut labels: Vec<Vec<(String, (i32, i32))>> = Vec::new();
    for (p, t) in d.thresholds.iter().enumerate().take(2) {
        let mut lines: Vec<(f64, String, RGBColor, bool)> = Vec::new();
        if let Some((signal, name)) = percent {
            let b = if signal == 0 { t.cpu_pct } else { t.connections_pct };
            lines.push((b.constrained, format!("{name} constrained"), STATE_COLOURS[1], false));
            lines.push((b.critical, format!("{name} critical"), STATE_COLOURS[2], false));
        }
        if latency {
            lines.push((t.latency_ratio.critical, "latency critical".into(), LATENCY, true));
        }
        let mut side = Vec::new();
        for (value, what, colour, secondary) in &lines {
            let (left, right) = ((range.start, *value), (range.end, *value));
            let style = colour.stroke_width(if p == 0 { 1 } else { 2 });
            match (p == 0, *secondary) {
                (true, false) => chart.draw_series(std::iter::once(PathElement::new(vec![left, right], style)))?,
                (true, true) => chart.draw_secondary_series(std::iter::once(PathElement::new(vec![left, right], style)))?,
                (false, false) => chart.draw_series(std::iter::once(DashedPathElement::new(vec![left, right], 6, 4, style)))?,
                (false, true) => chart.draw_secondary_series(std::iter::once(DashedPathElement::new(vec![left, right], 6, 4, style)))?,
            };
            let at = if p == 0 { left } else { right };
            let pixel = if *secondary { chart.borrow_secondary().backend_coord(&at) } else { chart.backend_coord(&at) };
            side.push((format!("{} {what} {value}", d.labels[p]), pixel));
        }
        labels.push(side);
    }
    for (p, side) in labels.iter().enumerate() {
        let tops = tops(&side.iter().map(|(_, (_, y))| *y).collect::<Vec<_>>());
        for ((text, (x, _)), top) in side.iter().zip(tops) {
            let wide = (0.54 * 12.0 * text.chars().count() as f64) as i32 + 8;
            let (from, to) = if p == 0 { (x + 4, x + 4 + wide) } else { (x - 4 - wide, x - 4) };
            d.root.draw(&Rectangle::new([(from, top), (to, top + HEIGHT)], WHITE.filled()))?;
            let ink = font(12, HPos::Left, VPos::Center).color(&RGBColor(90, 60, 0));
            d.root.draw_text(text, &ink, (from + 4, top + HEIGHT / 2))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_sit_above_their_line_unless_that_overlaps_the_one_above() {
        // Far apart: each above its own line.
        assert_eq!(tops(&[100, 200]), [100 - GAP - HEIGHT, 200 - GAP - HEIGHT]);
        // 13 pixels apart (80 % and 85 % on a 300-pixel axis): the lower one goes below its line.
        let t = tops(&[113, 100]);
        assert_eq!(t[1], 100 - GAP - HEIGHT);
        assert_eq!(t[0], 113 + GAP);
        // The same line twice: one above, one below.
        let t = tops(&[50, 50]);
        assert!((t[0] - t[1]).abs() >= HEIGHT && t.iter().all(|top| *top + HEIGHT <= 50 - GAP || *top >= 50 + GAP), "{t:?}");
        // Three close lines never overlap.
        let mut t = tops(&[60, 62, 64]);
        t.sort();
        assert!(t.windows(2).all(|w| w[1] - w[0] >= HEIGHT), "{t:?}");
    }
}
