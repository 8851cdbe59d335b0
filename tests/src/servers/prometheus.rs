//! Debian's Prometheus scraping given targets every second, and Debian's PostgreSQL exporter.
//! Both listen on all interfaces by default, so each is given a 127.0.0.1 address.

use super::{ServerProcess, binary, free_port};
use std::process::Command;
use std::time::Duration;

pub struct Prometheus {
    pub process: ServerProcess,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scrapes each `host:port` target under job `job` every `interval`.
    pub fn start(job: &str, targets: &[String], interval: Duration) -> Prometheus {
        Prometheus::start_with_rules(job, targets, interval, None)
    }

    /// The same, evaluating the rules file `rules` (copied in) every `interval` too.
    pub fn start_with_rules(job: &str, targets: &[String], interval: Duration, rules: Option<&std::path::Path>) -> Prometheus {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let list = targets.iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(", ");
        let secs = interval.as_secs().max(1);
        let config = format!(
            "global:\n  scrape_interval: {secs}s\n  evaluation_interval: {secs}s\nscrape_configs:\n  - job_name: '{job}'\n    static_configs:\n      - targets: [{list}]\n"
        );
        let config = match rules {
            Some(rules) => {
                std::fs::copy(rules, dir.path().join("rules.yml")).expect("copying the rules file");
                format!("{config}rule_files:\n  - rules.yml\n")
            }
            None => config,
        };
        let file = dir.path().join("prometheus.yml");
        std::fs::write(&file, config).expect("writing prometheus.yml");
        let process = Prometheus::spawn(dir.path(), port);
        Prometheus { process, dir }
    }

    /// A Prometheus holding `openmetrics` (samples with their own timestamps, ending `# EOF`),
    /// written into blocks by `promtool tsdb create-blocks-from openmetrics` before it starts,
    /// kept however old (retention 100 years) and scraping nothing.
    pub fn backfilled(openmetrics: &str) -> Prometheus {
        Prometheus::backfilled_with(openmetrics, &[])
    }

    /// The same, with more command-line flags (`--query.max-samples=...`).
    pub fn backfilled_with(openmetrics: &str, flags: &[&str]) -> Prometheus {
        let dir = tempfile::tempdir().expect("temp dir");
        let input = dir.path().join("history.om");
        std::fs::write(&input, openmetrics).expect("writing the OpenMetrics file");
        let promtool = binary("promtool", "apt-get install prometheus");
        let out = Command::new(promtool)
            .args(["tsdb", "create-blocks-from", "openmetrics", "--quiet"])
            .arg(&input)
            .arg(dir.path().join("data"))
            .output()
            .expect("running promtool");
        assert!(out.status.success(), "promtool create-blocks-from failed: {}", String::from_utf8_lossy(&out.stderr));
        std::fs::write(dir.path().join("prometheus.yml"), "global:\n  scrape_interval: 15s\n").expect("writing prometheus.yml");
        std::fs::write(dir.path().join("flags"), flags.join("\n")).expect("writing the flags");
        let process = Prometheus::spawn(dir.path(), free_port());
        Prometheus { process, dir }
    }

    /// Starts the server and waits until it is ready to answer queries (`/-/ready`): it
    /// listens before its storage is open, and answers 503 until then.
    fn spawn(dir: &std::path::Path, port: u16) -> ServerProcess {
        let mut cmd = Command::new(binary("prometheus", "apt-get install prometheus"));
        cmd.arg(format!("--config.file={}", dir.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            // Backfilled history is older than the default 15 days: keep it.
            .arg("--storage.tsdb.retention.time=100y")
            // A backfilled server's own flags, kept for its restarts.
            .args(std::fs::read_to_string(dir.join("flags")).unwrap_or_default().lines().filter(|l| !l.is_empty()))
            .current_dir(dir);
        let process = ServerProcess::spawn("prometheus", cmd, port, dir, Duration::from_secs(30));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !ready(port) {
            assert!(std::time::Instant::now() < deadline, "prometheus never became ready; its log:\n{}", process.log_text());
            std::thread::sleep(Duration::from_millis(50));
        }
        process
    }

    /// Starts the same server again on the same port, with its data (after a kill).
    pub fn restart(&mut self) {
        self.process.kill();
        let _ = std::fs::remove_file(self.dir.path().join("data").join("lock"));
        self.process = Prometheus::spawn(self.dir.path(), self.process.port);
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.process.port)
    }
}

/// `GET /-/ready` answers 200.
fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if write!(stream, "GET /-/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
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
