//! The shadow's evidence and promotion on it (docs/behaviour.md §11.9): a sentinel ticks with
//! 1.0.0 and 1.1.0 side by side over readings where they differ (CPU at 75 %, where 1.0.0
//! constrains and 1.1.0 does not), `policy shadow-report --gate` scores the shadow's live
//! decisions against the active ones, and `policy promote` activates the shadow only when that
//! evidence passes the gate. `sentinel serve` shows the same scorecard to the console.

use crate::support;

use support::{Metrics, Sandbox, cpu, t};

const MINUTES: i64 = 60;

/// Calm, then CPU at 75 % twice for a quarter of an hour.
fn readings() -> Vec<String> {
    (0..MINUTES).map(|m| cpu(t(m), if (5..20).contains(&m) || (35..50).contains(&m) { 75.0 } else { 40.0 })).collect()
}

/// A sandbox with `active` deciding and `shadow` beside it, ticked over every minute.
fn ticked(active: &str, shadow: &str) -> Sandbox {
    let sb = Sandbox::new(Metrics::Trace(readings()));
    sb.with_shadow_policies("");
    if (active, shadow) != ("1.0.0", "1.1.0") {
        sb.edit_config(|text| {
            text.replace("active = \"1.0.0\"\nshadow = \"1.1.0\"", &format!("active = \"{active}\"\nshadow = \"{shadow}\""))
        });
    }
    for m in 0..MINUTES {
        sb.tick_ok(t(m));
    }
    sb
}

fn gate() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/gate.toml").display().to_string()
}

fn promotions(sb: &Sandbox) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(sb.path("sentinel-state/promotions.jsonl")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn active_version(sb: &Sandbox) -> String {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path("sentinel-state/policy-state.json")).unwrap()).unwrap();
    state["active"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_shadow_that_passes_the_gate_on_its_live_record_is_promoted_and_recorded() {
    let sb = ticked("1.0.0", "1.1.0");
    let report = sb.sentinel(&["policy", "shadow-report", "--gate", &gate()]).success();
    let out = &report.stdout;
    assert!(out.contains(&format!("scorecard of shadow 1.1.0 against active 1.0.0 over {MINUTES} ticks")), "{out}");
    assert!(out.contains("the replay decided as the shadow did live"), "{out}");
    assert!(out.contains("gate passed: 1.1.0 against 1.0.0"), "{out}");
    // 1.0.0 constrained twice (four changes); 1.1.0 never left normal.
    let transitions = out.lines().find(|l| l.trim_start().starts_with("transitions")).unwrap();
    assert_eq!(transitions.split_whitespace().collect::<Vec<_>>(), ["transitions", "4", "0"], "{out}");

    // An hour is not the default week of evidence.
    let short = sb.sentinel(&["policy", "promote", "1.1.0", "--gate", &gate()]);
    assert_eq!(short.status.code(), Some(1), "{}", short.stderr);
    assert!(short.stderr.contains("its shadow period is 60 ticks (1h), shorter than --min-period 7 days"), "{}", short.stderr);
    assert_eq!(active_version(&sb), "1.0.0");

    // The shadow turned off and the sentinel ticking on: the evidence is still the period's.
    sb.edit_config(|text| text.replace("shadow = \"1.1.0\"\n", ""));
    for m in MINUTES..MINUTES + 30 {
        sb.tick_ok(t(m));
    }
    let promoted = sb.sentinel(&["policy", "promote", "1.1.0", "--gate", &gate(), "--min-period", "1h"]).success();
    assert!(promoted.stdout.contains(&format!("over {MINUTES} ticks")), "{}", promoted.stdout);
    assert!(promoted.stdout.contains("promoted 1.1.0"), "{}", promoted.stdout);
    assert_eq!(active_version(&sb), "1.1.0");
    let again = sb.sentinel(&["policy", "promote", "1.1.0", "--gate", &gate(), "--min-period", "1h"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(again.stderr.contains("1.1.0 is already the active version"), "{}", again.stderr);
    let records = promotions(&sb);
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!((r["version"].as_str(), r["replaced"].as_str()), (Some("1.1.0"), Some("1.0.0")));
    assert_eq!((r["gate_passed"].as_bool(), r["forced"].as_bool(), r["live_record"].as_bool()), (Some(true), Some(false), Some(true)));
}

#[test]
fn a_shadow_that_fails_the_gate_is_refused_and_promoted_only_by_force_with_a_reason() {
    // 1.0.0 in shadow of 1.1.0: it constrains where 1.1.0 does not, and loses bulk capacity.
    let sb = ticked("1.1.0", "1.0.0");
    let refused = sb.sentinel(&["policy", "promote", "1.0.0", "--gate", &gate(), "--min-period", "1h"]);
    assert_eq!(refused.status.code(), Some(1), "{}", refused.stderr);
    assert!(refused.stdout.contains("gate failed: 1.0.0 regressed against 1.1.0"), "{}", refused.stdout);
    assert!(refused.stdout.contains("max_bulk_capacity_loss_pct"), "{}", refused.stdout);
    assert!(refused.stderr.contains("1.0.0 is not promoted: its shadow evidence does not pass"), "{}", refused.stderr);
    assert!(refused.stderr.contains("`--force --reason TEXT` promotes it anyway"), "{}", refused.stderr);
    assert_eq!(active_version(&sb), "1.1.0", "a refused promotion changes nothing");
    assert!(promotions(&sb).is_empty());

    let no_reason = sb.sentinel(&["policy", "promote", "1.0.0", "--gate", &gate(), "--min-period", "1h", "--force"]);
    assert_eq!(no_reason.status.code(), Some(2));
    assert!(no_reason.stderr.contains("--force needs --reason TEXT"), "{}", no_reason.stderr);
    assert_eq!(active_version(&sb), "1.1.0");

    let forced = sb
        .sentinel(&["policy", "promote", "1.0.0", "--gate", &gate(), "--min-period", "1h", "--force", "--reason", "audit asks for 1.0.0"])
        .success();
    assert!(forced.stdout.contains("promoted past the gate 1.0.0"), "{}", forced.stdout);
    assert_eq!(active_version(&sb), "1.0.0");
    let records = promotions(&sb);
    assert_eq!(records.len(), 1);
    assert_eq!((records[0]["forced"].as_bool(), records[0]["gate_passed"].as_bool()), (Some(true), Some(false)));
    assert_eq!(records[0]["reason"].as_str(), Some("audit asks for 1.0.0"));
}

#[test]
fn a_scorecard_that_is_not_the_shadows_live_record_does_not_promote() {
    let sb = ticked("1.0.0", "1.1.0");
    // The log says the shadow constrained for a minute; a replay of the records never does.
    let log = sb.path("sentinel-state/shadow/1.1.0.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let changed = text.replacen("\"shadow_state\":\"normal\"", "\"shadow_state\":\"constrained\"", 1);
    assert_ne!(changed, text);
    std::fs::write(&log, changed).unwrap();
    let report = sb.sentinel(&["policy", "shadow-report", "--gate", &gate()]).success();
    assert!(report.stdout.contains("NOT the shadow's live record: live 2 transitions"), "{}", report.stdout);
    let refused = sb.sentinel(&["policy", "promote", "1.1.0", "--gate", &gate(), "--min-period", "1h"]);
    assert_eq!(refused.status.code(), Some(1), "{}", refused.stderr);
    assert!(refused.stdout.contains("gate passed: 1.1.0 against 1.0.0"), "the gate alone would pass: {}", refused.stdout);
    assert!(
        refused.stderr.contains("1.1.0 is not promoted: its scorecard is not the shadow's live record (live 2 transitions"),
        "{}",
        refused.stderr
    );
    assert_eq!(active_version(&sb), "1.0.0");
    assert!(promotions(&sb).is_empty(), "a refused promotion is not recorded");
}

#[tokio::test]
async fn the_console_is_served_the_scorecard_shadow_report_prints_scored_in_the_background() {
    use crate::api_serve::{Api, VIEWER, serve, tokens_toml};
    let sb = tokio::task::spawn_blocking(|| ticked("1.0.0", "1.1.0")).await.unwrap();
    sb.edit_config(|text| format!("{text}[api]\naddress = \"127.0.0.1:1\"\n{}", tokens_toml()));
    let printed = sb.sentinel(&["policy", "shadow-report", "--json"]).success();
    let printed: serde_json::Value = serde_json::from_str(&printed.stdout).unwrap();
    let (server, url) = serve(&sb, &[], "serve");
    let api = Api::new(&url);
    let path = "/v1/policies/shadow/scorecard";
    let (status, _, first) = api.get(path, None).await;
    assert_eq!(status, 401, "{first}");
    // The first answer does not wait for the replays: it starts them.
    let (status, _, first) = api.get(path, Some(VIEWER)).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!((first["status"].as_str(), first["refreshing"].as_bool()), (Some("computing"), Some(true)), "{first}");
    assert_eq!(first["shadow_version"], "1.1.0");
    let mut ready = serde_json::Value::Null;
    for _ in 0..200 {
        ready = api.get(path, Some(VIEWER)).await.2;
        if ready["status"] != "computing" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(ready["status"], "ready", "{ready}");
    let card = &ready["card"];
    assert_eq!((card["active_version"].as_str(), card["ticks"].as_u64()), (Some("1.0.0"), Some(MINUTES as u64)), "{card}");
    assert_eq!((card["live_record"].as_bool(), card["live_record_problem"].is_null()), (Some(true), true), "{card}");
    // The measures are the ones `policy shadow-report` prints: 1.0.0 constrained twice, 1.1.0 never.
    let summaries = &printed["scorecard"]["report"]["traces"][0]["summaries"];
    for (side, n) in [("active", 0), ("shadow", 1)] {
        let (served, replayed) = (&card[side], &summaries[n]);
        for measure in ["transitions", "bulk_capacity_minutes", "minutes_to_protect", "over_protection_minutes"] {
            assert_eq!(served[measure], replayed[measure], "{side} {measure}: {card} against {replayed}");
        }
    }
    assert_eq!((card["active"]["transitions"].as_u64(), card["shadow"]["transitions"].as_u64()), (Some(4), Some(0)));
    assert!(card["shadow"]["bulk_capacity_minutes"].as_f64() > card["active"]["bulk_capacity_minutes"].as_f64(), "{card}");
    // Another tick grows the log, but the scorecard is younger than five minutes: not scored again.
    sb.tick_ok(t(MINUTES));
    let again = api.get(path, Some(VIEWER)).await.2;
    assert_eq!((&again["computed_at"], again["refreshing"].as_bool()), (&ready["computed_at"], Some(false)), "{again}");
    assert!(server.stderr().contains("the shadow's scorecard is computed again"), "{}", server.stderr());
    drop(server);
}
