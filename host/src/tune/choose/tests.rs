use super::*;

fn score(flaps_per_day: f64, loss: f64, delay: Option<i64>, violations: u64, missed: u32) -> SetScore {
    SetScore {
        traces: 1,
        ticks: 1440,
        flaps: flaps_per_day as u64,
        flaps_per_day,
        transitions: 0,
        bulk_capacity_minutes: 0.0,
        bulk_capacity_withheld_pct: 0.0,
        bulk_capacity_loss_vs_base_pct: loss,
        over_protection_minutes: 0,
        minutes_critical: 0,
        minutes_emergency: 0,
        worst_minutes_to_protect: None,
        never_protected: 0,
        base_entries: 1,
        max_protection_delay: delay,
        missed_protections: missed,
        throttle_engagements: 0,
        violations,
    }
}

fn verdicts(scores: &[SetScore]) -> Vec<Result<(), String>> {
    scores.iter().map(|s| meets(s, &ChoiceRule::default())).collect()
}

#[test]
fn the_fewest_flaps_among_those_meeting_the_rule_is_chosen() {
    let scores = vec![
        score(3.0, 0.0, Some(0), 0, 0), // the base's numbers
        score(0.1, 0.2, Some(0), 1, 0), // breaks an invariant
        score(0.2, 0.1, Some(3), 0, 0), // protects 3 min later
        score(0.3, 0.9, Some(0), 0, 0), // loses too much
        score(0.4, 0.0, Some(0), 0, 2), // misses two entries
        score(0.5, 0.4, Some(2), 0, 0), // meets the rule
        score(0.6, -1.0, Some(0), 0, 0),
    ];
    let v = verdicts(&scores);
    assert_eq!(choose(&scores, &v), Some(5));
    assert!(v[1].as_ref().unwrap_err().contains("invariant"));
    assert!(v[2].as_ref().unwrap_err().contains("3 min later"));
    assert!(v[3].as_ref().unwrap_err().contains("0.900 % bulk capacity lost"));
    assert!(v[4].as_ref().unwrap_err().contains("never matched"));
    let mut gated = v.clone();
    gated[5] = Err("the gate fails it".into());
    assert_eq!(choose(&scores, &gated), Some(6), "a constraint beyond the rule (the gate) is honoured");
}

#[test]
fn ties_go_to_less_capacity_lost_then_the_shorter_delay_then_the_earlier_candidate() {
    let scores = vec![
        score(1.0, 0.3, Some(1), 0, 0),
        score(1.0, 0.1, Some(2), 0, 0),
        score(1.0, 0.1, Some(1), 0, 0),
        score(1.0, 0.1, Some(1), 0, 0),
    ];
    assert_eq!(choose(&scores, &verdicts(&scores)), Some(2));
    assert_eq!(choose(&[score(1.0, 0.0, None, 1, 0)], &verdicts(&[score(1.0, 0.0, None, 1, 0)])), None);
}

#[test]
fn the_front_holds_the_candidates_nothing_beats_on_both_axes() {
    let scores = vec![
        score(3.0, 0.0, None, 0, 0),
        score(1.0, 1.0, None, 0, 0),
        score(2.0, 0.5, None, 0, 0),
        score(2.5, 0.6, None, 0, 0), // beaten by 2
        score(0.5, 2.0, None, 0, 0),
        score(0.1, 0.0, None, 3, 0), // breaks invariants: not on the front
        score(1.0, 1.0, None, 0, 0), // the same point as 1: the first kept
    ];
    assert_eq!(pareto_front(&scores), vec![4, 1, 2, 0]);
}
