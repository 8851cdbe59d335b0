//! OpenID Connect tokens (docs/behaviour.md §6.1): a bearer token that is a JWT is verified
//! against the issuer's keys with the configured issuer, audience and algorithms; `exp` and
//! `nbf` are checked with the leeway. The caller is the verified subject (with the email, when
//! the token carries one), never text the client sent; the role comes from the roles claim.
//! Every way a token can be bad is one refusal, whose reason is only logged.

pub mod jwks;

use crate::config::api::ApiRole;
use crate::config::oidc::OidcConfig;
use jsonwebtoken::{DecodingKey, Validation, decode, decode_header};
use serde_json::Value;

/// A verified caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The token's subject (`sub`), trimmed.
    pub subject: String,
    /// The token's `email`, when its `email_verified` is true (or `"true"`) or absent and it holds
    /// no control character; otherwise none.
    pub email: Option<String>,
    /// The role the token's roles claim maps to: staff before viewer.
    pub role: ApiRole,
}

impl Identity {
    /// The actor of the caller's audit records: `oidc:SUBJECT`, with ` <EMAIL>` when known.
    pub fn actor(&self) -> String {
        match &self.email {
            Some(email) => format!("oidc:{} <{email}>", self.subject),
            None => format!("oidc:{}", self.subject),
        }
    }
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not a valid token of this issuer for this API (401; the reason is logged only).
    Invalid(String),
    /// A valid token whose roles map to neither staff nor viewer (403).
    NoRole {
        /// The token's verified subject (`sub`), for the log.
        subject: String,
    },
}

/// Verifies OpenID Connect tokens as `[api.oidc]` configures: issuer, audience, algorithms,
/// lifetime, roles, and the issuer's keys.
pub struct Verifier {
    config: OidcConfig,
    /// The issuer's keys, cached and fetched again as they age or rotate.
    pub keys: jwks::KeySet,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier").field("issuer", &self.config.issuer).field("audience", &self.config.audience).finish_non_exhaustive()
    }
}

impl Verifier {
    /// A verifier for `config`; no key is fetched yet. Fails only when the HTTP client for the
    /// issuer's keys cannot be set up.
    pub fn new(config: OidcConfig) -> Result<Verifier, String> {
        let keys = jwks::KeySet::new(&config)?;
        Ok(Verifier { config, keys })
    }

    /// Whether a bearer token is shaped like a JWT (three base64url parts).
    pub fn looks_like_jwt(token: &str) -> bool {
        token.split('.').count() == 3 && token.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    }

    /// The verified caller of `token`: its key, algorithm, signature, issuer, audience, `exp`
    /// and `nbf` (with the leeway), lifetime and subject checked, its role from the roles
    /// claim. `Refusal::NoRole` for a valid token of neither role; `Refusal::Invalid`
    /// otherwise, with the reason for the log.
    pub async fn verify(&self, token: &str) -> Result<Identity, Refusal> {
        let invalid = |why: String| Refusal::Invalid(why);
        let header = decode_header(token).map_err(|e| invalid(format!("the header does not decode: {e}")))?;
        if !self.config.algorithms.contains(&header.alg) {
            return Err(invalid(format!("algorithm {:?} is not one of api.oidc.algorithms", header.alg)));
        }
        let kid = header.kid.ok_or_else(|| invalid("the header names no key (kid)".into()))?;
        let jwk = match self.keys.key(&kid).await {
            Ok(Some(jwk)) => jwk,
            Ok(None) => return Err(invalid(format!("the issuer has no key `{kid}`"))),
            Err(e) => return Err(invalid(e.to_string())),
        };
        if let Some(alg) = jwk.common.key_algorithm
            && alg.to_string() != format!("{:?}", header.alg)
        {
            return Err(invalid(format!("key `{kid}` is for {alg}, the token says {:?}", header.alg)));
        }
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| invalid(format!("key `{kid}` is unusable: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway.as_secs();
        let claims = decode::<Value>(token, &key, &validation).map_err(|e| invalid(format!("{e}")))?.claims;
        // The clock jsonwebtoken checks `exp` against.
        let ahead = claims["exp"].as_i64().unwrap_or(i64::MAX).saturating_sub(jsonwebtoken::get_current_timestamp() as i64);
        if ahead > self.config.max_lifetime.as_secs() as i64 + self.config.leeway.as_secs() as i64 {
            return Err(invalid(format!(
                "the token expires {ahead} s from now, more than api.oidc.max_lifetime ({} s) allows",
                self.config.max_lifetime.as_secs()
            )));
        }
        let subject = claims["sub"].as_str().map(str::trim).filter(|s| !s.is_empty() && !s.chars().any(char::is_control));
        let subject = subject.ok_or_else(|| invalid("the subject (sub) is blank or not text".into()))?.to_string();
        let email = claims["email"]
            .as_str()
            .filter(|e| email_verified(&claims["email_verified"]) && !e.chars().any(char::is_control))
            .map(str::to_string);
        let roles = roles_at(&claims, &self.config.roles_claim);
        let has = |wanted: &[String]| roles.iter().any(|r| wanted.contains(r));
        let role = if has(&self.config.staff_roles) {
            ApiRole::Staff
        } else if has(&self.config.viewer_roles) {
            ApiRole::Viewer
        } else {
            return Err(Refusal::NoRole { subject });
        };
        Ok(Identity { subject, email, role })
    }
}

/// Whether `email_verified` lets the email stand: `true` (or `"true"`, as some issuers send it),
/// or no such claim; `false`, `"false"` or anything else does not.
fn email_verified(claim: &Value) -> bool {
    matches!(claim, Value::Null | Value::Bool(true)) || claim.as_str() == Some("true")
}

/// The roles at a dotted claim path: a list of strings, or one string of space-separated roles.
fn roles_at(claims: &Value, path: &[String]) -> Vec<String> {
    let value = path.iter().fold(claims, |v, key| &v[key.as_str()]);
    match value {
        Value::Array(items) => items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect(),
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}
