//! What a search space can vary (docs/behaviour.md §10.8): every tunable key with its kind, a
//! version's value of each, and how a candidate's value is set into its thresholds. The keys are
//! the `[thresholds]` keys of a `policy.toml`, dotted; flap damping's are switched by
//! `damping.enabled`.

use vocabulary::{FlapDamping, LevelThresholds, Thresholds};

/// What can be varied: every number the decision uses (the factors and the pin limits are not
/// thresholds a replay can judge).
pub(super) const KEYS: &[(&str, Kind)] = &[
    ("cpu_pct.constrained", Kind::Real),
    ("cpu_pct.critical", Kind::Real),
    ("cpu_pct.resolve_band", Kind::Real),
    ("connections_pct.constrained", Kind::Real),
    ("connections_pct.critical", Kind::Real),
    ("connections_pct.resolve_band", Kind::Real),
    ("latency_ratio.constrained", Kind::Real),
    ("latency_ratio.critical", Kind::Real),
    ("latency_ratio.resolve_band", Kind::Real),
    ("spacing_s", Kind::Count),
    ("escalate_readings", Kind::Count),
    ("recover_readings", Kind::Count),
    ("emergency_after_s", Kind::Count),
    ("throttle_after_s", Kind::Count),
    ("restore_hold_max_s", Kind::Count),
    ("max_gap_s", Kind::Count),
    ("release_after_failed_reads", Kind::Count),
    ("baseline_min_samples", Kind::Count),
    // Flap damping (docs/behaviour.md §5.4): `damping.enabled` 0 is off, 1 on; a damping number
    // the base lacks starts from `FlapDamping::DEFAULT`.
    ("damping.enabled", Kind::Switch),
    ("damping.penalty_per_flap", Kind::Real),
    ("damping.flap_window_s", Kind::Count),
    ("damping.half_life_s", Kind::Count),
    ("damping.suppress_limit", Kind::Real),
    ("damping.reuse_limit", Kind::Real),
    ("damping.max_penalty", Kind::Real),
    // 0: absent (a suppressed recovery is held until the reuse limit).
    ("damping.suppressed_recover_readings", Kind::Count),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Real,
    Count,
    /// 0 (off) or 1 (on).
    Switch,
}

/// Every tunable key of `t` with its value, in the order the space keys are listed.
pub fn settings_of(t: &Thresholds) -> Vec<(&'static str, f64)> {
    let damping = t.damping.unwrap_or(FlapDamping::DEFAULT);
    vec![
        ("cpu_pct.constrained", t.cpu_pct.constrained),
        ("cpu_pct.critical", t.cpu_pct.critical),
        ("cpu_pct.resolve_band", t.cpu_pct.resolve_band),
        ("connections_pct.constrained", t.connections_pct.constrained),
        ("connections_pct.critical", t.connections_pct.critical),
        ("connections_pct.resolve_band", t.connections_pct.resolve_band),
        ("latency_ratio.constrained", t.latency_ratio.constrained),
        ("latency_ratio.critical", t.latency_ratio.critical),
        ("latency_ratio.resolve_band", t.latency_ratio.resolve_band),
        ("spacing_s", f64::from(t.spacing_s)),
        ("escalate_readings", f64::from(t.escalate_readings)),
        ("recover_readings", f64::from(t.recover_readings)),
        ("emergency_after_s", f64::from(t.emergency_after_s)),
        ("throttle_after_s", f64::from(t.throttle_after_s)),
        ("restore_hold_max_s", f64::from(t.restore_hold_max_s)),
        ("max_gap_s", f64::from(t.max_gap_s)),
        ("release_after_failed_reads", f64::from(t.release_after_failed_reads)),
        ("baseline_min_samples", f64::from(t.baseline_min_samples)),
        ("damping.enabled", if t.damping.is_some() { 1.0 } else { 0.0 }),
        ("damping.penalty_per_flap", damping.penalty_per_flap),
        ("damping.flap_window_s", f64::from(damping.flap_window_s)),
        ("damping.half_life_s", f64::from(damping.half_life_s)),
        ("damping.suppress_limit", damping.suppress_limit),
        ("damping.reuse_limit", damping.reuse_limit),
        ("damping.max_penalty", damping.max_penalty),
        ("damping.suppressed_recover_readings", f64::from(damping.suppressed_recover_readings.unwrap_or(0))),
    ]
}

/// Sets one known key (checked by `space::dimension`).
pub(super) fn set(t: &mut Thresholds, key: &str, v: f64) {
    let count = v as u32;
    let (signal, field) = key.split_once('.').unwrap_or((key, ""));
    if signal == "damping" {
        // `damping.enabled` 0 is applied after every setting (SearchSpace::candidates).
        let d = t.damping.get_or_insert(FlapDamping::DEFAULT);
        match field {
            "penalty_per_flap" => d.penalty_per_flap = v,
            "flap_window_s" => d.flap_window_s = count,
            "half_life_s" => d.half_life_s = count,
            "suppress_limit" => d.suppress_limit = v,
            "reuse_limit" => d.reuse_limit = v,
            "max_penalty" => d.max_penalty = v,
            "suppressed_recover_readings" => d.suppressed_recover_readings = (count > 0).then_some(count),
            _ => {}
        }
        return;
    }
    let bounds: Option<&mut LevelThresholds> = match signal {
        "cpu_pct" => Some(&mut t.cpu_pct),
        "connections_pct" => Some(&mut t.connections_pct),
        "latency_ratio" => Some(&mut t.latency_ratio),
        _ => None,
    };
    if let Some(b) = bounds {
        match field {
            "constrained" => b.constrained = v,
            "critical" => b.critical = v,
            _ => b.resolve_band = v,
        }
        return;
    }
    match key {
        "spacing_s" => t.spacing_s = count,
        "escalate_readings" => t.escalate_readings = count,
        "recover_readings" => t.recover_readings = count,
        "emergency_after_s" => t.emergency_after_s = count,
        "throttle_after_s" => t.throttle_after_s = count,
        "restore_hold_max_s" => t.restore_hold_max_s = count,
        "max_gap_s" => t.max_gap_s = count,
        "release_after_failed_reads" => t.release_after_failed_reads = count,
        _ => t.baseline_min_samples = count,
    }
}
