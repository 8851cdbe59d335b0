//! Real servers for the tests, each started on a free 127.0.0.1 port by the test that needs it
//! and killed when its handle drops (also when the test panics). Nothing here is a mock: these
//! are Debian's redis-server, PostgreSQL, Prometheus and its PostgreSQL exporter, and moto's
//! server for the AWS APIs. `.ci/run` installs them; a missing binary fails with what to install.

pub mod hung;
pub mod lossy;
pub mod moto;
pub mod postgres;
pub mod prometheus;
pub mod prometheus_api;
pub mod redis;
pub mod throttling;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free port on 127.0.0.1 (bound and released; good enough for tests on one machine).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("binding an ephemeral port").local_addr().expect("local addr").port()
}

/// Waits until something accepts TCP connections on the port.
pub fn wait_for_port(name: &str, port: u16, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{name} did not start listening on 127.0.0.1:{port} within {timeout:?}");
}

/// Finds a server binary on PATH or in the usual Debian places.
pub fn binary(name: &str, install: &str) -> PathBuf {
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect()).unwrap_or_default();
    if let Ok(dirs) = std::fs::read_dir("/usr/lib/postgresql") {
        candidates.extend(dirs.flatten().map(|d| d.path().join("bin").join(name)));
    }
    candidates.push(PathBuf::from("/usr/sbin").join(name));
    candidates.into_iter().find(|p| p.is_file()).unwrap_or_else(|| panic!("`{name}` is not installed: {install} (.ci/run does this)"))
}

/// A running server process, killed on drop. Its output goes to `<dir>/<name>.log`.
pub struct ServerProcess {
    pub name: String,
    pub port: u16,
    child: Option<Child>,
    log: PathBuf,
}

impl ServerProcess {
    /// Spawns `command` with its output in `dir`, and waits for `port` to accept connections.
    pub fn spawn(name: &str, mut command: Command, port: u16, dir: &Path, startup: Duration) -> ServerProcess {
        let log = dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).expect("creating the server log");
        let err = out.try_clone().expect("cloning the log handle");
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let mut server = ServerProcess { name: name.to_string(), port, child: Some(child), log };
        let deadline = Instant::now() + startup;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return server;
            }
            if let Some(status) = server.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("{name} exited with {status} before listening; its log:\n{}", server.log_text());
            }
            if Instant::now() > deadline {
                panic!("{name} did not listen on {port} within {startup:?}; its log:\n{}", server.log_text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills the process now (SIGKILL) and waits for it: "the server died".
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The process's id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(std::process::Child::id)
    }

    pub fn is_running(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| c.try_wait().ok().flatten().is_none())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
