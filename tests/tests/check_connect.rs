//! `sentinel check --connect` against real servers (docs/behaviour.md §11.12): PostgreSQL,
//! Prometheus, Redis, moto's SSM and API Gateway, and an OIDC issuer's keys served over HTTP by
//! Python's own server. All up: every line `ok`, exit 0, nothing published. Then each one down
//! in turn: exit 6, its line FAIL naming the server and what to do, every other line still ok.

use capacity_tests::fault_world::{KEY, PARAMETER, World};
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::redis::Redis;
use capacity_tests::servers::{ServerProcess, free_port};
use sentinel_adapters::api_gateway_stages::ApiGatewayStages;
use sentinel_adapters::aws_client::AwsOverrides;
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
    check_config(&world.config(), world.moto.aws_env())
}

fn check_config(config: &std::path::Path, env: Vec<(&'static str, String)>) -> Checked {
    let out = Command::new(sentinel()).args(["check", "--connect", "--config"]).arg(config).envs(env).output().expect("sentinel runs");
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
    let stage_before = capacity_tests::rest_api::limits(stages.client(), &api, "live").await;

    // A session holding the sentinel's lock (a running sentinel, as the check sees it): reported,
    // never taken (a running sentinel that met its lock held would stop).
    let (holder, connection) = tokio_postgres::connect(&world.pg.dsn(), tokio_postgres::NoTls).await.unwrap();
    let driving = tokio::spawn(connection);
    holder.execute("SELECT pg_advisory_lock($1::bigint)", &[&sentinel::config::DEFAULT_LOCK_KEY]).await.unwrap();
    let held = tokio::task::block_in_place(|| check(&world));
    assert_eq!(held.code, 0, "a held lock is reachable, not a failure: {:#?}", held.lines);
    assert!(
        held.line("store lock").contains("held by server process") && held.line("store lock").contains("not taken"),
        "{}",
        held.line("store lock")
    );
    drop(holder);
    driving.abort();

    let up = tokio::task::block_in_place(|| check(&world));
    // GetStage only: the stage's own limits are what they were.
    assert_eq!(capacity_tests::rest_api::limits(stages.client(), &api, "live").await, stage_before, "the check changed the stage");
    tokio::task::block_in_place(|| {
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
        assert!(up.line("store lock").contains("free; not taken"), "{}", up.line("store lock"));
        // The schema is read, never created or migrated: a second check finds it as the first did.
        assert!(up.line("store").contains("no sentinel schema yet"), "{}", up.line("store"));
        assert!(world.redis_document().is_none(), "nothing published to {KEY}");

        let port = world.redis.process.port;
        world.redis.process.kill();
        let down = check(&world);
        down.assert_only_failed(&["publish.cache"], &all, "redis down");
        assert!(down.line("publish.cache").contains("check that Redis is running"), "{}", down.line("publish.cache"));
        assert!(down.line("store").contains("no sentinel schema yet"), "the check migrated the store: {}", down.line("store"));
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

/// A command of the first day, in `dir`, with a fresh HOME and a PATH holding the sentinel and
/// the system's tools only (git, bash): nothing of this repository.
fn first_day(dir: &std::path::Path, program: &str, args: &[&str]) -> String {
    let bin = sentinel();
    let path = format!("{}:/usr/bin:/bin", bin.parent().expect("the binary's folder").display());
    let program = if program == "sentinel" { bin.display().to_string() } else { program.to_string() };
    let out = Command::new(&program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.join(".home"))
        .env("SENTINEL", &bin)
        .envs([("GIT_AUTHOR_NAME", "operator"), ("GIT_AUTHOR_EMAIL", "op@example.invalid")])
        .envs([("GIT_COMMITTER_NAME", "operator"), ("GIT_COMMITTER_EMAIL", "op@example.invalid")])
        .output()
        .expect("the command runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{program} {args:?}: {}\n{text}", out.status);
    text
}

/// The issue's day, in one test: from an empty folder and the binary alone, a policy
/// repository, a new version proposed, built and judged by the gate script, then a site whose
/// servers `check --connect` reaches, up and then each down.
#[tokio::test(flavor = "multi_thread")]
async fn a_first_day_from_an_empty_folder_policy_repository_gate_and_preflight() {
    let mut world = tokio::task::block_in_place(|| World::start("vector(55)"));
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path();
    tokio::task::block_in_place(|| {
        first_day(dir, "sentinel", &["init", "--policy-repo", "ours"]);
        let repo = dir.join("ours");
        first_day(&repo, "git", &["init", "-q", "-b", "main"]);
        first_day(&repo, "git", &["add", "-A"]);
        first_day(&repo, "git", &["commit", "-qm", "policies from sentinel init"]);
        first_day(&repo, "git", &["checkout", "-q", "-b", "constrain-later"]);
        first_day(&repo, "sentinel", &["policy", "new", "1.4.0", "--from", "1.3.0", "--purpose", "Constrain at 82 % CPU."]);
        let file = repo.join("policies/1.4.0/policy.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("cpu_pct = { constrained = 80.0"), "{text}");
        std::fs::write(&file, text.replace("cpu_pct = { constrained = 80.0", "cpu_pct = { constrained = 82.0")).unwrap();
        let built = first_day(&repo, "sentinel", &["policy", "build", "policies/1.4.0", "-o", "dist/"]);
        assert!(repo.join("dist/capacity-policy-1.4.0.manifest.json").is_file(), "{built}");
        first_day(&repo, "git", &["add", "policies"]);
        first_day(&repo, "git", &["commit", "-qm", "1.4.0: constrain at 82 % CPU"]);
        let verdict = first_day(&repo, "ci/policy-gate.sh", &["--base", "main"]);
        assert!(verdict.contains("1.4.0 against 1.3.0 (at main): passed"), "{verdict}");
        let comment = std::fs::read_to_string(repo.join("gate-report/comment.md")).unwrap();
        assert!(comment.contains("| 1.4.0 | 1.3.0 (at main) | passed |"), "{comment}");

        // A site that reaches real servers: Redis from `init --signed`, then PostgreSQL and
        // Prometheus in place of the SQLite store and the synthetic readings.
        first_day(dir, "sentinel", &["init", "--signed", "site", "--redis", &world.redis.url()]);
        let config = dir.join("site/sentinel.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        let store = "[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n";
        let metrics = text.lines().find(|l| l.starts_with("kind = \"synthetic\"")).expect("synthetic readings").to_string();
        assert!(text.contains(store), "{text}");
        let text = text.replace(store, &format!("[store]\nkind = \"postgres\"\nurl = \"{}\"\ntimeout = \"3s\"\n", world.pg.url())).replace(
            &metrics,
            &format!(
                "kind = \"prometheus\"\nurl = \"{}\"\ntimeout = \"3s\"\n[metrics.queries]\ncpu_pct = 'vector(55)'",
                world.prometheus.url()
            ),
        );
        std::fs::write(&config, text).unwrap();
        let all = ["metrics", "store", "store lock", "publish.cache", "publish.parameter"];
        let up = check_config(&config, Vec::new());
        assert_eq!(up.code, 0, "{:#?}", up.lines);
        assert!(up.line("metrics").contains("cpu 55.0 %"), "{}", up.line("metrics"));
        let port = world.redis.process.port;
        world.redis.process.kill();
        check_config(&config, Vec::new()).assert_only_failed(&["publish.cache"], &all, "redis down");
        world.redis = Redis::start_on(port);
        world.prometheus.process.kill();
        check_config(&config, Vec::new()).assert_only_failed(&["metrics"], &all, "prometheus down");
        world.prometheus.restart();
        world.pg.kill();
        check_config(&config, Vec::new()).assert_only_failed(&["store", "store lock"], &all, "postgres down");
        world.restart_postgres();
        assert_eq!(check_config(&config, Vec::new()).code, 0, "all back");
        // A query that names no series (a typo) reads as an absent signal minute after minute:
        // the preflight says so instead of "ok".
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, text.replace("cpu_pct = 'vector(55)'", "cpu_pct = 'vector(55)'\nconnections_pct = 'pg_conections_pct'"))
            .unwrap();
        let silent = check_config(&config, Vec::new());
        silent.assert_only_failed(&["metrics"], &all, "a query naming no series");
        assert!(silent.line("metrics").contains("metrics.queries.connections_pct answered no series"), "{}", silent.line("metrics"));
    });
}
