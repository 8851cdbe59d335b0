//! The alert rules and the dashboard against the real thing: a real Prometheus scrapes a real
//! `sentinel run --speed 60` (PostgreSQL store, Redis and SSM channels) and evaluates the rules
//! that `sentinel alert-rules --time-scale 60` writes: the shipped rules with every duration
//! divided by the run's speed, so a minute of the rules is a second here. A staff pin to
//! emergency fires SentinelEmergencyProlonged, and not before its (scaled) 20 minutes; Redis
//! killed fires SentinelChannelFailing for the cache alone, after its 10 minutes; every panel
//! of the Grafana dashboard returns data from this Prometheus; the sentinel killed fires
//! SentinelNotPublishing although its series have gone stale.

use capacity_tests::fault_world::World;
use capacity_tests::paths::workspace;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::prometheus::Prometheus;
use capacity_tests::servers::prometheus_api::PrometheusApi;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// The run's speed, and the rules' time scale with it.
const SPEED: &str = "60";

fn dashboard() -> Value {
    let path = workspace().join("deploy/grafana/sentinel-dashboard.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("the dashboard is JSON")
}

/// Every PromQL expression of the dashboard's panels (rows' nested panels included), with the
/// Grafana variables it may use replaced as Grafana would: `$job` and `$instance` by the
/// regular expressions chosen (".*" for All).
fn dashboard_queries(job: &str, instance: &str) -> Vec<(String, String)> {
    let dashboard = dashboard();
    let mut out = Vec::new();
    fn walk(panels: &Value, out: &mut Vec<(String, String)>, chosen: &[(&str, &str)]) {
        for panel in panels.as_array().into_iter().flatten() {
            let title = panel["title"].as_str().unwrap_or("?").to_string();
            for target in panel["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = target["expr"].as_str() {
                    let mut expr = expr.replace("$__rate_interval", "1m").replace("$__interval", "1m").replace("$__range", "1h");
                    for (variable, value) in chosen {
                        expr = expr.replace(variable, value);
                    }
                    assert!(!expr.contains('$'), "panel {title:?}: a variable the test does not know: {expr}");
                    out.push((title.clone(), expr));
                }
            }
            walk(&panel["panels"], out, chosen);
        }
    }
    walk(&dashboard["panels"], &mut out, &[("$job", job), ("$instance", instance)]);
    out
}

#[test]
fn the_dashboard_chooses_the_job_and_the_replicas_and_every_query_obeys_the_choice() {
    let dashboard = dashboard();
    let variables = dashboard["templating"]["list"].as_array().expect("variables");
    let names: Vec<&str> = variables.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["job", "instance"]);
    for v in variables {
        assert_eq!(v["includeAll"], true, "{v}");
        assert_eq!(v["multi"], true, "several replicas at once: {v}");
        assert!(v["definition"].as_str().unwrap().starts_with("label_values(sentinel_state"), "{v}");
    }
    // Every query selects its sentinel series by both variables.
    for (title, expr) in dashboard_queries("JOB", "INSTANCE") {
        let mut rest = expr.as_str();
        while let Some(at) = rest.find("sentinel_") {
            let after = &rest[at..];
            let name_end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            assert!(after[name_end..].starts_with(r#"{job=~"JOB",instance=~"INSTANCE""#), "panel {title:?}: {expr}");
            rest = &after[name_end..];
        }
    }
}

fn pin_emergency(world: &World) {
    let out = Command::new(sentinel())
        .args(["pin", "set", "--state", "emergency", "--reason", "alerting test", "--expires-in", "24h", "--actor", "ops"])
        .arg("--config")
        .arg(world.config())
        .envs(world.moto.aws_env())
        .output()
        .expect("sentinel pin set runs");
    assert!(out.status.success(), "pin set: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn alerts_fire_on_a_real_sentinel_and_every_dashboard_panel_has_data() {
    let mut world = World::start("vector(40)");
    let mut run = world.run();
    let rules = world.dir.path().join("alerts-scaled.yml");
    let written = Command::new(sentinel()).args(["alert-rules", "--time-scale", SPEED, "--output"]).arg(&rules).output().expect("runs");
    assert!(written.status.success(), "{}", String::from_utf8_lossy(&written.stderr));
    let prometheus = Prometheus::start_with_rules("sentinel", &[run.metrics_target()], Duration::from_secs(1), Some(&rules));
    let api = PrometheusApi::new(&prometheus.url());

    // Quiet: scraped, both channels up, and nothing fires.
    let deadline = Instant::now() + Duration::from_secs(30);
    while api.query("sentinel_channel_up == 1").len() < 2 {
        assert!(Instant::now() < deadline, "Prometheus never scraped both channels up; log:\n{}", run.log_text());
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(5));
    let firing: Vec<Value> = api.alerts().into_iter().filter(|a| a["state"] == "firing").collect();
    assert!(firing.is_empty(), "a quiet, publishing sentinel fires nothing: {firing:#?}");

    // A staff pin to emergency: the alert waits its 20 (scaled) minutes, then fires.
    pin_emergency(&world);
    let pinned = Instant::now();
    let alert = api.await_firing("SentinelEmergencyProlonged", &[("severity", "critical")], Duration::from_secs(90));
    assert!(pinned.elapsed() >= Duration::from_secs(19), "fired after {:?}, before its `for: 20m` scaled to 20 s", pinned.elapsed());
    eprintln!("SentinelEmergencyProlonged fired {:.1} s after the pin (for: 20m scaled to 20 s)", pinned.elapsed().as_secs_f64());
    assert!(alert["annotations"]["description"].as_str().is_some_and(|d| d.contains("sentinel pin show")), "{alert}");

    // Redis down: the cache channel alone, after its 10 (scaled) minutes; the parameter carries on.
    world.redis.process.kill();
    let broken = Instant::now();
    let alert = api.await_firing("SentinelChannelFailing", &[("channel", "cache"), ("severity", "warning")], Duration::from_secs(60));
    assert!(broken.elapsed() >= Duration::from_secs(9), "fired after {:?}, before its `for: 10m` scaled to 10 s", broken.elapsed());
    eprintln!(
        "SentinelChannelFailing{{channel=cache}} fired {:.1} s after Redis was killed (for: 10m scaled to 10 s)",
        broken.elapsed().as_secs_f64()
    );
    assert!(alert["annotations"]["summary"].as_str().is_some_and(|s| s.contains("cache")), "{alert}");
    assert!(api.firing("SentinelChannelFailing").iter().all(|a| a["labels"]["channel"] == "cache"), "the parameter still publishes");
    assert!(api.firing("SentinelBothChannelsFailing").is_empty(), "one channel still publishes");
    assert!(api.firing("SentinelNotPublishing").is_empty(), "the parameter still publishes");

    // Every panel of the dashboard returns data (a pin, a failing channel, a state change are all on).
    let mut empty = Vec::new();
    let queries = dashboard_queries("sentinel", ".*");
    assert!(queries.len() >= 15, "the dashboard has its panels: {}", queries.len());
    let other_job = dashboard_queries("another-job", ".*");
    assert!(api.query(&other_job[0].1).is_empty(), "another job's choice shows none of this one: {}", other_job[0].1);
    for (title, expr) in &queries {
        if api.query(expr).is_empty() {
            empty.push(format!("{title}: {expr}"));
        }
    }
    assert!(empty.is_empty(), "dashboard queries without data (the panel would be empty):\n{}", empty.join("\n"));

    // The sentinel killed: its series go stale, and the last publication ages past 3 (scaled) minutes.
    run.kill();
    let killed = Instant::now();
    let alert = api.await_firing("SentinelNotPublishing", &[("severity", "critical")], Duration::from_secs(60));
    assert_eq!(alert["labels"]["job"], "sentinel", "{alert}");
    eprintln!("SentinelNotPublishing fired {:.1} s after the sentinel was killed (3 min scaled to 3 s)", killed.elapsed().as_secs_f64());
    eprintln!("{} dashboard queries, each with data", queries.len());
}
