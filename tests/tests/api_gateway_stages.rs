//! The stage controller against moto's API Gateway: a REST API with a method, a deployment and
//! stages; `read` gives the stage-wide throttling, `apply` sets exactly the limits it is given
//! (a stage that had limits, and one that had none); and the failure modes: an unknown stage,
//! nothing listening, a hung server, the endpoint coming back.

use capacity_tests::rest_api::{self, limits};
use capacity_tests::servers::free_port;
use capacity_tests::servers::hung::HungServer;
use capacity_tests::servers::moto::Moto;
use sentinel_adapters::api_gateway_stages::ApiGatewayStages;
use sentinel_adapters::aws_client::AwsOverrides;
use sentinel_core::ports::stages::{StageController, StageLimits, StageRef, StageTarget};
use std::time::{Duration, Instant};

async fn controller(endpoint: &str, timeout: Duration) -> ApiGatewayStages {
    ApiGatewayStages::with_overrides(timeout, &AwsOverrides::emulator(endpoint, "us-east-1")).await
}

fn target(api: &str, stage: &str) -> StageTarget {
    StageTarget { rest_api_id: api.into(), stage: stage.into(), rate_limit: 5.0, burst_limit: 10 }
}

#[tokio::test]
async fn read_then_apply_puts_the_original_throttling_back() {
    let moto = Moto::start();
    let stages = controller(&moto.endpoint(), Duration::from_secs(5)).await;
    assert!(stages.describe().contains(&moto.endpoint()), "{}", stages.describe());
    let c = stages.client();
    let api = rest_api::create(c, &["prod", "live"]).await;

    // "live" has stage-wide limits set by its owners; "prod" has none.
    rest_api::set_limits(c, &api, "live", "100", "200").await;
    assert_eq!(limits(c, &api, "live").await, Some((100.0, 200)));
    assert_eq!(limits(c, &api, "prod").await, None);

    // Originally set.
    let live = target(&api, "live");
    let original = stages.read(&live.stage_ref()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(original, StageLimits { existed: true, rate_limit: Some(100.0), burst_limit: Some(200) });
    stages.apply(&live.stage_ref(), &live.throttled()).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(limits(c, &api, "live").await, Some((5.0, 10)));
    assert_eq!(stages.read(&live.stage_ref()).await.unwrap(), live.throttled());
    // The store keeps the original as JSON text; the restore gets it back from there.
    let kept: StageLimits = serde_json::from_str(&serde_json::to_string(&original).unwrap()).unwrap();
    stages.apply(&live.stage_ref(), &kept).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(limits(c, &api, "live").await, Some((100.0, 200)));

    // Originally no stage-wide entry: the throttle creates it; putting "none" back sets the
    // limits to -1 (no stage-level limit) and removes the entry, which moto accepts but does
    // not do: the entry stays, with both limits unset, which throttles nothing.
    let prod = target(&api, "prod");
    let original = stages.read(&prod.stage_ref()).await.unwrap();
    assert_eq!(original, StageLimits::none());
    stages.apply(&prod.stage_ref(), &prod.throttled()).await.unwrap();
    assert_eq!(limits(c, &api, "prod").await, Some((5.0, 10)));
    stages.apply(&prod.stage_ref(), &original).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(limits(c, &api, "prod").await, Some((-1.0, -1)), "moto keeps the entry, unset");
    assert_eq!(stages.read(&prod.stage_ref()).await.unwrap(), StageLimits { existed: true, rate_limit: None, burst_limit: None });

    // One limit set, the other not: each put back as it was.
    let half = StageLimits { existed: true, rate_limit: Some(30.0), burst_limit: None };
    stages.apply(&live.stage_ref(), &half).await.unwrap();
    assert_eq!(stages.read(&live.stage_ref()).await.unwrap(), half);

    // Applying the same limits twice is harmless.
    stages.apply(&live.stage_ref(), &kept).await.unwrap();
    stages.apply(&live.stage_ref(), &kept).await.unwrap();
    assert_eq!(limits(c, &api, "live").await, Some((100.0, 200)));
}

#[tokio::test]
async fn unknown_stages_and_bad_limits_are_errors_that_name_the_stage() {
    let moto = Moto::start();
    let stages = controller(&moto.endpoint(), Duration::from_secs(5)).await;
    let api = rest_api::create(stages.client(), &["prod"]).await;

    let missing = StageRef { rest_api_id: api.clone(), stage: "nope".into() };
    let err = stages.read(&missing).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&api) && text.contains("nope") && text.contains("GetStage"), "{text}");
    assert!(text.contains("check"), "{text}");

    let prod = StageRef { rest_api_id: api.clone(), stage: "prod".into() };
    for bad in [
        StageLimits { existed: true, rate_limit: Some(f64::NAN), burst_limit: None },
        StageLimits { existed: true, rate_limit: None, burst_limit: Some(i64::from(i32::MAX) + 1) },
    ] {
        let err = stages.apply(&prod, &bad).await.unwrap_err();
        assert!(err.to_string().contains("limit"), "{err}");
    }
    assert_eq!(limits(stages.client(), &api, "prod").await, None, "bad limits change nothing");
}

#[tokio::test]
async fn nothing_listening_fails_fast() {
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let timeout = Duration::from_secs(3);
    let stages = controller(&endpoint, timeout).await;
    let t = target("abc123", "prod").stage_ref();

    let start = Instant::now();
    let err = stages.read(&t).await.unwrap_err();
    let elapsed = start.elapsed();
    eprintln!("api gateway, nothing listening, read: failed in {elapsed:?}: {err}");
    assert!(elapsed < Duration::from_secs(1), "refusal took {elapsed:?}");
    assert!(err.to_string().contains("abc123") && err.to_string().contains("could not connect"), "{err}");

    let start = Instant::now();
    let err = stages.apply(&t, &StageLimits { existed: true, rate_limit: Some(1.0), burst_limit: Some(2) }).await.unwrap_err();
    eprintln!("api gateway, nothing listening, apply: failed in {:?}: {err}", start.elapsed());
    assert!(start.elapsed() < Duration::from_secs(1), "refusal took {:?}", start.elapsed());
}

#[tokio::test]
async fn a_hung_server_costs_one_timeout() {
    let hung = HungServer::start();
    let timeout = Duration::from_secs(1);
    let stages = controller(&format!("http://{}", hung.addr()), timeout).await;
    let t = target("abc123", "prod").stage_ref();

    let start = Instant::now();
    let err = stages.read(&t).await.unwrap_err();
    let elapsed = start.elapsed();
    eprintln!("api gateway, hung server, read: failed in {elapsed:?}: {err}");
    assert!(elapsed >= timeout - Duration::from_millis(50), "gave up before the timeout: {elapsed:?}");
    assert!(elapsed < timeout * 2, "{elapsed:?} is past the {timeout:?} deadline");
    assert!(err.to_string().contains("no answer within"), "{err}");

    let start = Instant::now();
    let err = stages.apply(&t, &StageLimits::none()).await.unwrap_err();
    let elapsed = start.elapsed();
    eprintln!("api gateway, hung server, apply: failed in {elapsed:?}: {err}");
    assert!(elapsed < timeout * 2, "{elapsed:?} is past the {timeout:?} deadline");
}

#[tokio::test]
async fn the_next_call_after_the_endpoint_comes_back_succeeds() {
    let port = free_port();
    let stages = controller(&format!("http://127.0.0.1:{port}"), Duration::from_secs(5)).await;
    stages.read(&target("abc123", "prod").stage_ref()).await.unwrap_err();

    let _moto = Moto::start_on(port);
    let api = rest_api::create(stages.client(), &["prod"]).await;
    let t = target(&api, "prod");
    stages.apply(&t.stage_ref(), &t.throttled()).await.unwrap_or_else(|e| panic!("after the start: {e}"));
    assert_eq!(limits(stages.client(), &api, "prod").await, Some((5.0, 10)));
}
