//! docs/behaviour.md §3: the level of one reading is the highest of its signals' levels; absent or
//! non-finite values contribute nothing; latency counts only where the baseline is above 0;
//! scaling alone is never above constrained.

mod common;

use capacity_guest::assess::{assess, worst_latency_ratio};
use common::{T, cpu, latency};
use vocabulary::{Level, Reading};

fn conn(pct: f64) -> Reading {
    Reading { connections_pct: Some(pct), ..Reading::default() }
}

fn lat(p95: f64, baseline: f64) -> Reading {
    Reading { latency: vec![latency("crm", Some(p95), Some(baseline))], ..Reading::default() }
}

fn scaling(on: bool) -> Reading {
    Reading { scaling: Some(on), ..Reading::default() }
}

#[test]
fn an_empty_reading_is_normal() {
    assert_eq!(assess(&Reading::default(), &T), Level::Normal);
}

#[test]
fn cpu_is_constrained_from_70_and_critical_from_85() {
    assert_eq!(assess(&cpu(0.0), &T), Level::Normal);
    assert_eq!(assess(&cpu(69.99), &T), Level::Normal);
    assert_eq!(assess(&cpu(70.0), &T), Level::Constrained);
    assert_eq!(assess(&cpu(84.99), &T), Level::Constrained);
    assert_eq!(assess(&cpu(85.0), &T), Level::Critical);
    assert_eq!(assess(&cpu(100.0), &T), Level::Critical);
}

#[test]
fn connections_are_constrained_from_70_and_critical_from_85() {
    assert_eq!(assess(&conn(69.99), &T), Level::Normal);
    assert_eq!(assess(&conn(70.0), &T), Level::Constrained);
    assert_eq!(assess(&conn(84.99), &T), Level::Constrained);
    assert_eq!(assess(&conn(85.0), &T), Level::Critical);
}

#[test]
fn latency_ratio_is_constrained_from_1_5_and_critical_from_2_5() {
    assert_eq!(assess(&lat(149.0, 100.0), &T), Level::Normal);
    assert_eq!(assess(&lat(150.0, 100.0), &T), Level::Constrained);
    assert_eq!(assess(&lat(249.0, 100.0), &T), Level::Constrained);
    assert_eq!(assess(&lat(250.0, 100.0), &T), Level::Critical);
    assert_eq!(assess(&lat(1000.0, 100.0), &T), Level::Critical);
}

#[test]
fn the_worst_api_latency_ratio_decides() {
    let r = Reading {
        latency: vec![
            latency("crm", Some(110.0), Some(100.0)),
            latency("billing", Some(300.0), Some(100.0)),
            latency("search", Some(160.0), Some(100.0)),
        ],
        ..Reading::default()
    };
    assert_eq!(worst_latency_ratio(&r), Some(3.0));
    assert_eq!(assess(&r, &T), Level::Critical);
}

#[test]
fn latency_counts_only_where_the_baseline_is_above_zero() {
    for baseline in [Some(0.0), Some(-0.0), Some(-100.0), None] {
        let r = Reading { latency: vec![latency("crm", Some(500.0), baseline)], ..Reading::default() };
        assert_eq!(worst_latency_ratio(&r), None, "baseline {baseline:?}");
        assert_eq!(assess(&r, &T), Level::Normal, "baseline {baseline:?}");
    }
}

#[test]
fn an_api_without_baseline_does_not_hide_another_apis_ratio() {
    let r = Reading {
        latency: vec![latency("crm", Some(900.0), Some(0.0)), latency("billing", Some(160.0), Some(100.0))],
        ..Reading::default()
    };
    assert_eq!(worst_latency_ratio(&r), Some(1.6));
    assert_eq!(assess(&r, &T), Level::Constrained);
}

#[test]
fn an_absent_p95_contributes_nothing() {
    let r = Reading { latency: vec![latency("crm", None, Some(100.0))], ..Reading::default() };
    assert_eq!(worst_latency_ratio(&r), None);
    assert_eq!(assess(&r, &T), Level::Normal);
}

#[test]
fn non_finite_cpu_and_connections_contribute_nothing() {
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(assess(&cpu(v), &T), Level::Normal, "cpu {v}");
        assert_eq!(assess(&conn(v), &T), Level::Normal, "connections {v}");
    }
}

#[test]
fn non_finite_latency_values_contribute_nothing() {
    for (p95, base) in
        [(f64::NAN, 100.0), (f64::INFINITY, 100.0), (500.0, f64::NAN), (500.0, f64::INFINITY), (f64::INFINITY, f64::INFINITY)]
    {
        assert_eq!(worst_latency_ratio(&lat(p95, base)), None, "p95 {p95} baseline {base}");
        assert_eq!(assess(&lat(p95, base), &T), Level::Normal, "p95 {p95} baseline {base}");
    }
}

#[test]
fn a_ratio_that_overflows_to_infinity_contributes_nothing() {
    // Both inputs are finite but the ratio is not; the code treats it like any non-finite value.
    let r = lat(f64::MAX, f64::MIN_POSITIVE);
    assert_eq!(worst_latency_ratio(&r), None);
    assert_eq!(assess(&r, &T), Level::Normal);
}

#[test]
fn a_non_finite_value_does_not_mask_the_other_signals() {
    let r = Reading {
        cpu_pct: Some(f64::NAN),
        connections_pct: Some(90.0),
        latency: vec![latency("crm", Some(f64::NAN), Some(100.0))],
        ..Reading::default()
    };
    assert_eq!(assess(&r, &T), Level::Critical);
}

#[test]
fn scaling_alone_is_constrained_never_critical() {
    assert_eq!(assess(&scaling(true), &T), Level::Constrained);
    assert_eq!(assess(&scaling(false), &T), Level::Normal);
    let calm = Reading { cpu_pct: Some(10.0), connections_pct: Some(10.0), scaling: Some(true), ..Reading::default() };
    assert_eq!(assess(&calm, &T), Level::Constrained);
}

#[test]
fn scaling_does_not_lower_a_critical_signal() {
    let r = Reading { cpu_pct: Some(90.0), scaling: Some(true), ..Reading::default() };
    assert_eq!(assess(&r, &T), Level::Critical);
}

#[test]
fn the_highest_signal_level_wins() {
    let r = Reading { cpu_pct: Some(75.0), connections_pct: Some(10.0), ..Reading::default() };
    assert_eq!(assess(&r, &T), Level::Constrained);
    let r = Reading { cpu_pct: Some(75.0), connections_pct: Some(86.0), ..Reading::default() };
    assert_eq!(assess(&r, &T), Level::Critical);
    let r = Reading {
        cpu_pct: Some(10.0),
        connections_pct: Some(10.0),
        latency: vec![latency("crm", Some(260.0), Some(100.0))],
        ..Reading::default()
    };
    assert_eq!(assess(&r, &T), Level::Critical);
}

#[test]
fn out_of_range_percentages_are_assessed_by_the_boundaries() {
    // The host turns malformed values into a failed read; the rule itself only compares.
    assert_eq!(assess(&cpu(-5.0), &T), Level::Normal);
    assert_eq!(assess(&cpu(150.0), &T), Level::Critical);
}
