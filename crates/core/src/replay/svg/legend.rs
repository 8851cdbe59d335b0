//! The key under a timeline: the states always, then only the marks the trace holds (a
//! series, a pin, a failed read, throttles, a damping hold, the readings' band when minutes
//! share a pixel column), wrapped to the drawing's width.

use super::layout::Present;
use super::{Area, CONNECTIONS, CPU, DAMPED, FAILED, Failure, LATENCY, LESS, MORE, STATE_COLOURS, STATE_NAMES, font};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

const TEXT: u32 = 14;
const ROW: i32 = 26;

#[derive(Debug, Clone, Copy)]
enum Mark {
    Swatch(RGBColor, f64),
    Line(RGBColor),
    Tick,
    Triangle,
    Bar,
    Edge,
}

/// The legend's items, in order; `compared` names the second timeline ("candidate", "shadow").
fn items(present: &Present, compared: &str) -> Vec<(Mark, String)> {
    let mut out: Vec<(Mark, String)> = STATE_COLOURS.iter().zip(STATE_NAMES).map(|(c, n)| (Mark::Swatch(*c, 1.0), n.to_string())).collect();
    let mut push = |mark: Mark, text: &str| out.push((mark, text.to_string()));
    if present.pinned {
        push(Mark::Swatch(BLACK, 0.1), "pinned");
    }
    if present.two {
        push(Mark::Swatch(MORE, 1.0), &format!("{compared} more protective"));
        push(Mark::Swatch(LESS, 1.0), &format!("{compared} less protective"));
    }
    let signals = [(CPU, "CPU %"), (CONNECTIONS, "connections %"), (LATENCY, "latency ratio (right axis)")];
    for ((colour, name), seen) in signals.into_iter().zip(present.signals) {
        if seen {
            push(Mark::Line(colour), name);
        }
    }
    if present.ranged {
        push(Mark::Swatch(CPU, 0.2), "lowest to highest reading of the minutes in one pixel column");
    }
    if present.failed {
        push(Mark::Tick, "failed read");
    }
    if present.throttles {
        push(Mark::Triangle, "throttles engage");
        push(Mark::Bar, "throttles engaged");
    }
    if present.damping_held {
        push(Mark::Edge, "recovery held by flap damping");
    }
    out
}

/// An item's width: its mark, the text at about 0.55 em a character, and a gap.
fn width(label: &str) -> i32 {
    20 + (0.55 * TEXT as f64 * label.chars().count() as f64) as i32 + 24
}

/// Where each item goes, from `left` and wrapping before `right`: (x, row).
fn placed(items: &[(Mark, String)], left: i32, right: i32) -> Vec<(i32, i32)> {
    let (mut x, mut row) = (left, 0);
    items
        .iter()
        .map(|(_, label)| {
            if x > left && x + width(label) > right {
                (x, row) = (left, row + 1);
            }
            let at = (x, row);
            x += width(label);
            at
        })
        .collect()
}

/// The legend's height for a drawing `right` wide from `left`.
pub(crate) fn height(present: &Present, compared: &str, left: i32, right: i32) -> u32 {
    let rows = placed(&items(present, compared), left, right).last().map_or(0, |(_, row)| row + 1);
    (rows * ROW + 16) as u32
}

pub fn draw(area: &Area<'_>, present: &Present, compared: &str, left: i32, right: i32) -> Result<(), Failure> {
    let items = items(present, compared);
    let text = font(TEXT, HPos::Left, VPos::Center);
    for ((mark, label), (x, row)) in items.iter().zip(placed(&items, left, right)) {
        let y = 14 + row * ROW;
        match *mark {
            Mark::Swatch(colour, alpha) => area.draw(&Rectangle::new([(x, y - 7), (x + 14, y + 7)], colour.mix(alpha).filled()))?,
            Mark::Line(colour) => area.draw(&PathElement::new(vec![(x, y), (x + 14, y)], colour.stroke_width(2)))?,
            Mark::Tick => area.draw(&PathElement::new(vec![(x + 7, y - 7), (x + 7, y + 7)], FAILED.stroke_width(2)))?,
            Mark::Triangle => area.draw(&TriangleMarker::new((x + 7, y), 5, BLACK.filled()))?,
            Mark::Bar => area.draw(&Rectangle::new([(x, y + 2), (x + 14, y + 6)], BLACK.filled()))?,
            Mark::Edge => area.draw(&Rectangle::new([(x, y - 6), (x + 14, y - 2)], DAMPED.filled()))?,
        }
        area.draw_text(label, &text, (x + 20, y))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_legend_names_only_what_the_trace_holds_and_wraps_to_its_width() {
        let cpu_only = Present { signals: [true, false, false], ..Present::default() };
        let names: Vec<String> = items(&cpu_only, "candidate").into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["normal", "constrained", "critical", "emergency", "CPU %"]);
        let all = Present { signals: [true; 3], failed: true, pinned: true, throttles: true, damping_held: true, two: true, ranged: true };
        assert_eq!(items(&all, "candidate").len(), 15);
        assert!(items(&all, "shadow").iter().any(|(_, n)| n == "shadow more protective"));
        let narrow = placed(&items(&all, "candidate"), 150, 700);
        assert!(
            narrow.iter().zip(items(&all, "candidate")).all(|((x, _), (_, label))| x + width(&label) <= 700 || *x == 150),
            "{narrow:?}"
        );
        assert!(height(&all, "candidate", 150, 700) > height(&all, "candidate", 150, 2400));
    }
}
