//! A Redis channel's URL and key (`publish.<channel>.url`, `.key`): checked when the
//! configuration is read, by the same function the Redis publisher opens its client with, so
//! they are judged by one set of rules. Messages never show the password.

use sentinel_core::redact::{redact, scrub};

/// Why a Redis channel is refused: the field (`url` or `key`) and what to write there.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisChannelError {
    /// The field refused, under `publish.<channel>.`: `url` or `key`.
    pub field: &'static str,
    /// What is wrong with it and what to write instead; the URL is shown without its password.
    pub message: String,
}

/// The client for `url` (`redis://[user[:password]@]host[:port][/db]`, never connected here),
/// once `key` is known not to be empty.
pub fn client(url: &str, key: &str) -> Result<redis::Client, RedisChannelError> {
    let client = redis::Client::open(url).map_err(|e| RedisChannelError {
        field: "url",
        message: format!(
            "the URL {} does not parse: {} (expected redis://[user[:password]@]host[:port][/db])",
            redact(url),
            scrub(&e.to_string(), url)
        ),
    })?;
    if key.trim().is_empty() {
        return Err(RedisChannelError {
            field: "key",
            message: "the key is empty; name the Redis key the document is set under (default capacity:state)".into(),
        });
    }
    Ok(client)
}
