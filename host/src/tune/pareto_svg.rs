//! `pareto.svg`: every candidate on the training traces, bulk capacity lost against the base
//! across, flaps per day up; the Pareto front joined and coloured by how much later it comes
//! into critical than the base (green on time, red at twice the rule's limit or more); the base
//! a black square, the chosen candidate ringed. When the space switches flap damping, the front
//! is drawn twice: among the candidates without damping (solid) and among those with it
//! (violet, dashed), so the figure shows what damping buys on this evidence.

use super::Tuning;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 672;
const GREY: RGBColor = RGBColor(176, 176, 176);
/// The front of the candidates with flap damping.
const DAMPED: RGBColor = RGBColor(69, 39, 160);

/// The Pareto front among the candidates `keep` selects, as indices into all of them.
fn front_of(t: &Tuning, keep: impl Fn(usize) -> bool) -> Vec<usize> {
    let subset: Vec<usize> = (0..t.candidates.len()).filter(|&i| keep(i)).collect();
    let train: Vec<_> = subset.iter().map(|&i| t.scores[i].train.clone()).collect();
    super::choose::pareto_front(&train).into_iter().map(|k| subset[k]).collect()
}

type Failure = Box<dyn std::error::Error>;

/// The figure, or why it could not be drawn.
pub fn pareto_svg(t: &Tuning) -> Result<String, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render(t).map_err(|e| format!("drawing pareto.svg: {e}"))))
        .unwrap_or_else(|_| Err("drawing pareto.svg: the plotting library panicked".into()))
}

/// Green at no delay to red at `limit` minutes or more.
fn delay_colour(delay: i64, limit: i64) -> RGBColor {
    let x = (delay as f64 / (limit.max(1) * 2) as f64).clamp(0.0, 1.0);
    RGBColor((46.0 + x * (211.0 - 46.0)) as u8, (160.0 - x * (160.0 - 47.0)) as u8, (67.0 - x * (67.0 - 47.0)) as u8)
}

fn render(t: &Tuning) -> Result<String, Failure> {
    let points: Vec<(f64, f64)> = t.scores.iter().map(|s| (s.train.bulk_capacity_loss_vs_base_pct, s.train.flaps_per_day)).collect();
    let base = (0.0, t.base_scores.train.flaps_per_day);
    let xs = points.iter().map(|p| p.0).chain([base.0]);
    let ys = points.iter().map(|p| p.1).chain([base.1]);
    let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let y_max = ys.fold(0.0f64, f64::max);
    let pad = ((x_max - x_min) * 0.05).max(0.01);
    let x_range = (x_min - pad)..(x_max + pad);
    let y_range = 0.0..(y_max * 1.08).max(0.1);
    let limit = t.space.choose.max_protection_delay_minutes;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let title = format!("{} {}: {} candidates on the training traces", t.base.name, t.base.version, t.candidates.len());
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .margin_bottom(48)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range, y_range)?;
        chart
            .configure_mesh()
            .x_desc("bulk capacity-minutes lost against the base (%)")
            .y_desc("flaps per day")
            .light_line_style(RGBColor(238, 238, 238))
            .draw()?;
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, GREY.filled())))?;
        let damped = |i: usize| t.candidates[i].thresholds.damping.is_some();
        let both = (0..t.candidates.len()).any(damped) && !(0..t.candidates.len()).all(damped);
        let fronts = if both { vec![front_of(t, |i| !damped(i)), front_of(t, damped)] } else { vec![t.front.clone()] };
        for (k, front) in fronts.iter().enumerate() {
            let line: Vec<(f64, f64)> = front.iter().map(|&i| points[i]).collect();
            if k == 0 {
                chart.draw_series(std::iter::once(PathElement::new(line, BLACK.stroke_width(1))))?;
            } else {
                chart.draw_series(DashedLineSeries::new(line, 6, 4, DAMPED.stroke_width(2)))?;
            }
            chart.draw_series(front.iter().map(|&i| {
                let delay = t.scores[i].train.max_protection_delay.unwrap_or(0);
                Circle::new(points[i], 6, delay_colour(delay, limit).filled())
            }))?;
            if k == 1 {
                chart.draw_series(front.iter().map(|&i| Circle::new(points[i], 8, DAMPED.stroke_width(2))))?;
            }
        }
        chart.draw_series(std::iter::once(EmptyElement::at(base) + Rectangle::new([(-6, -6), (6, 6)], BLACK.filled())))?;
        // Labels sit beside their markers (offset in pixels), not on them.
        let label = |anchor: VPos| ("sans-serif", 14).into_font().color(&BLACK).pos(Pos::new(HPos::Left, anchor));
        chart.draw_series(std::iter::once(
            EmptyElement::at(base) + Text::new(format!("base {}", t.base.version), (10, -8), label(VPos::Bottom)),
        ))?;
        if let Some(i) = t.chosen {
            chart.draw_series(std::iter::once(Circle::new(points[i], 11, BLACK.stroke_width(2))))?;
            // A chosen candidate off the drawn front: the front's candidates all break the rule
            // (or the gate), which report.md lists.
            let off = if fronts.iter().any(|f| f.contains(&i)) {
                ""
            } else {
                " (off the front: every candidate on it breaks the rule or the gate; report.md says why)"
            };
            chart.draw_series(std::iter::once(
                EmptyElement::at(points[i])
                    + Text::new(format!("chosen: {}{off}", t.candidates[i].changes(&t.base.thresholds)), (14, 10), label(VPos::Top)),
            ))?;
        }
        let legend = format!(
            "grey: every candidate; joined: the Pareto front{}, coloured by the most minutes an entry into critical comes later (green 0, red {} or more)",
            if both { " without flap damping (solid) and with it (violet, dashed)" } else { "" },
            limit.max(1) * 2
        );
        root.draw_text(&legend, &("sans-serif", 12).into_font().color(&BLACK), (20, HEIGHT as i32 - 40))?;
        // The key of the front's colours.
        let key_y = HEIGHT as i32 - 18;
        root.draw_text("front's colour, minutes later into critical:", &("sans-serif", 12).into_font().color(&BLACK), (20, key_y - 6))?;
        for (k, minutes) in [0, limit.max(1), limit.max(1) * 2].into_iter().enumerate() {
            let x = 290 + 110 * k as i32;
            root.draw(&Circle::new((x, key_y), 6, delay_colour(minutes, limit).filled()))?;
            let text = if k == 2 { format!("{minutes} or more") } else { minutes.to_string() };
            root.draw_text(&text, &("sans-serif", 12).into_font().color(&BLACK), (x + 10, key_y - 6))?;
        }
        root.present()?;
    }
    Ok(out)
}
