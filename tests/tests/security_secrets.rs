//! No secret reaches an operator's screen or a stored record. The sentinel runs with every
//! secret it can hold: a PostgreSQL URL with a password and a Redis password (both from the
//! environment, as the README says), AWS credentials, and API bearer tokens (configured only
//! as SHA-256 hashes). It ticks, fails (Redis with a wrong password, PostgreSQL killed), is
//! checked, serves the API with right and wrong tokens, all at `RUST_LOG=trace`; then every
//! byte it printed, logged, stored and published is searched for each secret.

use capacity_tests::paths::target_dir;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::moto::Moto;
use capacity_tests::servers::postgres::Postgres;
use capacity_tests::servers::redis::Redis;
use capacity_tests::signed::SignedPolicies;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PG_PASSWORD: &str = "pg-Secret-4f1e";
const REDIS_PASSWORD: &str = "redis-Secret-9a2c";
const AWS_SECRET: &str = "aws-Secret-Key-77d0";
const STAFF_TOKEN: &str = "staff-Token-c3b8";
/// The component compiler's crates.
const QUIET: [&str; 7] =
    ["wasmtime", "wasmtime_environ", "wasmtime_internal_cranelift", "cranelift_codegen", "cranelift_frontend", "regalloc2", "wasmparser"];

struct Setup {
    dir: tempfile::TempDir,
    pg: Postgres,
    redis: Redis,
    moto: Moto,
}

impl Setup {
    fn env(&self, redis_password: &str) -> Vec<(&'static str, String)> {
        let mut env = self.moto.aws_env();
        env.retain(|(k, _)| *k != "AWS_SECRET_ACCESS_KEY");
        env.push(("AWS_SECRET_ACCESS_KEY", AWS_SECRET.into()));
        // PostgreSQL here trusts loopback, so the password is sent but never needed: what
        // matters is that it is held and never shown.
        let pg = self.pg.url().replacen("postgres@", &format!("postgres:{PG_PASSWORD}@"), 1);
        env.push(("SENTINEL_POSTGRES_URL", pg));
        env.push(("SENTINEL_REDIS_URL", self.redis.url().replacen("redis://", &format!("redis://:{redis_password}@"), 1)));
        // Everything at trace level but the compiler of the policy component, which handles
        // no secret and writes megabytes about every function it compiles.
        env.push(("RUST_LOG", format!("trace,{}", QUIET.map(|c| format!("{c}=warn")).join(","))));
        env
    }

    fn sentinel(&self, args: &[&str], redis_password: &str) -> Output {
        Command::new(sentinel())
            .args(args)
            .arg("--config")
            .arg(self.dir.path().join("sentinel.toml"))
            .envs(self.env(redis_password))
            .stdin(Stdio::null())
            .output()
            .expect("sentinel runs")
    }
}

fn setup() -> Setup {
    let pg = Postgres::start();
    let redis = Redis::with_password(REDIS_PASSWORD);
    let moto = Moto::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let policies = SignedPolicies::install(dir.path(), &[target_dir().join("policies/capacity-policy-1.0.0.wasm")]);
    std::fs::write(dir.path().join("trace.jsonl"), trace()).expect("trace");
    let config = format!(
        r#"tick_deadline = "10s"
[store]
kind = "postgres"
url = "postgres://postgres@127.0.0.1:1/postgres"
timeout = "2s"
[metrics]
kind = "trace"
path = "trace.jsonl"
[publish]
timeout = "2s"
[publish.cache]
kind = "redis"
url = "redis://127.0.0.1:1/"
key = "capacity:secrets"
[publish.parameter]
kind = "ssm"
name = "/capacity/secrets"
[api]
tokens = [{{ name = "alice", role = "staff", sha256 = "{hash}" }}]

{policies}"#,
        hash = hex::encode(Sha256::digest(STAFF_TOKEN.as_bytes())),
        policies = policies.toml("1.0.0"),
    );
    std::fs::write(dir.path().join("sentinel.toml"), config).expect("config");
    Setup { dir, pg, redis, moto }
}

/// Readings for the next hours, one a minute, starting this minute.
fn trace() -> String {
    let minute = now() / 60 * 60;
    (0..180)
        .map(|m| format!("{{\"at\":\"{}\",\"reading\":{{\"cpu_pct\":50}}}}\n", sentinel_core::instants::format_rfc3339(minute + 60 * m)))
        .collect()
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs() as i64
}

/// Every secret, and the forms a careless log would show them in.
fn secrets() -> Vec<String> {
    let mut all = vec![PG_PASSWORD.to_string(), REDIS_PASSWORD.to_string(), AWS_SECRET.to_string(), STAFF_TOKEN.to_string()];
    all.push(format!("Bearer {STAFF_TOKEN}"));
    all
}

fn assert_clean(what: &str, text: &str) {
    for secret in secrets() {
        assert!(!text.contains(&secret), "{what} shows the secret `{secret}`:\n{text}");
    }
}

/// A bare HTTP/1.1 request with a bearer token; the whole response.
fn request(addr: &str, method: &str, path: &str, token: &str, body: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).expect("the API listens");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("request");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

fn serve_and_call(s: &Setup) -> String {
    let log = s.dir.path().join("serve.log");
    let mut child = Command::new(sentinel())
        .args(["serve", "--addr", "127.0.0.1:0", "--config"])
        .arg(s.dir.path().join("sentinel.toml"))
        .envs(s.env(REDIS_PASSWORD))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&log).expect("log")))
        .spawn()
        .expect("sentinel serve starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    let addr = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(url) = text.split_whitespace().find_map(|w| w.strip_prefix("http://127.0.0.1:")) {
            break format!("127.0.0.1:{}", url.trim_end_matches(|c: char| !c.is_ascii_digit()));
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("sentinel serve exited with {status}:\n{}", tail(&text));
        }
        assert!(Instant::now() < deadline, "sentinel serve did not start:\n{}", tail(&text));
        std::thread::sleep(Duration::from_millis(50));
    };
    let expires = sentinel_core::instants::format_rfc3339(now() + 3600);
    let pin = format!(r#"{{"state":"critical","reason":"secrets test","expires_at":"{expires}"}}"#);
    let set = request(&addr, "PUT", "/v1/pin", STAFF_TOKEN, &pin);
    assert!(set.starts_with("HTTP/1.1 200"), "the staff token sets a pin: {set}");
    let wrong = request(&addr, "PUT", "/v1/pin", &format!("{STAFF_TOKEN}x"), &pin);
    assert!(wrong.starts_with("HTTP/1.1 401"), "a wrong token is refused: {wrong}");
    let audit = request(&addr, "GET", "/v1/pin/audit", STAFF_TOKEN, "");
    assert!(audit.contains("\"actor\":\"alice\""), "the audit names the token's name: {audit}");
    let _ = child.kill();
    let _ = child.wait();
    [set, wrong, audit, std::fs::read_to_string(&log).unwrap_or_default()].join("\n")
}

/// Everything the store holds, as text.
fn store_dump(pg: &Postgres) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&pg.dsn(), tokio_postgres::NoTls).await.expect("connects");
        tokio::spawn(connection);
        let mut text = String::new();
        for table in ["memory", "pin", "pin_audit", "ticks", "stage_throttles", "stage_changes", "baselines"] {
            let rows = client.simple_query(&format!("SELECT row_to_json(t)::text FROM {table} t")).await.expect("a table");
            for row in rows {
                if let tokio_postgres::SimpleQueryMessage::Row(r) = row {
                    text.push_str(r.get(0).unwrap_or(""));
                    text.push('\n');
                }
            }
        }
        text
    })
}

#[test]
fn no_secret_reaches_logs_output_records_or_publications_even_at_trace_level() {
    let mut s = setup();
    let mut seen: Vec<(String, String)> = Vec::new();
    let keep = |seen: &mut Vec<(String, String)>, what: &str, out: &Output| {
        seen.push((what.to_string(), format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))));
    };

    let check = s.sentinel(&["check"], REDIS_PASSWORD);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    keep(&mut seen, "sentinel check", &check);
    let tick = s.sentinel(&["tick"], REDIS_PASSWORD);
    assert!(tick.status.success(), "a tick with every secret in place: {}", String::from_utf8_lossy(&tick.stderr));
    keep(&mut seen, "a good tick", &tick);
    let api = serve_and_call(&s);
    seen.push(("sentinel serve".into(), api));

    // Failures are where secrets leak: a refused Redis password, then PostgreSQL gone.
    let tick = s.sentinel(&["tick", "--at", &sentinel_core::instants::format_rfc3339(now() / 60 * 60 + 60)], "wrong-password");
    let stderr = String::from_utf8_lossy(&tick.stderr).into_owned();
    assert!(tick.status.success() && stderr.contains("channel=cache"), "the cache fails, the parameter publishes: {stderr}");
    keep(&mut seen, "a tick with a wrong Redis password", &tick);
    let dump = store_dump(&s.pg);
    assert!(dump.contains("\"ok\":false"), "the failed publication was recorded: {dump}");
    seen.push(("the store".into(), dump));
    s.pg.kill();
    let tick = s.sentinel(&["tick", "--at", &sentinel_core::instants::format_rfc3339(now() / 60 * 60 + 120)], REDIS_PASSWORD);
    assert!(!tick.status.success(), "no tick without the store");
    keep(&mut seen, "a tick with PostgreSQL down", &tick);
    let pin = s.sentinel(&["pin", "show"], REDIS_PASSWORD);
    keep(&mut seen, "sentinel pin show with PostgreSQL down", &pin);

    let mut published = String::new();
    if let Ok(client) = redis::Client::open(s.redis.url().replacen("redis://", &format!("redis://:{REDIS_PASSWORD}@"), 1))
        && let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_secs(3))
    {
        published = redis::cmd("GET").arg("capacity:secrets").query(&mut conn).unwrap_or_default();
    }
    assert!(published.contains("\"sequence\""), "the cache holds the published document: {published}");
    seen.push(("the published document".into(), published));
    for file in walk(s.dir.path()) {
        if let Ok(text) = std::fs::read_to_string(&file) {
            seen.push((file.display().to_string(), text));
        }
    }
    // The servers' addresses are printed where a careless URL would show its password.
    for port in [s.redis.process.port, s.pg.process.port] {
        assert!(seen.iter().any(|(_, t)| t.contains(&format!("127.0.0.1:{port}"))), "the output names 127.0.0.1:{port}");
    }
    let logged: usize = seen.iter().map(|(_, t)| t.len()).sum();
    assert!(logged > 20_000, "trace-level logs were captured ({logged} bytes)");
    for (what, text) in &seen {
        assert_clean(what, text);
    }
}

/// The last lines of a long log.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if !path.extension().is_some_and(|e| e == "wasm" || e == "cwasm") {
            files.push(path);
        }
    }
    files
}

/// Security review, finding 6: every configuration key that holds a URL (and its environment
/// override) is shown by `sentinel check`, and named in its errors, without its password, in
/// each form a password takes: the user info, a `password=` query parameter (any case), Redis's
/// `pass=`, libpq's `password=`, and a URL that does not parse. No server is needed: `check`
/// parses the URLs and connects to nothing.
#[test]
fn every_url_key_is_shown_by_check_and_its_errors_without_its_password() {
    const SECRET: &str = "url-Secret-5e0b";
    struct Case {
        what: &'static str,
        /// The tables that differ from the base config (a store, a metrics source, channels).
        tables: String,
        env: Option<(&'static str, String)>,
        /// Exit code of `sentinel check`.
        code: i32,
        /// What the output shows instead (so the URL is shown, not left out).
        shows: &'static str,
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let policies = SignedPolicies::install(dir.path(), &[target_dir().join("policies/capacity-policy-1.0.0.wasm")]);
    let store = |url: &str| format!("[store]\nkind = \"postgres\"\nurl = \"{url}\"\n");
    let prometheus = |url: &str| format!("[metrics]\nkind = \"prometheus\"\nurl = \"{url}\"\n[metrics.queries]\ncpu_pct = \"x\"\n");
    let redis = |channel: &str, url: &str| format!("[publish.{channel}]\nkind = \"redis\"\nurl = \"{url}\"\nkey = \"k\"\n");
    let case = |what, tables: String, env: Option<(&'static str, String)>, code, shows| Case { what, tables, env, code, shows };
    let cases = [
        case(
            "store.url with a password in the user info",
            store(&format!("postgres://sentinel:{SECRET}@127.0.0.1:1/db")),
            None,
            0,
            "postgres postgres://sentinel:***@127.0.0.1:1/db (lock key",
        ),
        case(
            "store.url with a password= query parameter",
            store(&format!("postgres://sentinel@127.0.0.1:1/db?sslmode=disable&password={SECRET}")),
            None,
            0,
            "postgres postgres://sentinel@127.0.0.1:1/db?sslmode=disable&password=*** (lock key",
        ),
        case(
            "store.url in libpq's key=value form",
            store(&format!("host=127.0.0.1 port=1 user=sentinel password={SECRET} dbname=db")),
            None,
            0,
            "host=127.0.0.1 port=1 user=sentinel password=*** dbname=db",
        ),
        case(
            "store.url that does not parse",
            store(&format!("postgres://sentinel:{SECRET}@127.0.0.1:notaport/db")),
            None,
            2,
            "store.url: the URL does not parse",
        ),
        case(
            "SENTINEL_POSTGRES_URL with a password= query parameter",
            store("postgres://sentinel@127.0.0.1:1/db"),
            Some(("SENTINEL_POSTGRES_URL", format!("postgres://sentinel@127.0.0.1:2/db?password={SECRET}&application_name=x"))),
            0,
            "postgres://sentinel@127.0.0.1:2/db?password=***&application_name=x",
        ),
        case(
            "metrics.url with a password in the user info",
            prometheus(&format!("http://u:{SECRET}@127.0.0.1:1")),
            None,
            0,
            "prometheus http://u:***@127.0.0.1:1 (cpu)",
        ),
        case(
            "metrics.url with a query",
            prometheus(&format!("http://u:{SECRET}@127.0.0.1:1/?x=1")),
            None,
            2,
            "metrics.url: \"http://u:***@127.0.0.1:1/?x=1\": a base URL has no query or fragment",
        ),
        case(
            "SENTINEL_PROMETHEUS_URL that is not http",
            prometheus("http://127.0.0.1:1"),
            Some(("SENTINEL_PROMETHEUS_URL", format!("ftp://u:{SECRET}@127.0.0.1:1"))),
            2,
            "metrics.url: \"ftp://u:***@127.0.0.1:1\": expected http(s)://host:port",
        ),
        case(
            "publish.cache.url with a password in the user info",
            redis("cache", &format!("redis://:{SECRET}@127.0.0.1:1/0")),
            None,
            0,
            "redis redis://:***@127.0.0.1:1/0 key k",
        ),
        case(
            "publish.parameter.url that does not parse",
            redis("parameter", &format!("redis://u:{SECRET}@127.0.0.1:notaport/0")),
            None,
            2,
            "publish.parameter.url: the URL redis://u:***@127.0.0.1:notaport/0 does not parse",
        ),
        case(
            "SENTINEL_REDIS_URL with a pass= query parameter",
            redis("cache", "redis://127.0.0.1:1/0"),
            Some(("SENTINEL_REDIS_URL", format!("redis+unix:///tmp/redis.sock?db=0&pass={SECRET}"))),
            0,
            "redis redis+unix:///tmp/redis.sock?db=0&pass=*** key k",
        ),
        case(
            "a TOML error on store.url's line",
            format!("[store]\nkind = \"postgres\"\nurl = \"postgres://sentinel:{SECRET}@db/x\" x\n"),
            None,
            2,
            "postgres://sentinel:***@db/x",
        ),
    ];
    for Case { what, tables, env, code, shows } in cases {
        let config = dir.path().join("sentinel.toml");
        std::fs::write(&config, format!("{tables}{}", policies.toml("1.0.0"))).expect("config");
        let mut cmd = Command::new(sentinel());
        cmd.arg("check").arg("--config").arg(&config).stdin(Stdio::null());
        for var in ["SENTINEL_POSTGRES_URL", "SENTINEL_PROMETHEUS_URL", "SENTINEL_REDIS_URL", "RUST_LOG"] {
            cmd.env_remove(var);
        }
        cmd.env("RUST_LOG", "trace,wasmtime=warn,cranelift_codegen=warn,wasmtime_internal_cranelift=warn,regalloc2=warn");
        if let Some((var, value)) = &env {
            cmd.env(var, value);
        }
        let out = cmd.output().expect("sentinel check runs");
        let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(code), "{what}: `sentinel check` exited {:?}:\n{text}", out.status);
        assert!(text.contains(shows), "{what}: does not show {shows:?}:\n{text}");
        assert!(!text.contains(SECRET), "{what}: shows the password:\n{text}");
    }
}
