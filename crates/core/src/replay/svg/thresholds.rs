//! The policies' boundaries over the readings, and where their labels go: above their line
//! where there is room, else below it, else further down; so that no two labels overlap (those
//! of the two ends included) and none sits on its own line, each on white over the readings,
//! opening with a sample of its line and written in its colour.

use super::{Column, Drawing, Failure, LATENCY, Range, STATE_COLOURS, font};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use vocabulary::Thresholds;

/// A label's height in pixels, and its gap from the line.
pub const HEIGHT: i32 = 16;
const GAP: i32 = 3;
/// The line's sample at the start of its label.
const SAMPLE: i32 = 18;

/// About how wide `text` is at 12 pixels (sans-serif averages a little over half an em).
fn text_width(text: &str) -> i32 {
    (0.56 * 12.0 * text.chars().count() as f64) as i32
}

/// A line's colour dark enough for text on white (the constrained yellow is not).
fn darker(c: RGBColor) -> RGBColor {
    let scale = |v: u8| (f64::from(v) * 0.55) as u8;
    RGBColor(scale(c.0), scale(c.1), scale(c.2))
}

/// A label's box across the drawing (`from..to` in pixels) and the row of its line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelBox {
    pub from: i32,
    pub to: i32,
    pub line: i32,
}

/// The top of each label's box: above its line where that is free, else below it, else further
/// down until free; nearest lines first. Free means no label placed before covers any of its
/// pixels (labels of both ends meet on a narrow drawing). So no two labels overlap and none
/// sits on its own line.
pub(crate) fn tops(labels: &[LabelBox]) -> Vec<i32> {
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by_key(|&i| labels[i].line);
    let mut out = vec![0; labels.len()];
    let mut placed: Vec<(LabelBox, i32)> = Vec::new();
    for i in order {
        let l = labels[i];
        let free =
            |top: i32| placed.iter().all(|(p, p_top)| p.to <= l.from || l.to <= p.from || top + HEIGHT <= *p_top || p_top + HEIGHT <= top);
        let above = l.line - GAP - HEIGHT;
        let mut top = if free(above) { above } else { l.line + GAP };
        while !free(top) {
            top += 1;
        }
        out[i] = top;
        placed.push((l, top));
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
    // policy's line. Each label starts with a sample of its line (solid for the baseline,
    // dashed for the candidate) and is written in its line's colour, darkened to read on white.
    let mut labels: Vec<(String, RGBColor, usize, LabelBox)> = Vec::new();
    for (p, t) in d.thresholds.iter().enumerate().take(2) {
        let mut lines: Vec<(f64, String, RGBColor, bool)> = Vec::new();
        if let Some((signal, name)) = percent {
            let b = if signal == 0 { t.cpu_pct } else { t.connections_pct };
            lines.push((b.constrained, format!("{name} constrained {}", b.constrained), STATE_COLOURS[1], false));
            lines.push((b.critical, format!("{name} critical {}", b.critical), STATE_COLOURS[2], false));
        }
        if latency {
            lines.push((
                t.latency_ratio.critical,
                format!("latency ratio critical {} (right axis)", t.latency_ratio.critical),
                LATENCY,
                true,
            ));
        }
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
            let (x, y) = if *secondary { chart.borrow_secondary().backend_coord(&at) } else { chart.backend_coord(&at) };
            let text = format!("{} {what}", d.labels[p]);
            let wide = SAMPLE + text_width(&text) + 8;
            let (from, to) = if p == 0 { (x + 4, x + 4 + wide) } else { (x - 4 - wide, x - 4) };
            labels.push((text, *colour, p, LabelBox { from, to, line: y }));
        }
    }
    let tops = tops(&labels.iter().map(|(_, _, _, b)| *b).collect::<Vec<_>>());
    for ((text, colour, p, b), top) in labels.iter().zip(tops) {
        d.root.draw(&Rectangle::new([(b.from, top), (b.to, top + HEIGHT)], WHITE.filled()))?;
        let middle = top + HEIGHT / 2;
        let sample = vec![(b.from + 4, middle), (b.from + SAMPLE, middle)];
        let style = colour.stroke_width(2);
        if *p == 0 {
            d.root.draw(&PathElement::new(sample, style))?;
        } else {
            d.root.draw(&DashedPathElement::new(sample, 4, 2, style))?;
        }
        let dark = darker(*colour);
        let ink = font(12, HPos::Left, VPos::Center).color(&dark);
        d.root.draw_text(text, &ink, (b.from + SAMPLE + 4, middle))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_side(lines: &[i32]) -> Vec<i32> {
        tops(&lines.iter().map(|&line| LabelBox { from: 0, to: 200, line }).collect::<Vec<_>>())
    }

    #[test]
    fn labels_sit_above_their_line_unless_that_overlaps_the_one_above() {
        // Far apart: each above its own line.
        assert_eq!(one_side(&[100, 200]), [100 - GAP - HEIGHT, 200 - GAP - HEIGHT]);
        // 13 pixels apart (80 % and 85 % on a 300-pixel axis): the lower one goes below its line.
        let t = one_side(&[113, 100]);
        assert_eq!(t[1], 100 - GAP - HEIGHT);
        assert_eq!(t[0], 113 + GAP);
        // The same line twice: one above, one below.
        let t = one_side(&[50, 50]);
        assert!((t[0] - t[1]).abs() >= HEIGHT && t.iter().all(|top| *top + HEIGHT <= 50 - GAP || *top >= 50 + GAP), "{t:?}");
        // Three close lines never overlap.
        let mut t = one_side(&[60, 62, 64]);
        t.sort();
        assert!(t.windows(2).all(|w| w[1] - w[0] >= HEIGHT), "{t:?}");
    }

    #[test]
    fn labels_of_the_two_ends_meet_on_a_narrow_drawing_and_do_not_overlap() {
        // The baseline's label from the left end, the candidate's from the right, both 300
        // pixels wide on a 400-pixel plot, for lines 2 pixels apart.
        let boxes = [LabelBox { from: 150, to: 450, line: 100 }, LabelBox { from: 250, to: 550, line: 102 }];
        let t = tops(&boxes);
        assert!((t[0] - t[1]).abs() >= HEIGHT, "{t:?}");
        // Far apart across the drawing, they may share a row.
        let boxes = [LabelBox { from: 0, to: 100, line: 100 }, LabelBox { from: 500, to: 600, line: 100 }];
        assert_eq!(tops(&boxes), [100 - GAP - HEIGHT; 2]);
    }
}
