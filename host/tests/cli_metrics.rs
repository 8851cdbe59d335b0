//! The metrics an operator asks about, scraped from a real `sentinel run` (docs/behaviour.md
//! §7.1): a recorded hour that escalates to emergency with a stage throttled, loses its signal
//! and recovers, under policy 1.0.0 with 1.1.0 in shadow; then a pinned run whose channels both
//! refuse (a folder where each file goes), whose failed ticks are kept as dead letters that the
//! first success ends, listed by `sentinel failures`.

use crate::support;

use sha2::{Digest, Sha256};
use std::time::Duration;
use support::{Metrics, Sandbox, cpu, eventually, read_error, t};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn scrape(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    Some(text)
}

/// The value of the series written exactly `series` (name and labels), if exposed.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

fn wall_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Scrapes every 20 ms until the run exits; every scrape, with the wall clock it was taken at.
fn scrape_until_exit(run: &mut support::Background, port: u16) -> Vec<(f64, String)> {
    let mut scrapes = Vec::new();
    while run.wait_for_exit(Duration::from_millis(20)).is_none() {
        if let Some(text) = scrape(port) {
            scrapes.push((wall_now(), text));
        }
        assert!(scrapes.len() < 10_000, "the run did not end:\n{}", run.stderr());
    }
    scrapes
}

fn hour_trace() -> Vec<String> {
    let mut lines = Vec::new();
    for m in 0..60 {
        lines.push(match m {
            0..10 => cpu(t(m), 40.0),
            10..25 => cpu(t(m), 75.0), // constrained for 1.0.0; 1.1.0 (constrained at 80) stays normal
            25..50 => cpu(t(m), 95.0), // critical, emergency, then the stage throttle
            50..52 => read_error(t(m), "exporter down"),
            _ => cpu(t(m), 40.0),
        });
    }
    lines
}

#[test]
fn a_run_shows_state_cause_readings_thresholds_policy_shadow_and_stages() {
    let sb = Sandbox::new(Metrics::Trace(hour_trace()));
    sb.with_shadow_policies(
        "[stages]\ncontroller = { kind = \"log\" }\ntargets = [{ rest_api_id = \"a1b2c3\", stage = \"prod\", rate_limit = 5.0, burst_limit = 10 }]\n",
    );
    sb.edit_config(|text| text.replace("throttles_enabled = false", "throttles_enabled = true"));
    let port = free_port();
    let mut run = sb.spawn(&["run", "--speed", "600", "--metrics-addr", &format!("127.0.0.1:{port}")], "run");
    let scrapes = scrape_until_exit(&mut run, port);
    assert!(run.child.try_wait().unwrap().unwrap().success(), "{}", run.stderr());
    // The start line names the version that decides (the second security review, finding 9:
    // it named the embedded default's file while a `[policies]` version decided).
    let started = run.stderr().lines().find(|l| l.contains("sentinel running")).unwrap_or_default().to_string();
    assert!(started.contains("policy=capacity-policy 1.0.0") && !started.contains("embedded"), "{started}");
    let saw = |what: &str, check: &dyn Fn(&str) -> bool| {
        assert!(scrapes.iter().any(|(_, s)| check(s)), "no scrape showed {what}; the last:\n{}", scrapes.last().map_or("", |s| &s.1))
    };
    let is = |s: &str, series: &str, v: f64| value(s, series) == Some(v);

    saw("the emergency state (gauge and one-hot)", &|s| {
        is(s, "sentinel_state", 3.0)
            && is(s, "sentinel_in_state{state=\"emergency\"}", 1.0)
            && is(s, "sentinel_in_state{state=\"normal\"}", 0.0)
            && value(s, "sentinel_state_seconds").is_some_and(|v| v >= 60.0)
    });
    saw("a cpu reading against the active policy's thresholds", &|s| {
        is(s, "sentinel_reading{signal=\"cpu_pct\"}", 95.0)
            && is(s, "sentinel_policy_threshold{signal=\"cpu_pct\",level=\"constrained\"}", 70.0)
            && is(s, "sentinel_policy_threshold{signal=\"cpu_pct\",level=\"critical\"}", 85.0)
            && is(s, "sentinel_factor{workload=\"bulk\"}", 0.0)
    });
    saw("the stage throttled, by target", &|s| {
        is(s, "sentinel_stage_throttled{target=\"a1b2c3/prod\"}", 1.0) && is(s, "sentinel_stages_throttled", 1.0)
    });
    saw("the signal lost, and no stale reading shown", &|s| {
        is(s, "sentinel_decision_cause{cause=\"signal-lost-release\"}", 1.0)
            && is(s, "sentinel_consecutive_failed_reads", 2.0)
            && value(s, "sentinel_reading{signal=\"cpu_pct\"}").is_none()
    });
    saw("the throttle restored after the release", &|s| {
        is(s, "sentinel_stage_throttled{target=\"a1b2c3/prod\"}", 0.0) && is(s, "sentinel_failed_reads_total", 2.0)
    });
    saw("both channels published within the last seconds", &|s| {
        let fresh = |c: &str| {
            value(s, &format!("sentinel_last_publication_timestamp_seconds{{channel=\"{c}\"}}"))
                .is_some_and(|v| (wall_now() - v).abs() < 30.0)
        };
        fresh("cache") && fresh("parameter") && is(s, "sentinel_channel_up{channel=\"cache\"}", 1.0)
    });

    let (_, last) = scrapes.last().expect("scraped");
    let digest = hex::encode(Sha256::digest(std::fs::read(support::built_policies().join("capacity-policy-1.0.0.wasm")).unwrap()));
    let info = format!("sentinel_policy_info{{name=\"capacity-policy\",version=\"1.0.0\",digest=\"{digest}\",kind=\"component\"}}");
    assert_eq!(value(last, &info), Some(1.0), "the active version and its digest:\n{last}");
    assert!(
        value(last, "sentinel_state_changes_total{from=\"normal\",to=\"constrained\",cause=\"escalate\"}").is_some_and(|v| v >= 1.0),
        "{last}"
    );
    assert!(
        value(last, "sentinel_state_changes_total{from=\"emergency\",to=\"normal\",cause=\"signal-lost-release\"}")
            .is_some_and(|v| v >= 1.0),
        "{last}"
    );
    assert!(value(last, "sentinel_shadow_divergences_total").is_some_and(|v| v >= 1.0), "1.1.0 stays normal at cpu 75:\n{last}");
    assert!(value(last, "sentinel_decision_seconds_count").is_some_and(|v| v >= 50.0), "each decision timed:\n{last}");
    for reason in ["lock", "deadline", "policy", "store", "channels"] {
        assert_eq!(value(last, &format!("sentinel_tick_failures_total{{reason=\"{reason}\"}}")), Some(0.0), "{reason}:\n{last}");
    }
    assert_eq!(value(last, "sentinel_pin_active"), Some(0.0));
}

#[test]
fn failed_ticks_are_counted_by_reason_kept_as_dead_letters_and_ended_by_the_next_success() {
    let sb = Sandbox::new(Metrics::Synthetic);
    // A folder where each channel's file goes: both publications fail, every tick fails.
    std::fs::create_dir_all(&sb.cache).unwrap();
    std::fs::create_dir_all(&sb.parameter).unwrap();
    sb.sentinel(&["pin", "set", "--state", "critical", "--reason", "incident 42", "--expires-in", "20h", "--actor", "ops"]).success();
    let pinned_at = wall_now();
    let port = free_port();
    let mut run = sb.spawn(&["run", "--speed", "60", "--metrics-addr", &format!("127.0.0.1:{port}")], "run");
    let failing = |s: &str| value(s, "sentinel_tick_failures_total{reason=\"channels\"}").is_some_and(|v| v >= 2.0);
    assert!(eventually(Duration::from_secs(30), || scrape(port).is_some_and(|s| failing(&s))), "{}", run.stderr());
    let m = scrape(port).unwrap();
    assert_eq!(value(&m, "sentinel_channel_up{channel=\"cache\"}"), Some(0.0), "{m}");
    assert_eq!(value(&m, "sentinel_channel_up{channel=\"parameter\"}"), Some(0.0), "{m}");
    assert!(value(&m, "sentinel_dead_letters_total").is_some_and(|v| v >= 2.0), "{m}");
    assert!(value(&m, "sentinel_last_publication_timestamp_seconds{channel=\"cache\"}").is_none(), "never published: {m}");
    assert_eq!(value(&m, "sentinel_pin_active"), Some(1.0));
    assert_eq!(value(&m, "sentinel_pin_state{state=\"critical\"}"), Some(1.0));
    assert_eq!(value(&m, "sentinel_pin_state{state=\"emergency\"}"), Some(0.0));
    let expires = value(&m, "sentinel_pin_expires_timestamp_seconds").unwrap();
    assert!((expires - (pinned_at + 20.0 * 3600.0)).abs() < 120.0, "expiry {expires} vs pinned {pinned_at}");
    let set = value(&m, "sentinel_pin_set_timestamp_seconds").unwrap();
    assert!((set - pinned_at).abs() < 120.0, "set at {set} (from the audit) vs pinned {pinned_at}");

    // The channels come back: the next tick publishes and ends the dead letters.
    std::fs::remove_dir(&sb.cache).unwrap();
    std::fs::remove_dir(&sb.parameter).unwrap();
    assert!(eventually(Duration::from_secs(30), || sb.cache.is_file()), "{}", run.stderr());
    assert!(eventually(Duration::from_secs(10), || scrape(port)
        .is_some_and(|s| value(&s, "sentinel_channel_up{channel=\"cache\"}") == Some(1.0))));
    run.signal("TERM");
    assert!(run.wait_for_exit(Duration::from_secs(20)).is_some_and(|s| s.success()), "{}", run.stderr());
    assert!(run.stderr().contains("their dead letters are marked ended by sequence"), "{}", run.stderr());

    let listed = sb.sentinel(&["failures", "--json", "--limit", "1000"]).success();
    let letters: Vec<serde_json::Value> = listed.json_lines();
    assert!(letters.len() >= 2, "{}", listed.stdout);
    let ends: Vec<u64> = letters.iter().map(|l| l["ended_by"]["sequence"].as_u64().expect("every one was ended")).collect();
    assert!(ends.windows(2).all(|w| w[0] == w[1]), "one success ends them all: {ends:?}");
    let ids: Vec<u64> = letters.iter().map(|l| l["id"].as_u64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    for letter in &letters {
        assert_eq!(letter["reason"], "channels", "{letter}");
        assert_eq!(letter["decided"]["state"], "critical", "what it decided is kept: {letter}");
        assert_eq!(letter["decided"]["cause"], "pinned", "{letter}");
        assert!(letter["sequence"].as_u64().is_some_and(|s| s < ends[0]), "stored before the success that ended it: {letter}");
        let channels = letter["channels"].as_array().unwrap();
        assert!(channels.len() == 2 && channels.iter().all(|c| c["ok"] == false && c["error"].is_string()), "{letter}");
        assert!(letter["error"].as_str().unwrap().contains("both channels failed"), "{letter}");
    }
    let text = sb.sentinel(&["failures"]).success();
    assert!(
        text.stdout.contains(&format!("ended by sequence {}", ends[0])) && text.stdout.contains("decided: critical"),
        "{}",
        text.stdout
    );
    let open = sb.sentinel(&["failures", "--open"]).success();
    assert!(open.stdout.contains("no failed tick is still open"), "{}", open.stdout);
    // As JSON Lines: no record on stdout, and the person told why on stderr.
    let open = sb.sentinel(&["failures", "--open", "--json"]).success();
    assert!(open.stdout.is_empty(), "{}", open.stdout);
    assert!(open.stderr.contains("no failed tick is still open"), "{}", open.stderr);
}

#[test]
fn failures_as_json_print_no_record_and_say_why_on_stderr_when_nothing_failed() {
    let sb = Sandbox::new(Metrics::Synthetic);
    let listed = sb.sentinel(&["failures", "--json"]).success();
    assert!(listed.stdout.is_empty(), "valid JSON Lines with no record: {}", listed.stdout);
    assert!(listed.stderr.contains("no dead-letter file at"), "{}", listed.stderr);
    let text = sb.sentinel(&["failures"]).success();
    assert!(text.stdout.contains("no dead-letter file at"), "{}", text.stdout);
}
