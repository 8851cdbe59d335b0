//! Bearer tokens: the presented token is hashed (SHA-256) and compared with every configured
//! hash in constant time, so neither the match nor its position shows in the timing; when
//! `[api.oidc]` is configured, a token that is a JWT is verified as an OpenID Connect token
//! (`super::oidc`). A missing, malformed, unknown, expired, foreign or forged token is one
//! answer (401); a known caller of the wrong role is 403. Tokens are never logged; the caller's
//! name (the static token's name, or the verified subject) is the actor of its audit records.

use super::ApiState;
use super::oidc::Refusal;
use super::problem::Problem;
use crate::config::api::{ApiRole, ApiToken};
use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

/// The configured tokens, by hash.
pub struct Tokens {
    tokens: Vec<ApiToken>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens").field("count", &self.tokens.len()).finish()
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The caller's name, the actor of its audit records: the static token's name, or
    /// `oidc:<subject>` (with ` <email>` when the token's `email_verified` is true or absent).
    pub name: String,
    /// What it may do: staff reads, sets and clears pins; viewer only reads.
    pub role: ApiRole,
}

impl Tokens {
    /// The tokens of `[api] tokens`, each known only by its SHA-256.
    pub fn new(tokens: &[ApiToken]) -> Tokens {
        Tokens { tokens: tokens.to_vec() }
    }

    /// Whether no static token is configured (without `[api.oidc]` too, every `/v1` call is
    /// refused).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The caller whose token this is. Every configured hash is compared, in constant time.
    pub fn authenticate(&self, token: &str) -> Option<Caller> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = u32::MAX;
        for (i, t) in self.tokens.iter().enumerate() {
            let matches = t.sha256.ct_eq(&digest);
            found = u32::conditional_select(&found, &(i as u32), matches);
        }
        let t = self.tokens.get(found as usize)?;
        Some(Caller { name: t.name.clone(), role: t.role })
    }
}

/// The token of a request's `Authorization: Bearer <token>` header.
fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The caller of a request: a static token, else a verified OpenID Connect token.
async fn caller(parts: &Parts, state: &ApiState) -> Result<Caller, Problem> {
    let unauthenticated = || {
        state.metrics.auth_failure(401);
        Problem::unauthenticated()
    };
    let token = bearer(parts).ok_or_else(unauthenticated)?;
    if let Some(caller) = state.tokens.authenticate(token) {
        return Ok(caller);
    }
    let Some(verifier) = state.oidc.as_ref().filter(|_| super::oidc::Verifier::looks_like_jwt(token)) else {
        return Err(unauthenticated());
    };
    match verifier.verify(token).await {
        Ok(identity) => Ok(Caller { name: identity.actor(), role: identity.role }),
        Err(Refusal::NoRole { subject }) => {
            state.metrics.auth_failure(403);
            tracing::info!(subject = %sentinel_core::user_text::escape(&subject), "refused: the token's roles map to neither staff nor viewer");
            Err(Problem::forbidden())
        }
        Err(Refusal::Invalid(why)) => {
            tracing::info!("refused an OpenID Connect token: {}", sentinel_core::user_text::escape(&why));
            Err(unauthenticated())
        }
    }
}

/// Any authenticated caller (staff or viewer): may read.
impl FromRequestParts<ApiState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Caller, Problem> {
        caller(parts, state).await
    }
}

/// A staff caller: may set and clear pins.
#[derive(Debug, Clone)]
pub struct Staff(pub Caller);

impl FromRequestParts<ApiState> for Staff {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Staff, Problem> {
        let caller = Caller::from_request_parts(parts, state).await?;
        Staff::check(state, caller).map_err(|_| Problem::forbidden())
    }
}

impl Staff {
    /// The caller if staff; otherwise the caller back (counted and logged; the answer is
    /// [`Problem::forbidden`]).
    pub fn check(state: &ApiState, caller: Caller) -> Result<Staff, Caller> {
        if caller.role != ApiRole::Staff {
            state.metrics.auth_failure(403);
            tracing::info!(caller = ?caller.name, role = caller.role.name(), "refused: the pin needs a staff token");
            return Err(caller);
        }
        Ok(Staff(caller))
    }
}

/// The SHA-256 of a token as `[api] tokens` takes it (64 lowercase hex digits).
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> Tokens {
        let t = |name: &str, role, token: &str| ApiToken { name: name.into(), role, sha256: Sha256::digest(token.as_bytes()).into() };
        Tokens::new(&[t("alice", ApiRole::Staff, "alice-secret"), t("dash", ApiRole::Viewer, "dash-secret")])
    }

    #[test]
    fn a_known_token_names_its_caller() {
        let t = tokens();
        assert_eq!(t.authenticate("alice-secret"), Some(Caller { name: "alice".into(), role: ApiRole::Staff }));
        assert_eq!(t.authenticate("dash-secret"), Some(Caller { name: "dash".into(), role: ApiRole::Viewer }));
        assert_eq!(t.authenticate("alice-secre"), None);
        assert_eq!(t.authenticate(""), None);
        assert_eq!(Tokens::new(&[]).authenticate("x"), None);
    }

    #[test]
    fn the_hash_is_what_the_config_takes() {
        assert_eq!(token_hash("hello"), "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    }
}
