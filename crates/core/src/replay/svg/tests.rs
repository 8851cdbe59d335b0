//! No two texts of a timeline cover each other: every text of the SVG (the axes' numbers, the
//! time labels, the boundaries' labels, "detail", the bands' names, the legend) as a box of its
//! font size and an average glyph width, on the drawings people found crowded: a quiet day with
//! a latency boundary beside the CPU ones, a three-day trace whose detail window starts at its
//! first minute, each at the report's width and at the narrowest the console draws.

use super::{Frame, Zone, timeline_svg};
use crate::replay::timeline::{Point, Timeline};
use vocabulary::{PolicyDescription, Thresholds, ThrottleIntent};

fn thresholds(text: &str) -> Thresholds {
    toml::from_str::<PolicyDescription>(text).expect("a shipped policy.toml").thresholds
}

/// A day from 00:00 UTC, a point a minute: CPU and connections waving, the latency ratio near 1
/// with a spike to 3.3, and the states given by `state(minute)`.
fn timeline(minutes: i64, state: impl Fn(i64) -> u8) -> Timeline {
    let start = 1_792_454_400; // 2026-10-20T00:00:00Z
    let points = (0..minutes)
        .map(|m| {
            let wave = ((m % 1440) as f32 / 1440.0 * std::f32::consts::TAU).sin();
            Point {
                at: start + m * 60,
                state: state(m),
                level: Some(state(m)),
                pin: None,
                throttles: ThrottleIntent::None,
                damping_held: false,
                cpu_pct: 30.0 - 20.0 * wave + if m % 300 == 7 { 55.0 } else { 0.0 },
                connections_pct: 35.0 - 10.0 * wave,
                latency_ratio: if m % 500 == 250 { 3.3 } else { 1.0 + 0.05 * ((m % 7) as f32) },
            }
        })
        .collect();
    Timeline { points }
}

/// A text's box: left, top, right, bottom in pixels, and the text.
type TextBox = (f64, f64, f64, f64, String);

fn attribute(tag: &str, name: &str) -> Option<String> {
    let from = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[from..].split('"').next()?.to_string())
}

/// Every unrotated text of `svg` as a box.
fn text_boxes(svg: &str) -> Vec<TextBox> {
    let mut out = Vec::new();
    for piece in svg.split("<text ").skip(1) {
        let (tag, rest) = piece.split_once('>').expect("a closed tag");
        let tag = &format!(" {tag}");
        if tag.contains("transform=") {
            continue;
        }
        let text = rest.split("</text>").next().unwrap().trim().to_string();
        let number = |name: &str| attribute(tag, name).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        let (x, y, size) = (number("x"), number("y"), number("font-size"));
        let width = 0.55 * size * text.chars().count() as f64;
        let left = match attribute(tag, "text-anchor").as_deref() {
            Some("middle") => x - width / 2.0,
            Some("end") => x - width,
            _ => x,
        };
        let centre = match attribute(tag, "dy").as_deref() {
            Some(dy) if dy.starts_with('-') => y - 0.4 * size,
            Some("0.5ex") => y,
            _ => y + 0.4 * size,
        };
        let half = 0.37 * size;
        out.push((left, centre - half, left + width, centre + half, text));
    }
    out
}

fn overlaps(svg: &str) -> Vec<String> {
    let boxes = text_boxes(svg);
    let mut out = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let wide = a.2.min(b.2) - a.0.max(b.0);
            let high = a.3.min(b.3) - a.1.max(b.1);
            if wide > 1.0 && high > 1.0 {
                out.push(format!("{:?} at ({:.0}, {:.0}) and {:?} at ({:.0}, {:.0})", a.4, a.0, a.1, b.4, b.0, b.1));
            }
        }
    }
    out
}

#[test]
fn no_two_texts_of_a_timeline_cover_each_other() {
    let base = thresholds(include_str!("../../../../../policies/1.0.0/policy.toml"));
    let candidate = thresholds(include_str!("../../../../../policies/1.3.0/policy.toml"));
    let labels = ["1.0.0".to_string(), "1.3.0".to_string()];
    let quiet = timeline(1440, |_| 0);
    // Three days; the candidate protects in the trace's second hour, so the detail window starts
    // at its first minute (where "detail" once sat on the axis's 100).
    let days = timeline(3 * 1440, |_| 0);
    let protecting = timeline(3 * 1440, |m| if (60..150).contains(&m) { 2 } else { 0 });
    let mut checked = 0;
    for width in [Frame::MIN_WIDTH, Frame::REPORT_WIDTH] {
        for (what, timelines) in [("quiet day", [&quiet, &quiet]), ("three days", [&days, &protecting])] {
            for title in [None, Some(format!("trace {what}"))] {
                let frame = Frame { title, width, zone: Zone::utc(), compared: "candidate" };
                let svg = timeline_svg(&frame, &labels, &timelines, &[&base, &candidate]).unwrap();
                assert!(svg.contains("detail") == (what == "three days"), "{what}: the detail window");
                let found = overlaps(&svg);
                assert!(found.is_empty(), "{what} at {width} pixels: texts cover each other:\n{}", found.join("\n"));
                checked += text_boxes(&svg).len();
            }
        }
    }
    assert!(checked > 200, "the texts were read: {checked}");
    // The check itself: two texts at one place are found.
    let twice = "<text x=\"10\" y=\"10\" dy=\"0.5ex\" font-size=\"12\">100\n</text><text x=\"12\" y=\"12\" dy=\"0.5ex\" font-size=\"12\">detail\n</text>";
    assert_eq!(overlaps(twice).len(), 1);
}
