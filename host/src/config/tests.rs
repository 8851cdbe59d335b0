use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("conf/sentinel.toml"))
}

#[test]
fn no_file_gives_the_embedded_default() {
    let c = Config::load(None).unwrap();
    assert_eq!(c.source, "embedded default");
    assert_eq!(c.store, StoreConfig::Sqlite { path: PathBuf::from("sentinel-state/sentinel.db") });
    assert_eq!(c.metrics, MetricsConfig::Synthetic);
    assert_eq!(c.tick_deadline, Duration::from_secs(20));
    assert!(!c.throttles_enabled, "the emergency switch defaults off");
    assert_eq!(c.policy, PolicyChoice::Embedded, "the 1.0.0 component built into the binary");
}

#[test]
fn relative_paths_are_relative_to_the_config_file() {
    let c = parse("[store]\nkind = \"sqlite\"\npath = \"db/s.db\"\n[metrics]\nkind = \"trace\"\npath = \"t.jsonl\"\n").unwrap();
    assert_eq!(c.store, StoreConfig::Sqlite { path: PathBuf::from("conf/db/s.db") });
    assert_eq!(c.metrics, MetricsConfig::Trace { path: PathBuf::from("conf/t.jsonl") });
}

#[test]
fn an_unknown_key_is_refused_naming_it() {
    let err = parse("tick_dedline = \"20s\"\n").unwrap_err().to_string();
    assert!(err.contains("tick_dedline"), "{err}");
}

#[test]
fn an_unknown_adapter_kind_is_refused() {
    let err = parse("[store]\nkind = \"mysql\"\npath = \"x\"\n").unwrap_err().to_string();
    assert!(err.contains("mysql"), "{err}");
}

#[test]
fn a_bad_duration_names_its_key() {
    let err = parse("tick_deadline = \"soon\"\n").unwrap_err().to_string();
    assert!(err.contains("tick_deadline"), "{err}");
    let err = parse("tick_deadline = \"2m\"\n").unwrap_err().to_string();
    assert!(err.contains("tick_deadline: must be between 1s and 50s"), "{err}");
    let err = parse("[metrics]\nkind = \"synthetic\"\ntimeout = \"30s\"\n").unwrap_err().to_string();
    assert!(err.contains("metrics.timeout"), "{err}");
}

#[test]
fn both_channels_writing_one_file_is_refused() {
    let err = parse("[publish.cache]\nkind = \"file\"\npath = \"s.json\"\n[publish.parameter]\nkind = \"file\"\npath = \"s.json\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("publish.parameter.path"), "{err}");
}

#[test]
fn malformed_stage_targets_are_kept_aside_not_fatal() {
    let c = parse(
        r#"
[stages]
targets = [
  { rest_api_id = "abc", stage = "prod", rate_limit = 50.0, burst_limit = 100 },
  { rest_api_id = "abc", stage = "", rate_limit = 50.0, burst_limit = 100 },
  { rest_api_id = "abc", stage = "beta", rate_limit = -1.0, burst_limit = 100 },
  { rest_api_id = "abc", stage = "beta", rate_limit = 5.0 },
  "nonsense",
]
"#,
    )
    .unwrap();
    assert_eq!(c.stage_targets.len(), 1);
    assert_eq!(c.stage_targets[0].id(), "abc/prod");
    assert_eq!(c.malformed_targets.iter().map(|m| m.index).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
}

#[test]
fn memory_cap_out_of_range_is_refused() {
    let err = parse("[policy_limits]\nmemory_mib = 0\n").unwrap_err().to_string();
    assert!(err.contains("policy_limits.memory_mib"), "{err}");
}

/// A production configuration: every real adapter (the AWS ones need the `aws` feature).
#[cfg(feature = "aws")]
const PRODUCTION: &str = r#"
[store]
kind = "postgres"
url = "postgres://sentinel@db:5432/sentinel"

[metrics]
kind = "prometheus"
url = "http://prometheus:9090"
[metrics.queries]
connections_pct = 'sum(pg_stat_activity_count)'

[publish.cache]
kind = "redis"
url = "redis://cache:6379/0"

[publish.parameter]
kind = "ssm"
name = "/capacity/state"

[stages]
controller = { kind = "api-gateway" }

[policies]
dir = "/opt/sentinel/policies"
public_key = "/opt/sentinel/keys/policy.pub"
"#;

#[cfg(feature = "aws")]
#[test]
fn a_production_config_reads_every_real_backend() {
    let c = parse(PRODUCTION).unwrap();
    assert!(matches!(&c.store, StoreConfig::Postgres { lock_key, timeout, lease, .. }
            if *lock_key == DEFAULT_LOCK_KEY && *timeout == Duration::from_secs(5) && *lease == DEFAULT_LEASE));
    // The lease: from 1 s to 5 min, refused naming the key otherwise.
    let with_lease =
        |lease: &str| parse(&PRODUCTION.replace("kind = \"postgres\"\n", &format!("kind = \"postgres\"\nlease = \"{lease}\"\n")));
    assert!(matches!(with_lease("2s").unwrap().store, StoreConfig::Postgres { lease, .. } if lease == Duration::from_secs(2)));
    for bad in ["0s", "500ms", "6m"] {
        let e = with_lease(bad).unwrap_err().to_string();
        assert!(e.contains("store.lease"), "{bad}: {e}");
    }
    assert!(matches!(&c.metrics, MetricsConfig::Prometheus(source) if source.shown() == "http://prometheus:9090"));
    assert_eq!(
        c.cache,
        ChannelConfig::Redis { url: "redis://cache:6379/0".into(), key: "capacity:state".into(), expiry: Duration::from_secs(300) }
    );
    assert_eq!(c.parameter, ChannelConfig::Ssm { name: "/capacity/state".into() });
    assert_eq!(c.stage_controller, StageControllerConfig::ApiGateway);
}

#[test]
fn a_redis_expiry_below_a_minute_is_refused() {
    let err = parse("[publish.cache]\nkind = \"redis\"\nurl = \"redis://x\"\nexpiry = \"10s\"\n").unwrap_err().to_string();
    assert!(err.contains("publish.cache.expiry"), "{err}");
}

/// A Prometheus source is checked when the configuration is read, naming the key: before, a
/// blank query passed here and surfaced later as an "unavailable" metrics source.
#[test]
fn a_prometheus_source_is_checked_when_the_config_is_read() {
    let signed = "[policies]\ndir = \"/opt/sentinel/policies\"\npublic_key = \"/opt/sentinel/keys/policy.pub\"\n";
    let prometheus =
        |url: &str, cpu: &str| format!("{signed}[metrics]\nkind = \"prometheus\"\nurl = \"{url}\"\n[metrics.queries]\ncpu_pct = '{cpu}'\n");
    parse(&prometheus("http://p:9090", "up")).unwrap_or_else(|e| panic!("{e}"));
    let err = parse(&prometheus("http://p:9090", " ")).unwrap_err().to_string();
    assert!(err.contains("metrics.queries.cpu_pct: is empty"), "{err}");
    let err = parse(&prometheus("ftp://p:9090", "up")).unwrap_err().to_string();
    assert!(err.contains("metrics.url: ") && err.contains("expected http(s)://host:port"), "{err}");
}

#[test]
fn prometheus_queries_refuse_unknown_keys() {
    let err = parse("[metrics]\nkind = \"prometheus\"\nurl = \"http://p\"\n[metrics.queries]\ncpu = 'x'\n").unwrap_err().to_string();
    assert!(err.contains("cpu"), "{err}");
}

#[test]
fn a_toml_error_on_a_url_line_never_shows_its_password() {
    for text in [
        "[store]\nkind = \"postgres\"\nurl = \"postgres://sentinel:hunter2@db/x\" trailing\n",
        "[store]\nkind = \"postgres\"\nurl = \"postgres://sentinel@db/x?password=hunter2\" trailing\n",
        "[metrics]\nkind = \"prometheus\"\nurl = \"http://u:hunter2@prometheus:9090\" trailing\n",
        "[publish.cache]\nkind = \"redis\"\nurl = \"redis://:hunter2@cache:6379/0\" trailing\n",
        "[publish.parameter]\nkind = \"redis\"\nurl = \"redis://:hunter2@cache:6379/0\" trailing\n",
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains("***"), "the line is shown, masked: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
}

#[cfg(feature = "aws")]
#[test]
fn a_cloudwatch_source_is_read_checked_naming_the_key_and_needs_signed_policies() {
    let metrics = "[metrics]\nkind = \"cloudwatch\"\ndb_cluster = \"orders\"\nmax_connections = 1000\napis = [\"crm\"]\ntimeout = \"3s\"\n";
    let signed = "[policies]\ndir = \"/opt/sentinel/policies\"\npublic_key = \"/opt/sentinel/keys/policy.pub\"\n";
    let c = parse(&format!("{metrics}{signed}")).unwrap();
    assert!(matches!(&c.metrics, MetricsConfig::CloudWatch(source)
            if source.database.dimension() == ("DBClusterIdentifier", "orders") && source.latency_statistic == "p95"));
    assert_eq!(c.read_timeout, Duration::from_secs(3));
    let unsigned = parse(metrics).unwrap_err().to_string();
    assert!(unsigned.contains("metrics.kind = \"cloudwatch\""), "{unsigned}");
    let unknown = parse(&format!("{}queries = {{}}\n{signed}", metrics)).unwrap_err().to_string();
    assert!(unknown.contains("queries"), "{unknown}");
    let no_database = parse(&format!("[metrics]\nkind = \"cloudwatch\"\n{signed}")).unwrap_err().to_string();
    assert!(no_database.contains("metrics.db_instance: is required"), "{no_database}");
}

/// The `[policies]` table.
mod policies;
