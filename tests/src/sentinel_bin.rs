//! The `sentinel` binary for CLI tests. Cargo builds another package's binaries only for that
//! package's own tests, so the harness runs `cargo build -p capacity-sentinel --bin sentinel`
//! once per test process (a no-op when it is up to date, and never stale when host/ changed),
//! in the profile and target directory of the running test, and returns the binary's path.

use crate::paths::workspace;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The path of an up-to-date `sentinel` binary.
pub fn sentinel() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(build).clone()
}

fn build() -> PathBuf {
    // The running test is <target>/<profile dir>/deps/<name>-<hash>.
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("tests run from <target>/<profile>/deps");
    let target = profile_dir.parent().expect("a profile folder sits in the target folder");
    let profile = profile_dir.file_name().and_then(|n| n.to_str()).unwrap_or("debug");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // Without the variables cargo sets for a running test (CARGO_MANIFEST_DIR, CARGO_PKG_*, ...):
    // a build script that tracks one of them (ring's tracks CARGO_MANIFEST_DIR) would see it
    // changed, run again and rebuild everything above it, here and again in the next build
    // from a shell (`cargo test --no-run` after the tests rebuilt 19 crates, 105 s in CI).
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
            ]
            .contains(&name.as_ref())
        {
            cmd.env_remove(name.as_ref());
        }
    }
    cmd.current_dir(workspace())
        // With the AWS adapters, as the workspace's own build of the host has them.
        .args(["build", "--quiet", "-p", "capacity-sentinel", "--features", "aws", "--bin", "sentinel", "--target-dir"])
        .arg(target);
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run cargo to build sentinel: {e}"));
    assert!(status.success(), "`cargo build -p capacity-sentinel` failed ({status})");
    let bin = profile_dir.join(format!("sentinel{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.is_file(), "cargo built sentinel but {} does not exist", bin.display());
    bin
}

/// The output of one `sentinel` run.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panics with both streams unless the run exited 0.
    pub fn success(self) -> Run {
        assert_eq!(self.code, Some(0), "sentinel failed\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

/// Runs `sentinel ARGS` from the workspace root, logs off.
pub fn run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let output = Command::new(sentinel()).current_dir(workspace()).env("RUST_LOG", "off").args(args).output().expect("sentinel runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `sentinel ARGS` in `dir`, warnings logged: its whole output, for tests of commands an
/// operator runs in a folder of their own.
pub fn run_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(sentinel()).current_dir(dir).env("RUST_LOG", "warn").args(args).output().expect("sentinel runs")
}

/// A stream of an output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The stdout of a run that must have succeeded; panics with both streams otherwise.
pub fn ok(output: std::process::Output) -> String {
    assert!(output.status.success(), "sentinel failed\nstdout:\n{}\nstderr:\n{}", text(&output.stdout), text(&output.stderr));
    text(&output.stdout)
}
