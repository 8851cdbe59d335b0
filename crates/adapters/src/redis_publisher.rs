//! The cache channel (docs/behaviour.md §7): the state document under a Redis key with an expiry,
//! so a dead sentinel's state ages out.
//!
//! Fenced by sequence: the document is written by one Lua script that compares it with the stored
//! one, so the key never goes back to a lower sequence (a stale leader's write that was held on
//! the network lands as a refusal, not as the state in force). The same sequence is written again
//! (a minute published twice).
//!
//! The constructor only checks the URL: a Redis that is down at startup does not stop the
//! sentinel. The connection is opened on the first publish, kept, and dropped on any failure
//! so the next tick opens a fresh one. Connecting, the answer to `SET` and the whole publish
//! are each bounded by the configured timeout. The URL's password never appears in a target,
//! a message or a log line.

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError, Script};
use sentinel_core::ports::publisher::{Channel, PublishError, Publisher, StateDocument};
use sentinel_core::redact::{redact, scrub};
use std::sync::LazyLock;
use std::time::Duration;

/// SETs KEYS[1] to ARGV[1] with EX ARGV[3] unless the stored document (when it is JSON with a
/// numeric `sequence`) has a sequence above ARGV[2]. Returns -1 when written, else the stored
/// sequence. Sequences are below 2^53, exact as Lua numbers.
const SET_IF_NOT_NEWER: &str = r"
local stored = redis.call('GET', KEYS[1])
if stored then
  local ok, doc = pcall(cjson.decode, stored)
  if ok and type(doc) == 'table' and type(doc['sequence']) == 'number' and doc['sequence'] > tonumber(ARGV[2]) then
    return doc['sequence']
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return -1
";

static FENCED_SET: LazyLock<Script> = LazyLock::new(|| Script::new(SET_IF_NOT_NEWER));

/// What the fenced write did.
enum Written {
    Yes,
    /// The key holds this newer sequence: nothing written.
    Newer(i64),
}
use tokio::sync::Mutex;

/// The cache channel's publisher: SETs the state document under one Redis key with an expiry,
/// fenced by sequence so the key never goes back to an older document.
pub struct RedisPublisher {
    channel: Channel,
    client: redis::Client,
    key: String,
    expiry_secs: u64,
    timeout: Duration,
    /// The URL with any password replaced by `***`.
    shown_url: String,
    /// The URL as configured, whose secrets are scrubbed from any message that might quote
    /// them ([`sentinel_core::redact::scrub`]); never shown.
    url: String,
    connection: Mutex<Option<MultiplexedConnection>>,
}

impl RedisPublisher {
    /// A publisher for `channel` that SETs `key` to the document with `EX expiry` (whole
    /// seconds, at least one). Parses `url` (`redis://[user[:password]@]host[:port][/db]`);
    /// never connects.
    pub fn new(channel: Channel, url: &str, key: &str, expiry: Duration, timeout: Duration) -> Result<RedisPublisher, PublishError> {
        let shown_url = redact(url);
        let error = |message: String| PublishError { channel, target: format!("redis {shown_url} key {key}"), message };
        let client = crate::settings::redis_url::client(url, key).map_err(|e| error(e.message))?;
        if expiry < Duration::from_secs(1) {
            return Err(error(format!("the expiry {expiry:?} is under one second (Redis expires in whole seconds)")));
        }
        if timeout.is_zero() {
            return Err(error("the timeout is zero".into()));
        }
        Ok(RedisPublisher {
            channel,
            client,
            key: key.to_string(),
            expiry_secs: expiry.as_secs(),
            timeout,
            url: url.to_string(),
            shown_url,
            connection: Mutex::new(None),
        })
    }

    fn error(&self, message: String) -> PublishError {
        PublishError { channel: self.channel, target: self.target(), message }
    }

    /// The kept connection, or a new one (connect and handshake bounded by the timeout).
    async fn connection(&self) -> Result<MultiplexedConnection, RedisError> {
        let mut kept = self.connection.lock().await;
        if let Some(connection) = kept.as_ref() {
            return Ok(connection.clone());
        }
        let config = AsyncConnectionConfig::new().set_connection_timeout(Some(self.timeout)).set_response_timeout(Some(self.timeout));
        let connection = self.client.get_multiplexed_async_connection_with_config(&config).await?;
        *kept = Some(connection.clone());
        Ok(connection)
    }

    async fn set(&self, value: &str, sequence: u64) -> Result<Written, (&'static str, RedisError)> {
        self.set_key(&self.key, value, sequence, self.expiry_secs).await
    }

    async fn set_key(&self, key: &str, value: &str, sequence: u64, expiry_secs: u64) -> Result<Written, (&'static str, RedisError)> {
        let mut connection = self.connection().await.map_err(|e| ("connecting", e))?;
        let mut invocation = FENCED_SET.key(key);
        invocation.arg(value).arg(sequence).arg(expiry_secs);
        let answer: i64 = invocation.invoke_async(&mut connection).await.map_err(|e| ("the fenced SET script", e))?;
        Ok(if answer < 0 { Written::Yes } else { Written::Newer(answer) })
    }

    /// Forgets the kept connection: the next publish connects afresh.
    async fn forget(&self) {
        self.connection.lock().await.take();
    }

    fn describe(&self, step: &str, e: &RedisError) -> String {
        let url = &self.shown_url;
        let advice = if e.is_connection_refusal() {
            format!("connection refused; check that Redis is running at {url} and reachable")
        } else if e.is_timeout() {
            format!("no answer within {:?}; check that {url} is a Redis server and not overloaded", self.timeout)
        } else if e.kind() == redis::ErrorKind::AuthenticationFailed || matches!(e.code(), Some("NOAUTH" | "WRONGPASS")) {
            "authentication failed; check the user and password in the URL".to_string()
        } else if e.code() == Some("NOPERM") {
            format!(
                "the user may not run the write's script on this key; grant it +evalsha +eval +get and the keys {0} and {0}:preflight (the write compares sequences in one script; `check --connect` writes the second)",
                self.key
            )
        } else if e.code() == Some("READONLY") {
            "the server is a read-only replica; check that the URL points at the primary".to_string()
        } else if e.is_io_error() || e.is_connection_dropped() {
            format!("the connection failed; check that Redis is running at {url} and reachable")
        } else {
            format!("check that {url} is a Redis server that accepts EVALSHA and SET from this client")
        };
        scrub(&format!("{step}: {e} ({advice})"), &self.url)
    }
}

#[async_trait::async_trait]
impl Publisher for RedisPublisher {
    fn channel(&self) -> Channel {
        self.channel
    }

    fn target(&self) -> String {
        format!("redis {} key {}", self.shown_url, self.key)
    }

    async fn publish(&self, document: &StateDocument) -> Result<(), PublishError> {
        let value = serde_json::to_string(document).map_err(|e| self.error(format!("the document does not serialise: {e}")))?;
        let message = match tokio::time::timeout(self.timeout, self.set(&value, document.sequence)).await {
            Ok(Ok(Written::Yes)) => return Ok(()),
            Ok(Ok(Written::Newer(stored))) => {
                return Err(self.error(format!(
                    "superseded: the key holds sequence {stored}, newer than this document's {}; not overwritten (another \
                     sentinel decided since; normal once after a failover)",
                    document.sequence
                )));
            }
            Ok(Err((step, e))) => self.describe(step, &e),
            Err(_) => format!("no answer within {:?}; check that {} is a Redis server and not overloaded", self.timeout, self.shown_url),
        };
        self.forget().await;
        Err(self.error(message))
    }

    /// The fenced write's script on a scratch key (`<key>:preflight`, expiring after a minute),
    /// then a GET of it: the calls and permissions a publish needs, the published key untouched.
    async fn reach(&self) -> Result<String, PublishError> {
        let scratch = format!("{}:preflight", self.key);
        let value = r#"{"preflight":true,"sequence":0}"#;
        let attempt = async {
            self.set_key(&scratch, value, 0, 60).await?;
            let mut connection = self.connection().await.map_err(|e| ("connecting", e))?;
            let read: Option<String> = redis::cmd("GET").arg(&scratch).query_async(&mut connection).await.map_err(|e| ("GET", e))?;
            Ok::<_, (&'static str, RedisError)>(read)
        };
        let message = match tokio::time::timeout(self.timeout, attempt).await {
            Ok(Ok(Some(read))) if read == value => {
                return Ok(format!("the fenced SET script and a GET on the scratch key {scratch} (expires in 60 s)"));
            }
            Ok(Ok(read)) => format!(
                "the scratch key {scratch} read back {} after the fenced SET script wrote it; check that the URL names one \
                 Redis primary, not a proxy or a cluster that spreads keys",
                if read.is_some() { "something else" } else { "nothing" }
            ),
            Ok(Err((step, e))) => self.describe(step, &e),
            Err(_) => format!("no answer within {:?}; check that {} is a Redis server and not overloaded", self.timeout, self.shown_url),
        };
        self.forget().await;
        Err(self.error(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(redact("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
        assert_eq!(redact("redis://:s3cret@host:6379/0"), "redis://:***@host:6379/0");
        assert_eq!(redact("rediss://user:p@ss:w@host/"), "rediss://user:***@host/");
        assert_eq!(redact("redis+unix:///tmp/r.sock?db=1&pass=xyz"), "redis+unix:///tmp/r.sock?db=1&pass=***");
        let p = RedisPublisher::new(
            Channel::Cache,
            "redis+unix:///tmp/r.sock?db=1&pass=hunter2",
            "k",
            Duration::from_secs(60),
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(p.target(), "redis redis+unix:///tmp/r.sock?db=1&pass=*** key k");
        let echoed = RedisError::from((redis::ErrorKind::Client, "echo", "hunter2".into()));
        assert!(!p.describe("SET", &echoed).contains("hunter2"), "{}", p.describe("SET", &echoed));
        let p = RedisPublisher::new(Channel::Cache, "redis://u:hunter2@127.0.0.1:1/", "k", Duration::from_secs(60), Duration::from_secs(1))
            .unwrap();
        assert_eq!(p.target(), "redis redis://u:***@127.0.0.1:1/ key k");
    }

    #[test]
    fn bad_configuration_is_refused_without_connecting() {
        let bad_url = RedisPublisher::new(Channel::Cache, "http://:pw@nowhere/", "k", Duration::from_secs(60), Duration::from_secs(1));
        let e = bad_url.err().unwrap();
        assert!(!e.to_string().contains("pw@"), "{e}");
        assert!(RedisPublisher::new(Channel::Cache, "redis://h/", "", Duration::from_secs(60), Duration::from_secs(1)).is_err());
        assert!(RedisPublisher::new(Channel::Cache, "redis://h/", "k", Duration::from_millis(10), Duration::from_secs(1)).is_err());
    }
}
