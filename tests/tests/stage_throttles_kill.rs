//! `sentinel run` killed (SIGKILL) at random points while its stage changes are in flight, many
//! times over (docs/behaviour.md §11.3). moto's API Gateway sits behind a proxy that holds each
//! `PATCH` answer back 300 ms, so a kill lands before the change, while API Gateway applies it,
//! between the change and its outcome being written down, or between that and the tick's
//! commit. The trace repeats an incident (14 critical minutes, 16 calm ones), so the throttles
//! engage and restore again and again. After the kills the last run goes to the end of the trace
//! (calm): both stages are back at exactly their owners' limits, no record is left, and every
//! audited change has an outcome (a killed one is `interrupted` by the next change of its stage).
//!
//! 30 kills here; `STAGE_KILLS=100 cargo test -p capacity-tests --test integration stage_throttles_kill:: -- --nocapture`
//! runs 100 (RELIABILITY.md).

use capacity_tests::paths::target_dir;
use capacity_tests::rest_api::limits;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::lossy::LossyProxy;
use capacity_tests::servers::moto::Moto;
use capacity_tests::signed::SignedPolicies;
use sentinel_adapters::api_gateway_stages::ApiGatewayStages;
use sentinel_adapters::aws_client::AwsOverrides;
use sentinel_adapters::sqlite::SqliteStore;
use sentinel_core::ports::stage_ledger::{StageChangeKind, StageLedger, StageOutcome};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const CYCLE: i64 = 30;
const HOT: i64 = 14;

async fn controller(endpoint: &str) -> ApiGatewayStages {
    ApiGatewayStages::with_overrides(Duration::from_secs(5), &AwsOverrides::emulator(endpoint, "us-east-1")).await
}

/// `cycles` incidents, then an hour of calm.
fn write_trace(path: &Path, cycles: i64) {
    let start = 1_792_504_800; // 2026-10-20T14:00:00Z
    let mut text = String::new();
    for i in 0..cycles * CYCLE + 60 {
        let cpu = if i < cycles * CYCLE && i % CYCLE < HOT { 95.0 } else { 10.0 };
        let at = sentinel_core::instants::format_rfc3339(start + i * 60);
        text.push_str(&format!("{{\"at\":\"{at}\",\"reading\":{{\"cpu_pct\":{cpu}}}}}\n"));
    }
    std::fs::write(path, text).unwrap();
}

fn spawn(dir: &Path, endpoint: &str, moto: &Moto, speed: &str) -> Child {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("run.log")).unwrap();
    Command::new(sentinel())
        .args(["--log-format", "json", "run", "--speed", speed, "--config"])
        .arg(dir.join("sentinel.toml"))
        .envs(moto.aws_env())
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("sentinel starts")
}

/// 0 to 599 ms, from the clock's nanoseconds: a kill point that differs from run to run.
fn jitter() -> Duration {
    Duration::from_millis(u64::from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos() % 600))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_change_again_and_again_every_stage_ends_at_its_original() {
    let kills: usize = std::env::var("STAGE_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let moto = Moto::start();
    let proxy = LossyProxy::start(moto.process.port);
    let direct = controller(&moto.endpoint()).await;
    let api = capacity_tests::rest_api::create(direct.client(), &["live", "prod"]).await;
    capacity_tests::rest_api::set_limits(direct.client(), &api, "live", "1000", "2000").await;
    let dir = tempfile::tempdir().unwrap();
    let policies = SignedPolicies::install(dir.path(), &[target_dir().join("policies/capacity-policy-1.0.0.wasm")]);
    write_trace(&dir.path().join("trace.jsonl"), kills as i64 + 6);
    let config = format!(
        r#"throttles_enabled = true
[store]
kind = "sqlite"
path = "sentinel.db"
[metrics]
kind = "trace"
path = "trace.jsonl"
[publish]
timeout = "2s"
[publish.cache]
kind = "file"
path = "cache.json"
[publish.parameter]
kind = "file"
path = "parameter.json"
[stages]
controller = {{ kind = "api-gateway" }}
targets = [
  {{ rest_api_id = "{api}", stage = "live", rate_limit = 50.0, burst_limit = 100 }},
  {{ rest_api_id = "{api}", stage = "prod", rate_limit = 50.0, burst_limit = 100 }},
]
{policies}"#,
        policies = policies.toml("1.0.0"),
    );
    std::fs::write(dir.path().join("sentinel.toml"), config).unwrap();
    let endpoint = format!("http://127.0.0.1:{}", proxy.port);
    proxy.slow_answers_to("PATCH ", Duration::from_millis(300));

    let started = Instant::now();
    let mut points = Vec::new();
    for kill in 0..kills {
        let seen = proxy.slow_requests_seen();
        let mut child = spawn(dir.path(), &endpoint, &moto, "600");
        let deadline = Instant::now() + Duration::from_secs(60);
        while proxy.slow_requests_seen() == seen {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("kill {kill}: the sentinel exited ({status}) before changing a stage; see {}", dir.path().join("run.log").display());
            }
            assert!(Instant::now() < deadline, "kill {kill}: no stage change within 60 s");
            std::thread::sleep(Duration::from_millis(5));
        }
        let after = jitter();
        std::thread::sleep(after);
        child.kill().unwrap();
        child.wait().unwrap();
        points.push(after.as_millis());
    }
    eprintln!("{kills} kills in {:?}, each {points:?} ms after a PATCH reached the proxy", started.elapsed());

    // The last run, not killed, to the end of the trace.
    proxy.slow_answers_to("PATCH ", Duration::ZERO);
    let mut last = spawn(dir.path(), &endpoint, &moto, "3000");
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(status) = last.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the last run did not reach the end of the trace");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "the last run: {status}; see {}", dir.path().join("run.log").display());

    assert_eq!(limits(direct.client(), &api, "live").await, Some((1000.0, 2000)), "live back at its owners' limits");
    assert_eq!(limits(direct.client(), &api, "prod").await, Some((-1.0, -1)), "prod: no stage-level limit (moto keeps the entry)");
    let store = SqliteStore::open(&dir.path().join("sentinel.db")).unwrap();
    assert!(store.stage_records().await.unwrap().is_empty(), "no stage left recorded");
    let changes = store.stage_changes(100_000).await.unwrap();
    assert!(changes.iter().all(|c| c.outcome != StageOutcome::Pending), "every change has an outcome");
    let interrupted = changes.iter().filter(|c| c.outcome == StageOutcome::Interrupted).count();
    let live: Vec<_> = changes.iter().filter(|c| c.target.stage == "live").collect();
    for c in &live {
        let (rate, burst) = (c.before.rate_limit, c.before.burst_limit);
        assert!(
            matches!((rate, burst), (Some(1000.0), Some(2000)) | (Some(50.0), Some(100))),
            "live read {:?} before change {}",
            c.before,
            c.id
        );
        if c.kind == StageChangeKind::Restore {
            assert_eq!((c.after.rate_limit, c.after.burst_limit), (Some(1000.0), Some(2000)), "a restore of live sets its original");
        }
    }
    for stage in ["live", "prod"] {
        let newest = changes.iter().find(|c| c.target.stage == stage).unwrap();
        assert_eq!((newest.kind, newest.outcome), (StageChangeKind::Restore, StageOutcome::Applied), "{stage}");
    }
    eprintln!("{} stage changes audited, {interrupted} interrupted by a kill", changes.len());
    assert!(interrupted > 0, "no kill landed inside a stage change");
}
