//! The config loader (`Config::parse`, which `Config::load` uses for a file) on any text: the
//! same answer twice; an accepted config has every duration and size within its documented
//! bounds; a refused one names the file and either its key (`store.timeout: must be ...`,
//! `tick_dedline: TOML parse error ...`) or, where TOML cannot name one (a syntax error), the
//! line and column (`TOML parse error at line 3, column 1`).

use super::Findings;
use sentinel::config::{ChannelConfig, Config, ConfigError, StoreConfig};
use std::path::Path;
use std::time::Duration;

const PATH: &str = "fuzz/sentinel.toml";
/// The top-level keys of the file (`host/config/sentinel.example.toml`).
const KEYS: [&str; 10] =
    ["policy", "tick_deadline", "throttles_enabled", "policy_limits", "store", "metrics", "publish", "stages", "api", "policies"];

pub fn violations(text: &str) -> Vec<String> {
    let mut f = Findings::default();
    let first = Config::parse(text, Path::new(PATH));
    let again = Config::parse(text, Path::new(PATH));
    let same = match (&first, &again) {
        (Ok(a), Ok(b)) => a == b,
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    };
    f.ensure(same, || "two parses of the same text differ".into());
    match first {
        Ok(c) => accepted(&mut f, &c),
        Err(ConfigError::Invalid { path, message }) => {
            f.ensure(path == PATH, || format!("the error names {path:?}, not {PATH:?}"));
            let key = message.split_once(": ").map(|(k, _)| k).filter(|k| is_key(k, text));
            let located = (message.contains("TOML parse error at line ") && message.contains(", column ")) || message.contains("(line ");
            f.ensure(key.is_some() || located, || format!("the error names neither a key nor a line: {message:?}"));
        }
        Err(e) => f.ensure(false, || format!("parsing text gave a read error: {e}")),
    }
    f.into_vec()
}

/// A dotted key whose first part is a top-level key of the file or a key the text holds
/// (`publish.cache.expiry`, `api.tokens[0].sha256`, an unknown `tick_dedline`).
fn is_key(k: &str, text: &str) -> bool {
    let top = k.split(['.', '[']).next().unwrap_or_default();
    !top.is_empty() && !k.contains(char::is_whitespace) && (KEYS.contains(&top) || text.contains(top))
}

fn accepted(f: &mut Findings, c: &Config) {
    let within = |d: Duration, lo: Duration, hi: Duration| lo <= d && d <= hi;
    let s = Duration::from_secs;
    let ms = Duration::from_millis;
    f.ensure(c.source == PATH, || format!("source {:?}", c.source));
    f.ensure(within(c.tick_deadline, s(1), s(50)), || format!("tick_deadline {:?}", c.tick_deadline));
    f.ensure(within(c.policy_deadline, ms(10), s(10)), || format!("policy deadline {:?}", c.policy_deadline));
    f.ensure((1 << 20..=1024 << 20).contains(&c.policy_memory_bytes), || format!("policy memory {}", c.policy_memory_bytes));
    f.ensure(within(c.read_timeout, ms(10), c.tick_deadline), || format!("metrics timeout {:?}", c.read_timeout));
    f.ensure(within(c.publish_timeout, ms(10), c.tick_deadline), || format!("publish timeout {:?}", c.publish_timeout));
    if let StoreConfig::Postgres { timeout, .. } = &c.store {
        f.ensure(within(*timeout, ms(100), c.tick_deadline), || format!("store timeout {timeout:?}"));
    }
    for channel in [&c.cache, &c.parameter] {
        match channel {
            ChannelConfig::Redis { expiry, .. } => f.ensure(within(*expiry, s(60), s(86_400)), || format!("redis expiry {expiry:?}")),
            ChannelConfig::Ssm { name } => f.ensure(!name.trim().is_empty(), || "a blank SSM name".into()),
            _ => {}
        }
    }
    if let (ChannelConfig::File { path: a }, ChannelConfig::File { path: b }) = (&c.cache, &c.parameter) {
        f.ensure(a != b, || "both channels write one file".into());
    }
    for t in &c.stage_targets {
        f.ensure(t.rate_limit.is_finite() && t.rate_limit >= 0.0, || format!("stage target rate {}", t.rate_limit));
    }
    if let Some(p) = &c.policies {
        f.ensure(p.public_key.is_some() || p.allow_unsigned, || "policies without a key or allow_unsigned".into());
        f.ensure(within(p.poll, ms(100), s(3600)), || format!("policies.poll {:?}", p.poll));
        f.ensure(!p.state_dir.starts_with(&p.dir), || "the private state directory inside the policy directory".into());
    }
    let l = &c.api.limits;
    f.ensure(within(l.header_read_timeout, ms(100), s(300)), || format!("api.header_read_timeout {:?}", l.header_read_timeout));
    f.ensure(within(l.request_body_timeout, ms(100), s(300)), || format!("api.request_body_timeout {:?}", l.request_body_timeout));
    f.ensure(within(l.idle_timeout, ms(100), l.header_read_timeout), || format!("api.idle_timeout {:?}", l.idle_timeout));
    f.ensure((1..=65_536).contains(&l.max_connections), || format!("api.max_connections {}", l.max_connections));
    let unsigned = c.policies.as_ref().is_none_or(|p| p.allow_unsigned);
    f.ensure(!unsigned || c.api.address.ip().is_loopback(), || format!("unsigned policies served on {}", c.api.address));
    let names: Vec<&str> = c.api.tokens.iter().map(|t| t.name.as_str()).collect();
    f.ensure(names.iter().all(|n| !n.trim().is_empty()), || "a blank token name".into());
}
