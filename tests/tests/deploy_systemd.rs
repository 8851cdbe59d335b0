//! The systemd units of `deploy/systemd/` as systemd and the binary see them, so they cannot rot:
//!
//! - `systemd-analyze verify` passes them without printing a single line. It runs with `--root`
//!   on a scratch root holding the shipped files unedited, the host's own units (the default
//!   dependencies and the targets they name) and the real built `sentinel` at ExecStart's path,
//!   because verify checks that ExecStart's binary exists; the same root without the binary
//!   fails naming it, so the check is not vacuous.
//! - `systemd-analyze security --offline=true` (no running systemd needed) scores each unit's
//!   exposure at 2.0 or less, every hardening line the deployment promises is there, and
//!   MemoryDenyWriteExecute= is not (wasmtime writes its compiled code, then maps it executable).
//! - The ExecStart lines run the real binary with their exact flags, paths moved into a temp
//!   dir laid out like the host (the config under etc/, the working directory under var/lib/)
//!   and the metrics port swapped for a free one: `--ticks 1 --speed 60` leaves the default
//!   SQLite store in the WorkingDirectory and nothing beside the config; in real time, SIGTERM
//!   stops `run` and `serve` with exit 0 well within the unit's TimeoutStopSec.

use capacity_tests::paths::{target_dir, workspace};
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::{binary, free_port, wait_for_port};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const RUN_UNIT: &str = "capacity-sentinel.service";
const API_UNIT: &str = "capacity-sentinel-api.service";
/// The longest `tick_deadline` a config may set (host/src/config/mod.rs): the tick SIGTERM waits for.
const MAX_TICK_DEADLINE: Duration = Duration::from_secs(50);
/// At most this exposure (systemd's 0-10 scale, times ten for `--threshold`).
const MAX_EXPOSURE: f64 = 2.0;

/// One unit file: its path and its `(section, key, value)` lines in order.
struct Unit {
    path: PathBuf,
    lines: Vec<(String, String, String)>,
}

impl Unit {
    fn load(name: &str) -> Unit {
        let path = workspace().join("deploy/systemd").join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (mut section, mut lines) = (String::new(), Vec::new());
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with(['#', ';'])) {
            assert!(!line.ends_with('\\'), "{name}: this parser reads no continued lines: {line}");
            if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = s.to_string();
            } else {
                let (key, value) = line.split_once('=').unwrap_or_else(|| panic!("{name}: not `Key=value`: {line}"));
                lines.push((section.clone(), key.trim().to_string(), value.trim().to_string()));
            }
        }
        Unit { path, lines }
    }

    fn name(&self) -> String {
        self.path.file_name().unwrap().to_string_lossy().into_owned()
    }

    fn values(&self, key: &str) -> Vec<&str> {
        self.lines.iter().filter(|(s, k, _)| s == "Service" && k == key).map(|(_, _, v)| v.as_str()).collect()
    }

    /// The `[Service]` value of `key` (the last one when repeated, as systemd reads it).
    fn service(&self, key: &str) -> &str {
        self.values(key).pop().unwrap_or_else(|| panic!("{}: no {key}= in [Service]", self.name()))
    }

    /// ExecStart split into words (the units quote nothing).
    fn exec_start(&self) -> Vec<String> {
        self.exec("ExecStart")
    }

    /// An Exec line (`ExecStart`, `ExecStartPre`) split into words, without the `-` that lets
    /// it fail.
    fn exec(&self, key: &str) -> Vec<String> {
        let line = self.service(key).trim_start_matches('-');
        assert!(line.starts_with('/') && !line.contains(['"', '\'']), "{}: {key} must be a plain absolute command: {line}", self.name());
        line.split_whitespace().map(str::to_string).collect()
    }

    fn timeout_stop(&self) -> Duration {
        let v = self.service("TimeoutStopSec");
        let (number, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
        let n: u64 = number.parse().unwrap_or_else(|_| panic!("{}: TimeoutStopSec={v}", self.name()));
        match unit {
            "" | "s" => Duration::from_secs(n),
            "min" => Duration::from_secs(60 * n),
            _ => panic!("{}: TimeoutStopSec={v}: write it in s or min", self.name()),
        }
    }
}

fn units() -> Vec<Unit> {
    [RUN_UNIT, API_UNIT].into_iter().map(Unit::load).collect()
}

fn systemd_analyze() -> PathBuf {
    binary("systemd-analyze", "apt-get install systemd")
}

/// A scratch filesystem root for `systemd-analyze --root`: the units under etc/systemd/system,
/// the host's units (sysinit.target, network-online.target, ...: lookups stay inside the root)
/// and, with `with_binary`, the built sentinel at ExecStart's path. Absolute symbolic links are
/// resolved inside the root, so the binary is hard-linked (or copied), never linked.
fn scratch_root(with_binary: bool) -> (tempfile::TempDir, Vec<PathBuf>) {
    std::fs::create_dir_all(target_dir()).unwrap();
    let root = tempfile::tempdir_in(target_dir()).unwrap();
    let system = root.path().join("etc/systemd/system");
    std::fs::create_dir_all(&system).unwrap();
    let mut inside = Vec::new();
    for unit in units() {
        std::fs::copy(&unit.path, system.join(unit.name())).unwrap();
        inside.push(system.join(unit.name()));
        if with_binary {
            let bin = root.path().join(unit.exec_start()[0].trim_start_matches('/'));
            std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
            if !bin.exists() && std::fs::hard_link(sentinel(), &bin).is_err() {
                std::fs::copy(sentinel(), &bin).unwrap();
            }
        }
    }
    let host_units = ["/usr/lib/systemd/system", "/lib/systemd/system"]
        .into_iter()
        .find(|d| Path::new(d).join("sysinit.target").is_file())
        .expect("the host's systemd units (sysinit.target) are installed: apt-get install systemd");
    std::fs::create_dir_all(root.path().join("usr/lib/systemd")).unwrap();
    let copied = Command::new("cp").arg("-a").arg(host_units).arg(root.path().join("usr/lib/systemd/")).status().unwrap();
    assert!(copied.success(), "cp -a {host_units} into the scratch root failed");
    (root, inside)
}

fn analyze(args: &[&str], root: &Path, units: &[PathBuf]) -> (Output, String) {
    let out = Command::new(systemd_analyze())
        .args(args)
        .arg(format!("--root={}", root.display()))
        .args(units)
        .env("SYSTEMD_COLORS", "0")
        .output()
        .expect("systemd-analyze runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out, text)
}

#[test]
fn systemd_analyze_verify_passes_the_shipped_units_without_a_word() {
    let (root, inside) = scratch_root(true);
    let (out, text) = analyze(&["verify", "--recursive-errors=yes"], root.path(), &inside);
    assert!(
        out.status.success() && text.trim().is_empty(),
        "systemd-analyze verify --recursive-errors=yes --root={} {} ({}):\n{text}",
        root.path().display(),
        inside.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" "),
        out.status
    );

    // The same root without the binary: verify does look at ExecStart.
    let (bare, inside) = scratch_root(false);
    let (out, text) = analyze(&["verify", "--recursive-errors=yes"], bare.path(), &inside);
    assert!(!out.status.success() && text.contains("/usr/local/bin/sentinel"), "verify without the binary ({}):\n{text}", out.status);
}

#[test]
fn systemd_analyze_security_scores_the_units_at_most_2_of_10() {
    let (root, inside) = scratch_root(true);
    let threshold = format!("--threshold={}", (MAX_EXPOSURE * 10.0) as u32);
    let (out, text) = analyze(&["security", "--offline=true", &threshold, "--no-pager"], root.path(), &inside);
    assert!(out.status.success(), "systemd-analyze security --offline=true {threshold} ({}):\n{text}", out.status);
    for unit in units() {
        let line = format!("Overall exposure level for {}:", unit.name());
        let score: f64 = text
            .lines()
            .find_map(|l| l.split_once(line.as_str()).map(|(_, rest)| rest.split_whitespace().next().unwrap_or("").to_string()))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no `{line} N.N` line in:\n{text}"));
        assert!(score <= MAX_EXPOSURE, "{}: exposure {score} > {MAX_EXPOSURE}:\n{text}", unit.name());
    }
}

#[test]
fn the_units_carry_the_promised_hardening_and_leave_w_xor_x_to_wasmtime() {
    let expected = [
        ("Type", "exec"),
        ("DynamicUser", "yes"),
        ("User", "capacity-sentinel"),
        ("StateDirectory", "capacity-sentinel"),
        ("ConfigurationDirectory", "capacity-sentinel"),
        ("WorkingDirectory", "/var/lib/capacity-sentinel"),
        ("EnvironmentFile", "-/etc/capacity-sentinel/env"),
        ("UMask", "0077"),
        ("Restart", "on-failure"),
        ("KillSignal", "SIGTERM"),
        ("NoNewPrivileges", "yes"),
        ("CapabilityBoundingSet", ""),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectKernelModules", "yes"),
        ("ProtectKernelLogs", "yes"),
        ("ProtectControlGroups", "yes"),
        ("ProtectClock", "yes"),
        ("ProtectHostname", "yes"),
        ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
        ("RestrictNamespaces", "yes"),
        ("LockPersonality", "yes"),
        ("RestrictRealtime", "yes"),
        ("RestrictSUIDSGID", "yes"),
        ("SystemCallArchitectures", "native"),
    ];
    for unit in units() {
        let name = unit.name();
        for (key, value) in expected {
            assert_eq!(unit.service(key), value, "{name}: {key}=");
        }
        assert!(unit.values("SystemCallFilter").contains(&"@system-service"), "{name}: SystemCallFilter=@system-service");
        assert!(!unit.service("RestartSec").is_empty(), "{name}: RestartSec=");
        assert_eq!(&unit.exec_start()[2..4], ["--config", "/etc/capacity-sentinel/sentinel.toml"].as_slice(), "{name}");
        assert!(unit.lines.iter().all(|(_, k, _)| k != "MemoryDenyWriteExecute"), "{name}: wasmtime's JIT needs W^X pages");
        let text = std::fs::read_to_string(&unit.path).unwrap();
        assert!(
            text.lines().any(|l| l.starts_with('#') && l.contains("MemoryDenyWriteExecute")) && text.contains("wasmtime"),
            "{name}: the header says why MemoryDenyWriteExecute= is left out"
        );
    }
    let run = Unit::load(RUN_UNIT);
    assert_eq!(run.exec_start()[..2], ["/usr/local/bin/sentinel", "run"]);
    assert!(run.service("ExecStart").ends_with("--metrics-addr 127.0.0.1:9898"), "{}", run.service("ExecStart"));
    assert!(run.timeout_stop() > MAX_TICK_DEADLINE, "TimeoutStopSec must outlast the slowest tick in flight");
}

/// The host's layout in a temp dir: `etc/capacity-sentinel/sentinel.toml` (`config`) and the
/// unit's WorkingDirectory (0700, as StateDirectory= makes it).
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new(config: &str) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let host = Host { dir };
        let file = host.path("/etc/capacity-sentinel/sentinel.toml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, config).unwrap();
        std::fs::create_dir_all(host.path("/var/lib/capacity-sentinel")).unwrap();
        host
    }

    /// An absolute path of the unit, inside the temp dir.
    fn path(&self, absolute: &str) -> PathBuf {
        self.dir.path().join(absolute.trim_start_matches('/'))
    }

    /// The unit's ExecStart as a command: the built binary, paths moved in, `--metrics-addr`
    /// on `metrics_port`, run in the unit's WorkingDirectory, logs at info into `log`.
    fn command(&self, unit: &Unit, metrics_port: u16, log: &Path) -> Command {
        self.command_of(unit, "ExecStart", metrics_port, log)
    }

    /// As [`Host::command`], for the Exec line `key`.
    fn command_of(&self, unit: &Unit, key: &str, metrics_port: u16, log: &Path) -> Command {
        let words = unit.exec(key);
        let mut cmd = Command::new(sentinel());
        let mut previous = "";
        for word in &words[1..] {
            if previous == "--metrics-addr" {
                assert!(word.starts_with("127.0.0.1:"), "{}: metrics on loopback: {word}", unit.name());
                cmd.arg(format!("127.0.0.1:{metrics_port}"));
            } else if word.starts_with('/') {
                cmd.arg(self.path(word));
            } else {
                cmd.arg(word);
            }
            previous = word;
        }
        let log = std::fs::File::create(log).unwrap();
        cmd.current_dir(self.path(unit.service("WorkingDirectory")))
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        cmd
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        if entry.path().is_dir() { out.extend(files_under(&entry.path())) } else { out.push(entry.path()) }
    }
    out
}

#[test]
fn the_run_units_exec_start_ticks_with_the_store_in_its_working_directory() {
    let unit = Unit::load(RUN_UNIT);
    let host = Host::new("# the embedded default\n");
    let log = host.path("/run.log");
    let status = host.command(&unit, free_port(), &log).args(["--ticks", "1", "--speed", "60"]).status().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{} with --ticks 1 --speed 60 ({status}):\n{text}", unit.service("ExecStart"));
    let state = host.path("/var/lib/capacity-sentinel/sentinel-state");
    for file in ["sentinel.db", "cache.json", "parameter.json"] {
        assert!(state.join(file).is_file(), "{file} is not in the WorkingDirectory's sentinel-state/:\n{text}");
    }
    assert_eq!(
        files_under(&host.path("/etc")),
        [host.path("/etc/capacity-sentinel/sentinel.toml")],
        "nothing is written beside the config"
    );
}

#[test]
fn the_run_units_exec_start_pre_reaches_every_configured_server_and_may_fail_without_stopping_the_start() {
    let unit = Unit::load(RUN_UNIT);
    assert!(unit.service("ExecStartPre").starts_with('-'), "a server down must not keep the sentinel from starting");
    assert_eq!(unit.exec("ExecStartPre")[1..], ["check", "--connect", "--config", "/etc/capacity-sentinel/sentinel.toml"]);
    let host = Host::new("# the embedded default\n");
    let log = host.path("/pre.log");
    let status = host.command_of(&unit, "ExecStartPre", free_port(), &log).status().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success() && text.contains("all 5 reached"), "{} ({status}):\n{text}", unit.service("ExecStartPre"));
    assert!(files_under(&host.path("/var/lib/capacity-sentinel")).is_empty(), "the preflight creates nothing:\n{text}");
    // A channel no one may write (a config that names a server needs signed policies).
    let host = Host::new("[publish.cache]\nkind = \"file\"\npath = \"/proc/capacity/cache.json\"\n");
    let status = host.command_of(&unit, "ExecStartPre", free_port(), &log).status().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(6), "a dependency that fails fails the preflight, which the '-' lets pass:\n{text}");
    assert!(text.contains("FAIL publish.cache"), "{text}");
}

/// Starts the unit's command, waits for `port` and the line logged once the signal handlers are
/// in place, sends SIGTERM and asserts the exit is 0 within the unit's TimeoutStopSec.
fn stops_on_sigterm(host: &Host, unit: &Unit, metrics_port: u16, port: u16, ready: &str) {
    let log = host.path(&format!("/{}.log", unit.name()));
    let mut child = host.command(unit, metrics_port, &log).spawn().unwrap();
    wait_for_port(&unit.name(), port, Duration::from_secs(120));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log).unwrap().contains(ready) {
        assert!(Instant::now() < deadline, "{} never logged `{ready}`", unit.name());
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if sent.elapsed() > unit.timeout_stop() {
            let _ = child.kill();
            panic!("{} still running {:?} after SIGTERM", unit.name(), unit.timeout_stop());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(0), "{} on SIGTERM ({status}), Restart=on-failure would restart it:\n{text}", unit.name());
}

#[test]
fn sigterm_stops_run_and_serve_with_exit_0_within_timeout_stop_sec() {
    let api_port = free_port();
    let host = Host::new(&format!("[api]\naddress = \"127.0.0.1:{api_port}\"\n"));
    let metrics_port = free_port();
    stops_on_sigterm(&host, &Unit::load(RUN_UNIT), metrics_port, metrics_port, "sentinel running");
    stops_on_sigterm(&host, &Unit::load(API_UNIT), metrics_port, api_port, "serving the API on");
}
