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
//! ```

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::Path;

/// The environment variable naming a TOML file with `tokens = [...]`; when set, its list is
/// used instead of `api.tokens`.
pub const TOKENS_FILE_VAR: &str = "SENTINEL_API_TOKENS_FILE";

/// The address `sentinel serve` listens on by default.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:8080";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApi {
    pub address: Option<SocketAddr>,
    #[serde(default)]
    pub tokens: Vec<RawToken>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToken {
    pub name: String,
    pub role: ApiRole,
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
    Staff,
    Viewer,
}

impl ApiRole {
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
    pub name: String,
    pub role: ApiRole,
    pub sha256: [u8; 32],
}

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiToken").field("name", &self.name).field("role", &self.role).finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApiConfig {
    pub address: SocketAddr,
    pub tokens: Vec<ApiToken>,
    /// Where the tokens came from (`api.tokens` or the tokens file), for messages.
    pub tokens_source: String,
}

/// Checks the table; errors are `(key, message)`. The tokens file, when the environment names
/// one, replaces `api.tokens`.
pub fn from_raw(raw: Option<RawApi>) -> Result<ApiConfig, (String, String)> {
    let raw = raw.unwrap_or_default();
    let address = raw.address.unwrap_or_else(|| DEFAULT_ADDRESS.parse().expect("a valid address"));
    let (tokens, source, prefix) = match std::env::var_os(TOKENS_FILE_VAR).filter(|v| !v.is_empty()) {
        Some(path) => {
            let source = format!("{TOKENS_FILE_VAR} ({})", Path::new(&path).display());
            (read_tokens_file(Path::new(&path))?, source.clone(), format!("{source}: "))
        }
        None => (raw.tokens, "api.tokens".to_string(), "api.".to_string()),
    };
    let tokens = check_tokens(tokens, &prefix)?;
    Ok(ApiConfig { address, tokens, tokens_source: source })
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
        if let Some(j) = tokens.iter().position(|o| o.name == name) {
            return Err((key("name"), format!("`{name}` is already the name of tokens[{j}]")));
        }
        // The value is never echoed: it may be a token pasted by mistake.
        let sha256 = parse_hash(&t.sha256).ok_or_else(|| {
            (key("sha256"), "must be 64 hex digits, the SHA-256 of the token (printf %s TOKEN | sha256sum)".to_string())
        })?;
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
    fn the_table_in_a_config_file() {
        let parse = |text: &str| crate::config::Config::parse(text, Path::new("conf/sentinel.toml"));
        let c = parse("").unwrap();
        assert_eq!(c.api.address.to_string(), DEFAULT_ADDRESS);
        assert!(c.api.tokens.is_empty());
        let c = parse(&format!(
            "[api]\naddress = \"0.0.0.0:9000\"\ntokens = [{{ name = \"alice\", role = \"staff\", sha256 = \"{HASH}\" }}]\n"
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
    fn debug_output_leaves_the_hash_out() {
        let t = ApiToken { name: "alice".into(), role: ApiRole::Staff, sha256: [7; 32] };
        assert!(!format!("{t:?}").contains("7, 7"));
    }
}
