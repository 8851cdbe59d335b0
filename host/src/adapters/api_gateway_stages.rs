//! Emergency stage throttles on real API Gateway REST API stages.
//!
//! `engage` reads the stage (GetStage), keeps its stage-wide method settings' throttling (the
//! `*/*` entry: rate and burst), and replaces them with the target's (UpdateStage,
//! `/*/*/throttling/rateLimit` and `/*/*/throttling/burstLimit`). The original it returns,
//! which the store keeps until the restore, is
//! `{"method_settings_key": "*/*", "existed": bool, "rate_limit": f64|null, "burst_limit": int|null}`:
//! `existed` says whether the stage had a `*/*` entry at all; a limit is null when it was
//! unset (negative, or both zero, which is what a missing field reads as).
//!
//! `restore` puts the original limits back; an unset one becomes -1 (no stage-level limit:
//! the account's applies). When there was no `*/*` entry before, it then removes the entry
//! the engage created (`remove /*/*`), best effort: the throttle is already lifted by then.
//! Every call is bounded by the configured timeout (see [`super::aws_client`]).

use super::aws_client::{self, AwsOverrides};
use crate::ports::stages::{StageController, StageError, StageTarget};
use aws_sdk_apigateway::types::{Op, PatchOperation};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The stage-wide method settings entry: every resource, every method.
const ALL_METHODS: &str = "*/*";
const RATE_PATH: &str = "/*/*/throttling/rateLimit";
const BURST_PATH: &str = "/*/*/throttling/burstLimit";
/// Slack on top of the SDK's own operation timeout before a call gives up by itself.
const GUARD_SLACK: Duration = Duration::from_millis(500);

/// What `engage` found, as kept by the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Original {
    #[serde(default = "all_methods")]
    method_settings_key: String,
    existed: bool,
    rate_limit: Option<f64>,
    burst_limit: Option<i32>,
}

fn all_methods() -> String {
    ALL_METHODS.to_string()
}

pub struct ApiGatewayStages {
    client: aws_sdk_apigateway::Client,
    timeout: Duration,
    location: String,
}

impl ApiGatewayStages {
    /// A controller through the standard AWS configuration chain. Builds the client only.
    pub async fn new(timeout: Duration) -> ApiGatewayStages {
        ApiGatewayStages::with_overrides(timeout, &AwsOverrides::default()).await
    }

    /// As [`ApiGatewayStages::new`], with parts of the chain replaced (an emulator, in tests).
    pub async fn with_overrides(timeout: Duration, overrides: &AwsOverrides) -> ApiGatewayStages {
        let config = aws_client::sdk_config(timeout, overrides).await;
        let location = aws_client::location(&config);
        ApiGatewayStages { client: aws_sdk_apigateway::Client::new(&config), timeout, location }
    }

    /// The client, configured as the controller uses it (tests set up stages with it).
    pub fn client(&self) -> &aws_sdk_apigateway::Client {
        &self.client
    }

    fn error(&self, target: &StageTarget, message: String) -> StageError {
        StageError { target: target.id(), message: format!("REST API {} stage {}: {message}", target.rest_api_id, target.stage) }
    }

    /// Runs one SDK call under the guard, describing any failure.
    async fn call<T, E, R>(
        &self,
        target: &StageTarget,
        operation: &str,
        checks: &str,
        call: impl std::future::Future<Output = Result<T, aws_sdk_apigateway::error::SdkError<E, R>>>,
    ) -> Result<T, StageError>
    where
        E: aws_sdk_apigateway::error::ProvideErrorMetadata + std::error::Error + 'static,
        R: std::fmt::Debug + 'static,
    {
        match tokio::time::timeout(self.timeout + GUARD_SLACK, call).await {
            Ok(Ok(output)) => Ok(output),
            Ok(Err(e)) => {
                Err(self
                    .error(target, format!("{operation}: {}", aws_client::describe_sdk_error(&e, self.timeout, &self.location, checks))))
            }
            Err(_) => Err(self.error(
                target,
                format!(
                    "{operation}: no answer within {:?} ({}; check that the endpoint is reachable and answering)",
                    self.timeout, self.location
                ),
            )),
        }
    }

    /// Replaces the stage-wide rate and burst limits (-1: unset).
    async fn set_limits(&self, target: &StageTarget, rate: f64, burst: i64) -> Result<(), StageError> {
        let call = self
            .client
            .update_stage()
            .rest_api_id(&target.rest_api_id)
            .stage_name(&target.stage)
            .patch_operations(replace(RATE_PATH, &rate.to_string()))
            .patch_operations(replace(BURST_PATH, &burst.to_string()));
        self.call(target, "UpdateStage", UPDATE_CHECKS, call.send()).await.map(|_| ())
    }
}

const GET_CHECKS: &str = "check the REST API id, the stage name and the IAM permission apigateway:GET on the stage";
const UPDATE_CHECKS: &str = "check the REST API id, the stage name, the limits and the IAM permission apigateway:PATCH on the stage";

fn replace(path: &str, value: &str) -> PatchOperation {
    PatchOperation::builder().op(Op::Replace).path(path).value(value).build()
}

/// A limit as set, or `None` when unset.
fn read_limits(rate: f64, burst: i32) -> (Option<f64>, Option<i32>) {
    if rate == 0.0 && burst == 0 {
        return (None, None);
    }
    ((rate.is_finite() && rate >= 0.0).then_some(rate), (burst >= 0).then_some(burst))
}

#[async_trait::async_trait]
impl StageController for ApiGatewayStages {
    fn describe(&self) -> String {
        format!("API Gateway REST API stages ({})", self.location)
    }

    async fn engage(&self, target: &StageTarget) -> Result<Option<serde_json::Value>, StageError> {
        if !target.rate_limit.is_finite() || target.rate_limit < 0.0 {
            return Err(self.error(target, format!("the rate limit {} is not a non-negative number", target.rate_limit)));
        }
        let burst = i32::try_from(target.burst_limit)
            .map_err(|_| self.error(target, format!("the burst limit {} is over {}", target.burst_limit, i32::MAX)))?;
        let get = self.client.get_stage().rest_api_id(&target.rest_api_id).stage_name(&target.stage);
        let stage = self.call(target, "GetStage", GET_CHECKS, get.send()).await?;
        let current = stage.method_settings().and_then(|m| m.get(ALL_METHODS));
        let (rate_limit, burst_limit) =
            current.map(|s| read_limits(s.throttling_rate_limit(), s.throttling_burst_limit())).unwrap_or((None, None));
        let original = Original { method_settings_key: all_methods(), existed: current.is_some(), rate_limit, burst_limit };
        let original =
            serde_json::to_value(&original).map_err(|e| self.error(target, format!("the original settings do not serialise: {e}")))?;
        self.set_limits(target, target.rate_limit, i64::from(burst)).await?;
        tracing::info!(
            target = %target.id(),
            rate_limit = target.rate_limit,
            burst_limit = target.burst_limit,
            original = %original,
            "engaged the emergency stage throttle"
        );
        Ok(Some(original))
    }

    async fn restore(&self, target: &StageTarget, original: Option<&serde_json::Value>) -> Result<(), StageError> {
        let original = match original {
            Some(value) => Original::deserialize(value)
                .map_err(|e| self.error(target, format!("the kept original settings {value} are not what engage records: {e}")))?,
            None => {
                tracing::warn!(
                    target = %target.id(),
                    "no original settings kept for this stage: lifting the stage-wide throttle (limits unset)"
                );
                Original { method_settings_key: all_methods(), existed: true, rate_limit: None, burst_limit: None }
            }
        };
        if original.method_settings_key != ALL_METHODS {
            return Err(self
                .error(target, format!("the kept original is for method settings {:?}, not {ALL_METHODS}", original.method_settings_key)));
        }
        let rate = original.rate_limit.unwrap_or(-1.0);
        let burst = original.burst_limit.map_or(-1, i64::from);
        self.set_limits(target, rate, burst).await?;
        if !original.existed {
            // The engage created the `*/*` entry; take it away again. The limits are unset
            // already, so a failure here leaves the stage unthrottled, not engaged.
            let remove = PatchOperation::builder().op(Op::Remove).path("/*/*").build();
            let call = self.client.update_stage().rest_api_id(&target.rest_api_id).stage_name(&target.stage).patch_operations(remove);
            if let Err(e) = self.call(target, "UpdateStage (remove */*)", UPDATE_CHECKS, call.send()).await {
                tracing::warn!(error = %e, "the stage-wide throttle is lifted, but its method settings entry stays");
            }
        }
        tracing::info!(target = %target.id(), rate_limit = rate, burst_limit = burst, "restored the stage's throttling");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_limits_read_as_none() {
        assert_eq!(read_limits(0.0, 0), (None, None));
        assert_eq!(read_limits(-1.0, -1), (None, None));
        assert_eq!(read_limits(100.0, 200), (Some(100.0), Some(200)));
        assert_eq!(read_limits(0.0, 5), (Some(0.0), Some(5)));
        assert_eq!(read_limits(10.0, -1), (Some(10.0), None));
    }

    #[test]
    fn the_original_round_trips() {
        let o = Original { method_settings_key: all_methods(), existed: false, rate_limit: None, burst_limit: Some(3) };
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(v, serde_json::json!({"method_settings_key": "*/*", "existed": false, "rate_limit": null, "burst_limit": 3}));
        assert_eq!(Original::deserialize(&v).unwrap(), o);
    }
}
