//! `report.md`, the tuning report people read: the evidence, the space, base against chosen on
//! the training traces and on the hold-out, the Pareto front, the chosen candidate trace by trace,
//! and the emergency switch's readiness (`report.json`, the same as data, is `super::report`).
//! Nothing in it depends on the clock or the machine: the same inputs give the same bytes.

use super::Tuning;
use super::evidence::Set;
use super::score::Readiness;
use super::space::number;
use std::fmt::Write;

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}x", a / b)
    } else if a == 0.0 {
        "same (0)".into()
    } else {
        "-".into()
    }
}

/// `report.md`.
pub fn markdown(t: &Tuning, command: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Tuning `{}` {} on recorded evidence\n", t.base.name, t.base.version);
    let _ = writeln!(md, "```sh\n{command}\n```\n");
    md.push_str(&super::report_cv::fit_warning(t));
    evidence_section(&mut md, t);
    space_section(&mut md, t);
    result_section(&mut md, t);
    super::report_cv::section(&mut md, t);
    front_section(&mut md, t);
    per_trace_section(&mut md, t);
    readiness_section(&mut md, t);
    md
}

fn evidence_section(md: &mut String, t: &Tuning) {
    let days = |set: Set| t.evidence.iter().filter(|e| e.set == set).map(|e| e.ticks).sum::<u64>() as f64 / 1440.0;
    let count = |set: Set| t.evidence.iter().filter(|e| e.set == set).count();
    let _ = writeln!(md, "## Evidence\n");
    if let Some(cv) = &t.cross_validation {
        let _ = writeln!(
            md,
            "{} traces from {} series ({:.1} days), all chosen on; each series is also held out whole once, and judged by a candidate chosen on the others (below).\n",
            t.evidence.len(),
            cv.folds.len(),
            days(Set::Train)
        );
    } else {
        let _ = writeln!(
            md,
            "{} traces: {} to choose on ({:.1} days), {} held out to validate on ({:.1} days).\n",
            t.evidence.len(),
            count(Set::Train),
            days(Set::Train),
            count(Set::Holdout),
            days(Set::Holdout)
        );
    }
    let _ = writeln!(md, "| trace | set | days | source | sha256 |\n|---|---|---:|---|---|");
    for e in &t.evidence {
        let set = if e.set == Set::Train { "train" } else { "hold-out" };
        let _ =
            writeln!(md, "| {} | {set} | {:.1} | `{}` | `{}` |", e.trace.name, e.ticks as f64 / 1440.0, e.source, &e.source_sha256[..12]);
    }
    md.push('\n');
}

fn space_section(md: &mut String, t: &Tuning) {
    let _ = writeln!(md, "## Search space\n\n| threshold | base | values |\n|---|---:|---|");
    let base = super::space::settings_of(&t.base.thresholds);
    for d in &t.space.dimensions {
        let b = base.iter().find(|(k, _)| *k == d.key).map_or("-".into(), |(_, v)| number(*v));
        let values: Vec<String> = d.values.iter().map(|v| number(*v)).collect();
        let _ = writeln!(md, "| `{}` | {b} | {} |", d.key, values.join(", "));
    }
    let _ = writeln!(md, "\n{} candidates. {}\n", t.candidates.len(), rule_text(t));
    if let Some((names, outcomes)) = &t.gate {
        let failing = outcomes.iter().filter(|o| o.findings > 0).count();
        let most = match super::gate_check::most_refusing(outcomes) {
            Some((kind, n)) => format!(" The finding that fails the most of them is {kind}, in {n}."),
            None => String::new(),
        };
        let _ = writeln!(
            md,
            "The A/B gate is a constraint too: each candidate is replayed against the base over the gate's {} traces ({}), which are not scored, and one the gate fails is not chosen. It fails {failing} of the {} candidates.{most}\n",
            names.len(),
            names.join(", "),
            outcomes.len()
        );
    }
}

/// How the chosen candidate is chosen, in one or two sentences.
pub fn rule_text(t: &Tuning) -> String {
    let r = &t.space.choose;
    let limits = format!(
        "break no invariant, match every entry of the base into critical no more than {} min later, and lose at most {} % of the base's bulk capacity-minutes",
        r.max_protection_delay_minutes,
        number(r.max_bulk_capacity_loss_pct)
    );
    if t.cross_validation.is_some() {
        format!(
            "Among the candidates that, over all the series, {limits}, and under which no series flaps more often than under the base, the chosen one is the one whose worst series does best: the smallest largest ratio of its flaps per day to the base's."
        )
    } else {
        format!("The chosen one has the fewest flaps per day on the training traces among those that {limits}.")
    }
}

/// The two columns of the result's judgement: the hold-out, or with cross-validation each
/// series judged by the candidate chosen without it (the same for every candidate shown).
fn judged(t: &Tuning, i: usize) -> (&super::choose::SetScore, &super::choose::SetScore, &'static str) {
    match &t.cross_validation {
        Some(cv) => (&cv.base, &cv.held_out, "held out (cross-validated)"),
        None => (&t.base_scores.holdout, &t.scores[i].holdout, "hold-out"),
    }
}

fn result_section(md: &mut String, t: &Tuning) {
    let _ = writeln!(md, "## Result\n");
    if t.chosen.is_none() {
        let _ =
            writeln!(md, "No candidate meets the rule on the training traces; the base stays. Why those of the Pareto front did not:\n");
        for &f in t.front.iter().take(5) {
            let why = t.verdicts[f].as_ref().err().map_or("", String::as_str);
            let _ = writeln!(md, "- candidate {f}, {}: {why}", t.candidates[f].label());
        }
        md.push('\n');
    }
    let Some(i) = t.shown else { return };
    let (b, c) = (&t.base_scores, &t.scores[i]);
    let what = if t.chosen == Some(i) { "Chosen" } else { "Not chosen, shown for comparison (the first of the Pareto front)" };
    let _ = writeln!(
        md,
        "{what}: candidate {i}, **{}** (against the base: {}).\n",
        t.candidates[i].label(),
        t.candidates[i].changes(&t.base.thresholds)
    );
    let who = if t.chosen == Some(i) { "chosen" } else { "candidate" };
    let (base_judged, judged_scores, side) = judged(t, i);
    let judged_who = if t.cross_validation.is_some() { "chosen without the series" } else { who };
    let _ = writeln!(md, "| metric | base, train | {who}, train | base, {side} | {judged_who}, {side} |\n|---|---:|---:|---:|---:|");
    let mut row = |name: &str, f: &dyn Fn(&super::choose::SetScore) -> String| {
        let _ = writeln!(md, "| {name} | {} | {} | {} | {} |", f(&b.train), f(&c.train), f(base_judged), f(judged_scores));
    };
    row("days", &|s| format!("{:.1}", s.ticks as f64 / 1440.0));
    row("flaps (a change undone within 15 min)", &|s| s.flaps.to_string());
    row("flaps per day", &|s| format!("{:.2}", s.flaps_per_day));
    row("transitions", &|s| s.transitions.to_string());
    row("bulk capacity withheld (% of minutes)", &|s| format!("{:.3}", s.bulk_capacity_withheld_pct));
    row("bulk capacity-minutes lost against the base (%)", &|s| format!("{:.3}", s.bulk_capacity_loss_vs_base_pct));
    row("over-protection (minutes protected on normal readings)", &|s| s.over_protection_minutes.to_string());
    row("minutes critical", &|s| s.minutes_critical.to_string());
    row("minutes emergency", &|s| s.minutes_emergency.to_string());
    row("worst minutes from a first critical reading to protection", &|s| opt(s.worst_minutes_to_protect));
    row("entries of the base into critical", &|s| s.base_entries.to_string());
    row("most minutes one came later", &|s| opt(s.max_protection_delay));
    row("entries never matched", &|s| s.missed_protections.to_string());
    row("invariant violations", &|s| s.violations.to_string());
    if t.cross_validation.is_some() {
        md.push('\n'); // the cross-validation section says what the judged columns mean
        return;
    }
    let holdout = super::choose::meets(&c.holdout, &t.space.choose);
    let _ = writeln!(
        md,
        "\nOn the hold-out this candidate flaps {} as often as the base ({:.2} against {:.2} a day), loses {:.3} % of its bulk capacity-minutes, comes at most {} min later into critical, and {}.\n",
        ratio(c.holdout.flaps_per_day, b.holdout.flaps_per_day),
        c.holdout.flaps_per_day,
        b.holdout.flaps_per_day,
        c.holdout.bulk_capacity_loss_vs_base_pct,
        opt(c.holdout.max_protection_delay),
        match &holdout {
            Ok(()) => "meets the rule there too".to_string(),
            Err(why) => format!("does not meet the rule there: {why}"),
        }
    );
}

fn front_section(md: &mut String, t: &Tuning) {
    let _ = writeln!(md, "## The trade-off (training traces)\n\n![Pareto front](pareto.svg)\n");
    let _ = writeln!(
        md,
        "The Pareto front: no other candidate has both fewer flaps per day and less bulk capacity lost ({} of {}).\n",
        t.front.len(),
        t.candidates.len()
    );
    let _ = writeln!(
        md,
        "| candidate | settings | flaps per day | capacity lost % | most minutes later | meets the rule |\n|---:|---|---:|---:|---:|---|"
    );
    for &i in &t.front {
        let s = &t.scores[i].train;
        let meets = match &t.verdicts[i] {
            Ok(()) if Some(i) == t.chosen => "yes, chosen".to_string(),
            Ok(()) => "yes".to_string(),
            Err(why) => format!("no: {why}"),
        };
        let _ = writeln!(
            md,
            "| {i} | {} | {:.2} | {:.3} | {} | {meets} |",
            t.candidates[i].label(),
            s.flaps_per_day,
            s.bulk_capacity_loss_vs_base_pct,
            opt(s.max_protection_delay)
        );
    }
    md.push('\n');
}

fn per_trace_section(md: &mut String, t: &Tuning) {
    let Some(i) = t.shown else { return };
    let which = if t.chosen == Some(i) { "chosen" } else { "shown" };
    let _ = writeln!(md, "## The {which} candidate, trace by trace\n");
    let _ = writeln!(
        md,
        "| trace | set | flaps, base | flaps, chosen | capacity lost % | most minutes later | over-protection, base | over-protection, chosen | minutes emergency, base | minutes emergency, chosen |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for ((e, b), c) in t.evidence.iter().zip(&t.base_per_trace).zip(&t.chosen_per_trace) {
        let set = if e.set == Set::Train { "train" } else { "hold-out" };
        let lost = if b.bulk_capacity_minutes > 0.0 {
            (b.bulk_capacity_minutes - c.bulk_capacity_minutes) / b.bulk_capacity_minutes * 100.0
        } else {
            0.0
        };
        let _ = writeln!(
            md,
            "| {} | {set} | {} | {} | {lost:.3} | {} | {} | {} | {} | {} |",
            e.trace.name,
            b.flaps,
            c.flaps,
            opt(c.max_protection_delay),
            b.over_protection_minutes,
            c.over_protection_minutes,
            b.minutes[3],
            c.minutes[3]
        );
    }
    let _ = writeln!(md, "\n(candidate {i}: {})\n", t.candidates[i].label());
}

fn readiness_section(md: &mut String, t: &Tuning) {
    let days = t.evidence.iter().map(|e| e.ticks).sum::<u64>() as f64 / 1440.0;
    let _ = writeln!(md, "## Emergency-switch readiness\n");
    let _ = writeln!(
        md,
        "How the emergency stage throttles would have gone had the switch been on from the start, over all {days:.1} days of evidence (training and hold-out):\n"
    );
    let (b, c) = (&t.readiness.0, t.readiness.1.as_ref());
    let which = if t.chosen.is_some() { "chosen" } else { "shown" };
    let _ = writeln!(md, "| | base | {which} |\n|---|---:|---:|");
    let mut row = |name: &str, f: &dyn Fn(&Readiness) -> String| {
        let _ = writeln!(md, "| {name} | {} | {} |", f(b), c.map_or("-".into(), f));
    };
    row("engagements", &|r| r.engagements.to_string());
    row("engagements per day", &|r| format!("{:.3}", r.engagements as f64 / days.max(1.0)));
    row("minutes engaged", &|r| r.minutes_engaged.to_string());
    row("longest engagement (minutes)", &|r| r.longest_minutes.to_string());
    row("ended by a recovery", &|r| r.ended_by_recovery.to_string());
    row("ended by a pin", &|r| r.ended_by_pin.to_string());
    row("ended by a lost signal", &|r| r.ended_by_signal_loss.to_string());
    row("ended by the switch", &|r| r.ended_by_switch.to_string());
    row("still engaged at a trace's end", &|r| r.engaged_at_end.to_string());
    md.push('\n');
}
