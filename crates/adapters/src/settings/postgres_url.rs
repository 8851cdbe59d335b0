//! A PostgreSQL store URL (`store.url`): checked when the configuration is read, and parsed by
//! the same function when the PostgreSQL adapter connects, so a URL is judged by one set of
//! rules. Messages never show the password.

use std::time::Duration;
use tokio_postgres::Config;
use tokio_postgres::config::Host;

/// Parses the URL and fills in what the sentinel needs: the TCP connect timeout and an
/// application name (both only when the URL does not set them). Returns the config and the
/// location; on failure the location and the message.
pub fn parse(url: &str, timeout: Duration) -> Result<(Config, String), (String, String)> {
    let mut config: Config = url.parse().map_err(|e: tokio_postgres::Error| {
        (
            "the PostgreSQL URL".to_string(),
            format!(
                "the URL does not parse ({}); write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE or \
                 'host=HOST port=PORT user=USER dbname=DATABASE'",
                // The parser names options, not values; should it ever quote one, not a secret.
                sentinel_core::redact::scrub(&sentinel_core::error_chain::chain(&e), url)
            ),
        )
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(timeout);
    }
    if config.get_application_name().is_none() {
        config.application_name(format!("capacity-sentinel[{}]", std::process::id()));
    }
    let location = location(&config);
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        return Err((location, "the URL names no host; add one (postgres://USER@HOST:PORT/DATABASE)".into()));
    }
    Ok((config, location))
}

/// `host:port[,host:port]/db`: the server as messages name it, without user or password.
pub fn location(config: &Config) -> String {
    let ports = config.get_ports();
    let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let with_port = |name: &str, i: usize| {
        if name.contains(':') { format!("[{name}]:{}", port(i)) } else { format!("{name}:{}", port(i)) }
    };
    let mut hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) => with_port(name, i),
            #[cfg(unix)]
            Host::Unix(path) => format!("{}:{}", path.display(), port(i)),
        })
        .collect();
    if hosts.is_empty() {
        hosts = config.get_hostaddrs().iter().enumerate().map(|(i, a)| with_port(&a.to_string(), i)).collect();
    }
    let db = config.get_dbname().or(config.get_user()).unwrap_or("postgres");
    format!("{}/{db}", hosts.join(","))
}
