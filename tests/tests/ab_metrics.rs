//! The comparison metrics of `sentinel replay` on small hand-made traces whose right numbers
//! can be counted by hand (policy 1.0.0: 3 readings to escalate, 5 to recover, 5 minutes
//! between automatic changes), and the invariant checker catching deliberately broken
//! policies: ones whose outputs break INV-01..03 although each call looks plausible, and one
//! whose code disagrees with the thresholds it declares.

use capacity_tests::native;
use capacity_tests::paths::crate_dir;
use sentinel_core::policy::invariants::Floors;
use sentinel_core::policy::{NativePolicy, Policy, PolicyError, PolicyIdentity};
use sentinel_core::replay::compare::{Accumulator, Summary};
use sentinel_core::trace::{Trace, parse_trace};
use vocabulary::{
    AdmissionPlan, AdmissionRequest, AdmissionResult, ApiBaseline, ApiSamples, Cause, Decision, DecisionInput, Instant, Level, Pin,
    PinError, PinRequest, PlanRequest, PolicyDescription, ProtectionState, Signal,
};

/// 2026-10-20T14:00:00Z.
const T0: Instant = 1_792_504_800;

/// One line per entry, a minute apart from 14:00: a number is a CPU reading, `None` a failed
/// read.
fn trace(name: &str, cpus: &[Option<f64>], prefix: &str) -> Trace {
    let mut text = prefix.to_string();
    for (m, cpu) in cpus.iter().enumerate() {
        let at = sentinel_core::instants::format_rfc3339(T0 + 60 * m as Instant);
        text.push_str(&match cpu {
            Some(cpu) => format!("{{\"at\":\"{at}\",\"reading\":{{\"cpu_pct\":{cpu}}}}}\n"),
            None => format!("{{\"at\":\"{at}\",\"read_error\":\"timeout\"}}\n"),
        });
    }
    parse_trace(name, &text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cpus(spec: &[(f64, usize)]) -> Vec<Option<f64>> {
    spec.iter().flat_map(|&(cpu, n)| std::iter::repeat_n(Some(cpu), n)).collect()
}

fn summary_with(policy: &mut Box<dyn Policy>, trace: &Trace, throttles: bool, floors: &Floors) -> Summary {
    let thresholds = policy.describe().expect("describe").thresholds;
    let mut acc = Accumulator::with_floors("p", &trace.name, &thresholds, floors);
    sentinel_core::replay::run(trace, std::slice::from_mut(policy), throttles, &mut |_, tick| acc.add(&tick))
        .unwrap_or_else(|e| panic!("{e}"));
    acc.finish()
}

fn summary(trace: &Trace) -> Summary {
    summary_with(&mut native("1.0.0"), trace, false, &Floors::default())
}

#[test]
fn a_change_undone_within_fifteen_minutes_is_one_flap_and_two_transitions() {
    // 14:02 escalate to constrained (third cpu-75 reading); 14:07 recover (five calm readings,
    // five minutes after): undone after 5 minutes.
    let s = summary(&trace("flap", &cpus(&[(75.0, 3), (40.0, 10)]), ""));
    assert_eq!((s.ticks, s.transitions, s.flaps), (13, 2, 1), "{s:?}");
    assert_eq!(s.minutes, [8, 5, 0, 0], "14:02-14:06 constrained, the rest normal");
    assert_eq!(s.bulk_capacity_minutes, 8.0 + 5.0 * 0.5);
    assert_eq!(s.flaps_per_day(), 1.0, "a trace shorter than a day counts as one day");
    assert!(s.violations.is_empty(), "{:?}", s.violations);
}

#[test]
fn a_change_undone_after_fifteen_minutes_is_no_flap() {
    // 14:02 escalate; cpu 72 (constrained) holds it to 14:16; 14:21 recover, 19 minutes later.
    let s = summary(&trace("slow-undo", &cpus(&[(75.0, 3), (72.0, 14), (40.0, 6)]), ""));
    assert_eq!((s.transitions, s.flaps), (2, 0), "{s:?}");
}

#[test]
fn over_protection_counts_unpinned_protected_minutes_with_normal_readings() {
    // Constrained 14:02-14:06; the readings of 14:03-14:06 are normal (14:02's was 75).
    let s = summary(&trace("flap", &cpus(&[(75.0, 3), (40.0, 10)]), ""));
    assert_eq!(s.over_protection_minutes, 4, "{s:?}");
    // A critical pin until 14:05 over calm readings is staff's choice, not over-protection; the
    // policy then steps down: constrained at 14:05 (five calm readings, no automatic change
    // yet), normal at 14:10 (five minutes later). 14:05-14:09 count.
    let pin =
        r#"{"at":"2026-10-20T14:00:00Z","pin":{"state":"critical","reason":"drill","expires_at":"2026-10-20T14:05:00Z","actor":"ops"}}"#;
    let s = summary(&trace("pinned", &cpus(&[(40.0, 12)]), &format!("{pin}\n")));
    assert_eq!(s.minutes, [2, 5, 5, 0], "{s:?}");
    assert_eq!(s.over_protection_minutes, 5, "{s:?}");
}

#[test]
fn time_to_protect_runs_from_the_first_critical_reading_to_critical() {
    // cpu 90 from 14:01: the third critical reading (14:03) escalates straight to critical.
    let s = summary(&trace("protect", &cpus(&[(40.0, 1), (90.0, 6)]), ""));
    assert_eq!(s.first_critical_at, Some(T0 + 60));
    assert_eq!(s.minutes_to_protect, Some(2), "{s:?}");
    assert_eq!(s.minutes_to_first_protection(), Some(3), "from the trace's first tick");
    assert!(!s.never_protected());
    // Waiting for six readings (the `slow` fixture) protects three minutes later.
    let mut slow = sentinel_core::policy::open(&crate_dir().join("ab/slow").display().to_string(), &capacity_tests::runtime()).unwrap();
    let s = summary_with(&mut slow, &trace("protect", &cpus(&[(40.0, 1), (90.0, 6)]), ""), false, &Floors::default());
    assert_eq!(s.minutes_to_protect, Some(5), "{s:?}");
}

#[test]
fn lone_critical_readings_leave_time_to_protect_empty_and_count_as_never_protected() {
    let s = summary(&trace("spikes", &[Some(40.0), Some(90.0), Some(40.0), Some(90.0), Some(40.0)], ""));
    assert_eq!((s.first_critical_at, s.minutes_to_protect, s.first_protected_at), (Some(T0 + 60), None, None));
    assert!(s.never_protected());
    let calm = summary(&trace("calm", &cpus(&[(40.0, 5)]), ""));
    assert_eq!((calm.minutes_to_protect, calm.never_protected()), (None, false), "no critical reading: nothing owed");
}

#[test]
fn failed_reads_and_throttle_engagements_are_counted() {
    let s = summary(&trace("loss", &[Some(40.0), None, None, Some(40.0), None], ""));
    assert_eq!(s.failed_reads, 3, "{s:?}");
    // cpu 90: critical at 14:02, emergency at 14:07 (spacing), throttles 5 minutes later (14:12).
    let long = trace("emergency", &cpus(&[(90.0, 20)]), "");
    let on = summary_with(&mut native("1.0.0"), &long, true, &Floors::default());
    assert_eq!((on.throttle_engagements, on.minutes[3]), (1, 13), "{on:?}");
    assert_eq!(summary(&long).throttle_engagements, 0, "the switch is off by default");
}

#[test]
fn flaps_per_day_divides_by_the_days_of_trace() {
    let mut s = summary(&trace("flap", &cpus(&[(75.0, 3), (40.0, 10)]), ""));
    (s.ticks, s.flaps) = (2 * 1440, 4);
    assert_eq!(s.flaps_per_day(), 2.0);
}

/// How a [`Broken`] policy misbehaves.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Escalates to critical on the first critical reading.
    EscalatesOnOneReading,
    /// Jumps from normal to emergency.
    EmergencyFromNormal,
    /// Holds its state through any number of failed reads.
    HoldsThroughSignalLoss,
    /// Calls a scaling reading critical.
    ScalingIsCritical,
    /// Names its states as declared but publishes normal's factors in every one.
    PublishesFullCapacity,
}

/// The 1.0.0 native modules with one fault injected into their decisions.
struct Broken {
    inner: Box<dyn Policy>,
    fault: Fault,
}

impl Policy for Broken {
    fn identity(&self) -> &PolicyIdentity {
        self.inner.identity()
    }
    fn describe(&mut self) -> Result<PolicyDescription, PolicyError> {
        self.inner.describe()
    }
    fn decide(&mut self, input: &DecisionInput) -> Result<Decision, PolicyError> {
        let mut d = self.inner.decide(input)?;
        let declared = self.inner.describe()?.thresholds.factors;
        let before = input.memory.as_ref().map_or(ProtectionState::Normal, |m| m.state);
        let force = |d: &mut Decision, state: ProtectionState, cause: Cause| {
            (d.state, d.previous, d.changed, d.cause, d.factors) = (state, before, state != before, cause, declared.of(state));
            (d.memory.state, d.memory.state_since, d.memory.last_auto_change) = (state, input.now, Some(input.now));
        };
        match (self.fault, &input.signal) {
            (Fault::EscalatesOnOneReading, Signal::Reading(r)) if r.cpu_pct >= Some(85.0) && before == ProtectionState::Normal => {
                force(&mut d, ProtectionState::Critical, Cause::Escalate)
            }
            (Fault::EmergencyFromNormal, Signal::Reading(r)) if r.cpu_pct >= Some(85.0) && before == ProtectionState::Normal => {
                force(&mut d, ProtectionState::Emergency, Cause::Emergency)
            }
            (Fault::HoldsThroughSignalLoss, Signal::Failed(_)) => {
                (d.state, d.changed, d.cause, d.memory.state, d.factors) = (before, false, Cause::SignalHeld, before, declared.of(before));
            }
            (Fault::ScalingIsCritical, Signal::Reading(r)) if r.scaling == Some(true) => d.level = Some(Level::Critical),
            (Fault::PublishesFullCapacity, _) => d.factors = declared.normal,
            _ => {}
        }
        Ok(d)
    }
    fn compute_baselines(&mut self, hour: Instant, samples: &[ApiSamples]) -> Result<Vec<ApiBaseline>, PolicyError> {
        self.inner.compute_baselines(hour, samples)
    }
    fn validate_pin(&mut self, request: &PinRequest, now: Instant) -> Result<Result<Pin, PinError>, PolicyError> {
        self.inner.validate_pin(request, now)
    }
    fn resolve_budget(&mut self, request: &AdmissionRequest) -> Result<AdmissionResult, PolicyError> {
        self.inner.resolve_budget(request)
    }
    fn plan(&mut self, request: &PlanRequest) -> Result<AdmissionPlan, PolicyError> {
        self.inner.plan(request)
    }
}

fn violations_of(policy: Box<dyn Policy>, trace: &Trace) -> Vec<(String, String)> {
    let mut policy = policy;
    summary_with(&mut policy, trace, false, &Floors::default())
        .violations
        .into_iter()
        .map(|v| (v.invariant.to_string(), v.detail))
        .collect()
}

#[test]
fn the_checker_catches_each_deliberately_broken_policy() {
    let spike = trace("spike", &cpus(&[(40.0, 2), (90.0, 4)]), "");
    let loss = trace("loss", &[Some(90.0), Some(90.0), Some(90.0), None, None, None], "");
    let scaling = parse_trace("scaling", r#"{"at":"2026-10-20T14:00:00Z","reading":{"scaling":true}}"#).unwrap();
    let cases: [(Fault, &Trace, &str, &str); 5] = [
        (Fault::EscalatesOnOneReading, &spike, "INV-01", "escalation to critical without 3 supporting readings"),
        (
            Fault::PublishesFullCapacity,
            &spike,
            "INV-08",
            "published bulk 1 heavy 1 write 1 read 1 in critical, where the version declares bulk 0",
        ),
        (Fault::EmergencyFromNormal, &spike, "INV-02", "emergency reached from normal without a pin"),
        (Fault::HoldsThroughSignalLoss, &loss, "INV-03", "critical after two failed reads"),
        (Fault::ScalingIsCritical, &scaling, "INV-02", "a scaling reading was assessed critical"),
    ];
    for (fault, trace, invariant, detail) in cases {
        assert!(violations_of(native("1.0.0"), trace).is_empty(), "{}: the sound policy breaks nothing", trace.name);
        let found = violations_of(Box::new(Broken { inner: native("1.0.0"), fault }), trace);
        assert!(
            found.iter().any(|(i, d)| i == invariant && d.starts_with(detail)),
            "{fault:?} on {}: expected {invariant} ({detail}), found {found:?}",
            trace.name
        );
    }
}

#[test]
fn a_version_whose_declared_factors_do_not_protect_breaks_inv_08_once() {
    // Every factor 1.0 (the security review's policy): its decisions publish what it declares,
    // but what it declares stops no bulk work in critical.
    let text = std::fs::read_to_string(capacity_tests::workspace().join("policies/1.0.0/policy.toml")).unwrap();
    let unprotective = text
        .lines()
        .map(|l| match l.split_once('=') {
            Some((state, _)) if ["constrained ", "critical ", "emergency "].iter().any(|s| l.starts_with(s)) => {
                format!("{state}= {{ bulk = 1.0, heavy = 1.0,  write = 1.0, read = 1.0 }}")
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let description: vocabulary::PolicyDescription = toml::from_str(&unprotective).unwrap();
    assert!(description.check().unwrap_err().contains("thresholds.factors.critical.bulk"), "the file itself is refused");
    let mut policy: Box<dyn Policy> = Box::new(NativePolicy::new(description.clone(), "none", Some("none")));
    let spike = trace("spike", &cpus(&[(40.0, 2), (90.0, 6)]), "");
    let mut acc = Accumulator::new("none", &spike.name, &description.thresholds);
    sentinel_core::replay::run(&spike, std::slice::from_mut(&mut policy), false, &mut |_, t| acc.add(&t)).unwrap();
    let s = acc.finish();
    let found: Vec<_> = s.violations.iter().filter(|v| v.invariant == "INV-08").collect();
    assert_eq!(found.len(), 1, "reported once, not on every tick: {:?}", s.violations);
    assert!(found[0].detail.contains("declared factors do not protect") && found[0].detail.contains("critical.bulk"), "{found:?}");
}

#[test]
fn the_checker_assesses_readings_itself_not_by_the_policy_s_word() {
    // Declares 1.0.0's thresholds, but decides with CPU critical at 78: cpu 80 is critical to
    // its code and constrained to what it declares. Its escalation to critical is unsupported.
    let text = std::fs::read_to_string(capacity_tests::workspace().join("policies/1.0.0/policy.toml")).unwrap();
    let lying: vocabulary::PolicyDescription = toml::from_str(
        &text.replace("cpu_pct = { constrained = 70.0, critical = 85.0 }", "cpu_pct = { constrained = 70.0, critical = 78.0 }"),
    )
    .unwrap();
    let declared = native("1.0.0").describe().unwrap();
    let mut liar: Box<dyn Policy> = Box::new(NativePolicy::new(lying, "liar", Some("liar")));
    let trace = trace("eighty", &cpus(&[(80.0, 5)]), "");
    let mut acc = Accumulator::new("liar", &trace.name, &declared.thresholds);
    sentinel_core::replay::run(&trace, std::slice::from_mut(&mut liar), false, &mut |_, t| acc.add(&t)).unwrap();
    let s = acc.finish();
    assert!(
        s.violations.iter().any(|v| v.invariant == "INV-01" && v.detail.contains("escalation to critical without 3 supporting readings")),
        "{:?}",
        s.violations
    );
}

#[test]
fn floors_make_a_policy_that_loosens_the_seed_numbers_break_inv_01() {
    let mut hasty = sentinel_core::policy::open(&crate_dir().join("ab/hasty").display().to_string(), &capacity_tests::runtime()).unwrap();
    let burst = trace("burst", &cpus(&[(40.0, 2), (75.0, 2), (40.0, 2), (90.0, 3), (40.0, 8)]), "");
    let own = summary_with(&mut hasty, &burst, false, &Floors::default());
    assert!(own.violations.is_empty(), "it obeys its own numbers: {:?}", own.violations);
    let seed = Floors { min_spacing_s: Some(300), min_escalate_readings: Some(3), min_recover_readings: Some(5) };
    let floored = summary_with(&mut hasty, &burst, false, &seed);
    let details: Vec<&str> = floored.violations.iter().map(|v| v.detail.as_str()).collect();
    assert!(floored.violations.iter().all(|v| v.invariant == "INV-01"), "{details:?}");
    assert!(details.iter().any(|d| d.contains("without 3 supporting readings")), "{details:?}");
    assert!(details.iter().any(|d| d.starts_with("automatic change ") && d.ends_with("s after the previous one")), "{details:?}");
}
