//! What a sentinel's metrics show for a minute another sentinel decided: the record in force,
//! not this sentinel's own last decision (a replica that keeps losing the lock would otherwise
//! show a stale emergency, or a stale pin, and fire alerts for it).

use capacity_sentinel::config::Config;
use capacity_sentinel::setup;
use vocabulary::{Instant, Pin, ProtectionState};

const T0: Instant = 1_792_504_800; // 2026-10-20T14:00:00Z

fn config(dir: &std::path::Path) -> Config {
    let policy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/policies/capacity-policy-1.0.0.wasm");
    assert!(policy.is_file(), "{} is missing: run `cargo policies` first", policy.display());
    let lines: Vec<String> = (0..5)
        .map(|i| {
            serde_json::json!({ "at": sentinel_core::instants::format_rfc3339(T0 + 60 * i), "reading": { "cpu_pct": 30.0 } }).to_string()
        })
        .collect();
    std::fs::write(dir.join("trace.jsonl"), lines.join("\n") + "\n").unwrap();
    let text = format!(
        "policy = {:?}\n[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n\
         [metrics]\nkind = \"trace\"\npath = \"trace.jsonl\"\n\
         [publish.cache]\nkind = \"file\"\npath = \"out/cache.json\"\n\
         [publish.parameter]\nkind = \"file\"\npath = \"out/parameter.json\"\n",
        policy.display().to_string()
    );
    Config::parse(&text, &dir.join("sentinel.toml")).unwrap()
}

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minute_published_again_shows_the_record_in_force_and_counts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let (replica, _) = setup::sentinel(&config, T0, None).await.unwrap();
    let (holder, _) = setup::sentinel(&config, T0, None).await.unwrap();
    replica.tick(T0).await.unwrap();
    let before = replica.telemetry.render();
    assert_eq!(value(&before, "sentinel_in_state{state=\"normal\"}"), Some(1.0), "{before}");

    // The holder decides the next minute under a staff pin to emergency.
    let pin = Pin { state: ProtectionState::Emergency, reason: "incident".into(), expires_at: T0 + 7200, actor: "ops".into() };
    holder.ports.pins.replace_pin(&pin, "ops", T0 + 30).await.unwrap();
    let decided = holder.tick(T0 + 60).await.unwrap();
    assert!(!decided.republished && decided.decision.state == ProtectionState::Emergency);

    // The replica reaches the same minute: it publishes the holder's record again.
    let again = replica.tick(T0 + 60).await.unwrap();
    assert!(again.republished);
    let after = replica.telemetry.render();
    for (series, v) in [
        ("sentinel_state", 3.0),
        ("sentinel_in_state{state=\"emergency\"}", 1.0),
        ("sentinel_in_state{state=\"normal\"}", 0.0),
        ("sentinel_decision_cause{cause=\"pinned\"}", 1.0),
        ("sentinel_factor{workload=\"bulk\"}", 0.0),
        ("sentinel_pin_active", 1.0),
        ("sentinel_pin_state{state=\"emergency\"}", 1.0),
        ("sentinel_pin_expires_timestamp_seconds", (T0 + 7200) as f64),
    ] {
        assert_eq!(value(&after, series), Some(v), "{series} shows the record in force:\n{after}");
    }
    assert!(!after.contains("sentinel_state_changes_total{"), "the replica decided no change:\n{after}");
}
