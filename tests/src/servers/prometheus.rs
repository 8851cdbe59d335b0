//! Debian's Prometheus scraping given targets every second, and Debian's PostgreSQL exporter.
//! Both listen on all interfaces by default, so each is given a 127.0.0.1 address.

use super::{ServerProcess, binary, free_port};
use std::process::Command;
use std::time::Duration;

pub struct Prometheus {
    pub process: ServerProcess,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scrapes each `host:port` target under job `job` every `interval`.
    pub fn start(job: &str, targets: &[String], interval: Duration) -> Prometheus {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let list = targets.iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(", ");
        let secs = interval.as_secs().max(1);
        let config = format!(
            "global:\n  scrape_interval: {secs}s\n  evaluation_interval: {secs}s\nscrape_configs:\n  - job_name: '{job}'\n    static_configs:\n      - targets: [{list}]\n"
        );
        let file = dir.path().join("prometheus.yml");
        std::fs::write(&file, config).expect("writing prometheus.yml");
        let mut cmd = Command::new(binary("prometheus", "apt-get install prometheus"));
        cmd.arg(format!("--config.file={}", file.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .current_dir(dir.path());
        let process = ServerProcess::spawn("prometheus", cmd, port, dir.path(), Duration::from_secs(30));
        Prometheus { process, _dir: dir }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.process.port)
    }
}

pub struct PostgresExporter {
    pub process: ServerProcess,
    _dir: tempfile::TempDir,
}

impl PostgresExporter {
    /// Exports the PostgreSQL at `url` (postgres://...?sslmode=disable).
    pub fn start(url: &str) -> PostgresExporter {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let mut cmd = Command::new(binary("prometheus-postgres-exporter", "apt-get install prometheus-postgres-exporter"));
        cmd.arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .env("DATA_SOURCE_NAME", format!("{url}?sslmode=disable"))
            .current_dir(dir.path());
        let process = ServerProcess::spawn("postgres-exporter", cmd, port, dir.path(), Duration::from_secs(20));
        PostgresExporter { process, _dir: dir }
    }

    pub fn target(&self) -> String {
        self.process.addr()
    }
}
