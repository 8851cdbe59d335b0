//! `sentinel run --speed`: the synthetic incident, simulated 3000 times faster, passes through
//! constrained, critical and emergency and recovers to normal, one published sequence number
//! per tick; a sped-up trace stops by itself after its last minute.

use crate::support;

use std::time::{Duration, Instant};
use support::{Metrics, Sandbox, cpu, read_error, record_state, rfc, t};

/// Consecutive runs of equal items, e.g. the states a run passed through.
fn runs<T: PartialEq + Clone>(items: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if out.last() != Some(item) {
            out.push(item.clone());
        }
    }
    out
}

#[test]
fn the_synthetic_incident_escalates_to_emergency_and_recovers() {
    let sb = Sandbox::new(Metrics::Synthetic);
    let ran = sb.sentinel(&["run", "--speed", "3000", "--ticks", "80"]).success();
    assert!(ran.stderr.contains("sentinel stopped ticks=80 failed=0"), "{}", ran.stderr);

    let ticks = sb.ticks();
    assert_eq!(ticks.iter().map(|(s, _)| *s).collect::<Vec<_>>(), (1..=80).collect::<Vec<u64>>(), "one record per tick");
    // A simulated minute per tick, from the cycle's first minute.
    let ats: Vec<i64> = ticks.iter().map(|(_, r)| r["at"].as_i64().unwrap()).collect();
    assert!(ats.windows(2).all(|w| w[1] - w[0] == 60), "{ats:?}");
    assert_eq!(ats[0] % (80 * 60), 0, "starts where the incident cycle starts");

    let states: Vec<String> = ticks.iter().map(|(_, r)| record_state(r).to_string()).collect();
    assert_eq!(
        runs(&states),
        ["normal", "constrained", "critical", "emergency", "critical", "constrained", "normal"],
        "up one rank or more at a time, down one step at a time"
    );
    let cause_of = |state: &str| {
        let (_, first) = ticks.iter().find(|(_, r)| record_state(r) == state).unwrap();
        first["decision"]["cause"].as_str().unwrap().to_string()
    };
    assert_eq!(cause_of("constrained"), "escalate");
    assert_eq!(cause_of("emergency"), "emergency");
    // The metric outage near the end of the cycle: held once, then released.
    let causes: Vec<&str> = ticks.iter().map(|(_, r)| r["decision"]["cause"].as_str().unwrap()).collect();
    assert!(causes.contains(&"signal-held") && causes.contains(&"signal-lost-release"), "{causes:?}");

    // The stderr log has the same story, one line per tick.
    let logged: Vec<&str> = ran.stderr.lines().filter(|l| l.contains("sentinel_core::tick:") && l.contains(" sequence=")).collect();
    assert_eq!(logged.len(), 80);
    assert!(logged.iter().any(|l| l.contains("state=\"emergency\" cause=\"emergency\"")));

    let doc = sb.cache_doc();
    assert_eq!(doc["sequence"], 80);
    assert_eq!(doc["state"], "normal");
    assert_eq!(doc["decided_at"], rfc(ats[79]).as_str());
    assert_eq!(sb.parameter_doc(), doc);
}

#[test]
fn a_sped_up_trace_stops_after_its_last_minute() {
    // Six minutes, one of them a failed read; no --ticks.
    let lines = vec![cpu(t(0), 40.0), cpu(t(1), 88.0), cpu(t(2), 88.0), read_error(t(3), "timeout"), cpu(t(4), 90.0), cpu(t(5), 91.0)];
    let sb = Sandbox::new(Metrics::Trace(lines));
    let ran = sb.sentinel(&["run", "--speed", "3000"]).success();
    assert!(ran.stderr.contains("sentinel stopped ticks=6 failed=0"), "{}", ran.stderr);
    let ticks = sb.ticks();
    let ats: Vec<i64> = ticks.iter().map(|(_, r)| r["at"].as_i64().unwrap()).collect();
    assert_eq!(ats, (0..6).map(t).collect::<Vec<_>>(), "each minute of the trace once, from its first");
    assert_eq!(ticks[3].1["decision"]["cause"], "signal-held", "the read_error line is a failed read");
    let doc = sb.cache_doc();
    assert_eq!(doc["sequence"], 6);
    assert_eq!(doc["decided_at"], rfc(t(5)).as_str());
}

#[test]
fn a_slow_run_exits_right_after_its_last_tick() {
    // --speed 2: a simulated minute every 30 s; one tick, so no pause is owed afterwards.
    let sb = Sandbox::new(Metrics::Trace(vec![cpu(t(0), 40.0), cpu(t(1), 40.0)]));
    let started = Instant::now();
    let ran = sb.sentinel(&["run", "--speed", "2", "--ticks", "1"]).success();
    assert!(started.elapsed() < Duration::from_secs(15), "took {:?}:\n{}", started.elapsed(), ran.stderr);
    assert!(ran.stderr.contains("sentinel stopped ticks=1 failed=0"), "{}", ran.stderr);
    assert_eq!(sb.cache_doc()["sequence"], 1);
}

#[test]
fn a_real_time_tick_on_a_store_a_simulated_run_wrote_ahead_says_why_it_decides_nothing() {
    // A trace two hours ahead of the wall clock, run fast into the sandbox's own store.
    let ahead = support::minute_of(support::wall_now()) + 120 * 60;
    let lines: Vec<String> = (0..3).map(|m| cpu(ahead + m * 60, 40.0)).collect();
    let sb = Sandbox::new(Metrics::Trace(lines));
    sb.sentinel(&["run", "--speed", "3000"]).success();
    let tick = sb.sentinel(&["tick"]).success();
    assert!(
        tick.stderr.contains(&format!("this store already holds a decision for {}", rfc(ahead + 120)))
            && tick.stderr.contains("ahead of the wall clock")
            && tick.stderr.contains("Give simulated runs a store of their own"),
        "{}",
        tick.stderr
    );
    assert_eq!(sb.cache_doc()["sequence"], 3, "nothing decided twice");
}
