//! A REST API on moto's API Gateway for the stage-throttle tests: `GET /` with a mock
//! integration, one deployment, the given stages, and a stage's stage-wide (`*/*`) limits set
//! or read back as its owners would, independently of the sentinel's controller.

use aws_sdk_apigateway::Client;
use aws_sdk_apigateway::types::{IntegrationType, Op, PatchOperation};

/// Creates the REST API `orders` with `stages`; returns its id.
pub async fn create(c: &Client, stages: &[&str]) -> String {
    let api = c.create_rest_api().name("orders").send().await.unwrap().id().unwrap().to_string();
    let resources = c.get_resources().rest_api_id(&api).send().await.unwrap();
    let root = resources.items().iter().find(|r| r.path() == Some("/")).unwrap().id().unwrap().to_string();
    c.put_method().rest_api_id(&api).resource_id(&root).http_method("GET").authorization_type("NONE").send().await.unwrap();
    c.put_integration().rest_api_id(&api).resource_id(&root).http_method("GET").r#type(IntegrationType::Mock).send().await.unwrap();
    let deployment = c.create_deployment().rest_api_id(&api).send().await.unwrap();
    for stage in stages {
        c.create_stage().rest_api_id(&api).stage_name(*stage).deployment_id(deployment.id().unwrap()).send().await.unwrap();
    }
    api
}

/// Sets a stage's own stage-wide rate and burst limits.
pub async fn set_limits(c: &Client, api: &str, stage: &str, rate: &str, burst: &str) {
    c.update_stage()
        .rest_api_id(api)
        .stage_name(stage)
        .patch_operations(PatchOperation::builder().op(Op::Replace).path("/*/*/throttling/rateLimit").value(rate).build())
        .patch_operations(PatchOperation::builder().op(Op::Replace).path("/*/*/throttling/burstLimit").value(burst).build())
        .send()
        .await
        .unwrap();
}

/// A stage's stage-wide (rate, burst), if it has that entry.
pub async fn limits(c: &Client, api: &str, stage: &str) -> Option<(f64, i32)> {
    let out = c.get_stage().rest_api_id(api).stage_name(stage).send().await.unwrap();
    out.method_settings().and_then(|m| m.get("*/*")).map(|s| (s.throttling_rate_limit(), s.throttling_burst_limit()))
}
