//! Resident memory of `sentinel run` in steady state (`capacity_bench::rss`), at the highest
//! speed (a simulated minute every 0.6 ms, so ticks run back to back): on the embedded default
//! (SQLite, file channels, the synthetic workload; target under 40 MB) and with every real
//! backend (PostgreSQL store, Prometheus metrics, Redis and SSM channels, `capacity_bench::live`).
//! Sampled at a quarter, half, three quarters and all of the ticks: steady means flat. Under
//! `cargo test`, the embedded default for a few ticks only.

use capacity_bench::live::Backends;
use capacity_bench::measuring;
use capacity_bench::results::Note;
use capacity_bench::rss::{Probe, Sample};
use capacity_tests::sentinel_bin::sentinel;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn run(config: Option<&Path>, cwd: &Path, env: &[(&'static str, String)], ticks: u64) -> Vec<Sample> {
    let mut command = Command::new(sentinel());
    command.current_dir(cwd).args(["run", "--speed", "100000"]).envs(env.iter().cloned());
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    let started = Instant::now();
    let mut probe = Probe::spawn(command);
    let samples: Vec<Sample> = (1..=4).map(|q| probe.sample_at(ticks * q / 4, Duration::from_secs(120))).collect();
    let last = samples.last().expect("four samples");
    assert!(last.ticks >= ticks, "only {} of {ticks} ticks in {:?}", last.ticks, started.elapsed());
    for s in &samples {
        println!("  after {:>5} ticks: VmRSS {:>6} KiB, VmHWM {:>6} KiB", s.ticks, s.rss_kib, s.hwm_kib);
    }
    println!("  {:.0} ticks/s", last.ticks as f64 / started.elapsed().as_secs_f64());
    samples
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list`: nothing to list, this is not a criterion bench.
    }
    let mut note = Note::start("rss");
    let ticks = if measuring() { 4000 } else { 40 };
    let cwd = tempfile::tempdir().expect("temp dir");
    println!("sentinel run, embedded default, {ticks} ticks:");
    note.set("embedded", json!(run(None, cwd.path(), &[], ticks)));
    if measuring() {
        let backends = Backends::start();
        let config = backends.config_file(&capacity_tests::component_path("capacity-policy-1.0.0.wasm"));
        println!("sentinel run, PostgreSQL + Prometheus + Redis + SSM (moto), {ticks} ticks:");
        note.set("backends", json!(run(Some(&config), cwd.path(), &backends.aws_env(), ticks)));
    }
    note.finish();
}
