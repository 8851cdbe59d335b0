//! The replay benchmark: a generated year of minute ticks (525,600, see `capacity_tests::year`)
//! through two policies, end to end, as components and as the native modules.
//!
//! ```text
//! cargo policies && cargo bench -p capacity-tests --bench replay_year
//! ```
//!
//! Prints, for each kind: the time to compile/load both policies, to parse the trace, to replay
//! it through both (in parallel, one job per policy), the ticks per second, and the
//! component/native ratio; then the `sentinel replay --baseline --candidate` binary on the same
//! file, wall clock including process start, compile and parse. Under `cargo test` (no
//! `--bench` argument) it replays three days only, as a smoke test.

use capacity_tests::paths::{component_path, policy_folder, target_dir};
use capacity_tests::policies::component_file;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::year::{YEAR, synthetic, text};
use sentinel_core::policy::source::PolicySource;
use sentinel_core::policy::{Limits, Runtime};
use sentinel_core::replay::lane::Options;
use sentinel_core::replay::parallel::run_all;
use sentinel_core::trace::load::parse_chunked;
use std::time::{Duration, Instant};

struct Timing {
    open: Duration,
    parse: Duration,
    replay: Duration,
    total: Duration,
}

fn library(kind: &str, specs: &[String], trace_text: &str, runtime: &std::sync::Arc<Runtime>) -> Timing {
    let start = Instant::now();
    let sources: Vec<PolicySource> = specs.iter().map(|s| PolicySource::open(s, runtime).unwrap_or_else(|e| panic!("{s}: {e}"))).collect();
    let open = start.elapsed();
    let parsed = Instant::now();
    let trace = parse_chunked("year", trace_text).expect("the generated trace parses");
    let parse = parsed.elapsed();
    let replayed = Instant::now();
    let runs = run_all(std::slice::from_ref(&trace), &sources, Options::default()).expect("the year replays");
    let replay = replayed.elapsed();
    let total = start.elapsed();
    for run in &runs[0] {
        let s = &run.summary;
        println!(
            "  {kind} {:<6} transitions {:>5}  minutes in states {:?}  violations {}",
            s.policy,
            s.transitions,
            s.minutes,
            s.violations.len()
        );
        assert!(s.violations.is_empty(), "{}: {:?}", s.policy, s.violations.first());
    }
    Timing { open, parse, replay, total }
}

fn cli(specs: &[String], file: &std::path::Path, jobs: Option<&str>) -> Duration {
    let mut cmd = std::process::Command::new(sentinel());
    cmd.env("RUST_LOG", "off").args(["replay", "--baseline", &specs[0], "--candidate", &specs[1], "--format", "table"]);
    if let Some(jobs) = jobs {
        cmd.args(["--jobs", jobs]);
    }
    let start = Instant::now();
    let out = cmd.arg(file).output().expect("sentinel runs");
    let took = start.elapsed();
    assert!(out.status.success(), "sentinel replay failed: {}", String::from_utf8_lossy(&out.stderr));
    took
}

/// One decide and one hourly baseline computation, called in a loop: what a tick costs inside
/// each kind of policy, without the replay around it.
fn per_call(spec: &str, runtime: &std::sync::Arc<Runtime>, calls: u32) -> (f64, f64) {
    use vocabulary::{ApiLatency, ApiSamples, DecisionInput, LatencySample, Reading, Signal};
    let mut policy = sentinel_core::policy::open(spec, runtime).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let reading = Reading {
        cpu_pct: Some(72.5),
        connections_pct: Some(40.0),
        scaling: Some(false),
        latency: vec![ApiLatency { api: "crm".into(), p95_ms: Some(180.0), baseline_ms: Some(120.0) }],
    };
    let mut input = DecisionInput {
        now: 1_767_225_600,
        signal: Signal::Reading(reading),
        memory: None,
        pin: None,
        throttles_enabled: false,
        stages_throttled: false,
    };
    for _ in 0..10 {
        input.memory = Some(policy.decide(&input).expect("decide").memory);
        input.now += 60;
    }
    let start = Instant::now();
    for _ in 0..calls {
        let d = policy.decide(&input).expect("decide");
        std::hint::black_box(&d);
    }
    let decide = start.elapsed().as_secs_f64() * 1e6 / f64::from(calls);
    let hour = 1_767_225_600 + 30 * 3600;
    let samples = vec![ApiSamples {
        api: "crm".into(),
        samples: (0..1440).map(|i| LatencySample { at: hour - 86_400 + i * 60, p95_ms: 100.0 + (i * 37 % 50) as f64 }).collect(),
    }];
    let n = (calls / 100).max(10);
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(policy.compute_baselines(hour, &samples).expect("baselines"));
    }
    (decide, start.elapsed().as_secs_f64() * 1e6 / f64::from(n))
}

fn ms(d: Duration) -> String {
    format!("{:>8.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let minutes = if bench { YEAR } else { 3 * 1440 };
    let runtime = Runtime::new(Limits::default()).expect("engine");
    let components: Vec<String> = ["1.0.0", "2.0.0"].iter().map(|v| component_path(&component_file(v)).display().to_string()).collect();
    let natives: Vec<String> = ["1.0.0", "2.0.0"].iter().map(|v| format!("{v}={}", policy_folder(v).display())).collect();
    println!(
        "replay benchmark: {minutes} minute ticks, two policies, {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for latency in [true, false] {
        variant(bench, minutes, latency, &components, &natives, &runtime);
    }
    let calls = if bench { 200_000 } else { 2_000 };
    let (cd, cb) = per_call(&components[0], &runtime, calls);
    let (nd, nb) = per_call(&natives[0], &runtime, calls);
    println!("one call, in a loop (1.0.0):");
    println!("  decide:                     component {cd:>7.2} µs   native {nd:>7.2} µs   ratio {:.1}x", cd / nd);
    println!("  baselines (1440 samples):   component {cb:>7.2} µs   native {nb:>7.2} µs   ratio {:.1}x", cb / nb);
}

fn variant(bench: bool, minutes: usize, latency: bool, components: &[String], natives: &[String], runtime: &std::sync::Arc<Runtime>) {
    let trace_text = text(&synthetic(minutes, latency));
    let dir = target_dir().join("tmp");
    std::fs::create_dir_all(&dir).expect("target/tmp");
    let file = dir.join(format!("replay-bench-{minutes}{}.jsonl", if latency { "" } else { "-cpu" }));
    std::fs::write(&file, &trace_text).expect("writing the generated trace");
    println!();
    println!(
        "== {} ({:.1} MB) ==",
        if latency { "CPU, connections and one API's latency, baselines learnt hourly" } else { "CPU and connections only" },
        trace_text.len() as f64 / 1e6
    );
    let c = library("component", components, &trace_text, runtime);
    let n = library("native", natives, &trace_text, runtime);
    let ticks = (minutes * 2) as f64;
    println!("library (parse once in chunks, one job per policy on the rayon pool):");
    println!("  {:<10} {:>11} {:>11} {:>11} {:>11} {:>16}", "kind", "open", "parse", "replay", "total", "ticks/s (replay)");
    for (kind, t) in [("component", &c), ("native", &n)] {
        println!("  {kind:<10} {} {} {} {} {:>16.0}", ms(t.open), ms(t.parse), ms(t.replay), ms(t.total), ticks / t.replay.as_secs_f64());
    }
    println!(
        "  component/native ratio: replay {:.2}x, end to end {:.2}x",
        c.replay.as_secs_f64() / n.replay.as_secs_f64(),
        c.total.as_secs_f64() / n.total.as_secs_f64()
    );
    println!("`sentinel replay --baseline --candidate --format table` (process wall clock, best of {}):", if bench { 3 } else { 1 });
    let runs = if bench { 3 } else { 1 };
    let best = |specs: &[String], jobs: Option<&str>| (0..runs).map(|_| cli(specs, &file, jobs)).min().unwrap_or_default();
    let (cc, cn) = (best(components, None), best(natives, None));
    let c1 = best(components, Some("1"));
    println!("  components {}   native {}   ratio {:.2}x", ms(cc), ms(cn), cc.as_secs_f64() / cn.as_secs_f64());
    println!("  components with --jobs 1 {}   (parallel speed-up {:.2}x)", ms(c1), c1.as_secs_f64() / cc.as_secs_f64());
    println!("  ticks/s end to end: components {:.0}, native {:.0}", ticks / cc.as_secs_f64(), ticks / cn.as_secs_f64());
    if bench && cc > Duration::from_secs(1) {
        println!("  NOTE: the components are above the 1 s target");
    }
    if std::env::var_os("REPLAY_BENCH_KEEP").is_some() {
        println!("  kept {}", file.display());
    } else {
        let _ = std::fs::remove_file(&file);
    }
}
