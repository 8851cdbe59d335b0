//! `sentinel replay` as an A/B gate, run as CI runs it: the gate file (typed, refusing unknown
//! keys), a gate that passes, one that fails naming the regressed metric, one that fails on a
//! broken invariant, a waiver; the report folder (report.md, report.json, one well-formed SVG
//! per trace); and the parallel engine giving the lockstep replay's numbers.

use capacity_tests::paths::crate_dir;
use capacity_tests::policies::{VERSIONS, component_file};
use capacity_tests::sentinel_bin::run;
use capacity_tests::{component_path, native, workspace};
use sentinel_core::policy::source::PolicySource;
use sentinel_core::replay::compare::Accumulator;
use sentinel_core::replay::gate::Gate;
use sentinel_core::replay::lane::Options;
use sentinel_core::replay::metrics::METRICS;
use sentinel_core::replay::parallel::run_all;
use sentinel_core::trace::read_trace;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn arg(path: &Path) -> String {
    path.display().to_string()
}

fn scenario(name: &str) -> String {
    arg(&crate_dir().join("traces").join(format!("{name}.jsonl")))
}

fn fixture(name: &str) -> String {
    arg(&crate_dir().join("ab").join(name))
}

fn gate_file(dir: &Path, text: &str) -> String {
    let path = dir.join("gate.toml");
    std::fs::write(&path, text).unwrap();
    arg(&path)
}

#[test]
fn the_gate_file_is_typed_and_refuses_what_it_does_not_know() {
    let err = Gate::parse("g.toml", "max_flaps_per_day = 1\n").unwrap_err().to_string();
    assert!(err.starts_with("gate file g.toml is invalid: ") && err.contains("max_flaps_per_day"), "{err}");
    let err = Gate::parse("g.toml", "max_minutes_to_protect_regression = -1\n").unwrap_err().to_string();
    assert!(err.contains("max_minutes_to_protect_regression: must be a number >= 0"), "{err}");
    let err = Gate::parse("g.toml", "[invariants]\nmin_spacing = 300\n").unwrap_err().to_string();
    assert!(err.contains("min_spacing"), "{err}");
    let err = Gate::parse("g.toml", "[[waive]]\ncandidate = \"2.0.0\"\nmetric = \"speed\"\nreason = \"x\"\n").unwrap_err().to_string();
    assert!(err.contains("waive[0].metric: unknown metric \"speed\""), "{err}");
    let gate = Gate::load(&workspace().join("policies/gate.toml")).expect("the project's gate file is valid");
    assert!(gate.fail_on_invariant && gate.max_minutes_to_protect_regression == Some(2.0), "{gate:?}");
    assert_eq!(gate.invariants.min_escalate_readings, Some(3), "INV-01's numbers (docs/behaviour.md §12)");
    assert!(Gate::default().fail_on_invariant, "an empty gate fails on invariants");
}

#[test]
fn the_gate_passes_a_candidate_within_its_limits() {
    let out = run([
        "replay",
        "--baseline",
        "policies/1.0.0",
        "--candidate",
        "policies/2.0.0",
        "--gate",
        "policies/gate.toml",
        &scenario("incident"),
        &scenario("flapping"),
        &scenario("signal_loss"),
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("gate passed: 2.0.0-native against 1.0.0-native"), "{}", out.stderr);
}

#[test]
fn the_gate_fails_a_slower_candidate_naming_the_metric() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate_file(dir.path(), "max_minutes_to_protect_regression = 2\n");
    let out = run(["replay", "--baseline", "policies/1.0.0", "--candidate", &fixture("slow"), "--gate", &gate, &scenario("incident")]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("gate failed: 8.2.0-native regressed against 1.0.0-native (1 finding(s))"), "{}", out.stderr);
    assert!(
        out.stderr.contains("incident: minutes_to_protect (minutes from first critical reading to protection): +3 min, limit +2"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("invariant_violations"), "the slow fixture breaks no invariant: {}", out.stderr);

    // The same regression, accepted for this version with a reason: reported, not failing.
    let waived = gate_file(
        dir.path(),
        "max_minutes_to_protect_regression = 2\n[[waive]]\ncandidate = \"8.2.0\"\nmetric = \"minutes_to_protect\"\nreason = \"slower on purpose\"\n",
    );
    let out = run(["replay", "--baseline", "policies/1.0.0", "--candidate", &fixture("slow"), "--gate", &waived, &scenario("incident")]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("waived: incident: minutes_to_protect: +3 min, limit +2 (slower on purpose)"), "{}", out.stderr);
}

#[test]
fn the_gate_judges_the_factors_published_not_the_state_names() {
    // The lighter fixture changes state exactly as 1.0.0 does but publishes heavy 0.5 where
    // 1.0.0 publishes 0.25: the project's gate passed it while it judged state names only.
    let out = run([
        "replay",
        "--baseline",
        "policies/1.0.0",
        "--candidate",
        &fixture("lighter"),
        "--gate",
        "policies/gate.toml",
        &scenario("incident"),
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("incident: state_factors (state_factors): publishes heavy 0.5 in critical where the baseline publishes 0.25"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("publishes heavy 0.5 in emergency where the baseline publishes 0.25"), "{}", out.stderr);
    // A deliberate change of factors is accepted by a waiver that names it.
    let dir = tempfile::tempdir().unwrap();
    let gate = std::fs::read_to_string(workspace().join("policies/gate.toml")).unwrap()
        + "\n[[waive]]\ncandidate = \"8.4.0\"\nmetric = \"state_factors\"\nreason = \"heavy work may run at half in critical\"\n";
    let waived = gate_file(dir.path(), &gate);
    let out = run(["replay", "--baseline", "policies/1.0.0", "--candidate", &fixture("lighter"), "--gate", &waived, &scenario("incident")]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stderr.contains("waived: incident: state_factors: publishes heavy 0.5 in critical"), "{}", out.stderr);
}

#[test]
fn the_gate_fails_a_candidate_that_breaks_an_invariant() {
    // The hasty fixture escalates on one reading, a minute after its last change: the project's
    // gate holds it to INV-01's numbers.
    let out = run([
        "replay",
        "--baseline",
        "policies/1.0.0",
        "--candidate",
        &fixture("hasty"),
        "--gate",
        "policies/gate.toml",
        &scenario("flapping"),
    ]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("flapping: invariant_violations (invariant violations): "), "{}", out.stderr);
    assert!(out.stderr.contains("of INV-01 (first INV-01 at 2026-10-20T14:"), "{}", out.stderr);
    assert!(out.stderr.contains("[fail_on_invariant]"), "{}", out.stderr);
    // Without the gate's floors it obeys its own numbers: a plain replay finds nothing.
    let plain = run(["replay", "--policy", &fixture("hasty"), "--fail-on-violation", &scenario("flapping")]);
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
}

#[test]
fn a_gate_needs_two_policies() {
    let out = run(["replay", "--policy", "policies/1.0.0", "--gate", "policies/gate.toml", &scenario("incident")]);
    assert_ne!(out.code, Some(0));
    assert!(out.stderr.contains("--gate policies/gate.toml needs two policies"), "{}", out.stderr);
}

fn report_run(dir: &Path, traces: &[String]) -> (Value, String) {
    let mut args: Vec<String> = ["replay", "--baseline", "policies/1.0.0", "--candidate", "policies/2.0.0", "--gate", "policies/gate.toml"]
        .map(String::from)
        .to_vec();
    args.extend(["--report".to_string(), arg(dir), "--format".into(), "jsonl".into()]);
    args.extend(traces.iter().cloned());
    let out = run(&args).success();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("JSON");
    (json, out.stdout)
}

#[test]
fn the_report_writes_markdown_json_and_one_svg_per_trace_and_leaves_jsonl_alone() {
    let dir = tempfile::tempdir().unwrap();
    let traces = [scenario("incident"), scenario("direct_critical")];
    let (json, stdout) = report_run(dir.path(), &traces);
    let mut args = vec!["replay", "--baseline", "policies/1.0.0", "--candidate", "policies/2.0.0", "--format", "jsonl"];
    args.extend(traces.iter().map(String::as_str));
    assert_eq!(stdout, run(&args).success().stdout, "--report does not change the jsonl lines");

    assert_eq!(json["policies"][0]["label"], "1.0.0-native");
    assert_eq!(json["policies"][1]["version"], "2.0.0");
    assert_eq!(json["gate"]["passed"], true, "{}", json["gate"]);
    let traces_json = json["traces"].as_array().unwrap();
    assert_eq!(traces_json.iter().map(|t| t["trace"].as_str().unwrap()).collect::<Vec<_>>(), ["incident", "direct_critical"]);
    for t in traces_json {
        let keys: Vec<&str> = t["rows"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap()).collect();
        assert_eq!(keys, METRICS.iter().map(|m| m.key).collect::<Vec<_>>(), "every metric, in order");
        assert!(t["rows"].as_array().unwrap().iter().all(|r| r["verdict"].is_string()), "a verdict per metric");
        let svg = t["svg"].as_str().unwrap();
        assert!(dir.path().join(svg).is_file(), "{svg} written");
    }
    let direct = &traces_json[1]["rows"].as_array().unwrap();
    let onset = direct.iter().find(|r| r["key"] == "minutes_to_first_protection").unwrap();
    assert_eq!((onset["baseline"].as_f64(), onset["candidate"].is_null()), (Some(7.0), true), "{onset}");
    assert_eq!(onset["verdict"], "waived", "policies/gate.toml waives 2.0.0's later protection: {onset}");

    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.starts_with("# Replay: candidate `2.0.0-native` against baseline `1.0.0-native`\n"), "{md}");
    assert!(md.contains("**Gate `policies/gate.toml`: passed.**"), "{md}");
    assert!(md.contains("| metric | 1.0.0-native | 2.0.0-native | difference | verdict |\n|---|---:|---:|---:|---|\n"), "{md}");
    assert!(md.contains("| over-protection (minutes protected on normal readings) | 4 | 4 | 0 | same |"), "{md}");
    assert!(md.contains("![timeline of incident](incident.svg)"), "{md}");
}

#[test]
fn svg_timelines_are_well_formed_and_show_each_policy_state_and_marker() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _) = report_run(dir.path(), &[scenario("throttles"), scenario("signal_loss"), scenario("pins")]);
    for name in ["throttles", "signal_loss", "pins"] {
        let text = std::fs::read_to_string(dir.path().join(format!("{name}.svg"))).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{name}.svg is not well-formed XML: {e}"));
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg", "{name}");
        assert_eq!(root.attribute("width"), Some("1400"), "{name}");
        let texts: Vec<String> =
            doc.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).map(|t| t.trim().to_string()).collect();
        for label in ["1.0.0-native", "2.0.0-native", "difference", "emergency"] {
            assert!(texts.iter().any(|t| t == label), "{name}.svg has no text {label:?}: {texts:?}");
        }
        // The legend names a mark only where the trace has it.
        for (label, holder) in [("failed read", "signal_loss"), ("throttles engage", "throttles"), ("pinned", "pins")] {
            if name == holder {
                assert!(texts.iter().any(|t| t == label), "{name}.svg has no text {label:?}: {texts:?}");
            }
        }
        assert!(name == "signal_loss" || !texts.iter().any(|t| t == "failed read"), "{name}.svg has no failed read to name: {texts:?}");
        let fills: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("rect")).filter_map(|n| n.attribute("fill")).collect();
        assert!(fills.contains(&"#D32F2F"), "{name}.svg: no emergency band");
    }
    let pins = std::fs::read_to_string(dir.path().join("pins.svg")).unwrap();
    assert!(pins.contains("pinned emergency"), "the pin is labelled");
    let throttles = std::fs::read_to_string(dir.path().join("throttles.svg")).unwrap();
    assert!(throttles.contains("<polygon"), "throttle engagements are marked (triangles)");
    let loss = std::fs::read_to_string(dir.path().join("signal_loss.svg")).unwrap();
    assert!(loss.contains("stroke=\"#C62828\""), "failed reads are marked in red");
}

#[test]
fn a_long_trace_gets_a_detail_view_where_the_policies_differ() {
    let dir = tempfile::tempdir().unwrap();
    let csv = capacity_tests::cloudwatch_dir().join("ec2_cpu_utilization_ac20cd.csv");
    let trace = dir.path().join("ec2_cpu_utilization_ac20cd.jsonl");
    run(["trace", "import", "--signal", "cpu_pct", "--output", &arg(&trace), &arg(&csv)]).success();
    let report = dir.path().join("report");
    run(["replay", "--baseline", "policies/1.0.0", "--candidate", "policies/2.0.0", "--report", &arg(&report), &arg(&trace)]).success();
    let svg = std::fs::read_to_string(report.join("ec2_cpu_utilization_ac20cd.svg")).unwrap();
    roxmltree::Document::parse(&svg).expect("well-formed");
    assert!(svg.contains("detail: 2014-04-15 00:"), "a three-hour view at the climb to 99 %");
    assert!(svg.contains("fill=\"#AD1457\""), "2.0.0 less protective there for a few minutes");
    assert!(svg.len() < 400_000, "20,000 minutes drawn per pixel column, not per tick: {} bytes", svg.len());
}

#[test]
fn the_parallel_engine_gives_the_lockstep_numbers() {
    let traces: Vec<PathBuf> = std::fs::read_dir(crate_dir().join("traces"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl") && !p.to_string_lossy().ends_with(".expected.jsonl"))
        .collect();
    let traces: Vec<_> = traces.iter().map(|p| read_trace(p).unwrap()).collect();
    let specs: Vec<String> = VERSIONS.iter().map(|v| arg(&component_path(&component_file(v)))).collect();
    let sources: Vec<PolicySource> = specs.iter().map(|s| PolicySource::open(s, &capacity_tests::runtime()).unwrap()).collect();
    for throttles in [false, true] {
        let runs = run_all(&traces, &sources, Options { throttles, timelines: true, ..Options::default() }).unwrap();
        for (trace, runs) in traces.iter().zip(&runs) {
            for (version, run) in VERSIONS.iter().zip(runs) {
                let mut policy = native(version);
                let thresholds = policy.describe().unwrap().thresholds;
                let mut acc = Accumulator::new(version, &trace.name, &thresholds);
                sentinel_core::replay::run(trace, std::slice::from_mut(&mut policy), throttles, &mut |_, t| acc.add(&t)).unwrap();
                assert_eq!(run.summary, acc.finish(), "{} {version} (throttles {throttles})", trace.name);
                assert_eq!(run.timeline.as_ref().map(|t| t.points.len() as u64), Some(run.summary.ticks));
            }
        }
    }
    let table = |jobs: &str| {
        let mut args = vec![
            "replay".to_string(),
            "--policy".into(),
            specs[0].clone(),
            "--policy".into(),
            specs[1].clone(),
            "--jobs".into(),
            jobs.into(),
        ];
        args.extend(traces.iter().map(|t| scenario(&t.name)));
        run(&args).success().stdout
    };
    assert_eq!(table("1"), table("2"), "one worker or two, the same tables");
}
