//! A CloudWatch source's configuration (`[metrics] kind = "cloudwatch"`, docs/behaviour.md
//! §11.1): the database (an RDS instance or an Aurora cluster), its maximum connections, the
//! API Gateway APIs and the latency statistic, checked once when the configuration is read.

use serde::Deserialize;

/// The statistic production reads latency with.
pub(crate) const DEFAULT_LATENCY_STATISTIC: &str = "p95";

/// The `[metrics]` table of `kind = "cloudwatch"` as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCloudWatch {
    /// `AWS/RDS` metrics of this `DBInstanceIdentifier`.
    #[serde(default)]
    pub db_instance: Option<String>,
    /// `AWS/RDS` metrics of this `DBClusterIdentifier` (Aurora).
    #[serde(default)]
    pub db_cluster: Option<String>,
    /// `DatabaseConnections` is read as a share of this many; unset: connections are not read.
    #[serde(default)]
    pub max_connections: Option<u32>,
    /// `AWS/ApiGateway` `Latency` of each `ApiName`.
    #[serde(default)]
    pub apis: Vec<String>,
    /// The statistic of the latency (`p95`, `p99`, `Average`, `Maximum`).
    #[serde(default)]
    pub latency_statistic: Option<String>,
    /// The AWS region, unless the environment's (`AWS_REGION`, the profile).
    #[serde(default)]
    pub region: Option<String>,
    /// How long a metric read may take (`metrics.timeout`, e.g. `5s`); unset: 5 seconds. At most
    /// the tick deadline.
    #[serde(default, with = "humantime_serde::option")]
    pub timeout: Option<std::time::Duration>,
}

/// Which database the `AWS/RDS` metrics are of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// An RDS instance, by its `DBInstanceIdentifier`.
    Instance(String),
    /// An Aurora cluster, by its `DBClusterIdentifier`.
    Cluster(String),
}

impl Database {
    /// The dimension that names it.
    pub fn dimension(&self) -> (&'static str, &str) {
        match self {
            Database::Instance(id) => ("DBInstanceIdentifier", id),
            Database::Cluster(id) => ("DBClusterIdentifier", id),
        }
    }
}

/// A CloudWatch source as configured and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudWatchSource {
    /// The database whose `AWS/RDS` CPU and connections are read.
    pub database: Database,
    /// `DatabaseConnections` is read as a percentage of this many; `None`: connections are not read.
    pub max_connections: Option<u32>,
    /// The API Gateway `ApiName`s whose `Latency` is read, each once, none empty.
    pub apis: Vec<String>,
    /// The statistic of the latency (`p95` unless configured; `pNN`, `Average`, `Maximum`...).
    pub latency_statistic: String,
    /// The AWS region; `None`: the environment's (`AWS_REGION`, the profile).
    pub region: Option<String>,
}

/// Why a CloudWatch source is refused: the configuration key and what to write there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct CloudWatchSourceError {
    /// The configuration key refused, under `metrics.` (e.g. `metrics.db_instance`, `metrics.apis[1]`).
    pub key: String,
    /// What is wrong with it and what to write instead.
    pub message: String,
}

impl CloudWatchSource {
    /// Checks `raw`: exactly one of `db_instance` and `db_cluster`, a `max_connections` of at least 1,
    /// API names neither empty nor repeated, and a statistic CloudWatch knows.
    pub fn new(raw: RawCloudWatch) -> Result<CloudWatchSource, CloudWatchSourceError> {
        let refuse = |key: &str, message: &str| CloudWatchSourceError { key: format!("metrics.{key}"), message: message.to_string() };
        let named = |key: &str, v: Option<String>| -> Result<Option<String>, CloudWatchSourceError> {
            match v.map(|v| v.trim().to_string()) {
                Some(v) if v.is_empty() => Err(refuse(key, "is empty; write the identifier or remove the key")),
                other => Ok(other),
            }
        };
        let database = match (named("db_instance", raw.db_instance)?, named("db_cluster", raw.db_cluster)?) {
            (Some(id), None) => Database::Instance(id),
            (None, Some(id)) => Database::Cluster(id),
            (Some(_), Some(_)) => return Err(refuse("db_cluster", "give db_instance (RDS) or db_cluster (Aurora), not both")),
            (None, None) => {
                return Err(refuse(
                    "db_instance",
                    "is required: the DBInstanceIdentifier whose CPUUtilization is read (or db_cluster for an Aurora cluster)",
                ));
            }
        };
        if raw.max_connections == Some(0) {
            return Err(refuse("max_connections", "must be at least 1: the database's max_connections"));
        }
        let mut apis = Vec::new();
        for (i, api) in raw.apis.into_iter().enumerate() {
            let api = api.trim().to_string();
            if api.is_empty() {
                return Err(refuse(&format!("apis[{i}]"), "is empty; write the API Gateway ApiName"));
            }
            if apis.contains(&api) {
                return Err(refuse(&format!("apis[{i}]"), &format!("{api:?} is listed twice")));
            }
            apis.push(api);
        }
        let latency_statistic = raw.latency_statistic.unwrap_or_else(|| DEFAULT_LATENCY_STATISTIC.to_string());
        if !statistic_is_known(&latency_statistic) {
            return Err(refuse(
                "latency_statistic",
                &format!("{latency_statistic:?} is not a CloudWatch statistic: write p95 (or pNN, pNN.N), Average, Maximum or Minimum"),
            ));
        }
        let region = named("region", raw.region)?;
        Ok(CloudWatchSource { database, max_connections: raw.max_connections, apis, latency_statistic, region })
    }
}

/// `Average`, `Maximum`, `Minimum`, `Sum`, `SampleCount` or a percentile `pNN` / `pNN.N...`
/// (0 to 100).
fn statistic_is_known(s: &str) -> bool {
    if matches!(s, "Average" | "Maximum" | "Minimum" | "Sum" | "SampleCount") {
        return true;
    }
    s.strip_prefix('p')
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .and_then(|n| n.parse::<f64>().ok())
        .is_some_and(|p| (0.0..=100.0).contains(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(toml_text: &str) -> RawCloudWatch {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn a_source_is_checked_naming_the_key() {
        let ok = CloudWatchSource::new(raw("db_instance = \"orders\"\nmax_connections = 500\napis = [\"crm\", \"billing\"]\n")).unwrap();
        assert_eq!(ok.database.dimension(), ("DBInstanceIdentifier", "orders"));
        assert_eq!(ok.latency_statistic, "p95");
        let err = |text: &str| CloudWatchSource::new(raw(text)).unwrap_err().to_string();
        assert!(err("apis = []").starts_with("metrics.db_instance: is required"));
        assert!(err("db_instance = \"a\"\ndb_cluster = \"b\"").starts_with("metrics.db_cluster: give db_instance"));
        assert!(err("db_instance = \" \"").starts_with("metrics.db_instance: is empty"));
        assert!(err("db_instance = \"a\"\nmax_connections = 0").starts_with("metrics.max_connections: must be at least 1"));
        assert!(err("db_instance = \"a\"\napis = [\"crm\", \"\"]").starts_with("metrics.apis[1]: is empty"));
        assert!(err("db_instance = \"a\"\napis = [\"crm\", \"crm\"]").contains("listed twice"));
        assert!(err("db_instance = \"a\"\nlatency_statistic = \"p950\"").starts_with("metrics.latency_statistic: \"p950\" is not"));
        assert!(err("db_instance = \"a\"\nlatency_statistic = \"median\"").contains("write p95"));
        for good in ["p99", "p99.9", "Average", "Maximum"] {
            assert!(CloudWatchSource::new(raw(&format!("db_cluster = \"c\"\nlatency_statistic = \"{good}\""))).is_ok(), "{good}");
        }
    }
}
