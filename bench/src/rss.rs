//! Resident memory of a running `sentinel run`: the process is started with `--metrics-addr`,
//! its tick count read from its own `/metrics` (`tick_seconds_count`), and its `VmRSS` and
//! `VmHWM` from `/proc/<pid>/status` at chosen tick counts. The process is killed on drop.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One sample: after how many ticks, resident and peak resident memory in KiB.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Sample {
    pub ticks: u64,
    pub rss_kib: u64,
    pub hwm_kib: u64,
}

pub struct Probe {
    child: Child,
    metrics: String,
}

impl Probe {
    /// Spawns `command` (a `sentinel run`, to which `--metrics-addr` is added).
    pub fn spawn(mut command: Command) -> Probe {
        let port = capacity_tests::servers::free_port();
        let metrics = format!("127.0.0.1:{port}");
        let child = command
            .args(["--metrics-addr", &metrics])
            .env("RUST_LOG", "off")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sentinel run starts");
        Probe { child, metrics }
    }

    /// Ticks done so far (none while the endpoint is not up yet).
    pub fn ticks(&mut self) -> Option<u64> {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("sentinel run exited early: {status}");
        }
        let mut stream = TcpStream::connect(&self.metrics).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(stream, "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.metrics).ok()?;
        let mut body = String::new();
        stream.read_to_string(&mut body).ok()?;
        body.lines()
            .find(|l| l.split_whitespace().next().is_some_and(|name| name.ends_with("tick_seconds_count")))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
    }

    /// Waits until `ticks` ticks are done (or `limit` passes), then samples.
    pub fn sample_at(&mut self, ticks: u64, limit: Duration) -> Sample {
        let deadline = Instant::now() + limit;
        loop {
            let done = self.ticks();
            if done.is_some_and(|d| d >= ticks) || Instant::now() > deadline {
                let (rss_kib, hwm_kib) = self.memory();
                return Sample { ticks: done.unwrap_or(0), rss_kib, hwm_kib };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `VmRSS` and `VmHWM`, in KiB.
    pub fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let field =
            |name: &str| status.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()).unwrap_or(0);
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The peak resident memory (`VmHWM`, KiB) of `command` run to its end, read from
/// `/proc/<pid>/status` every 2 ms (the last reading before it exits is within 2 ms of its end),
/// and whether it succeeded.
pub fn peak_of(mut command: Command) -> (u64, bool) {
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("the command starts");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(kib) =
                status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("waiting for the command") {
            return (peak, status.success());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
