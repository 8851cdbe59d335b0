//! A private PostgreSQL cluster (Debian's PostgreSQL 15 binaries): `initdb` into a temp dir,
//! then the server on a free port with fsync off. `synchronous_commit` stays on: a commit is
//! then in the operating system's hands before it returns, so it survives the server being
//! killed (the fault tests kill it); fsync off only gives up surviving a machine crash.
//! `initdb` refuses root, so as root both run as the `postgres` user through `setpriv` (which
//! execs, so killing the handle kills the server).

use super::{ServerProcess, binary, free_port};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

pub struct Postgres {
    pub process: ServerProcess,
    dir: tempfile::TempDir,
    /// The backends of a killed server (checkpointer, writers...): they hold its shared memory
    /// until they notice their server is gone, and a restart before that is refused
    /// ("pre-existing shared memory block is still in use").
    orphans: Vec<u32>,
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or(false)
}

/// A command run as the `postgres` user when we are root.
fn as_postgres(program: &Path) -> Command {
    if running_as_root() {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=postgres", "--regid=postgres", "--init-groups", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

impl Postgres {
    pub fn start() -> Postgres {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        if running_as_root() {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().expect("chown");
            assert!(status.success(), "chown of the PostgreSQL temp dir failed");
        }
        let initdb = binary("initdb", "apt-get install postgresql");
        let out = as_postgres(&initdb)
            .args(["-D"])
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
            .output()
            .expect("running initdb");
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        let process = Postgres::spawn(dir.path(), free_port());
        Postgres { process, dir, orphans: Vec::new() }
    }

    fn spawn(dir: &Path, port: u16) -> ServerProcess {
        let mut cmd = as_postgres(&binary("postgres", "apt-get install postgresql"));
        cmd.arg("-D").arg(dir.join("data")).arg("-k").arg(dir).args([
            "-p",
            &port.to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=100",
        ]);
        let mut server = ServerProcess::spawn("postgres", cmd, port, dir, Duration::from_secs(30));
        wait_until_accepting(&mut server, Duration::from_secs(30));
        server
    }

    /// Kills the server (SIGKILL, as a crash would).
    pub fn kill(&mut self) {
        self.orphans.extend(self.process.pid().map(children_of).unwrap_or_default());
        self.process.kill();
    }

    /// Starts the same cluster again on the same port (after `kill`). Waits first until the
    /// killed server's backends have gone (they hold its shared memory for a moment).
    pub fn restart(&mut self) {
        self.kill();
        let data = self.dir.path().join("data");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        // The server itself is found by its data folder on its command line; its backends
        // rewrite theirs ("postgres: checkpointer"), so they are the children taken at the kill.
        while (processes_using(&data) || self.orphans.iter().any(|pid| alive(*pid))) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.orphans.clear();
        let _ = std::fs::remove_file(data.join("postmaster.pid"));
        self.process = Postgres::spawn(self.dir.path(), self.process.port);
    }

    /// A libpq-style connection string for the `postgres` database.
    pub fn dsn(&self) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname=postgres", self.process.port)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.process.port)
    }
}

/// PostgreSQL listens before it accepts sessions: while it starts or recovers from a crash it
/// answers "the database system is starting up". `pg_isready` exits 0 once it accepts them.
fn wait_until_accepting(server: &mut ServerProcess, within: Duration) {
    let pg_isready = binary("pg_isready", "apt-get install postgresql");
    let deadline = std::time::Instant::now() + within;
    loop {
        let status = Command::new(&pg_isready)
            .args(["-h", "127.0.0.1", "-p", &server.port.to_string(), "-U", "postgres", "-t", "1", "-q"])
            .status()
            .expect("running pg_isready");
        if status.success() {
            return;
        }
        assert!(server.is_running(), "postgres exited while starting; its log:\n{}", server.log_text());
        assert!(
            std::time::Instant::now() < deadline,
            "postgres did not accept sessions within {within:?} (pg_isready: {status}); its log:\n{}",
            server.log_text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Is any live (not zombie) process running with `data` on its command line?
/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| {
            let child: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`: the command may hold spaces, so after its `)`.
            let ppid: u32 = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == pid).then_some(child)
        })
        .collect()
}

/// Whether `pid` still runs (a zombie does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"))
}

fn processes_using(data: &Path) -> bool {
    let needle = data.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.flatten().any(|e| {
        let dir = e.path();
        let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
        let zombie = std::fs::read_to_string(dir.join("stat")).is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"));
        !zombie && String::from_utf8_lossy(&cmdline).contains(&needle)
    })
}
