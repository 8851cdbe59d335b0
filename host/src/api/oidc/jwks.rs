//! The issuer's keys (a JWKS document), fetched from its URL or read from a file, cached, and
//! fetched again when they are older than `jwks_max_age` or a token names a key id the cache
//! does not hold (a key rotation), at most once per `jwks_min_refresh`: a stream of tokens with
//! made-up key ids cannot make the sentinel hammer the issuer. A failed fetch keeps the keys it
//! had.

use crate::config::oidc::{JwksSource, OidcConfig};
use crate::error_chain::chain;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use std::time::{Duration, Instant};

/// A JWKS larger than this is refused (an issuer's key set is a few KiB).
const MAX_BODY: usize = 1 << 20;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum JwksError {
    #[error("cannot fetch the issuer's keys from {url}: {message}; check api.oidc.jwks_url and that the issuer answers")]
    Fetch { url: String, message: String },
    #[error("cannot read the issuer's keys from {path}: {message}; check api.oidc.jwks_file")]
    Read { path: String, message: String },
    #[error("the issuer's keys at {source_name} are not a JWKS document: {message}")]
    Malformed { source_name: String, message: String },
}

pub struct KeySet {
    source: JwksSource,
    client: reqwest::Client,
    min_refresh: Duration,
    max_age: Duration,
    cached: tokio::sync::Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    keys: Vec<Jwk>,
    /// When the keys were last fetched successfully.
    fetched: Option<Instant>,
    /// When a fetch was last tried, successful or not.
    tried: Option<Instant>,
    fetches: u64,
}

impl KeySet {
    pub fn new(config: &OidcConfig) -> Result<KeySet, String> {
        let client = crate::adapters::tls::http_client()?
            .connect_timeout(config.timeout)
            .timeout(config.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot set up the HTTP client for the issuer's keys: {}", chain(&e)))?;
        Ok(KeySet {
            source: config.jwks.clone(),
            client,
            min_refresh: config.jwks_min_refresh,
            max_age: config.jwks_max_age,
            cached: tokio::sync::Mutex::new(Cached::default()),
        })
    }

    /// The key `kid`, fetching the set first when it is old or does not hold it (within the
    /// refresh limit). `Ok(None)`: no such key.
    pub async fn key(&self, kid: &str) -> Result<Option<Jwk>, JwksError> {
        let mut cached = self.cached.lock().await;
        let old = cached.fetched.is_none_or(|at| at.elapsed() >= self.max_age);
        let unknown = !cached.keys.iter().any(|k| k.common.key_id.as_deref() == Some(kid));
        let may_try = cached.tried.is_none_or(|at| at.elapsed() >= self.min_refresh);
        if (old || unknown) && may_try {
            cached.tried = Some(Instant::now());
            cached.fetches += 1;
            match self.fetch().await {
                Ok(set) => {
                    cached.keys = set.keys;
                    cached.fetched = Some(Instant::now());
                }
                // With no keys at all the caller learns why; with old keys, they still serve.
                Err(e) if cached.keys.is_empty() => return Err(e),
                Err(e) => tracing::warn!("{e}; the keys fetched before are kept"),
            }
        }
        Ok(cached.keys.iter().find(|k| k.common.key_id.as_deref() == Some(kid)).cloned())
    }

    /// How many times the keys were fetched (tests, logs).
    pub async fn fetches(&self) -> u64 {
        self.cached.lock().await.fetches
    }

    async fn fetch(&self) -> Result<JwkSet, JwksError> {
        let (name, bytes) = match &self.source {
            JwksSource::File(path) => {
                let name = path.display().to_string();
                let bytes = std::fs::read(path).map_err(|e| JwksError::Read { path: name.clone(), message: e.to_string() })?;
                (name, bytes)
            }
            JwksSource::Url(url) => {
                let name = url.to_string();
                let failed = |message: String| JwksError::Fetch { url: name.clone(), message };
                let mut response = self.client.get(url.clone()).send().await.map_err(|e| failed(chain(&e.without_url())))?;
                if !response.status().is_success() {
                    return Err(failed(format!("HTTP {}", response.status())));
                }
                let mut body = Vec::new();
                while let Some(chunk) = response.chunk().await.map_err(|e| failed(chain(&e.without_url())))? {
                    if body.len() + chunk.len() > MAX_BODY {
                        return Err(failed(format!("the answer is larger than {} KiB", MAX_BODY >> 10)));
                    }
                    body.extend_from_slice(&chunk);
                }
                (name, body)
            }
        };
        serde_json::from_slice(&bytes).map_err(|e| JwksError::Malformed { source_name: name, message: e.to_string() })
    }
}
