//! Emergency stage throttles on real API Gateway REST API stages.
//!
//! A stage's stage-wide throttling is its `*/*` method settings entry (every resource, every
//! method): `read` takes it from GetStage, `apply` sets it with UpdateStage
//! (`/*/*/throttling/rateLimit` and `/*/*/throttling/burstLimit`). An unset limit reads as
//! `None` (negative, or both zero, which is what a missing field reads as) and is written as -1
//! (no stage-level limit: the account's applies). Limits with `existed: false` (the stage had
//! no `*/*` entry) are set as unset and the entry is then removed (`remove /*/*`); moto accepts
//! the remove but keeps the entry, with both limits unset (docs/behaviour.md §11.3), which
//! throttles nothing. Every call is bounded by the configured timeout (see [`super::aws_client`]).

use super::aws_client::{self, AwsOverrides};
use aws_sdk_apigateway::types::{Op, PatchOperation};
use sentinel_core::ports::stages::{StageController, StageError, StageLimits, StageRef};
use std::time::Duration;

/// The stage-wide method settings entry: every resource, every method.
const ALL_METHODS: &str = "*/*";
const RATE_PATH: &str = "/*/*/throttling/rateLimit";
const BURST_PATH: &str = "/*/*/throttling/burstLimit";
/// Slack on top of the SDK's own operation timeout before a call gives up by itself.
const GUARD_SLACK: Duration = Duration::from_millis(500);

/// The stage controller for real API Gateway REST API stages: reads a stage's stage-wide throttling
/// with GetStage and sets it with UpdateStage, each call bounded by the configured timeout.
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

    fn error(&self, target: &StageRef, message: String) -> StageError {
        StageError { target: target.id(), message: format!("REST API {} stage {}: {message}", target.rest_api_id, target.stage) }
    }

    /// Runs one SDK call under the guard, describing any failure.
    async fn call<T, E, R>(
        &self,
        target: &StageRef,
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
    async fn set_limits(&self, target: &StageRef, rate: f64, burst: i64) -> Result<(), StageError> {
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

    async fn read(&self, target: &StageRef) -> Result<StageLimits, StageError> {
        let get = self.client.get_stage().rest_api_id(&target.rest_api_id).stage_name(&target.stage);
        let stage = self.call(target, "GetStage", GET_CHECKS, get.send()).await?;
        Ok(match stage.method_settings().and_then(|m| m.get(ALL_METHODS)) {
            None => StageLimits::none(),
            Some(s) => {
                let (rate_limit, burst_limit) = read_limits(s.throttling_rate_limit(), s.throttling_burst_limit());
                StageLimits { existed: true, rate_limit, burst_limit: burst_limit.map(i64::from) }
            }
        })
    }

    async fn apply(&self, target: &StageRef, limits: &StageLimits) -> Result<(), StageError> {
        let rate = match limits.rate_limit {
            Some(r) if !(r.is_finite() && r >= 0.0) => {
                return Err(self.error(target, format!("the rate limit {r} is not a non-negative number")));
            }
            Some(r) => r,
            None => -1.0,
        };
        let burst = match limits.burst_limit {
            Some(b) if !(0..=i64::from(i32::MAX)).contains(&b) => {
                return Err(self.error(target, format!("the burst limit {b} is not within 0..={}", i32::MAX)));
            }
            Some(b) => b,
            None => -1,
        };
        self.set_limits(target, rate, burst).await?;
        if !limits.existed {
            // The stage had no stage-wide entry: take away the one setting the limits created.
            // The limits are unset already, so a failure here throttles nothing.
            let remove = PatchOperation::builder().op(Op::Remove).path("/*/*").build();
            let call = self.client.update_stage().rest_api_id(&target.rest_api_id).stage_name(&target.stage).patch_operations(remove);
            if let Err(e) = self.call(target, "UpdateStage (remove */*)", UPDATE_CHECKS, call.send()).await {
                tracing::warn!(error = %e, "the stage-wide throttle is unset, but its method settings entry stays");
            }
        }
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
}
