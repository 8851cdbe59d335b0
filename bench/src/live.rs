//! The real servers of a live tick, each started on a free 127.0.0.1 port and stopped when
//! dropped (`capacity_tests::servers`): PostgreSQL for the store and the leadership lock,
//! Prometheus for the metrics, Redis and moto (SSM) for the two channels. Started side by side
//! (PostgreSQL's initdb and moto's lazy load take seconds each).
//!
//! The metrics are constant PromQL expressions (`vector(42)`...): they answer at any simulated
//! minute, so a bench can tick through minutes faster than real time and every reading is a
//! real query evaluated by a real Prometheus.

use capacity_tests::servers::moto::Moto;
use capacity_tests::servers::postgres::Postgres;
use capacity_tests::servers::prometheus::Prometheus;
use capacity_tests::servers::redis::Redis;
use capacity_tests::signed::SignedPolicies;
use sentinel_adapters::aws_client::AwsOverrides;
use sentinel_core::policy::lifecycle::manifest;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The SSM parameter and Redis key the benches publish to.
pub const PARAMETER: &str = "/capacity/bench/state";
pub const KEY: &str = "capacity:bench";
pub const REGION: &str = "us-east-1";

pub struct Backends {
    pub postgres: Postgres,
    pub prometheus: Prometheus,
    pub redis: Redis,
    pub moto: Moto,
    dir: tempfile::TempDir,
}

impl Backends {
    pub fn start() -> Backends {
        fn joined<T>(name: &str, handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
            handle.join().unwrap_or_else(|_| panic!("starting {name} failed"))
        }
        let (postgres, prometheus, redis, moto) = std::thread::scope(|s| {
            let pg = s.spawn(Postgres::start);
            let prometheus = s.spawn(|| Prometheus::start("none", &[], Duration::from_secs(15)));
            let redis = s.spawn(Redis::start);
            let moto = s.spawn(Moto::start);
            (joined("PostgreSQL", pg), joined("Prometheus", prometheus), joined("Redis", redis), joined("moto", moto))
        });
        Backends { postgres, prometheus, redis, moto, dir: tempfile::tempdir().expect("temp dir") }
    }

    /// A sentinel config for every real backend: PostgreSQL store, Prometheus metrics (CPU,
    /// connections and one API's p95, constants), Redis and SSM channels, and the component
    /// `policy` (with its manifest beside it) deciding, signed into a policy directory as
    /// every configuration that reaches servers requires.
    pub fn config_text(&self, policy: &Path) -> String {
        let signed = SignedPolicies::install(self.dir.path(), &[policy.to_path_buf()]);
        let version =
            manifest::read_entry(&vocabulary::PolicyManifest::path_for(policy)).expect("the component's manifest").manifest.version;
        format!(
            r#"tick_deadline = "20s"

[store]
kind = "postgres"
url = "{pg}"
timeout = "5s"

[metrics]
kind = "prometheus"
url = "{prometheus}"
timeout = "5s"
[metrics.queries]
cpu_pct = 'vector(42)'
connections_pct = 'vector(40)'
latency_p95_ms = 'label_replace(vector(120), "api", "crm", "", "")'

[publish]
timeout = "5s"
[publish.cache]
kind = "redis"
url = "{redis}"
key = "{KEY}"
expiry = "5m"
[publish.parameter]
kind = "ssm"
name = "{PARAMETER}"

{policies}"#,
            policies = signed.toml(&version),
            pg = self.postgres.url(),
            prometheus = self.prometheus.url(),
            redis = self.redis.url(),
        )
    }

    /// [`Backends::config_text`] written to a file in this world's temp dir.
    pub fn config_file(&self, policy: &Path) -> PathBuf {
        let path = self.dir.path().join("sentinel.toml");
        std::fs::write(&path, self.config_text(policy)).expect("writing the config");
        path
    }

    /// moto as the SSM endpoint, with fixed test credentials (for in-process publishers).
    pub fn aws(&self) -> AwsOverrides {
        AwsOverrides::emulator(&self.moto.endpoint(), REGION)
    }

    /// The same for a `sentinel` process: the standard AWS environment variables.
    pub fn aws_env(&self) -> Vec<(&'static str, String)> {
        self.moto.aws_env()
    }
}
