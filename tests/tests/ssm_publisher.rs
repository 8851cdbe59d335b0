//! The parameter channel against moto's SSM: the document as a String parameter, overwritten,
//! and the failure modes a tick must survive: nothing listening, a server that accepts and
//! never answers (the SDK's defaults would wait forever), and the endpoint coming back.
//!
//! Each publisher gets moto's endpoint, a region and test credentials explicitly (not through
//! the process environment, which every test thread shares).

use capacity_tests::servers::free_port;
use capacity_tests::servers::hung::HungServer;
use capacity_tests::servers::moto::Moto;
use sentinel_adapters::aws_client::AwsOverrides;
use sentinel_adapters::ssm_publisher::SsmPublisher;
use sentinel_core::ports::memory::PolicyRef;
use sentinel_core::ports::publisher::{Channel, Publisher, StateDocument};
use std::time::{Duration, Instant};
use vocabulary::{Cause, Factors, ProtectionState};

const NAME: &str = "/capacity/state";

fn document(sequence: u64) -> StateDocument {
    StateDocument {
        state: ProtectionState::Critical,
        factors: Factors { bulk: 0.0, heavy: 0.25, write: 0.5, read: 0.9 },
        decided_at: "2026-03-01T12:01:00Z".into(),
        policy: PolicyRef { name: "default".into(), version: "2.0.0".into(), digest: "cd".repeat(32) },
        pinned: true,
        pin_expires_at: Some("2026-03-01T13:00:00Z".into()),
        cause: Cause::Pinned,
        sequence,
    }
}

async fn publisher(endpoint: &str, timeout: Duration) -> SsmPublisher {
    SsmPublisher::with_overrides(Channel::Parameter, NAME, timeout, &AwsOverrides::emulator(endpoint, "us-east-1")).await
}

/// The parameter's value, parsed, and its version.
async fn read_back(p: &SsmPublisher) -> (StateDocument, i64) {
    let out = p.client().get_parameter().name(NAME).send().await.unwrap();
    let parameter = out.parameter().unwrap();
    assert_eq!(parameter.r#type(), Some(&aws_sdk_ssm::types::ParameterType::String));
    (serde_json::from_str(parameter.value().unwrap()).unwrap(), parameter.version())
}

#[tokio::test]
async fn publishes_the_document_and_overwrites_it() {
    let moto = Moto::start();
    let p = publisher(&moto.endpoint(), Duration::from_secs(5)).await;
    assert_eq!(p.channel(), Channel::Parameter);
    assert_eq!(p.target(), format!("ssm parameter {NAME}"));

    p.publish(&document(1)).await.unwrap_or_else(|e| panic!("{e}"));
    let (doc, version) = read_back(&p).await;
    assert_eq!(doc, document(1));
    assert_eq!(version, 1);

    p.publish(&document(2)).await.unwrap_or_else(|e| panic!("{e}"));
    let (doc, version) = read_back(&p).await;
    assert_eq!(doc, document(2));
    assert_eq!(version, 2);
}

#[tokio::test]
async fn nothing_listening_fails_fast() {
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let timeout = Duration::from_secs(3);
    let p = publisher(&endpoint, timeout).await;
    let start = Instant::now();
    let err = p.publish(&document(1)).await.unwrap_err();
    let elapsed = start.elapsed();
    eprintln!("ssm, nothing listening: failed in {elapsed:?}: {err}");
    assert!(elapsed < Duration::from_secs(1), "refusal took {elapsed:?}");
    assert_eq!(err.channel, Channel::Parameter);
    let text = err.to_string();
    assert!(text.contains("GetParameter") && text.contains("could not connect"), "{text}");
    assert!(text.contains(&endpoint), "{text}");
}

#[tokio::test]
async fn a_hung_server_costs_one_timeout() {
    let hung = HungServer::start();
    let timeout = Duration::from_secs(1);
    let p = publisher(&format!("http://{}", hung.addr()), timeout).await;
    for attempt in 1..=2 {
        let start = Instant::now();
        let err = p.publish(&document(attempt)).await.unwrap_err();
        let elapsed = start.elapsed();
        eprintln!("ssm, hung server, attempt {attempt}: failed in {elapsed:?}: {err}");
        assert!(elapsed >= timeout - Duration::from_millis(50), "gave up before the timeout: {elapsed:?}");
        assert!(elapsed < timeout * 2, "{elapsed:?} is past the {timeout:?} deadline");
        assert!(err.to_string().contains("no answer within"), "{err}");
    }
}

#[tokio::test]
async fn the_next_publish_after_the_endpoint_comes_back_succeeds() {
    let port = free_port();
    let p = publisher(&format!("http://127.0.0.1:{port}"), Duration::from_secs(5)).await;
    p.publish(&document(1)).await.unwrap_err();
    let _moto = Moto::start_on(port);
    p.publish(&document(2)).await.unwrap_or_else(|e| panic!("after the start: {e}"));
    assert_eq!(read_back(&p).await.0, document(2));
}

/// Issue 34, finding 4: the parameter is read before each write and never put back to a lower
/// sequence. Before the fence, PutParameter overwrote sequence 3 with sequence 2.
#[tokio::test]
async fn the_parameter_never_goes_back_to_a_lower_sequence() {
    let moto = Moto::start();
    let p = publisher(&moto.endpoint(), Duration::from_secs(5)).await;
    p.publish(&document(3)).await.unwrap_or_else(|e| panic!("{e}"));
    let (_, version) = read_back(&p).await;

    let stale = p.publish(&document(2)).await.expect_err("a lower sequence is refused");
    assert!(stale.to_string().contains("superseded: the parameter holds sequence 3, newer than this document's 2"), "{stale}");
    assert_eq!(read_back(&p).await, (document(3), version), "not written at all");

    p.publish(&document(3)).await.unwrap_or_else(|e| panic!("{e}"));
    p.publish(&document(4)).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read_back(&p).await.0.sequence, 4);

    // A value that is not one of ours is overwritten.
    p.client()
        .put_parameter()
        .name(NAME)
        .value("hand-written")
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .overwrite(true)
        .send()
        .await
        .unwrap();
    p.publish(&document(1)).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read_back(&p).await.0.sequence, 1);
}
