use super::*;

fn base() -> Thresholds {
    let text = include_str!("../../../../policies/1.0.0/policy.toml");
    toml::from_str::<vocabulary::PolicyDescription>(text).unwrap().thresholds
}

fn parse(text: &str) -> Result<SearchSpace, TuneError> {
    SearchSpace::parse("space.toml", text)
}

#[test]
fn dotted_and_nested_keys_lists_and_ranges_make_one_dimension_each() {
    let space = parse(
        "[thresholds]\ncpu_pct.resolve_band = [0, 5]\nrecover_readings = { from = 5, to = 7, step = 1 }\n\
         [thresholds.latency_ratio]\nconstrained = { from = 1.5, to = 1.8, step = 0.1 }\n",
    )
    .unwrap();
    let dims: Vec<(&str, Vec<f64>)> = space.dimensions.iter().map(|d| (d.key.as_str(), d.values.clone())).collect();
    assert_eq!(
        dims,
        vec![
            ("cpu_pct.resolve_band", vec![0.0, 5.0]),
            ("latency_ratio.constrained", vec![1.5, 1.6, 1.7, 1.8]),
            ("recover_readings", vec![5.0, 6.0, 7.0]),
        ]
    );
    assert_eq!(space.size(), 24);
    assert_eq!(space.choose, ChoiceRule::default());
}

#[test]
fn candidates_are_the_product_the_last_key_fastest_each_applied_to_the_base() {
    let space = parse("[thresholds]\ncpu_pct.constrained = [70, 80]\ncpu_pct.resolve_band = [0, 5, 10]\n").unwrap();
    let all = space.candidates(&base(), &SEED_FLOORS).unwrap();
    assert_eq!(all.len(), 6);
    let points: Vec<(f64, f64)> = all.iter().map(|c| (c.thresholds.cpu_pct.constrained, c.thresholds.cpu_pct.resolve_band)).collect();
    assert_eq!(points, vec![(70.0, 0.0), (70.0, 5.0), (70.0, 10.0), (80.0, 0.0), (80.0, 5.0), (80.0, 10.0)]);
    assert!(all.iter().all(|c| c.thresholds.cpu_pct.critical == 85.0 && c.thresholds.recover_readings == 5), "the rest is the base's");
    assert_eq!(all[4].changes(&base()), "cpu_pct.constrained 70 -> 80, cpu_pct.resolve_band 0 -> 5");
    assert_eq!(all[0].changes(&base()), "no change");
}

#[test]
fn a_bad_space_is_refused_naming_the_key() {
    for (text, expected) in [
        ("[thresholds]\ncpu_pct.resolve_bnd = [1]\n", "thresholds.cpu_pct.resolve_bnd: not a threshold the tuner can vary"),
        ("[thresholds]\nfactors.normal.bulk = [1]\n", "thresholds.factors.normal.bulk: not a threshold"),
        ("[thresholds]\nrecover_readings = [5.5]\n", "thresholds.recover_readings: 5.5 is not a whole number"),
        ("[thresholds]\nrecover_readings = []\n", "thresholds.recover_readings: no values"),
        ("[thresholds]\nrecover_readings = [5, 5]\n", "thresholds.recover_readings: a value is listed twice"),
        ("[thresholds]\nspacing_s = { from = 600, to = 300, step = 60 }\n", "thresholds.spacing_s: a range needs from <= to"),
        ("[thresholds]\nspacing_s = { from = 300, to = 600 }\n", "thresholds.spacing_s.step: missing"),
        ("[thresholds]\nspacing_s = { from = 300, to = 600, step = 60, by = 1 }\n", "thresholds.spacing_s.by: unknown"),
        ("[thresholds]\nspacing_s = \"300\"\n", "thresholds.spacing_s: expected a list of values"),
        ("[thresholds]\ncpu_pct.critical = [\"high\"]\n", "is not a finite number"),
        ("[thresholds]\n", "thresholds: names no threshold to vary"),
        ("[threshold]\nspacing_s = [300]\n", "threshold: unknown section"),
        ("[thresholds]\nspacing_s = [300]\n[choose]\nmax_flaps = 1\n", "choose: unknown field `max_flaps`"),
        ("[thresholds]\nspacing_s = [300]\n[choose]\nmax_bulk_capacity_loss_pct = -1\n", "choose.max_bulk_capacity_loss_pct"),
        ("[thresholds]\nspacing_s = { from = 0, to = 1000000, step = 1 }\n", "more than 100000"),
        ("[thresholds\n", "space.toml"),
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.starts_with("search space space.toml: "), "{err}");
        assert!(err.contains(expected), "{text:?}: {err}");
    }
}

#[test]
fn a_candidate_below_the_floors_or_the_files_rules_is_refused_before_any_replay() {
    for (text, expected) in [
        (
            "[thresholds]\nrecover_readings = [5, 4]\n",
            "recover_readings=4 is refused before the sweep: thresholds.recover_readings: 4 is below the invariant floor 5",
        ),
        ("[thresholds]\nescalate_readings = [2]\n", "thresholds.escalate_readings: 2 is below the invariant floor 3"),
        ("[thresholds]\nspacing_s = [240]\n", "thresholds.spacing_s: 240 is below the invariant floor 300"),
        ("[thresholds]\ncpu_pct.constrained = [90]\n", "thresholds.cpu_pct: constrained must not exceed critical"),
        (
            "[thresholds]\ncpu_pct.resolve_band = [70]\n",
            "thresholds.cpu_pct.resolve_band: must be at least 0 and below the constrained boundary",
        ),
    ] {
        let err = parse(text).unwrap().candidates(&base(), &SEED_FLOORS).unwrap_err().to_string();
        assert!(err.contains(expected), "{text:?}: {err}");
        assert!(err.ends_with("change the search space"), "{err}");
    }
}

#[test]
fn range_steps_do_not_drift() {
    let space = parse("[thresholds]\ncpu_pct.resolve_band = { from = 0, to = 1, step = 0.1 }\n").unwrap();
    assert_eq!(space.dimensions[0].values, vec![0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]);
}

#[test]
fn damping_is_switched_and_its_numbers_vary_only_while_it_is_on() {
    let text = "[thresholds]\ndamping.enabled = [0, 1]\ndamping.half_life_s = [600, 1800]\ndamping.suppressed_recover_readings = [0, 10]\n";
    let all = parse(text).unwrap().candidates(&base(), &SEED_FLOORS).unwrap();
    assert_eq!(all.len(), 1 + 2 * 2, "damping off is one candidate, not one per damping value");
    assert_eq!(all[0].thresholds.damping, None);
    assert_eq!(all[0].label(), "damping.enabled=0", "the numbers of a damping that is off are not shown");
    let on: Vec<_> = all[1..].iter().map(|c| c.thresholds.damping.expect("on")).collect();
    assert_eq!(on[0], vocabulary::FlapDamping { half_life_s: 600, ..vocabulary::FlapDamping::DEFAULT }, "unnamed numbers: the default");
    assert_eq!(on[1].suppressed_recover_readings, Some(10));
    assert_eq!(on[0].suppressed_recover_readings, None, "0: absent");
    assert_eq!(
        all[4].changes(&base()),
        "damping.enabled 0 -> 1, damping.half_life_s 900 -> 1800, damping.suppressed_recover_readings 0 -> 10"
    );
    let err = parse("[thresholds]\ndamping.enabled = [0, 2]\n").unwrap_err().to_string();
    assert!(err.contains("thresholds.damping.enabled: 2 is neither 0 (off) nor 1 (on)"), "{err}");
    let err = parse("[thresholds]\ndamping.suppressed_recover_readings = [3]\n")
        .unwrap()
        .candidates(&base(), &SEED_FLOORS)
        .unwrap_err()
        .to_string();
    assert!(err.contains("suppressed_recover_readings: must be above recover_readings (5)"), "{err}");
}
