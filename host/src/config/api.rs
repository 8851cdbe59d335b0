//! The `[api]` table of `sentinel serve`: where it listens and who may call it. Tokens are
//! configured only as SHA-256 hashes (a token's plain value never appears in a config or a
//! log); `SENTINEL_API_TOKENS_FILE` may name a TOML file holding the token list instead, for
//! deployments that deliver secrets as files.
//!
//! ```toml
//! [api]
//! address = "127.0.0.1:8080"
//! tokens = [
//!   { name = "alice", role = "staff", sha256 = "<64 hex digits: printf %s TOKEN | sha256sum>" },
//!   { name = "dashboards", role = "viewer", sha256 = "..." },
//! ]
//! header_read_timeout = "10s"   # a request's whole header, from accept or from the last response
//! request_body_timeout = "10s"  # a request's whole body, from the end of its header
//! idle_timeout = "5s"           # a kept-alive connection waiting for its next request
//! max_connections = 256         # beyond it, new connections wait in the listen backlog
//! ```
//!
//! The limits keep slow and idle clients from holding the server (slowloris): see
//! [`ApiLimits`] and `crate::api::server`.

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// The environment variable naming a TOML file with `tokens = [...]`; when set, its list is
/// used instead of `api.tokens`.
pub const TOKENS_FILE_VAR: &str = "SENTINEL_API_TOKENS_FILE";

/// The address `sentinel serve` listens on by default.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8080";

/// The `[api]` table as written, unknown keys refused; `from_raw` checks it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApi {
    /// `address`: where `sentinel serve` listens (absent: `127.0.0.1:8080`).
    pub address: Option<SocketAddr>,
    /// `tokens`: the static callers (absent: none); a tokens file named by
    /// `SENTINEL_API_TOKENS_FILE` replaces them.
    #[serde(default)]
    pub tokens: Vec<RawToken>,
    /// `header_read_timeout`: the most a request's whole header may take (absent: 10 s; 100 ms
    /// to 5 minutes).
    #[serde(default, with = "humantime_serde::option")]
    pub header_read_timeout: Option<Duration>,
    /// `request_body_timeout`: the most a request's whole body may take after its header
    /// (absent: 10 s; 100 ms to 5 minutes).
    #[serde(default, with = "humantime_serde::option")]
    pub request_body_timeout: Option<Duration>,
    /// `idle_timeout`: how long a kept-alive connection may wait for its next request (absent:
    /// 5 s, or `header_read_timeout` if that is shorter).
    #[serde(default, with = "humantime_serde::option")]
    pub idle_timeout: Option<Duration>,
    /// `max_connections`: connections open at once (absent: 256; 1 to 65536).
    pub max_connections: Option<u32>,
    /// OpenID Connect tokens besides the static ones.
    pub oidc: Option<super::oidc::RawOidc>,
}

/// One entry of `api.tokens` (or of the tokens file) as written, unknown keys refused (a
/// plain `token` among them).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToken {
    /// `name`: the caller, the actor of its audit records; not blank, unique.
    pub name: String,
    /// `role`: `staff` or `viewer`.
    pub role: ApiRole,
    /// `sha256`: the SHA-256 of the token as 64 hex digits (`printf %s TOKEN | sha256sum`).
    pub sha256: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTokensFile {
    tokens: Vec<RawToken>,
}

/// What a token may do: `staff` sets and clears pins; `viewer` (and staff) read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiRole {
    /// `staff`: reads, and sets and clears pins.
    Staff,
    /// `viewer`: reads only.
    Viewer,
}

impl ApiRole {
    /// The role as the configuration spells it (`staff`, `viewer`), for logs.
    pub fn name(self) -> &'static str {
        match self {
            ApiRole::Staff => "staff",
            ApiRole::Viewer => "viewer",
        }
    }
}

/// One caller: its name (the actor of its audit records), role, and the SHA-256 of its token.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiToken {
    /// The caller's name, unique among the tokens: the actor of its pins and audit records.
    pub name: String,
    /// What the caller may do.
    pub role: ApiRole,
    /// The SHA-256 digest of the caller's token (the token itself is never configured).
    pub sha256: [u8; 32],
}

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiToken").field("name", &self.name).field("role", &self.role).finish_non_exhaustive()
    }
}

/// The `[api]` table as checked: where `sentinel serve` listens, who may call it, and the limits
/// on slow and idle clients.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiConfig {
    /// `api.address`: the address and port `sentinel serve` listens on (default `127.0.0.1:8080`;
    /// `--addr` overrides it).
    pub address: SocketAddr,
    /// The static callers, from `api.tokens` or the tokens file (empty: only OpenID Connect
    /// tokens are accepted, and without `[api.oidc]` every `/v1` call is refused).
    pub tokens: Vec<ApiToken>,
    /// Where the tokens came from (`api.tokens` or the tokens file), for messages.
    pub tokens_source: String,
    /// The connection limits: header, body and idle timeouts, and `api.max_connections`.
    pub limits: ApiLimits,
    /// `[api.oidc]`: verified OpenID Connect tokens, when configured.
    pub oidc: Option<super::oidc::OidcConfig>,
}

/// How long a client may take and how many connections it may hold: what keeps slow and idle
/// clients (slowloris) from starving the probes and the staff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiLimits {
    /// `api.header_read_timeout`: the whole request header must arrive within it, counted from
    /// the accept, and on a kept-alive connection from the end of the previous response (the
    /// locked hyper 1.12 restarts its header timer as soon as a connection goes idle).
    pub header_read_timeout: Duration,
    /// `api.request_body_timeout`: the whole body must arrive within it, counted from the end
    /// of the header (a deadline, not a gap between bytes: trickling does not extend it).
    pub request_body_timeout: Duration,
    /// `api.idle_timeout`: how long a kept-alive connection may wait for its next request
    /// after a response; at most `header_read_timeout`, which bounds that wait too.
    pub idle_timeout: Duration,
    /// `api.max_connections`: connections open at once; beyond it new connections wait in
    /// the kernel's listen backlog, unaccepted, until one closes.
    pub max_connections: u32,
}

impl Default for ApiLimits {
    fn default() -> ApiLimits {
        ApiLimits {
            header_read_timeout: Duration::from_secs(10),
            request_body_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(5),
            max_connections: 256,
        }
    }
}

/// The bounds of the limits (inclusive): below them a legitimate client on a slow link fails,
/// above them a slow one is held long enough to matter.
const TIMEOUT_RANGE: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(300));
const MAX_CONNECTIONS_RANGE: (u32, u32) = (1, 65_536);

/// Checks the table; errors are `(key, message)`. The tokens file, when the environment names
/// one, replaces `api.tokens`.
pub fn from_raw(raw: Option<RawApi>, base: Option<&Path>) -> Result<ApiConfig, (String, String)> {
    let mut raw = raw.unwrap_or_default();
    let oidc = raw.oidc.take().map(|o| super::oidc::from_raw(o, base)).transpose()?;
    let limits = check_limits(&raw)?;
    let address = raw.address.unwrap_or_else(|| DEFAULT_ADDRESS.parse().expect("a valid address"));
    let (tokens, source, prefix) = match std::env::var_os(TOKENS_FILE_VAR).filter(|v| !v.is_empty()) {
        Some(path) => {
            let source = format!("{TOKENS_FILE_VAR} ({})", Path::new(&path).display());
            (read_tokens_file(Path::new(&path))?, source.clone(), format!("{source}: "))
        }
        None => (raw.tokens, "api.tokens".to_string(), "api.".to_string()),
    };
    let tokens = check_tokens(tokens, &prefix)?;
    Ok(ApiConfig { address, tokens, tokens_source: source, limits, oidc })
}

/// The connection limits, each range-checked naming its key; unset ones take the defaults
/// (the idle timeout at most the header-read timeout).
fn check_limits(raw: &RawApi) -> Result<ApiLimits, (String, String)> {
    let defaults = ApiLimits::default();
    let timeout = |key: &str, value: Option<Duration>, default: Duration| {
        let (min, max) = TIMEOUT_RANGE;
        super::bounds::duration_within(value.unwrap_or(default), min, max).map_err(|message| (format!("api.{key}"), message))
    };
    let header_read_timeout = timeout("header_read_timeout", raw.header_read_timeout, defaults.header_read_timeout)?;
    let request_body_timeout = timeout("request_body_timeout", raw.request_body_timeout, defaults.request_body_timeout)?;
    let idle_timeout = timeout("idle_timeout", raw.idle_timeout, defaults.idle_timeout.min(header_read_timeout))?;
    if idle_timeout > header_read_timeout {
        return Err((
            "api.idle_timeout".into(),
            format!(
                "must be at most api.header_read_timeout ({}): the server closes a kept-alive connection that has \
                 not sent its next request header within the header-read timeout anyway; raise \
                 header_read_timeout too for longer idle connections",
                sentinel_core::shown_duration::duration(header_read_timeout)
            ),
        ));
    }
    let max_connections = raw.max_connections.unwrap_or(defaults.max_connections);
    let (min, max) = MAX_CONNECTIONS_RANGE;
    if !(min..=max).contains(&max_connections) {
        return Err((
            "api.max_connections".into(),
            format!("must be between {min} and {max} (and below the open-file limit of the process)"),
        ));
    }
    Ok(ApiLimits { header_read_timeout, request_body_timeout, idle_timeout, max_connections })
}

fn read_tokens_file(path: &Path) -> Result<Vec<RawToken>, (String, String)> {
    let key = format!("{TOKENS_FILE_VAR} ({})", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| (key.clone(), format!("cannot read it: {e}")))?;
    let file: RawTokensFile = toml::from_str(&text).map_err(|e| (key, e.message().to_string()))?;
    Ok(file.tokens)
}

/// `prefix` starts each key (`api.` or the tokens file).
fn check_tokens(raw: Vec<RawToken>, prefix: &str) -> Result<Vec<ApiToken>, (String, String)> {
    let mut tokens: Vec<ApiToken> = Vec::with_capacity(raw.len());
    for (i, t) in raw.into_iter().enumerate() {
        let key = |field: &str| format!("{prefix}tokens[{i}].{field}");
        let name = t.name.trim().to_string();
        if name.is_empty() {
            return Err((key("name"), "must not be blank".into()));
        }
        // The name is the actor of the caller's pins: logged and stored like a typed actor.
        sentinel_core::user_text::check(&t.name).map_err(|message| (key("name"), message))?;
        if let Some(j) = tokens.iter().position(|o| o.name == name) {
            return Err((key("name"), format!("`{name}` is already the name of tokens[{j}]")));
        }
        // The value is never echoed: it may be a token pasted by mistake.
        let sha256 = parse_hash(&t.sha256)
            .ok_or_else(|| (key("sha256"), "must be 64 hex digits, the SHA-256 of the token (printf %s TOKEN | sha256sum)".to_string()))?;
        if let Some(j) = tokens.iter().position(|o| o.sha256 == sha256) {
            return Err((key("sha256"), format!("is the same token as tokens[{j}]; give each caller its own token")));
        }
        tokens.push(ApiToken { name, role: t.role, sha256 });
    }
    Ok(tokens)
}

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str, role: ApiRole, sha256: &str) -> RawToken {
        RawToken { name: name.into(), role, sha256: sha256.into() }
    }

    const HASH: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    #[test]
    fn tokens_are_checked_naming_the_key() {
        let ok = check_tokens(vec![token("alice", ApiRole::Staff, HASH)], "api.").unwrap();
        assert_eq!(ok[0].name, "alice");
        assert_eq!(hex::encode(ok[0].sha256), HASH);
        let (key, message) = check_tokens(vec![token("bob", ApiRole::Viewer, "hunter2")], "api.").unwrap_err();
        assert_eq!(key, "api.tokens[0].sha256");
        assert!(!message.contains("hunter2"), "{message}");
        let (key, _) = check_tokens(vec![token(" ", ApiRole::Viewer, HASH)], "api.").unwrap_err();
        assert_eq!(key, "api.tokens[0].name");
        let dup = vec![token("a", ApiRole::Staff, HASH), token("a", ApiRole::Viewer, &HASH.replace('2', "3"))];
        assert_eq!(check_tokens(dup, "api.").unwrap_err().0, "api.tokens[1].name");
        let same = vec![token("a", ApiRole::Staff, HASH), token("b", ApiRole::Viewer, &HASH.to_uppercase())];
        assert_eq!(check_tokens(same, "api.").unwrap_err().0, "api.tokens[1].sha256");
    }

    #[test]
    fn a_token_name_with_a_control_or_bidi_character_is_refused_naming_the_key() {
        for name in ["alice\n2026-01-01T00:00:00Z  INFO fake line", "ecila\u{202E}", "tab\tbed", "alice\r"] {
            let (key, message) = check_tokens(vec![token(name, ApiRole::Staff, HASH)], "api.").unwrap_err();
            assert_eq!(key, "api.tokens[0].name", "{name:?}");
            assert!(message.starts_with("must not contain control characters"), "{name:?}: {message}");
        }
        let file = "SENTINEL_API_TOKENS_FILE (t.toml): ";
        let (key, _) =
            check_tokens(vec![token("a", ApiRole::Viewer, HASH), token("b\u{2066}", ApiRole::Staff, &HASH.replace('2', "3"))], file)
                .unwrap_err();
        assert_eq!(key, format!("{file}tokens[1].name"));
        let parse = |text: &str| crate::config::Config::parse(text, Path::new("conf/sentinel.toml"));
        let err = parse(&format!("[api]\ntokens = [{{ name = \"al\\nice\", role = \"staff\", sha256 = \"{HASH}\" }}]\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("api.tokens[0].name: must not contain control characters"), "{err}");
    }

    #[test]
    fn the_table_in_a_config_file() {
        let parse = |text: &str| crate::config::Config::parse(text, Path::new("conf/sentinel.toml"));
        let c = parse("").unwrap();
        assert_eq!(c.api.address.to_string(), DEFAULT_ADDRESS);
        assert!(c.api.tokens.is_empty());
        // An address beyond loopback is a deployment: it runs signed policies only.
        let c = parse(&format!(
            "[api]\naddress = \"0.0.0.0:9000\"\ntokens = [{{ name = \"alice\", role = \"staff\", sha256 = \"{HASH}\" }}]\n\
             [policies]\ndir = \"p\"\npublic_key = \"k.pub\"\n"
        ))
        .unwrap();
        assert_eq!(c.api.address.to_string(), "0.0.0.0:9000");
        assert_eq!((c.api.tokens[0].name.as_str(), c.api.tokens[0].role), ("alice", ApiRole::Staff));
        let err = parse("[api]\nadress = \"127.0.0.1:1\"\n").unwrap_err().to_string();
        assert!(err.contains("adress"), "{err}");
        let err = parse("[api]\ntokens = [{ name = \"a\", role = \"root\", sha256 = \"00\" }]\n").unwrap_err().to_string();
        assert!(err.contains("root"), "{err}");
        let err = parse("[api]\ntokens = [{ name = \"a\", role = \"staff\", sha256 = \"00\", token = \"x\" }]\n").unwrap_err().to_string();
        assert!(err.contains("token"), "{err}");
        let err = parse("[api]\ntokens = [{ name = \"a\", role = \"staff\", sha256 = \"00\" }]\n").unwrap_err().to_string();
        assert!(err.contains("api.tokens[0].sha256: must be 64 hex digits"), "{err}");
    }

    #[test]
    fn connection_limits_have_defaults_and_are_range_checked_naming_the_key() {
        let parse = |text: &str| crate::config::Config::parse(text, Path::new("conf/sentinel.toml"));
        assert_eq!(parse("").unwrap().api.limits, ApiLimits::default());
        let c =
            parse("[api]\nheader_read_timeout = \"2s\"\nrequest_body_timeout = \"1500ms\"\nidle_timeout = \"1s\"\nmax_connections = 8\n")
                .unwrap();
        let expected = ApiLimits {
            header_read_timeout: Duration::from_secs(2),
            request_body_timeout: Duration::from_millis(1500),
            idle_timeout: Duration::from_secs(1),
            max_connections: 8,
        };
        assert_eq!(c.api.limits, expected);
        // An unset idle timeout follows a shorter header-read timeout.
        assert_eq!(parse("[api]\nheader_read_timeout = \"1s\"\n").unwrap().api.limits.idle_timeout, Duration::from_secs(1));
        for (table, expected) in [
            ("header_read_timeout = \"50ms\"", "api.header_read_timeout: must be between 100ms and 5m"),
            ("request_body_timeout = \"1h\"", "api.request_body_timeout: must be between 100ms and 5m"),
            ("idle_timeout = \"0s\"", "api.idle_timeout: must be between 100ms and 5m"),
            ("idle_timeout = \"60s\"", "api.idle_timeout: must be at most api.header_read_timeout (10s)"),
            ("max_connections = 0", "api.max_connections: must be between 1 and 65536"),
        ] {
            let err = parse(&format!("[api]\n{table}\n")).unwrap_err().to_string();
            assert!(err.contains(expected), "{table}: {err}");
        }
        let err = parse("[api]\nheader_read_timeout = \"ten seconds\"\n").unwrap_err().to_string();
        assert!(err.contains("api.header_read_timeout"), "{err}");
        let err = parse("[api]\nmax_connections = -1\n").unwrap_err().to_string();
        assert!(err.contains("api.max_connections"), "{err}");
    }

    #[test]
    fn debug_output_leaves_the_hash_out() {
        let t = ApiToken { name: "alice".into(), role: ApiRole::Staff, sha256: [7; 32] };
        assert!(!format!("{t:?}").contains("7, 7"));
    }
}
