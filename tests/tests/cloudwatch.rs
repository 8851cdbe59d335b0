//! Real CloudWatch CPU series (`tests/data/cloudwatch`, from the Numenta Anomaly
//! Benchmark): each CSV imported as one reading a minute, replayed through the 1.0.0 and 2.0.0
//! components and native modules. The components must print the native lines, break no
//! invariant, and behave as the data says they should (checked against the series first, see
//! the README table there): no false alarm on the calm series, escalations only inside labelled
//! anomaly windows, and the candidate 2.0.0 never more protective than 1.0.0.

use capacity_tests::paths::files_ending;
use capacity_tests::policies::{VERSIONS, component_hint};
use capacity_tests::{cloudwatch_dir, first_difference, native, shared_component};
use sentinel_core::replay::compare::{Accumulator, Summary};
use sentinel_core::replay::{self, output};
use sentinel_core::trace::{ImportSignal, RepeatedTimestamps, Trace, import_csv};
use std::collections::BTreeMap;
use std::path::Path;
use vocabulary::{Instant, ProtectionState};

/// One policy's replay of one series.
struct Run {
    lines: Vec<String>,
    states: Vec<(Instant, ProtectionState)>,
    summary: Summary,
}

fn import(path: &Path) -> Trace {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let events = import_csv(&path.display().to_string(), file, &ImportSignal::CpuPct, RepeatedTimestamps::Refuse)
        .unwrap_or_else(|e| panic!("importing {}: {e}", path.display()));
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    Trace { name, events }
}

fn run(trace: &Trace, policy: &mut Box<dyn sentinel_core::policy::Policy>) -> Run {
    let label = policy.identity().version.clone();
    let thresholds = policy.describe().expect("describe").thresholds;
    let mut acc = Accumulator::new(&label, &trace.name, &thresholds);
    let (mut lines, mut states) = (Vec::new(), Vec::new());
    replay::run(trace, std::slice::from_mut(policy), false, &mut |_, tick| {
        acc.add(&tick);
        lines.push(output::tick_line(&label, &tick));
        states.push((tick.at, tick.outcome.state));
    })
    .unwrap_or_else(|e| panic!("{e}"));
    Run { lines, states, summary: acc.finish() }
}

/// NAB's labelled anomaly windows, per series, as unix-second ranges.
fn anomaly_windows(dir: &Path) -> BTreeMap<String, Vec<(Instant, Instant)>> {
    let text = std::fs::read_to_string(dir.join("anomaly_windows.json")).expect("anomaly_windows.json");
    let raw: BTreeMap<String, Vec<(String, String)>> = serde_json::from_str(&text).expect("windows parse");
    let at = |s: &str| {
        // "2014-02-19 10:50:00.000000" (UTC)
        let rfc = format!("{}Z", s.replacen(' ', "T", 1));
        sentinel_core::instants::parse_rfc3339(&rfc).unwrap_or_else(|e| panic!("window {s}: {e}"))
    };
    raw.into_iter().map(|(k, v)| (k, v.iter().map(|(a, b)| (at(a), at(b))).collect())).collect()
}

#[test]
fn cloudwatch_series_replay_alike_without_violations_and_alarm_only_in_anomalies() {
    let dir = cloudwatch_dir();
    let csvs = files_ending(&dir, ".csv");
    assert_eq!(csvs.len(), 6, "expected the six CloudWatch series in {}", dir.display());
    let windows = anomaly_windows(&dir);
    let mut natives: Vec<_> = VERSIONS.iter().map(|v| native(v)).collect();
    let mut components: Vec<_> = VERSIONS.iter().map(|v| shared_component(v)).collect();
    let mut left_normal = Vec::new();
    for csv in &csvs {
        let trace = import(csv);
        assert!(trace.events.len() > 19_000, "{}: {} minutes imported", trace.name, trace.events.len());
        let mut runs = Vec::new();
        for (i, version) in VERSIONS.iter().enumerate() {
            let c = run(&trace, &mut components[i]);
            let n = run(&trace, &mut natives[i]);
            if let Some(diff) = first_difference(&n.lines, &c.lines) {
                panic!("{} through {version}: component differs from native{}: {diff}", trace.name, component_hint(version));
            }
            assert!(c.summary.violations.is_empty(), "{} {version}: {:?}", trace.name, c.summary.violations);
            assert_eq!(c.summary, n.summary, "{} {version}: summaries differ", trace.name);
            assert_eq!(c.summary.failed_reads, 0, "{}: an import has no failed reads", trace.name);
            runs.push(c);
        }
        let (v1, v2) = (&runs[0], &runs[1]);

        // The candidate's boundaries are later and higher: never more protective, tick by tick.
        for ((at, s1), (_, s2)) in v1.states.iter().zip(&v2.states) {
            assert!(s2.rank() <= s1.rank(), "{} at {at}: 2.0.0 is {s2:?} while 1.0.0 is {s1:?}", trace.name);
        }
        // Every escalation of 1.0.0 (a change above normal) starts inside a labelled anomaly window.
        let series_windows = windows.get(&trace.name).cloned().unwrap_or_default();
        let mut previous = ProtectionState::Normal;
        for (at, state) in &v1.states {
            if state.rank() > previous.rank() {
                assert!(
                    series_windows.iter().any(|(from, to)| (*from..=*to).contains(at)),
                    "{}: 1.0.0 escalated to {state:?} at {at}, outside every anomaly window {series_windows:?}",
                    trace.name
                );
            }
            previous = *state;
        }
        if v1.summary.transitions > 0 {
            left_normal.push(trace.name.clone());
        }
        // ec2 ac20cd climbs to 99 % for its last 38 hours: 1.0.0 must protect within minutes of the
        // first critical reading, and reach emergency; 2.0.0 no earlier.
        if trace.name == "ec2_cpu_utilization_ac20cd" {
            let protect = v1.summary.minutes_to_protect.expect("1.0.0 protects ac20cd");
            assert!(protect <= 5, "1.0.0 took {protect} min from the first critical reading to critical");
            assert!(v1.summary.minutes[3] > 0, "1.0.0 never reached emergency on ac20cd");
            let first = |r: &Run| r.states.iter().find(|(_, s)| s.rank() >= 2).map(|(at, _)| *at);
            let (p1, p2) = (first(v1).expect("1.0.0 reaches critical"), first(v2));
            assert!(p2.is_none_or(|p2| p1 <= p2), "2.0.0 protected at {p2:?}, before 1.0.0 at {p1}");
        }
    }
    // Four series never reach 70 % (README table): no false alarm; the two that do, alarm.
    assert_eq!(left_normal, ["ec2_cpu_utilization_ac20cd", "rds_cpu_utilization_e47b3b"], "the series on which 1.0.0 left normal");
}
