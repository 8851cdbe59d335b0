//! `[api.oidc]`: OpenID Connect tokens for `sentinel serve`, besides the static tokens. An ID or
//! access token (a JWT) is verified against the issuer's keys (JWKS, from a URL or a file),
//! with `iss`, `aud`, `exp` and `nbf` checked and the signing algorithms pinned; the caller's
//! role comes from a claim of the token, mapped by the lists below.
//!
//! ```toml
//! [api.oidc]
//! issuer = "https://login.example.com/realms/ops"
//! audience = "capacity-sentinel"
//! jwks_url = "https://login.example.com/realms/ops/protocol/openid-connect/certs"  # or jwks_file
//! algorithms = ["RS256"]            # the default; never HS* (a shared secret) or none
//! roles_claim = "realm_access.roles" # a dotted path to a list of strings (or one string)
//! staff_roles = ["sentinel-staff"]  # set and clear pins
//! viewer_roles = ["sentinel-viewer"]
//! leeway = "60s"                    # clock skew allowed on exp and nbf
//! max_lifetime = "24h"              # a token may not expire further ahead than this
//! jwks_min_refresh = "60s"          # an unknown key id refetches the keys at most this often
//! jwks_max_age = "1h"               # the keys are fetched again after this long anyway
//! timeout = "5s"                    # fetching the keys
//! ```

use jsonwebtoken::Algorithm;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// The `[api.oidc]` table as written, unknown keys refused; `from_raw` checks it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOidc {
    /// `issuer`: the `iss` every token must carry.
    pub issuer: String,
    /// `audience`: the `aud` every token must carry (this API's client id).
    pub audience: String,
    /// `jwks_url`: where the issuer's keys are fetched (https, or http from this machine only);
    /// exactly one of it and `jwks_file`.
    pub jwks_url: Option<String>,
    /// `jwks_file`: a file holding the issuer's keys, relative to the config file's folder;
    /// exactly one of it and `jwks_url`.
    pub jwks_file: Option<PathBuf>,
    /// `algorithms`: the signing algorithm names accepted (absent: `["RS256"]`).
    pub algorithms: Option<Vec<String>>,
    /// `roles_claim`: the dotted path of the claim holding the caller's roles (absent: `roles`).
    pub roles_claim: Option<String>,
    /// `staff_roles`: the claim's values that make the caller staff (absent: none).
    #[serde(default)]
    pub staff_roles: Vec<String>,
    /// `viewer_roles`: the claim's values that make the caller a viewer (absent: none).
    #[serde(default)]
    pub viewer_roles: Vec<String>,
    /// `leeway`: the clock skew allowed on `exp` and `nbf` (absent: 60 s).
    #[serde(default, with = "humantime_serde::option")]
    pub leeway: Option<Duration>,
    /// `max_lifetime`: how far ahead a token's `exp` may lie (absent: 24 hours).
    #[serde(default, with = "humantime_serde::option")]
    pub max_lifetime: Option<Duration>,
    /// `jwks_min_refresh`: the shortest time between two fetches for an unknown key id (absent:
    /// 60 s).
    #[serde(default, with = "humantime_serde::option")]
    pub jwks_min_refresh: Option<Duration>,
    /// `jwks_max_age`: how old the keys may grow before they are fetched again (absent: 1 hour).
    #[serde(default, with = "humantime_serde::option")]
    pub jwks_max_age: Option<Duration>,
    /// `timeout`: the most one fetch of the keys may take (absent: 5 s).
    #[serde(default, with = "humantime_serde::option")]
    pub timeout: Option<Duration>,
}

/// Where the issuer's keys come from.
#[derive(Debug, Clone, PartialEq)]
pub enum JwksSource {
    /// `jwks_url`: fetched over https (plain http only from this machine).
    Url(reqwest::Url),
    /// `jwks_file`: read from this file (a relative `jwks_file` resolved against the config
    /// file's folder).
    File(PathBuf),
}

/// `[api.oidc]` as checked: how `sentinel serve` verifies an OpenID Connect token and which role
/// it gives the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct OidcConfig {
    /// `issuer`: the `iss` every token must carry.
    pub issuer: String,
    /// `audience`: the `aud` every token must carry (this API's client id).
    pub audience: String,
    /// `jwks_url` or `jwks_file`: where the issuer's keys come from.
    pub jwks: JwksSource,
    /// `algorithms`: the signing algorithms a token may use, public-key ones only (default
    /// `RS256`).
    pub algorithms: Vec<Algorithm>,
    /// The claim's path (`realm_access.roles` is `["realm_access", "roles"]`).
    pub roles_claim: Vec<String>,
    /// `staff_roles`: the claim's values that make the caller staff (set and clear pins); staff
    /// wins when a token holds both kinds.
    pub staff_roles: Vec<String>,
    /// `viewer_roles`: the claim's values that make the caller a viewer (read only).
    pub viewer_roles: Vec<String>,
    /// `leeway`: the clock skew allowed on `exp` and `nbf` (default 60 s; 0 to 5 minutes).
    pub leeway: Duration,
    /// How far ahead a token's `exp` may lie (a stolen long-lived token is refused).
    pub max_lifetime: Duration,
    /// `jwks_min_refresh`: a token naming an unknown key id refetches the keys at most this
    /// often (default 60 s; 100 ms to 1 hour).
    pub jwks_min_refresh: Duration,
    /// `jwks_max_age`: the keys are fetched again once they are this old (default 1 hour; 1 s to
    /// 24 hours).
    pub jwks_max_age: Duration,
    /// `timeout`: the most one fetch of the keys may take (default 5 s; 100 ms to 30 s).
    pub timeout: Duration,
}

/// The algorithms an issuer may sign with: public-key ones only.
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Checks the table; errors are `(key, message)`. A relative `jwks_file` is relative to `base`
/// (the config file's folder).
pub fn from_raw(raw: RawOidc, base: Option<&Path>) -> Result<OidcConfig, (String, String)> {
    let err = |key: &str, message: String| Err((format!("api.oidc.{key}"), message));
    if raw.issuer.trim().is_empty() {
        return err("issuer", "must not be blank: the `iss` every token must carry".into());
    }
    if raw.audience.trim().is_empty() {
        return err("audience", "must not be blank: the `aud` every token must carry (this API's client id)".into());
    }
    let jwks = match (raw.jwks_url, raw.jwks_file) {
        (Some(url), None) => {
            // Shown only masked: a key URL may carry credentials (`u:secret@`, `?token=`).
            let shown = sentinel_core::redact::redact(&url);
            let parsed =
                reqwest::Url::parse(&url).map_err(|e| ("api.oidc.jwks_url".to_string(), format!("`{shown}` does not parse: {e}")))?;
            // An IPv6 host comes bracketed (`[::1]`).
            let loopback = parsed
                .host_str()
                .map(|h| h.trim_start_matches('[').trim_end_matches(']'))
                .is_some_and(|h| h == "localhost" || h.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()));
            if parsed.scheme() != "https" && !(parsed.scheme() == "http" && loopback) {
                return err("jwks_url", format!("`{shown}`: the keys must come over https (plain http only from this machine)"));
            }
            JwksSource::Url(parsed)
        }
        (None, Some(file)) => JwksSource::File(match base {
            Some(base) if file.is_relative() => base.join(file),
            _ => file,
        }),
        (Some(_), Some(_)) => return err("jwks_url", "is set together with jwks_file: name one source of keys".into()),
        (None, None) => return err("jwks_url", "the issuer's keys are needed: set jwks_url (or jwks_file)".into()),
    };
    let names = raw.algorithms.unwrap_or_else(|| vec!["RS256".into()]);
    if names.is_empty() {
        return err("algorithms", "must name at least one algorithm (RS256 by default)".into());
    }
    let mut algorithms = Vec::new();
    for name in &names {
        match Algorithm::from_str(name) {
            Ok(a) if ASYMMETRIC.contains(&a) => algorithms.push(a),
            Ok(_) => {
                return err(
                    "algorithms",
                    format!("`{name}` is a shared-secret algorithm: only public-key ones (RS*, PS*, ES256, ES384, EdDSA)"),
                );
            }
            Err(_) => return err("algorithms", format!("`{name}` is not a JWT signing algorithm (RS256, ES256, EdDSA, ...)")),
        }
    }
    let claim = raw.roles_claim.unwrap_or_else(|| "roles".into());
    let roles_claim: Vec<String> = claim.split('.').map(str::to_string).collect();
    if roles_claim.iter().any(|p| p.trim().is_empty()) {
        return err("roles_claim", format!("`{claim}`: a dotted path of claim names (`roles`, `realm_access.roles`)"));
    }
    if raw.staff_roles.is_empty() && raw.viewer_roles.is_empty() {
        return err("staff_roles", "no role is mapped: name the claim's values for staff (and viewer_roles for readers)".into());
    }
    for (key, roles) in [("staff_roles", &raw.staff_roles), ("viewer_roles", &raw.viewer_roles)] {
        if roles.iter().any(|r| r.trim().is_empty()) {
            return err(key, "must not hold a blank role".into());
        }
    }
    let bounded = |key: &str, value: Option<Duration>, default: Duration, min: Duration, max: Duration| {
        super::bounds::duration_within(value.unwrap_or(default), min, max).map_err(|message| (format!("api.oidc.{key}"), message))
    };
    Ok(OidcConfig {
        issuer: raw.issuer,
        audience: raw.audience,
        jwks,
        algorithms,
        roles_claim,
        staff_roles: raw.staff_roles,
        viewer_roles: raw.viewer_roles,
        leeway: bounded("leeway", raw.leeway, Duration::from_secs(60), Duration::ZERO, Duration::from_secs(300))?,
        max_lifetime: bounded(
            "max_lifetime",
            raw.max_lifetime,
            Duration::from_secs(86_400),
            Duration::from_secs(60),
            Duration::from_secs(30 * 86_400),
        )?,
        jwks_min_refresh: bounded(
            "jwks_min_refresh",
            raw.jwks_min_refresh,
            Duration::from_secs(60),
            Duration::from_millis(100),
            Duration::from_secs(3600),
        )?,
        jwks_max_age: bounded(
            "jwks_max_age",
            raw.jwks_max_age,
            Duration::from_secs(3600),
            Duration::from_secs(1),
            Duration::from_secs(86_400),
        )?,
        timeout: bounded("timeout", raw.timeout, Duration::from_secs(5), Duration::from_millis(100), Duration::from_secs(30))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &str) -> Result<OidcConfig, (String, String)> {
        let text = format!("issuer = \"https://login.example.test\"\naudience = \"sentinel\"\nstaff_roles = [\"ops\"]\n{extra}");
        from_raw(toml::from_str(&text).map_err(|e| ("toml".to_string(), e.to_string()))?, Some(Path::new("/etc/sentinel")))
    }

    #[test]
    fn a_good_table_takes_the_defaults() {
        let c = parse("jwks_file = \"keys/jwks.json\"\n").unwrap();
        assert_eq!(c.jwks, JwksSource::File(PathBuf::from("/etc/sentinel/keys/jwks.json")), "relative to the config's folder");
        assert_eq!(c.algorithms, [Algorithm::RS256]);
        assert_eq!(c.roles_claim, ["roles"]);
        assert_eq!(c.leeway, Duration::from_secs(60));
        let c =
            parse("jwks_url = \"http://127.0.0.1:9/certs\"\nalgorithms = [\"ES256\", \"EdDSA\"]\nroles_claim = \"realm_access.roles\"\n")
                .unwrap();
        assert_eq!(c.algorithms, [Algorithm::ES256, Algorithm::EdDSA]);
        assert_eq!(c.roles_claim, ["realm_access", "roles"]);
    }

    #[test]
    fn a_bad_table_is_refused_naming_the_key() {
        let cases = [
            ("", "api.oidc.jwks_url", "the issuer's keys are needed"),
            ("jwks_url = \"https://a/\"\njwks_file = \"b\"\n", "api.oidc.jwks_url", "one source"),
            ("jwks_url = \"http://login.example.test/certs\"\n", "api.oidc.jwks_url", "https"),
            ("jwks_url = \"not a url\"\n", "api.oidc.jwks_url", "does not parse"),
            ("jwks_file = \"k\"\nalgorithms = [\"HS256\"]\n", "api.oidc.algorithms", "shared-secret"),
            ("jwks_file = \"k\"\nalgorithms = [\"none\"]\n", "api.oidc.algorithms", "not a JWT signing algorithm"),
            ("jwks_file = \"k\"\nalgorithms = []\n", "api.oidc.algorithms", "at least one"),
            ("jwks_file = \"k\"\nroles_claim = \"a..b\"\n", "api.oidc.roles_claim", "dotted path"),
            ("jwks_file = \"k\"\nleeway = \"10m\"\n", "api.oidc.leeway", "between"),
            ("jwks_file = \"k\"\nviewer_roles = [\" \"]\n", "api.oidc.viewer_roles", "blank"),
        ];
        for (extra, key, says) in cases {
            let (k, message) = parse(extra).unwrap_err();
            assert_eq!(k, key, "{extra}: {message}");
            assert!(message.contains(says), "{extra}: {message}");
        }
        let blank = from_raw(toml::from_str("issuer = \" \"\naudience = \"a\"\njwks_file = \"k\"\nstaff_roles = [\"x\"]").unwrap(), None);
        assert_eq!(blank.unwrap_err().0, "api.oidc.issuer");
        let no_roles = from_raw(toml::from_str("issuer = \"i\"\naudience = \"a\"\njwks_file = \"k\"").unwrap(), None);
        assert_eq!(no_roles.unwrap_err().0, "api.oidc.staff_roles");
        let unknown: Result<RawOidc, _> = toml::from_str("issuer = \"i\"\naudience = \"a\"\nclient_secret = \"s\"");
        assert!(unknown.unwrap_err().to_string().contains("unknown field"));
    }

    /// The second security review, findings 5 and 8: a key URL's credentials were echoed, and
    /// plain http from `[::1]` was refused as not from this machine.
    #[test]
    fn a_key_url_is_shown_masked_and_ipv6_loopback_counts_as_this_machine() {
        for url in [
            "http://u:SECRET@login.example.test/certs",
            "http://login.example.test/certs?token=SECRET",
            "https://u:SECRET@x:notaport/certs",
        ] {
            let (key, message) = parse(&format!("jwks_url = \"{url}\"\n")).unwrap_err();
            assert_eq!(key, "api.oidc.jwks_url");
            assert!(!message.contains("SECRET") && message.contains("***"), "{message}");
        }
        for url in ["http://[::1]:9/certs", "http://localhost:9/certs", "http://127.0.0.2:9/certs"] {
            assert!(parse(&format!("jwks_url = \"{url}\"\n")).is_ok(), "{url}");
        }
        assert!(parse("jwks_url = \"http://[::2]:9/certs\"\n").is_err(), "not loopback");
    }
}
