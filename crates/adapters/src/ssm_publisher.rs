//! The parameter channel (docs/behaviour.md §7): the state document as an AWS SSM Parameter Store
//! `String` parameter, overwritten each tick.
//!
//! Fenced by sequence as far as SSM allows: it has no compare-and-set, so each publish reads the
//! parameter first (`GetParameter`) and does not overwrite a document with a higher sequence. A
//! stale write can still land in the moment between another sentinel's read and write; readers
//! never go back to a lower sequence they have seen, and the next minute overwrites it.
//!
//! The client comes from the standard chain (`AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_SSM`,
//! `AWS_REGION`, the credentials chain), with every call bounded by the configured timeout
//! (see [`super::aws_client`]): a hung endpoint costs one timeout, never the schedule.

use super::aws_client::{self, AwsOverrides};
use aws_sdk_ssm::types::ParameterType;
use sentinel_core::ports::publisher::{Channel, PublishError, Publisher, StateDocument};
use std::time::Duration;

/// Slack on top of the SDK's own operation timeout before the publish gives up by itself.
const GUARD_SLACK: Duration = Duration::from_millis(500);

/// The parameter channel's publisher: overwrites an AWS SSM Parameter Store `String` parameter with
/// the state document each tick, unless it already holds a higher sequence.
pub struct SsmPublisher {
    channel: Channel,
    client: aws_sdk_ssm::Client,
    name: String,
    timeout: Duration,
    location: String,
}

impl SsmPublisher {
    /// A publisher to parameter `name` through the standard AWS configuration chain. Builds
    /// the client only: nothing is called until the first publish.
    pub async fn new(channel: Channel, name: &str, timeout: Duration) -> SsmPublisher {
        SsmPublisher::with_overrides(channel, name, timeout, &AwsOverrides::default()).await
    }

    /// As [`SsmPublisher::new`], with parts of the chain replaced (an emulator, in tests).
    pub async fn with_overrides(channel: Channel, name: &str, timeout: Duration, overrides: &AwsOverrides) -> SsmPublisher {
        let config = aws_client::sdk_config(timeout, overrides).await;
        let location = aws_client::location(&config);
        SsmPublisher { channel, client: aws_sdk_ssm::Client::new(&config), name: name.to_string(), timeout, location }
    }

    /// The client, configured as the publisher uses it (tests read the parameter back with it).
    pub fn client(&self) -> &aws_sdk_ssm::Client {
        &self.client
    }

    fn error(&self, message: String) -> PublishError {
        PublishError { channel: self.channel, target: self.target(), message }
    }
}

#[async_trait::async_trait]
impl Publisher for SsmPublisher {
    fn channel(&self) -> Channel {
        self.channel
    }

    fn target(&self) -> String {
        format!("ssm parameter {}", self.name)
    }

    async fn publish(&self, document: &StateDocument) -> Result<(), PublishError> {
        if self.name.is_empty() {
            return Err(self.error("the parameter name is empty (check the configuration)".into()));
        }
        let value = serde_json::to_string(document).map_err(|e| self.error(format!("the document does not serialise: {e}")))?;
        match tokio::time::timeout(self.timeout + GUARD_SLACK, self.fenced_put(value, document.sequence)).await {
            Ok(result) => result,
            Err(_) => Err(self.error(format!(
                "GetParameter and PutParameter: no answer within {:?} ({}; check that the endpoint is reachable and answering)",
                self.timeout, self.location
            ))),
        }
    }

    /// GetParameter, the read before each write. PutParameter is not tried: it would publish
    /// (a scratch parameter proves nothing where IAM grants the one name).
    async fn reach(&self) -> Result<String, PublishError> {
        if self.name.is_empty() {
            return Err(self.error(format!("the parameter name is empty (check publish.{}.name)", self.channel)));
        }
        let found = match tokio::time::timeout(self.timeout + GUARD_SLACK, self.read_stored()).await {
            Ok(found) => found?,
            Err(_) => {
                return Err(self.error(format!(
                    "GetParameter: no answer within {:?} ({}; check that the endpoint is reachable and answering)",
                    self.timeout, self.location
                )));
            }
        };
        let held = match found {
            None => "the parameter does not exist yet (the first publish creates it)".to_string(),
            Some(value) => match stored_sequence(&value) {
                Some(sequence) => format!("it holds sequence {sequence}"),
                None => "it holds a value that is not a state document (the first publish replaces it)".to_string(),
            },
        };
        Ok(format!("GetParameter at {}: {held}; PutParameter is not tried (it would publish): check ssm:PutParameter on it", self.location))
    }
}

impl SsmPublisher {
    /// The parameter's value, `None` when it does not exist yet: the read before each write.
    async fn read_stored(&self) -> Result<Option<String>, PublishError> {
        match self.client.get_parameter().name(&self.name).send().await {
            Ok(answer) => Ok(answer.parameter.and_then(|p| p.value)),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_parameter_not_found()) => Ok(None),
            Err(e) => Err(self.error(format!(
                "GetParameter (the check that the parameter holds no newer sequence): {}",
                aws_client::describe_sdk_error(
                    &e,
                    self.timeout,
                    &self.location,
                    "check the parameter name and the IAM permission ssm:GetParameter on it (the sentinel reads it before each write)"
                )
            ))),
        }
    }

    /// Reads the stored document's sequence, and writes unless it is higher than `sequence`.
    async fn fenced_put(&self, value: String, sequence: u64) -> Result<(), PublishError> {
        let stored = self.read_stored().await?.and_then(|v| stored_sequence(&v));
        if let Some(stored) = stored.filter(|stored| *stored > sequence) {
            return Err(self.error(format!(
                "superseded: the parameter holds sequence {stored}, newer than this document's {sequence}; not overwritten \
                 (another sentinel decided since; normal once after a failover)"
            )));
        }
        let call = self.client.put_parameter().name(&self.name).value(value).r#type(ParameterType::String).overwrite(true).send();
        call.await.map(|_| ()).map_err(|e| {
            self.error(format!(
                "PutParameter: {}",
                aws_client::describe_sdk_error(
                    &e,
                    self.timeout,
                    &self.location,
                    "check the parameter name, the IAM permissions ssm:GetParameter and ssm:PutParameter on it, and that the document fits a standard parameter (4 KB)"
                )
            ))
        })
    }
}

/// The `sequence` of a stored document, when it is one of ours (anything else is overwritten).
fn stored_sequence(value: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Sequenced {
        sequence: u64,
    }
    serde_json::from_str::<Sequenced>(value).ok().map(|d| d.sequence)
}
