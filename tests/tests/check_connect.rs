//! `sentinel check --connect` against real servers (docs/behaviour.md §11.12): PostgreSQL,
//! Prometheus, Redis, moto's SSM and API Gateway, and an OIDC issuer's keys served over HTTP by
//! Python's own server. All up: every line `ok`, exit 0, nothing published. Then each one down
//! in turn: exit 6, its line FAIL naming the server and what to do, every other line still ok.

use capacity_tests::fault_world::{KEY, PARAMETER, World};
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::redis::Redis;
use capacity_tests::servers::{ServerProcess, free_port};
use sentinel::adapters::api_gateway_stages::ApiGatewayStages;
use sentinel::adapters::aws_client::AwsOverrides;
use std::process::Command;
use std::time::Duration;

/// RFC 7517's example public key (appendix A.1).
const JWKS: &str = r#"{"keys":[{"kty":"EC","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM","use":"sig","kid":"1"}]}"#;

/// Python's `http.server` serving a folder: the issuer's key set.
fn issuer(dir: &std::path::Path, port: u16) -> ServerProcess {
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "http.server", "--bind", "127.0.0.1", &port.to_string(), "--directory"]).arg(dir);
    ServerProcess::spawn("issuer", cmd, port, dir, Duration::from_secs(10))
}

struct Checked {
    code: i32,
    lines: Vec<String>,
}

impl Checked {
    fn line(&self, dependency: &str) -> &str {
        let found = self.lines.iter().find(|l| l.get(5..).is_some_and(|rest| rest.starts_with(&format!("{dependency} "))));
        found.unwrap_or_else(|| panic!("no line for {dependency}: {:#?}", self.lines))
    }

    fn assert_only_failed(&self, failed: &[&str], all: &[&str], what: &str) {
        assert_eq!(self.code, 6, "{what}: exit 6 when a server fails: {:#?}", self.lines);
        for dependency in all {
            let line = self.line(dependency);
            if failed.contains(dependency) {
                assert!(line.starts_with("FAIL "), "{what}: {dependency} fails: {line}");
            } else {
                assert!(line.starts_with("ok   "), "{what}: {dependency} still reached: {line}");
            }
        }
        let summary = self.lines.last().expect("a summary");
        assert!(summary.contains(&format!("{} of {} failed", failed.len(), all.len())), "{what}: {summary}");
    }
}

fn check(world: &World) -> Checked {
    let out = Command::new(sentinel())
        .args(["check", "--connect", "--config"])
        .arg(world.config())
        .envs(world.moto.aws_env())
        .output()
        .expect("sentinel runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    Checked { code: out.status.code().expect("an exit code"), lines: stdout.lines().map(String::from).collect() }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_configured_server_is_reached_and_each_one_down_fails_its_own_line() {
    let mut world = tokio::task::block_in_place(|| World::start("vector(40)"));
    let keys = tempfile::tempdir().unwrap();
    std::fs::write(keys.path().join("jwks.json"), JWKS).unwrap();
    let issuer_port = free_port();
    let mut issuer_server = issuer(keys.path(), issuer_port);
    let stages =
        ApiGatewayStages::with_overrides(Duration::from_secs(3), &AwsOverrides::emulator(&world.moto.endpoint(), "us-east-1")).await;
    let api = capacity_tests::rest_api::create(stages.client(), &["live"]).await;
    let mut config = std::fs::read_to_string(world.config()).unwrap();
    config.push_str(&format!(
        r#"
[stages]
controller = {{ kind = "api-gateway" }}
targets = [{{ rest_api_id = "{api}", stage = "live", rate_limit = 50.0, burst_limit = 100 }}]

[api.oidc]
issuer = "https://issuer.example"
audience = "sentinel"
staff_roles = ["sre"]
jwks_url = "http://127.0.0.1:{issuer_port}/jwks.json"
timeout = "3s"
"#
    ));
    std::fs::write(world.config(), config).unwrap();
    let all = ["metrics", "store", "store lock", "publish.cache", "publish.parameter", "stages.targets[0]", "api.oidc"];

    tokio::task::block_in_place(|| {
        let up = check(&world);
        assert_eq!(up.code, 0, "all up: exit 0: {:#?}", up.lines);
        for dependency in all {
            assert!(up.line(dependency).starts_with("ok   "), "{}", up.line(dependency));
        }
        assert!(up.line("metrics").contains("cpu 40.0 %"), "one real read: {}", up.line("metrics"));
        assert!(up.line("publish.cache").contains(&format!("{KEY}:preflight")), "{}", up.line("publish.cache"));
        assert!(
            up.line("publish.parameter").contains("does not exist yet"),
            "nothing published to {PARAMETER}: {}",
            up.line("publish.parameter")
        );
        assert!(up.line("api.oidc").contains("1 key;"), "{}", up.line("api.oidc"));
        assert_eq!(up.lines.last().map(String::as_str), Some("all 7 reached"));
        assert!(world.redis_document().is_none(), "nothing published to {KEY}");

        let port = world.redis.process.port;
        world.redis.process.kill();
        let down = check(&world);
        down.assert_only_failed(&["publish.cache"], &all, "redis down");
        assert!(down.line("publish.cache").contains("check that Redis is running"), "{}", down.line("publish.cache"));
        world.redis = Redis::start_on(port);

        world.prometheus.process.kill();
        let down = check(&world);
        down.assert_only_failed(&["metrics"], &all, "prometheus down");
        assert!(down.line("metrics").contains("check [metrics]"), "{}", down.line("metrics"));
        world.prometheus.restart();

        world.pg.kill();
        let down = check(&world);
        down.assert_only_failed(&["store", "store lock"], &all, "postgres down");
        world.restart_postgres();

        issuer_server.kill();
        let down = check(&world);
        down.assert_only_failed(&["api.oidc"], &all, "issuer down");
        assert!(down.line("api.oidc").contains("check api.oidc.jwks_url"), "{}", down.line("api.oidc"));
        let _issuer = issuer(keys.path(), issuer_port);

        world.moto.process.kill();
        let down = check(&world);
        down.assert_only_failed(&["publish.parameter", "stages.targets[0]"], &all, "moto down");
        assert!(down.line("publish.parameter").contains("check the endpoint"), "{}", down.line("publish.parameter"));
    });
}
