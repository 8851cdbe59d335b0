//! The tick's stage throttles against moto's API Gateway through a proxy that can lose answers
//! (docs/behaviour.md §11.3): the sentinel's own ticks (SQLite store, readings from a trace,
//! throttles switched on) take a stage with its owners' limits (1000/2000) and one with none
//! through an incident, and every fault ends with each stage back at exactly its original.

use capacity_tests::servers::lossy::LossyProxy;
use capacity_tests::servers::moto::Moto;
use sentinel::config::Config;
use sentinel_adapters::api_gateway_stages::ApiGatewayStages;
use sentinel_adapters::aws_client::AwsOverrides;
use sentinel_core::ports::stage_ledger::{StageChangeKind, StageOutcome};
use sentinel_core::tick::{Sentinel, TickReport};
use std::time::Duration;
use vocabulary::{Cause, ProtectionState, ThrottleIntent};

const T0: i64 = 1_792_504_800; // 2026-10-20T14:00:00Z
const MIN: i64 = 60;
/// Critical CPU for this many minutes, then calm: emergency, throttles (minute 12), recovery.
const HOT_MINUTES: i64 = 14;

struct Stages {
    moto: Moto,
    proxy: LossyProxy,
    api: String,
    dir: tempfile::TempDir,
}

impl Stages {
    /// moto with a REST API whose stage "live" has its owners' limits 1000/2000 and "prod" none,
    /// a proxy in front of it, and a config declaring both as targets (50/100).
    async fn start() -> Stages {
        Stages::start_hot_for(HOT_MINUTES).await
    }

    /// As [`Stages::start`], critical for `hot_minutes`.
    async fn start_hot_for(hot_minutes: i64) -> Stages {
        let moto = Moto::start();
        let proxy = LossyProxy::start(moto.process.port);
        let c = controller(&moto.endpoint()).await;
        let c = c.client();
        let api = capacity_tests::rest_api::create(c, &["live", "prod"]).await;
        capacity_tests::rest_api::set_limits(c, &api, "live", "1000", "2000").await;
        let dir = tempfile::tempdir().unwrap();
        let trace: String = (0..60)
            .map(|i| {
                let cpu = if i < hot_minutes { 95.0 } else { 10.0 };
                format!("{{\"at\":\"2026-10-20T14:{i:02}:00Z\",\"reading\":{{\"cpu_pct\":{cpu}}}}}\n")
            })
            .collect();
        std::fs::write(dir.path().join("trace.jsonl"), trace).unwrap();
        let config = format!(
            r#"throttles_enabled = true
[store]
kind = "sqlite"
path = "sentinel.db"
[metrics]
kind = "trace"
path = "trace.jsonl"
[publish]
timeout = "1s"
[publish.cache]
kind = "file"
path = "cache.json"
[publish.parameter]
kind = "file"
path = "parameter.json"
[stages]
controller = {{ kind = "log" }}
targets = [
  {{ rest_api_id = "{api}", stage = "live", rate_limit = 50.0, burst_limit = 100 }},
  {{ rest_api_id = "{api}", stage = "prod", rate_limit = 50.0, burst_limit = 100 }},
]
"#
        );
        std::fs::write(dir.path().join("sentinel.toml"), config).unwrap();
        Stages { moto, proxy, api, dir }
    }

    /// The sentinel of the config, its stage controller pointed at the proxy.
    async fn sentinel(&self) -> Sentinel {
        let config = Config::load(Some(&self.dir.path().join("sentinel.toml"))).unwrap();
        let (mut sentinel, _) = sentinel::setup::sentinel(&config, T0, None).await.unwrap();
        sentinel.ports.stages = Box::new(controller(&format!("http://127.0.0.1:{}", self.proxy.port)).await);
        sentinel
    }

    /// A stage's stage-wide (rate, burst), read straight from moto.
    async fn limits(&self, stage: &str) -> Option<(f64, i32)> {
        capacity_tests::rest_api::limits(controller(&self.moto.endpoint()).await.client(), &self.api, stage).await
    }
}

async fn controller(endpoint: &str) -> ApiGatewayStages {
    ApiGatewayStages::with_overrides(Duration::from_secs(1), &AwsOverrides::emulator(endpoint, "us-east-1")).await
}

async fn tick(s: &Sentinel, minute: i64) -> TickReport {
    match s.tick(T0 + minute * MIN).await {
        Ok(report) => report,
        Err(e) => panic!("tick {minute}: {e}"),
    }
}

/// After the incident: both stages exactly as their owners left them, no record left, and an
/// audit in which every change has an outcome and the last change of each stage is an applied
/// restore to its original.
async fn assert_restored(w: &Stages, s: &Sentinel) {
    assert_eq!(w.limits("live").await, Some((1000.0, 2000)), "live is back at its owners' limits");
    // "prod" had no stage-wide entry: moto keeps the one the throttle created, with no limits.
    assert_eq!(w.limits("prod").await, Some((-1.0, -1)), "prod has no stage-level limit again");
    assert!(s.ports.stage_ledger.stage_records().await.unwrap().is_empty(), "no stage left recorded");
    let changes = s.ports.stage_ledger.stage_changes(1000).await.unwrap();
    assert!(changes.iter().all(|c| c.outcome != StageOutcome::Pending), "every change has an outcome: {changes:#?}");
    for stage in ["live", "prod"] {
        let last = changes.iter().find(|c| c.target.stage == stage).unwrap();
        assert_eq!((last.kind, last.outcome), (StageChangeKind::Restore, StageOutcome::Applied), "{stage}: {last:?}");
    }
    let live_restores: Vec<_> = changes.iter().filter(|c| c.target.stage == "live" && c.kind == StageChangeKind::Restore).collect();
    assert!(live_restores.iter().all(|c| c.after.rate_limit == Some(1000.0) && c.after.burst_limit == Some(2000)), "{live_restores:#?}");
}

/// The defect reproduced: the engage reaches API Gateway but its answer is lost, so the tick
/// counts it failed and the next tick engages again, reading the already throttled 50/100. The
/// first original (1000/2000) must survive that, and the restore put it back.
#[tokio::test]
async fn an_engage_whose_answer_is_lost_still_restores_the_owners_limits() {
    let w = Stages::start().await;
    let s = w.sentinel().await;
    w.proxy.lose_answers_to("PATCH ");
    let mut engaged_at = None;
    let mut lost_seen = false;
    for minute in 0..40 {
        let report = tick(&s, minute).await;
        if report.decision.throttles == ThrottleIntent::Engage {
            engaged_at = Some(minute);
            w.proxy.keep_answers();
            assert_eq!(report.stage_failures.len(), 2, "the lost answers are failures: {:?}", report.stage_failures);
            assert_eq!(w.limits("live").await, Some((50.0, 100)), "yet the throttle reached the stage");
            assert_eq!(w.limits("prod").await, Some((50.0, 100)));
            lost_seen = true;
        }
        if report.decision.state == ProtectionState::Critical && engaged_at.is_some() {
            break;
        }
    }
    assert!(lost_seen, "the incident engaged the throttles");
    assert_restored(&w, &s).await;
}

/// moto unreachable while the restore is due (the proxy cuts every connection; moto itself keeps
/// its stages, which a stopped emulator would lose): emergency holds (restore-throttles-first) and the
/// restore is retried every minute; when moto is back the stages are restored, then the state
/// steps down.
#[tokio::test]
async fn a_restore_that_fails_holds_emergency_until_the_stages_are_back() {
    let w = Stages::start().await;
    let s = w.sentinel().await;
    let mut minute = 0;
    while tick(&s, minute).await.decision.throttles != ThrottleIntent::Engage {
        minute += 1;
        assert!(minute < 30, "never engaged");
    }
    assert_eq!(w.limits("live").await, Some((50.0, 100)));
    w.proxy.set_down(true);
    let mut held = 0;
    loop {
        minute += 1;
        let r = tick(&s, minute).await;
        if r.decision.throttles == ThrottleIntent::Release {
            assert!(!r.stage_failures.is_empty(), "the restore fails while moto is down");
            continue;
        }
        if r.decision.cause == Cause::RestoreThrottlesFirst {
            assert_eq!(r.decision.state, ProtectionState::Emergency);
            assert!(!r.stage_failures.is_empty(), "retried and failing: {:?}", r.stage_failures);
            held += 1;
            if held == 3 {
                break;
            }
        }
        assert!(minute < 40, "never held");
    }
    assert!(s.telemetry.stages_left_throttled.get() == 2, "the alarm gauge counts both stages");
    w.proxy.set_down(false);
    let restored = tick(&s, minute + 1).await;
    assert!(restored.stage_failures.is_empty(), "{:?}", restored.stage_failures);
    assert_eq!(restored.decision.state, ProtectionState::Emergency, "this tick decided before it restored");
    let step = tick(&s, minute + 2).await;
    assert_eq!((step.decision.cause, step.decision.state), (Cause::Recover, ProtectionState::Critical));
    assert_eq!(s.telemetry.stages_left_throttled.get(), 0);
    assert_restored(&w, &s).await;
}

/// Two targets, one whose every change fails (its answers lost) from the start: the other is
/// engaged and restored on time; the failing one is engaged again every minute (keeping its
/// original), emergency holds while its restore fails, and once it succeeds both are back.
#[tokio::test]
async fn two_targets_where_one_fails_each_ends_at_its_original() {
    let w = Stages::start().await;
    let s = w.sentinel().await;
    w.proxy.lose_answers_to(&format!("PATCH /restapis/{}/stages/prod", w.api));
    let mut minute = 0;
    let mut released = false;
    let mut held = 0;
    loop {
        let r = tick(&s, minute).await;
        if r.decision.throttles == ThrottleIntent::Engage {
            assert_eq!(r.stage_failures.len(), 1, "{:?}", r.stage_failures);
            assert!(r.stage_failures[0].contains("prod"), "{:?}", r.stage_failures);
            assert_eq!(w.limits("live").await, Some((50.0, 100)));
        }
        if r.decision.throttles == ThrottleIntent::Release {
            released = true;
            assert_eq!(w.limits("live").await, Some((1000.0, 2000)), "live restored at the release");
        }
        if released && r.decision.cause == Cause::RestoreThrottlesFirst && r.decision.throttles == ThrottleIntent::None {
            held += 1;
            assert_eq!(r.decision.state, ProtectionState::Emergency);
            let left = s.ports.stage_ledger.stage_records().await.unwrap();
            if held <= 2 {
                assert_eq!(left.keys().map(String::as_str).collect::<Vec<_>>(), [format!("{}/prod", w.api)], "only prod is left");
            } else {
                assert!(left.is_empty(), "the tick after the answers came back restored prod");
            }
            if held == 2 {
                w.proxy.keep_answers();
            }
        }
        if released && r.decision.state == ProtectionState::Critical {
            break;
        }
        minute += 1;
        assert!(minute < 40, "never stepped down");
    }
    assert_eq!(held, 3, "held while prod's restore failed, and the tick that restored it");
    assert_restored(&w, &s).await;
    let failed = s.ports.stage_ledger.stage_changes(1000).await.unwrap();
    assert!(failed.iter().filter(|c| c.target.stage == "prod" && c.outcome == StageOutcome::Failed).count() >= 3);
}

/// The switch turned off mid-emergency: the next tick releases and restores every stage while
/// the state stays emergency; turned on again, the throttles engage again, reading the owners'
/// limits afresh, and the recovery restores them.
#[tokio::test]
async fn the_switch_turned_off_mid_emergency_restores_the_stages() {
    let w = Stages::start_hot_for(20).await;
    let mut s = w.sentinel().await;
    let mut minute = 0;
    while tick(&s, minute).await.decision.throttles != ThrottleIntent::Engage {
        minute += 1;
        assert!(minute < 20, "never engaged");
    }
    s.settings.throttles_enabled = false;
    minute += 1;
    let r = tick(&s, minute).await;
    assert_eq!((r.decision.throttles, r.decision.state), (ThrottleIntent::Release, ProtectionState::Emergency));
    assert!(r.stage_failures.is_empty(), "{:?}", r.stage_failures);
    assert_eq!((w.limits("live").await, w.limits("prod").await), (Some((1000.0, 2000)), Some((-1.0, -1))));
    assert!(s.ports.stage_ledger.stage_records().await.unwrap().is_empty());
    s.settings.throttles_enabled = true;
    minute += 1;
    let r = tick(&s, minute).await;
    assert_eq!(r.decision.throttles, ThrottleIntent::Engage, "{}", r.decision.explanation);
    let records = s.ports.stage_ledger.stage_records().await.unwrap();
    let live = &records[&format!("{}/live", w.api)];
    assert_eq!((live.original.rate_limit, live.original.burst_limit), (Some(1000.0), Some(2000)));
    loop {
        minute += 1;
        if tick(&s, minute).await.decision.state == ProtectionState::Critical {
            break;
        }
        assert!(minute < 45, "never stepped down");
    }
    assert_restored(&w, &s).await;

    // What an operator sees: nothing throttled now; the changes, newest first.
    let config = w.dir.path().join("sentinel.toml");
    let show = capacity_tests::sentinel_bin::run(["stages", "show", "--config", config.to_str().unwrap()]).success();
    assert_eq!(show.stdout.trim(), "[]");
    let changes = capacity_tests::sentinel_bin::run(["stages", "changes", "--limit", "4", "--config", config.to_str().unwrap()]).success();
    let lines: Vec<serde_json::Value> = changes.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().take(2).all(|l| l["kind"] == "restore" && l["outcome"] == "applied"), "{lines:#?}");
    let live = lines.iter().find(|l| l["target"] == format!("{}/live", w.api)).unwrap();
    assert_eq!(live["after"], serde_json::json!({"existed": true, "rate_limit": 1000.0, "burst_limit": 2000}));
    assert_eq!(live["before"], serde_json::json!({"existed": true, "rate_limit": 50.0, "burst_limit": 100}));
}
