//! What the AWS adapters (the SSM parameter publisher, the API Gateway stage controller) share:
//! one SDK configuration from the standard chain with explicit timeouts and a short retry
//! policy, optional overrides (an emulator's endpoint, a region, fixed credentials), and error
//! descriptions that say what failed and what to check.
//!
//! The SDK's defaults have no operation timeout: against a server that accepts the connection
//! and never answers, a call waits forever. Here every call is bounded: connect, read, each
//! attempt and the whole operation by the caller's `timeout`, with at most two attempts (the
//! second only after a quick failure such as a refused or reset connection).

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_ssm::config::Credentials;
use aws_sdk_ssm::error::{ProvideErrorMetadata, SdkError};
use sentinel_core::error_chain::chain;
use std::time::Duration;

/// Replaces parts of the standard configuration chain (environment, profile, instance role).
/// Production leaves everything `None`; tests point at moto with fixed credentials, because
/// environment variables are shared by every test thread of a process.
#[derive(Debug, Clone, Default)]
pub struct AwsOverrides {
    /// Instead of `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_<SERVICE>` / the AWS endpoint.
    pub endpoint_url: Option<String>,
    /// Instead of `AWS_REGION` / the profile's region.
    pub region: Option<String>,
    /// Instead of the credentials chain.
    pub credentials: Option<StaticCredentials>,
}

impl AwsOverrides {
    /// A local emulator (moto, LocalStack): its endpoint, a region and fixed test credentials.
    pub fn emulator(endpoint_url: &str, region: &str) -> AwsOverrides {
        AwsOverrides {
            endpoint_url: Some(endpoint_url.to_string()),
            region: Some(region.to_string()),
            credentials: Some(StaticCredentials { access_key_id: "testing".into(), secret_access_key: "testing".into() }),
        }
    }
}

/// Fixed credentials. Its `Debug` never shows the secret.
#[derive(Clone)]
pub struct StaticCredentials {
    /// The access key id (e.g. `testing` for an emulator).
    pub access_key_id: String,
    /// The secret access key; never shown by `Debug`.
    pub secret_access_key: String,
}

impl std::fmt::Debug for StaticCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticCredentials").field("access_key_id", &self.access_key_id).field("secret_access_key", &"<redacted>").finish()
    }
}

/// Connect, read, attempt and operation timeouts, all `timeout`: no call outlives it.
pub(crate) fn timeout_config(timeout: Duration) -> TimeoutConfig {
    TimeoutConfig::builder()
        .connect_timeout(timeout)
        .read_timeout(timeout)
        .operation_attempt_timeout(timeout)
        .operation_timeout(timeout)
        .build()
}

/// Two attempts, the second soon after a quick failure (a stale pooled connection, a refusal).
pub(crate) fn retry_config() -> RetryConfig {
    RetryConfig::standard()
        .with_max_attempts(2)
        .with_initial_backoff(Duration::from_millis(100))
        .with_max_backoff(Duration::from_millis(500))
}

/// The SDK's hyper client with rustls over ring (the workspace builds the SDK without its
/// default client, which would compile aws-lc), trusting the platform's roots as the SDK's
/// default does. Every client and credential provider built from the loaded config uses it.
fn https_client() -> aws_sdk_ssm::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring))
        .build_https()
}

/// The standard chain (`aws_config::defaults`), with the bounded timeouts and retries and any
/// overrides. Loading reads the environment and profile files; it does not call AWS.
pub async fn sdk_config(timeout: Duration, overrides: &AwsOverrides) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(https_client())
        .timeout_config(timeout_config(timeout))
        .retry_config(retry_config());
    if let Some(endpoint) = &overrides.endpoint_url {
        loader = loader.endpoint_url(endpoint.clone());
    }
    if let Some(region) = &overrides.region {
        loader = loader.region(Region::new(region.clone()));
    }
    if let Some(c) = &overrides.credentials {
        loader = loader.credentials_provider(Credentials::new(
            c.access_key_id.clone(),
            c.secret_access_key.clone(),
            None,
            None,
            "capacity-sentinel-static",
        ));
    }
    loader.load().await
}

/// Where the clients built from `config` send their calls, for logs and messages.
pub fn location(config: &SdkConfig) -> String {
    let region = config.region().map(|r| r.to_string()).unwrap_or_else(|| "no region".into());
    match config.endpoint_url() {
        Some(endpoint) => format!("region {region}, endpoint {endpoint}"),
        None => format!("region {region}"),
    }
}

/// What went wrong with one call and what to check. `service_checks` is the advice for an
/// error answer from the service (permissions, names).
pub(crate) fn describe_sdk_error<E, R>(err: &SdkError<E, R>, timeout: Duration, location: &str, service_checks: &str) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug + 'static,
{
    match err {
        SdkError::TimeoutError(_) => {
            format!("no answer within {timeout:?} ({location}; check that the endpoint is reachable and answering)")
        }
        SdkError::DispatchFailure(failure) => {
            let what = if failure.is_timeout() {
                "timed out connecting"
            } else if failure.is_io() {
                "could not connect"
            } else {
                "the request could not be sent"
            };
            format!("{what}: {} ({location}; check the endpoint, the network and the credentials)", chain(err))
        }
        SdkError::ServiceError(service) => {
            let e = service.err();
            format!("the service answered {}: {} ({service_checks})", e.code().unwrap_or("an error"), e.message().unwrap_or("no message"))
        }
        SdkError::ResponseError(_) => format!("unreadable answer: {} ({location}; check that the endpoint is the AWS service)", chain(err)),
        SdkError::ConstructionFailure(_) => {
            format!("the request could not be built: {} (check the region and the credentials configuration)", chain(err))
        }
        _ => format!("{} ({location})", chain(err)),
    }
}
