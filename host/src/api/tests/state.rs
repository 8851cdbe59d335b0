//! `GET /v1/state`: the document the last tick published, after real ticks on the same store;
//! a pin set through the API decides the next tick, and its expiry shows in the audit.

use super::*;
use crate::config::Config;

/// A config on the harness's store, with a trace of `cpu_pct` readings from `t0()` on.
pub(super) fn config(h: &Harness, cpu: &[f64]) -> Config {
    let lines: Vec<String> = cpu
        .iter()
        .enumerate()
        .map(|(i, c)| serde_json::json!({ "at": format_rfc3339(t0() + 60 * i as i64), "reading": { "cpu_pct": c } }).to_string())
        .collect();
    std::fs::write(h.dir.path().join("trace.jsonl"), lines.join("\n") + "\n").unwrap();
    let text = format!(
        "policy = {:?}\n[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n\
         [metrics]\nkind = \"trace\"\npath = \"trace.jsonl\"\n\
         [publish.cache]\nkind = \"file\"\npath = \"out/cache.json\"\n\
         [publish.parameter]\nkind = \"file\"\npath = \"out/parameter.json\"\n",
        policy_path().display().to_string()
    );
    Config::parse(&text, &h.dir.path().join("sentinel.toml")).unwrap()
}

pub(super) async fn tick(config: &Config, at: Instant) {
    let (sentinel, _) = crate::setup::sentinel(config, at, None).await.unwrap();
    sentinel.tick(at).await.unwrap();
}

fn published(h: &Harness) -> Value {
    serde_json::from_str(&std::fs::read_to_string(h.dir.path().join("out/cache.json")).unwrap()).unwrap()
}

#[tokio::test]
async fn before_any_tick_there_is_nothing_published() {
    let h = Harness::new();
    let p = h.call(get("/v1/state", Some(VIEWER))).await.problem(StatusCode::NOT_FOUND);
    assert!(p["detail"].as_str().unwrap().contains("no tick"), "{p}");
}

#[tokio::test]
async fn the_state_is_the_last_published_document() {
    let h = Harness::new();
    let config = config(&h, &[72.5, 72.5, 30.0]);
    tick(&config, t0()).await;
    let state = h.call(get("/v1/state", Some(VIEWER))).await.ok_json(StatusCode::OK);
    assert_eq!(state, published(&h), "exactly what the channels got");
    assert_eq!(state["sequence"], 1);
    assert_eq!(state["decided_at"], format_rfc3339(t0()));
    assert_eq!(state["policy"]["version"], "1.0.0");
    assert_eq!(state["pinned"], false);
    assert_eq!(state["pin_expires_at"], Value::Null);

    // A pin set through the API decides the next tick.
    h.now.store(t0() + 30, Ordering::SeqCst);
    h.set_pin("emergency", "incident 4411", 60).await.ok_json(StatusCode::OK);
    tick(&config, t0() + 60).await;
    let state = h.call(get("/v1/state", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(state, published(&h));
    assert_eq!((state["state"].as_str(), state["cause"].as_str()), (Some("emergency"), Some("pinned")));
    assert_eq!(state["pinned"], true);
    assert_eq!(state["pin_expires_at"], format_rfc3339(t0() + 90));
    assert_eq!(state["sequence"], 2);

    // The pin has expired by the next tick: removed, and audited as an expiry.
    tick(&config, t0() + 120).await;
    let state = h.call(get("/v1/state", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(state, published(&h));
    assert_eq!(state["pinned"], false);
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    let newest = &audit["entries"][0];
    assert_eq!(newest["action"], "expire");
    assert_eq!(newest["before"]["state"], "emergency");
    assert_eq!(newest["after"], Value::Null);
    assert_eq!(h.call(get("/v1/pin", Some(STAFF))).await.ok_json(StatusCode::OK)["pin"], Value::Null);
}
