//! `--write policies/<version>/`: the chosen candidate as a policy folder, `policy.toml` in the
//! layout of the versions beside it and a README carrying the evidence (the command, the traces
//! and their digests, the scores on the training traces and on the hold-out), so the version's
//! numbers can be traced back to what chose them and reproduced.

use super::evidence::Set;
use super::space::number;
use super::{TuneError, Tuning};
use std::fmt::Write;
use std::path::Path;
use vocabulary::{Factors, LevelThresholds, Thresholds};

fn bounds(l: &LevelThresholds) -> String {
    let band = if l.resolve_band == 0.0 { String::new() } else { format!(", resolve_band = {}", float(l.resolve_band)) };
    format!("{{ constrained = {}, critical = {}{band} }}", float(l.constrained), float(l.critical))
}

/// A float as TOML writes one (always with a point).
fn float(v: f64) -> String {
    if v.fract() == 0.0 { format!("{v:.1}") } else { format!("{v}") }
}

fn factors(f: &Factors) -> String {
    format!("{{ bulk = {}, heavy = {}, write = {}, read = {} }}", float(f.bulk), float(f.heavy), float(f.write), float(f.read))
}

/// `policy.toml` of `version` with the thresholds `t`.
pub fn policy_toml(name: &str, version: &str, summary: &str, t: &Thresholds) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Policy {version}: {summary}");
    let _ = writeln!(s, "name = {name:?}\nversion = {version:?}\n\n[thresholds]");
    let _ = writeln!(s, "cpu_pct = {}", bounds(&t.cpu_pct));
    let _ = writeln!(s, "connections_pct = {}", bounds(&t.connections_pct));
    let _ = writeln!(s, "latency_ratio = {}", bounds(&t.latency_ratio));
    for (key, v) in [
        ("spacing_s", t.spacing_s),
        ("escalate_readings", t.escalate_readings),
        ("recover_readings", t.recover_readings),
        ("emergency_after_s", t.emergency_after_s),
        ("throttle_after_s", t.throttle_after_s),
        ("restore_hold_max_s", t.restore_hold_max_s),
        ("max_gap_s", t.max_gap_s),
        ("release_after_failed_reads", t.release_after_failed_reads),
        ("baseline_min_samples", t.baseline_min_samples),
        ("pin_max_ahead_s", t.pin_max_ahead_s),
        ("pin_reason_max_chars", t.pin_reason_max_chars),
    ] {
        let _ = writeln!(s, "{key} = {v}");
    }
    let f = &t.factors;
    let _ = writeln!(s, "\n[thresholds.factors]");
    let _ = writeln!(s, "normal      = {}", factors(&f.normal));
    let _ = writeln!(s, "constrained = {}", factors(&f.constrained));
    let _ = writeln!(s, "critical    = {}", factors(&f.critical));
    let _ = writeln!(s, "emergency   = {}", factors(&f.emergency));
    if let Some(d) = &t.damping {
        let _ = writeln!(s, "\n[thresholds.damping]");
        let _ = writeln!(s, "penalty_per_flap = {}", float(d.penalty_per_flap));
        let _ = writeln!(s, "flap_window_s = {}", d.flap_window_s);
        let _ = writeln!(s, "half_life_s = {}", d.half_life_s);
        let _ = writeln!(s, "suppress_limit = {}", float(d.suppress_limit));
        let _ = writeln!(s, "reuse_limit = {}", float(d.reuse_limit));
        let _ = writeln!(s, "max_penalty = {}", float(d.max_penalty));
        if let Some(n) = d.suppressed_recover_readings {
            let _ = writeln!(s, "suppressed_recover_readings = {n}");
        }
    }
    s
}

/// Writes `dir/policy.toml`, `dir/README.md` and the figure `dir/pareto.svg` for the chosen
/// candidate as `version`; refuses to replace an existing `policy.toml` unless `replace`.
/// Returns the description the written `policy.toml` reads back as.
pub fn write_policy(
    dir: &Path,
    version: &str,
    t: &Tuning,
    command: &str,
    figure: &str,
    replace: bool,
) -> Result<vocabulary::PolicyDescription, TuneError> {
    let fail = |path: &Path, message: String| TuneError::Write { path: path.to_path_buf(), message };
    let Some(i) = t.chosen else {
        return Err(fail(dir, "no candidate meets the rule on the training traces, so there is no policy to write".into()));
    };
    let policy = dir.join("policy.toml");
    if policy.exists() && !replace {
        return Err(fail(&policy, "exists: choose another version, or give --replace".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| fail(dir, e.to_string()))?;
    let c = &t.candidates[i];
    let thresholds = c.thresholds;
    let summary = format!("chosen by `sentinel policy tune` from {} {} ({}).", t.base.name, t.base.version, c.changes(&t.base.thresholds));
    let text = policy_toml(&t.base.name, version, &summary, &thresholds);
    let parsed = policy_files::description::parse(&text).map_err(|e| fail(&policy, e))?;
    if parsed.thresholds != thresholds {
        return Err(fail(&policy, "the written file does not read back as the chosen thresholds".into()));
    }
    std::fs::write(&policy, text).map_err(|e| fail(&policy, e.to_string()))?;
    let svg = dir.join("pareto.svg");
    std::fs::write(&svg, figure).map_err(|e| fail(&svg, e.to_string()))?;
    let readme = dir.join("README.md");
    std::fs::write(&readme, readme_text(version, t, i, command)).map_err(|e| fail(&readme, e.to_string()))?;
    Ok(parsed)
}

/// One figure of a set's scores, as the README's table writes it.
type Figure<'a> = dyn Fn(&super::choose::SetScore) -> String + 'a;

fn readme_text(version: &str, t: &Tuning, i: usize, command: &str) -> String {
    let c = &t.candidates[i];
    let (b, s) = (&t.base_scores, &t.scores[i]);
    let mut md = String::new();
    let _ = writeln!(md, "# Policy {version}\n");
    let _ = writeln!(
        md,
        "Chosen by `sentinel policy tune` from {} {} on recorded evidence (candidate {i}): {}. Every other number is the base's.\n",
        t.base.name,
        t.base.version,
        c.changes(&t.base.thresholds)
    );
    let _ = writeln!(md, "## How it was chosen\n\n```sh\n{command}\n```\n");
    md.push_str(&super::report_cv::fit_warning(t));
    if t.cross_validation.is_some() {
        let _ = writeln!(
            md,
            "{} candidates were replayed over every trace on the native rules. {} Each series was also held out in turn and judged by a candidate chosen on the others (below).\n",
            t.candidates.len(),
            super::report::rule_text(t)
        );
    } else {
        let _ = writeln!(
            md,
            "{} candidates were replayed over every trace on the native rules. The chosen one has the fewest flaps per day on the training traces among those that break no invariant, match every entry of the base into critical no more than {} min later and lose at most {} % of the base's bulk capacity-minutes. The hold-out traces played no part in the choice.\n",
            t.candidates.len(),
            t.space.choose.max_protection_delay_minutes,
            number(t.space.choose.max_bulk_capacity_loss_pct)
        );
    }
    if let Some((names, _)) = &t.gate {
        let _ = writeln!(
            md,
            "The A/B gate was a constraint: the chosen candidate passes it against the base on its {} traces ({}).\n",
            names.len(),
            names.join(", ")
        );
    }
    let _ = writeln!(md, "| trace | set | days | source | sha256 |\n|---|---|---:|---|---|");
    for e in &t.evidence {
        let set = if e.set == Set::Train { "train" } else { "hold-out" };
        let _ =
            writeln!(md, "| {} | {set} | {:.1} | `{}` | `{}` |", e.trace.name, e.ticks as f64 / 1440.0, e.source, &e.source_sha256[..12]);
    }
    let (judged_base, judged_chosen) = match &t.cross_validation {
        Some(cv) => (&cv.base, &cv.held_out),
        None => (&b.holdout, &s.holdout),
    };
    let (train, judged) = if t.cross_validation.is_some() {
        ("all series".to_string(), "each series held out | chosen without the series, held out".to_string())
    } else {
        ("train".to_string(), format!("hold-out | {version}, hold-out"))
    };
    let _ = writeln!(
        md,
        "\n## The evidence\n\n| | {0}, {train} | {version}, {train} | {0}, {judged} |\n|---|---:|---:|---:|---:|",
        t.base.version
    );
    let opt = |v: Option<i64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let rows: [(&str, &Figure<'_>); 8] = [
        ("flaps per day", &|x| format!("{:.2}", x.flaps_per_day)),
        ("transitions", &|x| x.transitions.to_string()),
        ("bulk capacity-minutes lost against the base (%)", &|x| format!("{:.3}", x.bulk_capacity_loss_vs_base_pct)),
        ("over-protection (minutes)", &|x| x.over_protection_minutes.to_string()),
        ("minutes emergency", &|x| x.minutes_emergency.to_string()),
        ("most minutes an entry into critical came later", &|x| opt(x.max_protection_delay)),
        ("entries into critical never matched", &|x| x.missed_protections.to_string()),
        ("invariant violations", &|x| x.violations.to_string()),
    ];
    for (name, f) in rows {
        let _ = writeln!(md, "| {name} | {} | {} | {} | {} |", f(&b.train), f(&s.train), f(judged_base), f(judged_chosen));
    }
    if t.cross_validation.is_some() {
        md.push('\n');
        super::report_cv::section(&mut md, t);
        // One blank line before the next paragraph, as between the others.
        md.truncate(md.trim_end().len());
        md.push('\n');
    }
    let (rb, rc) = (&t.readiness.0, t.readiness.1.as_ref());
    let days = t.evidence.iter().map(|e| e.ticks).sum::<u64>() as f64 / 1440.0;
    if let Some(rc) = rc {
        let _ = writeln!(
            md,
            "\nWith the emergency switch on over all {days:.1} days, the stage throttles would have engaged {} times under {} ({} minutes in all, the longest {}) and {} times under {version} ({} minutes, the longest {}); pins ended {} and {}, lost signals {} and {} of them.",
            rb.engagements,
            t.base.version,
            rb.minutes_engaged,
            rb.longest_minutes,
            rc.engagements,
            rc.minutes_engaged,
            rc.longest_minutes,
            rb.ended_by_pin,
            rc.ended_by_pin,
            rb.ended_by_signal_loss,
            rc.ended_by_signal_loss
        );
    }
    let _ = writeln!(md, "\n![flaps per day against bulk capacity lost, every candidate](pareto.svg)\n");
    let _ = writeln!(md, "The full report (every candidate, the Pareto front, each trace) is what the command above writes.");
    md
}
