//! The issuer's keys (a JWKS document), fetched from its URL or read from a file, cached, and
//! fetched again when they are older than `jwks_max_age` or a token names a key id the cache
//! does not hold (a key rotation), at most once per `jwks_min_refresh`: a stream of tokens with
//! made-up key ids cannot make the sentinel hammer the issuer. A failed fetch keeps the keys it
//! had. A caller whose key is held never waits for a fetch (an old set is fetched again in the
//! background): a hanging issuer delays only the tokens that name a key not yet held.

use crate::config::oidc::{JwksSource, OidcConfig};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use sentinel_core::error_chain::chain;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A JWKS larger than this is refused (an issuer's key set is a few KiB).
const MAX_BODY: usize = 1 << 20;

/// Why the issuer's keys could not be had.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum JwksError {
    /// `jwks_url` did not answer with a key set: no connection, a timeout, an HTTP status other
    /// than 2xx (redirects are not followed), or an answer over 1 MiB.
    #[error("cannot fetch the issuer's keys from {url}: {message}; check api.oidc.jwks_url and that the issuer answers")]
    Fetch {
        /// The URL, its secrets redacted.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// `jwks_file` could not be read.
    #[error("cannot read the issuer's keys from {path}: {message}; check api.oidc.jwks_file")]
    Read {
        /// The file's path.
        path: String,
        /// The error reading it.
        message: String,
    },
    /// What was fetched or read is not a JWKS document.
    #[error("the issuer's keys at {source_name} are not a JWKS document: {message}")]
    Malformed {
        /// Where it came from: the URL (secrets redacted) or the file's path.
        source_name: String,
        /// Why it does not parse as a JWKS document.
        message: String,
    },
}

/// The issuer's keys as last fetched, and when to fetch them again (see the module's doc).
pub struct KeySet {
    inner: Arc<Inner>,
}

struct Inner {
    source: JwksSource,
    client: reqwest::Client,
    min_refresh: Duration,
    max_age: Duration,
    /// Held only to read or replace the keys, never across a fetch.
    cached: sentinel_core::sync::Lock<Cached>,
    /// One fetch at a time; a caller whose key is known never waits for it.
    fetching: tokio::sync::Mutex<()>,
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
    /// The key set of `config`'s `jwks_url` or `jwks_file`, nothing fetched yet (the first token
    /// or `fetch_now` fetches it). Fails only when the HTTP client cannot be set up.
    pub fn new(config: &OidcConfig) -> Result<KeySet, String> {
        let client = sentinel_adapters::tls::http_client()?
            .connect_timeout(config.timeout)
            .timeout(config.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot set up the HTTP client for the issuer's keys: {}", chain(&e)))?;
        let inner = Inner {
            source: config.jwks.clone(),
            client,
            min_refresh: config.jwks_min_refresh,
            max_age: config.jwks_max_age,
            cached: sentinel_core::sync::Lock::new("OIDC key set", Cached::default()),
            fetching: tokio::sync::Mutex::new(()),
        };
        Ok(KeySet { inner: Arc::new(inner) })
    }

    /// The key `kid`. A known key is answered at once; when the set is older than `max_age`,
    /// it is fetched again in the background (its own timeout), the old keys serving meanwhile.
    /// An unknown key waits for a fetch (at most one per `min_refresh`). `Ok(None)`: no such key.
    pub async fn key(&self, kid: &str) -> Result<Option<Jwk>, JwksError> {
        let inner = &self.inner;
        let (known, old) = inner.look(kid);
        if let Some(jwk) = known {
            if old && inner.may_try() {
                let inner = inner.clone();
                tokio::spawn(async move {
                    if let Ok(_one) = inner.fetching.try_lock()
                        && inner.may_try()
                        && let Err(e) = inner.refresh().await
                    {
                        tracing::warn!("{e}; the keys fetched before are kept");
                    }
                });
            }
            return Ok(Some(jwk));
        }
        let _one = inner.fetching.lock().await;
        // A fetch that ran while this caller waited may have brought the key.
        if let (Some(jwk), _) = inner.look(kid) {
            return Ok(Some(jwk));
        }
        if inner.may_try() {
            match inner.refresh().await {
                Ok(()) => {}
                // With no keys at all the caller learns why; with old keys, they still serve.
                Err(e) if inner.lock().keys.is_empty() => return Err(e),
                Err(e) => tracing::warn!("{e}; the keys fetched before are kept"),
            }
        }
        Ok(inner.look(kid).0)
    }

    /// Fetches the set now, whatever is held (`sentinel check --connect`): how many keys it holds.
    pub async fn fetch_now(&self) -> Result<usize, JwksError> {
        let _one = self.inner.fetching.lock().await;
        self.inner.refresh().await?;
        Ok(self.inner.lock().keys.len())
    }

    /// How many times the keys were fetched (tests, logs).
    pub async fn fetches(&self) -> u64 {
        self.inner.lock().fetches
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        // The keys are replaced whole: a panic elsewhere cannot leave them half written.
        self.cached.lock()
    }

    /// The key `kid` if held, and whether the set is older than `max_age` (or never fetched).
    fn look(&self, kid: &str) -> (Option<Jwk>, bool) {
        let cached = self.lock();
        let old = cached.fetched.is_none_or(|at| at.elapsed() >= self.max_age);
        (cached.keys.iter().find(|k| k.common.key_id.as_deref() == Some(kid)).cloned(), old)
    }

    fn may_try(&self) -> bool {
        self.lock().tried.is_none_or(|at| at.elapsed() >= self.min_refresh)
    }

    /// Fetches the set (the caller holds `fetching`) and keeps it when it is good.
    async fn refresh(&self) -> Result<(), JwksError> {
        {
            let mut cached = self.lock();
            cached.tried = Some(Instant::now());
            cached.fetches += 1;
        }
        let set = self.fetch().await?;
        let mut cached = self.lock();
        cached.keys = set.keys;
        cached.fetched = Some(Instant::now());
        Ok(())
    }

    async fn fetch(&self) -> Result<JwkSet, JwksError> {
        let (name, bytes) = match &self.source {
            JwksSource::File(path) => {
                let name = path.display().to_string();
                let bytes = std::fs::read(path).map_err(|e| JwksError::Read { path: name.clone(), message: e.to_string() })?;
                (name, bytes)
            }
            JwksSource::Url(url) => {
                let name = sentinel_core::redact::redact(url.as_str());
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
