//! The parts of the tuning report that say how the choice was judged: the warning when a
//! hold-out shares series with the training traces, and, when the evidence is judged by series,
//! the cross-validation fold by fold (docs/behaviour.md §10.8).

use super::Tuning;
use super::cross_validation::CrossValidation;
use std::fmt::Write;

/// A warning for `report.md` and a policy's README when segments of one series were both
/// chosen on and held out; empty otherwise.
pub fn fit_warning(t: &Tuning) -> String {
    let leaking = t.leaking_series();
    if leaking.is_empty() {
        return String::new();
    }
    format!(
        "> **Warning: this hold-out measures fit, not generalization.** Segments of {} series ({}) are both chosen on and held out, so the hold-out is other weeks of the servers the candidate was fitted to. Use `--split series` (the default) to judge the choice on whole series it was not chosen on.\n\n",
        leaking.len(),
        leaking.join(", ")
    )
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
}

/// The cross-validated result in one sentence.
pub fn summary(cv: &CrossValidation) -> String {
    let (b, h) = (&cv.base, &cv.held_out);
    format!(
        "Cross-validated, each series judged by the candidate chosen on the others: {:.2} flaps per day against the base's {:.2} ({}), {:.3} % of the base's bulk capacity-minutes lost, entries into critical at most {} min later, {} invariant violations, {} of {} series flapping more than under the base.",
        h.flaps_per_day,
        b.flaps_per_day,
        ratio((b.flaps_per_day > 0.0).then(|| h.flaps_per_day / b.flaps_per_day)),
        h.bulk_capacity_loss_vs_base_pct,
        h.max_protection_delay.map_or_else(|| "0".into(), |d| d.to_string()),
        h.violations,
        cv.series_worse,
        cv.folds.len()
    )
}

/// `report.md`'s section on the folds.
pub fn section(md: &mut String, t: &Tuning) {
    let Some(cv) = &t.cross_validation else { return };
    let _ = writeln!(md, "## Cross-validation: each series held out\n");
    let _ = writeln!(
        md,
        "For each series, the choice was made again on all the other series alone (the same rule: the worst series decides, none may flap more than under the base) and judged on the series held out. These numbers estimate how the tuning does on a server it has never seen; the gap between the training and the held-out ratio is what fitting costs.\n"
    );
    let _ = writeln!(
        md,
        "| series held out | days | chosen on the others | flaps per day, base | flaps per day, chosen | ratio, held out | ratio, training | capacity lost % | most minutes later | violations |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    for f in &cv.folds {
        let chosen = f.chosen.map_or_else(|| "none: the base stays".to_string(), |c| format!("{c}: {}", t.candidates[c].label()));
        let _ = writeln!(
            md,
            "| {} | {:.1} | {chosen} | {:.2} | {:.2} | {} | {} | {:.3} | {} | {} |",
            f.series,
            f.base.ticks as f64 / 1440.0,
            f.base.flaps_per_day,
            f.candidate.flaps_per_day,
            ratio(f.held_out_flap_ratio()),
            ratio(f.train_flap_ratio),
            f.candidate.bulk_capacity_loss_vs_base_pct,
            f.candidate.max_protection_delay.map_or_else(|| "-".into(), |d| d.to_string()),
            f.candidate.violations
        );
    }
    let _ = writeln!(md, "\n{}\n", summary(cv));
}
