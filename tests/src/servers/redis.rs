//! Debian's redis-server, in the foreground, without persistence.

use super::{ServerProcess, binary, free_port};
use std::process::Command;
use std::time::Duration;

pub struct Redis {
    pub process: ServerProcess,
    _dir: tempfile::TempDir,
}

impl Redis {
    pub fn start() -> Redis {
        Redis::start_on(free_port())
    }

    /// On a given port (to bring a killed server back where clients expect it).
    pub fn start_on(port: u16) -> Redis {
        Redis::spawn(port, None)
    }

    /// Requiring a password (`AUTH`) from every client.
    pub fn with_password(password: &str) -> Redis {
        Redis::spawn(free_port(), Some(password))
    }

    fn spawn(port: u16, password: Option<&str>) -> Redis {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cmd = Command::new(binary("redis-server", "apt-get install redis-server"));
        cmd.args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", "", "--appendonly", "no"]).current_dir(dir.path());
        if let Some(password) = password {
            cmd.args(["--requirepass", password]);
        }
        let process = ServerProcess::spawn("redis", cmd, port, dir.path(), Duration::from_secs(10));
        Redis { process, _dir: dir }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.process.port)
    }
}
