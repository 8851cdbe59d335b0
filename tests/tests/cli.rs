//! The `sentinel` binary, run as a user runs it (built by the harness, see
//! `capacity_tests::sentinel_bin`): `policy info` on every built component, `replay` in each
//! format against the library's own output, malformed traces, and `trace import`.

use capacity_tests::paths::{crate_dir, files_ending, policies_dir};
use capacity_tests::policies::component_file;
use capacity_tests::sentinel_bin::run;
use capacity_tests::{component_path, replay_lines, shared_component};
use sentinel_core::replay::compare::{Accumulator, Summary};
use sentinel_core::replay::output::{self, TableStyle};
use sentinel_core::trace::{ImportSignal, RepeatedTimestamps, import_csv, read_trace, write_event};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn arg(path: &Path) -> String {
    path.display().to_string()
}

fn scenario(name: &str) -> PathBuf {
    crate_dir().join("traces").join(format!("{name}.jsonl"))
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn policy_info_reports_no_imports_and_the_manifest_identity_of_every_component() {
    for expected in [component_file("1.0.0"), component_file("2.0.0"), "capacity-admission-3.2.0.wasm".to_string()] {
        component_path(&expected);
    }
    // Every component in one run (each costs a compile): one JSON array, in the order given.
    let files = files_ending(&policies_dir(), ".wasm");
    let mut args = vec!["policy".to_string(), "info".to_string()];
    args.extend(files.iter().map(|f| arg(f)));
    let out = run(&args).success();
    let all: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    let infos = all.as_array().expect("several files give an array");
    assert_eq!(infos.len(), files.len());
    for (file, info) in files.iter().zip(infos) {
        let what = file.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(info["file"], arg(file), "{what}: entries in the order given");
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(file.with_extension("manifest.json")).expect("a manifest beside each component"))
                .expect("manifest is JSON");
        let bytes = std::fs::read(file).unwrap();
        assert_eq!(info["imports"], serde_json::json!([]), "{what} imports something");
        assert_eq!(manifest["imports"], serde_json::json!([]), "{what}: manifest lists imports");
        assert_eq!(info["sha256"].as_str(), Some(hex::encode(Sha256::digest(&bytes)).as_str()), "{what}: sha256 of the file");
        for field in ["name", "version", "sha256", "size", "world"] {
            assert_eq!(info[field], manifest[field], "{what}: {field} differs from the manifest");
        }
        let exports: Vec<&str> = info["exports"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
        let exported = |i: &str| exports.contains(&format!("capacity:sentinel/{i}@{}", sentinel_core::policy::contract::CONTRACT).as_str());
        assert!(exported("admission") && exported("admission-types"), "{what}: exports {exports:?}");
        if what.starts_with("capacity-policy-") {
            assert_eq!(info["world"], "policy", "{what}");
            let version = what.trim_start_matches("capacity-policy-").trim_end_matches(".wasm");
            assert_eq!(info["version"], version, "{what}");
            assert_eq!(info["name"], "capacity-policy", "{what}");
            assert_eq!(info["thresholds"], manifest["thresholds"], "{what}: thresholds differ from the manifest");
            for i in ["decision", "baseline", "pins", "info", "types"] {
                assert!(exported(i), "{what} does not export {i}: {exports:?}");
            }
        } else {
            assert_eq!(info["world"], "admission-only", "{what}");
            assert!(!exported("decision"), "the admission component exports decision: {exports:?}");
        }
    }
    // One file: the object alone.
    let admission = component_path("capacity-admission-3.2.0.wasm");
    let one: Value = serde_json::from_str(&run(["policy", "info", &arg(&admission)]).success().stdout).unwrap();
    let index = files.iter().position(|f| *f == admission).unwrap();
    assert_eq!(one, infos[index]);
}

#[test]
fn replay_jsonl_prints_the_library_lines_for_component_and_native() {
    let traces: Vec<PathBuf> =
        ["incident", "signal_loss", "pins", "throttles", "ticks", "latency_learnt"].iter().map(|n| scenario(n)).collect();
    let wasm = component_path(&component_file("1.0.0"));
    let mut policy = shared_component("1.0.0");
    let expected: Vec<String> = traces.iter().flat_map(|t| replay_lines(&read_trace(t).unwrap(), &mut policy, false)).collect();

    let mut args = vec!["replay".into(), "--policy".into(), arg(&wasm), "--format".into(), "jsonl".into()];
    args.extend(traces.iter().map(|t| arg(t)));
    let out = run(&args).success();
    assert_eq!(lines(&out.stdout), expected, "component replay through the CLI");

    let native = format!("1.0.0={}", arg(&capacity_tests::workspace().join("policies/1.0.0")));
    args[2] = native;
    let out = run(&args).success();
    assert_eq!(lines(&out.stdout), expected, "native replay through the CLI, labelled 1.0.0");

    // Unlabelled, the native modules are `<version>-native`.
    let out = run(["replay", "--policy", "policies/1.0.0", "--format", "jsonl", &arg(&traces[0])]).success();
    assert!(out.stdout.lines().all(|l| l.starts_with(r#"{"policy":"1.0.0-native","#)), "{}", out.stdout);
}

#[test]
fn replay_with_two_policies_interleaves_their_lines() {
    let trace_path = scenario("incident");
    let trace = read_trace(&trace_path).unwrap();
    let v1 = replay_lines(&trace, &mut shared_component("1.0.0"), false);
    let v2 = replay_lines(&trace, &mut shared_component("2.0.0"), false);
    let out = run([
        "replay",
        "--policy",
        &arg(&component_path(&component_file("1.0.0"))),
        "--policy",
        &arg(&component_path(&component_file("2.0.0"))),
        "--format",
        "jsonl",
        &arg(&trace_path),
    ])
    .success();
    let expected: Vec<String> = v1.into_iter().zip(v2).flat_map(|(a, b)| [a, b]).collect();
    assert_eq!(lines(&out.stdout), expected);
}

#[test]
fn replay_throttles_on_sets_the_switch_before_the_first_line() {
    let trace_path = scenario("incident");
    let expected = replay_lines(&read_trace(&trace_path).unwrap(), &mut shared_component("1.0.0"), true);
    assert!(expected.iter().any(|l| l.contains(r#""throttles":"engage""#)), "the incident engages throttles when on");
    let wasm = component_path(&component_file("1.0.0"));
    let out = run(["replay", "--throttles", "on", "--policy", &arg(&wasm), "--format", "jsonl", &arg(&trace_path)]).success();
    assert_eq!(lines(&out.stdout), expected);
}

fn summaries(trace_path: &Path) -> (String, Vec<Summary>) {
    let trace = read_trace(trace_path).unwrap();
    let mut out = Vec::new();
    for version in ["1.0.0", "2.0.0"] {
        let mut policy = shared_component(version);
        let thresholds = policy.describe().unwrap().thresholds;
        let mut acc = Accumulator::new(version, &trace.name, &thresholds);
        sentinel_core::replay::run(&trace, std::slice::from_mut(&mut *policy), false, &mut |_, tick| acc.add(&tick)).unwrap();
        out.push(acc.finish());
    }
    (trace.name, out)
}

#[test]
fn replay_table_and_markdown_print_the_comparison() {
    let traces = [scenario("incident"), scenario("flapping")];
    let expected: Vec<(String, Vec<Summary>)> = traces.iter().map(|t| summaries(t)).collect();
    // What the comparison must show (README): the incident makes 6 changes with 13 emergency
    // minutes (14:22-14:34), and its 14:35 step down undoes the 14:22 emergency within 15
    // minutes: by the definition of docs/behaviour.md §10.4, one flap. In flapping, 14:50 -> 14:57 -> 15:02 -> 15:08 each undo the previous
    // change within 15 minutes: 3 flaps.
    let incident = &expected[0].1[0];
    assert_eq!((incident.transitions, incident.minutes[3], incident.flaps), (6, 13, 1), "{incident:?}");
    let flapping = &expected[1].1[0];
    assert_eq!(flapping.flaps, 3, "flapping: {flapping:?}");

    for (format, style) in [("table", TableStyle::Plain), ("markdown", TableStyle::Markdown)] {
        let out = run([
            "replay",
            "--policy",
            &arg(&component_path(&component_file("1.0.0"))),
            "--policy",
            &arg(&component_path(&component_file("2.0.0"))),
            "--format",
            format,
            &arg(&traces[0]),
            &arg(&traces[1]),
        ])
        .success();
        let want: String = expected.iter().map(|(name, s)| output::table(name, s, style) + "\n").collect();
        assert_eq!(out.stdout, want, "--format {format}");
        for row in ["transitions", "flaps (undone within 15 min)", "minutes emergency", "bulk capacity-minutes", "difference"] {
            assert!(out.stdout.contains(row), "--format {format} lacks {row:?}:\n{}", out.stdout);
        }
        if style == TableStyle::Markdown {
            assert!(out.stdout.starts_with("| trace incident | 1.0.0 | 2.0.0 | difference |\n|---|"), "{}", out.stdout);
        }
    }
}

#[test]
fn malformed_trace_lines_fail_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"at":"2026-10-20T14:00:00Z","reading":{"cpu_pct":40}}"#;
    let cases = [
        (r#"{"at":"2026-10-20T14:01:00Z","reading":{"cpu_pct":"high"}}"#, "reading.cpu_pct"),
        (r#"{"at":"2026-10-20T14:01:00Z","reading":{"cpu_pct":140}}"#, "reading.cpu_pct"),
        (r#"{"at":"2026-10-20T14:01:00Z","reading":{"cpu":40}}"#, "reading.cpu"),
        (r#"{"at":"2026-10-20T14:01:00Z","reading":{"latency":[{"api":"crm","p95_ms":-1}]}}"#, "reading.latency[0].p95_ms"),
        (r#"{"at":"2026-10-20T13:59:00Z","reading":{}}"#, "at"),
        (r#"{"at":"yesterday","read_error":"timeout"}"#, "at"),
        (
            r#"{"at":"2026-10-20T14:01:00Z","pin":{"state":"panic","reason":"x","expires_at":"2026-10-20T15:00:00Z","actor":"a"}}"#,
            "pin.state",
        ),
        (r#"{"at":"2026-10-20T14:01:00Z","throttles_enabled":"yes"}"#, "throttles_enabled"),
        (r#"{"at":"2026-10-20T14:01:00Z","reading":{},"read_error":"x"}"#, "read_error"),
        ("this is not JSON", "not valid JSON"),
    ];
    for (i, (bad, field)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("broken{i}.jsonl"));
        std::fs::write(&path, format!("{good}\n{bad}\n{good}\n")).unwrap();
        // The native modules: loading a component costs a compile, and the trace is the point.
        let out = run(["replay", "--policy", "policies/1.0.0", "--format", "jsonl", &arg(&path)]);
        assert_ne!(out.code, Some(0), "{bad}: exit 0");
        let place = format!("{}:2: ", path.display());
        assert!(out.stderr.contains(&place), "{bad}: stderr does not name {place:?}: {}", out.stderr);
        assert!(out.stderr.contains(field), "{bad}: stderr does not name {field:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{bad}: a broken trace published ticks: {}", out.stdout);
    }
}

#[test]
fn trace_import_holds_each_value_until_the_next_sample() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("cpu.csv");
    std::fs::write(&csv, "timestamp,value\n2014-02-14 14:30:00,10.5\n2014-02-14 14:35:00,72\n2014-02-14 14:40:00,91.25\n").unwrap();
    let out = run(["trace", "import", "--signal", "cpu_pct", &arg(&csv)]).success();
    let got = lines(&out.stdout);
    let expected: Vec<String> = (0..11)
        .map(|m| {
            let value = match m {
                0..5 => "10.5",
                5..10 => "72",
                _ => "91.25",
            };
            format!(r#"{{"at":"2014-02-14T14:{:02}:00Z","reading":{{"cpu_pct":{value}}}}}"#, 30 + m)
        })
        .collect();
    assert_eq!(got, expected);
    // The same as the library's import, and replayable as it is.
    let library: Vec<String> = import_csv("cpu.csv", std::fs::File::open(&csv).unwrap(), &ImportSignal::CpuPct, RepeatedTimestamps::Refuse)
        .unwrap()
        .iter()
        .map(write_event)
        .collect();
    assert_eq!(got, library);
    let traced = dir.path().join("cpu.jsonl");
    run(["trace", "import", "--signal", "cpu_pct", "--output", &arg(&traced), &arg(&csv)]).success();
    assert_eq!(std::fs::read_to_string(&traced).unwrap(), out.stdout, "--output writes what stdout shows");
    let replayed = run(["replay", "--policy", "policies/1.0.0", "--format", "jsonl", &arg(&traced)]).success();
    assert_eq!(replayed.stdout.lines().count(), 11);
    assert!(replayed.stdout.lines().nth(7).unwrap().contains(r#""state":"constrained""#), "{}", replayed.stdout);

    let latency = run(["trace", "import", "--signal", "latency:crm", &arg(&csv)]).success();
    assert!(
        latency.stdout.starts_with(r#"{"at":"2014-02-14T14:30:00Z","reading":{"latency":[{"api":"crm","p95_ms":10.5}]}}"#),
        "{}",
        latency.stdout
    );

    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "timestamp,value\n2014-02-14 14:30:00,10\n2014-02-14 14:35:00,abc\n").unwrap();
    let out = run(["trace", "import", "--signal", "cpu_pct", &arg(&bad)]);
    assert_ne!(out.code, Some(0));
    assert!(out.stderr.contains(&format!("{}:3", bad.display())) && out.stderr.contains("abc"), "{}", out.stderr);
}

#[test]
fn trace_import_of_the_latency_series_needs_a_word_on_its_repeated_timestamps() {
    // NAB's latency series repeats 03:00 twelve times after the spring-forward gap of
    // 2014-03-09: refused with the way out named, then imported with the last sample kept.
    let path = crate_dir().join("data/known-cause/ec2_request_latency_system_failure.csv");
    let csv = arg(&path);
    let refused = run(["trace", "import", "--signal", "latency:requests", &csv]);
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains(&format!("{csv}:559: timestamp 2014-03-09T03:00:00Z repeats the previous sample's"))
            && refused.stderr.contains("--repeated-timestamps last"),
        "{}",
        refused.stderr
    );
    let out = run(["trace", "import", "--signal", "latency:requests", "--repeated-timestamps", "last", &csv]).success();
    let got = lines(&out.stdout);
    // 2014-03-07 03:41 to 2014-03-21 03:41, one reading a minute.
    assert_eq!(got.len(), 14 * 1440 + 1);
    let at = |minute: &str| got.iter().find(|l| l.contains(&format!(r#""at":"2014-03-09T{minute}:00Z""#))).unwrap().clone();
    assert!(at("02:30").contains(r#""p95_ms":44.038000000000004"#), "the gap holds the 01:56 sample: {}", at("02:30"));
    assert!(at("03:00").contains(r#""p95_ms":47.09"#), "the last of the twelve wins: {}", at("03:00"));
}

#[test]
fn replay_over_a_glob_of_the_traces_folder_skips_the_expected_outputs() {
    // `tests/traces/*.jsonl` names each trace and the expected output kept beside it.
    let files = files_ending(&crate_dir().join("traces"), ".jsonl");
    let (expected, traces): (Vec<&PathBuf>, Vec<&PathBuf>) = files.iter().partition(|f| arg(f).ends_with(".expected.jsonl"));
    assert!(!expected.is_empty() && !traces.is_empty());
    let mut args = vec!["replay".to_string(), "--policy".into(), "policies/1.0.0".into()];
    args.extend(files.iter().map(|f| arg(f)));
    let out = run(&args).success();
    let tables: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("trace ")).collect();
    assert_eq!(tables.len(), traces.len(), "one table per trace, none for an expected output:\n{}", out.stdout);
    assert!(tables.iter().all(|t| !t.contains(".expected")), "{tables:?}");
    // Expected outputs alone: nothing to replay, said so.
    let mut only = vec!["replay".to_string(), "--policy".into(), "policies/1.0.0".into()];
    only.extend(expected.iter().map(|f| arg(f)));
    let refused = run(&only);
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("no trace to replay") && refused.stderr.contains("*.expected.jsonl"), "{}", refused.stderr);
}
