//! Broken configuration through `sentinel check` and `sentinel tick`: every key with a bad
//! value (wrong type, out of range, unknown keys at each level, unknown adapter kinds, blank
//! names, unparseable URLs and addresses, missing referenced files, bad token hashes, bad
//! `[policies]` values, and the rule that outside the embedded default only signed policies
//! run). Each exits 2 with a message naming the key (and what to do where an operator needs
//! it), prints no report, and creates or publishes nothing: no store file, no channel file, no
//! policy state, the sandbox's files exactly as they were.
//!
//! Longer than 400 lines: one table of every broken key (over 60 cases) with the runner that
//! proves each through two commands; split, the table would no longer show the whole config.

use capacity_tests::bad_input::{CACHE, PARAMETER, STORE, Sandbox, embedded_config, policy, without_policy_file};
use capacity_tests::signed::SignedPolicies;

/// One broken config.
struct Case {
    what: &'static str,
    toml: String,
    /// Install signed policies in the sandbox (`policies/`, `keys/`) first.
    signed: bool,
    /// The key the message names.
    key: &'static str,
    /// What else it must say (the problem, and what to do).
    says: &'static [&'static str],
}

const STORE_TABLE: &str = "[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n";
const CACHE_TABLE: &str = "[publish.cache]\nkind = \"file\"\npath = \"out/cache.json\"\n";
const PARAMETER_TABLE: &str = "[publish.parameter]\nkind = \"file\"\npath = \"out/parameter.json\"\n";
const SIGNED: &str = "[policies]\ndir = \"policies\"\npublic_key = \"keys/policy.pub\"\nactive = \"1.0.0\"\n";
const REDIS: &str = "[publish.cache]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:6379/0\"\n";
const PROMETHEUS: &str = "[metrics]\nkind = \"prometheus\"\nurl = \"http://127.0.0.1:9090\"\n";
const HASH: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

/// The working config with a top-level `line` added.
fn top(line: &str) -> String {
    format!("{line}\n{}", embedded_config(""))
}

/// The working config with `tables` appended (a `[policies]` table replaces the single
/// `policy` file: a config may not name both).
fn with(tables: &str) -> String {
    let text = format!("{}{tables}", embedded_config(""));
    if tables.contains("[policies]") { without_policy_file(&text) } else { text }
}

/// The working config with `old` (a whole table or line of it) replaced by `new`.
fn swap(old: &str, new: &str) -> String {
    let text = embedded_config("");
    assert!(text.contains(old), "the base config holds {old:?}");
    text.replace(old, new)
}

fn case(what: &'static str, toml: String, key: &'static str, says: &'static [&'static str]) -> Case {
    Case { what, toml, signed: false, key, says }
}

fn signed(what: &'static str, toml: String, key: &'static str, says: &'static [&'static str]) -> Case {
    Case { what, toml: without_policy_file(&toml), signed: true, key, says }
}

fn cases() -> Vec<Case> {
    let policy_line = format!("policy = {:?}", policy().display().to_string());
    let tokens = |list: &str| with(&format!("[api]\ntokens = [{list}]\n"));
    vec![
        // The file and the top level.
        case("TOML that does not parse", top("tick_deadline = \"20s"), "line 1", &["TOML parse error", "invalid basic string"]),
        case("a duration that is a number", top("tick_deadline = 5"), "tick_deadline", &["expected a duration"]),
        case("a duration that does not parse", top("tick_deadline = \"soon\""), "tick_deadline", &["TOML parse error"]),
        case("tick_deadline of zero", top("tick_deadline = \"0s\""), "tick_deadline", &["must be between 1s and 50s"]),
        case("tick_deadline over 50 s", top("tick_deadline = \"2m\""), "tick_deadline", &["must be between 1s and 50s"]),
        case("throttles_enabled as a string", top("throttles_enabled = \"yes\""), "throttles_enabled", &["expected a boolean"]),
        case("an unknown top-level key", top("tick_dedline = \"20s\""), "tick_dedline", &["unknown field", "expected one of"]),
        case("policy as a number", swap(&policy_line, "policy = 42"), "policy", &["invalid type"]),
        case(
            "a policy file that does not exist",
            swap(&policy_line, "policy = \"missing.wasm\""),
            "policy",
            &["missing.wasm", "cargo policies"],
        ),
        case(
            "policy_limits.deadline too short",
            with("[policy_limits]\ndeadline = \"1ms\"\n"),
            "policy_limits.deadline",
            &["must be between 10ms and 10s"],
        ),
        case(
            "policy_limits.memory_mib of 0",
            with("[policy_limits]\nmemory_mib = 0\n"),
            "policy_limits.memory_mib",
            &["must be between 1 and 1024"],
        ),
        case(
            "policy_limits.memory_mib negative",
            with("[policy_limits]\nmemory_mib = -1\n"),
            "policy_limits.memory_mib",
            &["expected u64"],
        ),
        case("an unknown key in [policy_limits]", with("[policy_limits]\ncpu = 1\n"), "policy_limits", &["unknown field `cpu`"]),
        // [store]
        case(
            "an unknown store kind",
            swap(STORE_TABLE, "[store]\nkind = \"mysql\"\npath = \"x\"\n"),
            "store.kind",
            &["unknown variant `mysql`", "`sqlite` or `postgres`"],
        ),
        case("a sqlite store without a path", swap(STORE_TABLE, "[store]\nkind = \"sqlite\"\n"), "store", &["missing field `path`"]),
        case("an unknown key in [store]", swap(STORE_TABLE, &format!("{STORE_TABLE}pth = \"y.db\"\n")), "store", &["unknown field `pth`"]),
        case("a store path that is a number", swap(STORE_TABLE, "[store]\nkind = \"sqlite\"\npath = 5\n"), "store", &["invalid type"]),
        case("a postgres store without a url", swap(STORE_TABLE, "[store]\nkind = \"postgres\"\n"), "store", &["missing field `url`"]),
        case(
            "a postgres timeout out of range",
            swap(STORE_TABLE, "[store]\nkind = \"postgres\"\nurl = \"postgres://db/s\"\ntimeout = \"1ms\"\n"),
            "store.timeout",
            &["must be between 100ms and 20s"],
        ),
        signed(
            "a postgres url that does not parse",
            swap(STORE_TABLE, "[store]\nkind = \"postgres\"\nurl = \"::nope\"\n") + SIGNED,
            "store.url",
            &["the URL does not parse", "postgres://USER"],
        ),
        signed(
            "a postgres url without a host",
            swap(STORE_TABLE, "[store]\nkind = \"postgres\"\nurl = \"dbname=sentinel\"\n") + SIGNED,
            "store.url",
            &["names no host"],
        ),
        // [metrics]
        case("an unknown key in [metrics]", with("[metrics]\nkind = \"synthetic\"\nspeed = 2\n"), "metrics", &["unknown field `speed`"]),
        case(
            "an unknown metrics kind",
            with("[metrics]\nkind = \"carrier-pigeon\"\n"),
            "metrics.kind",
            &["unknown variant `carrier-pigeon`"],
        ),
        case(
            "a read timeout over the tick deadline",
            with("[metrics]\nkind = \"synthetic\"\ntimeout = \"30s\"\n"),
            "metrics.timeout",
            &["must be between 10ms and 20s"],
        ),
        case("a trace source without a path", with("[metrics]\nkind = \"trace\"\n"), "metrics", &["missing field `path`"]),
        case(
            "a trace file that does not exist",
            with("[metrics]\nkind = \"trace\"\npath = \"missing.jsonl\"\n"),
            "metrics.path",
            &["missing.jsonl", "No such file", "check [metrics] path"],
        ),
        // A Prometheus source is a deployment: it runs signed policies only.
        signed(
            "a prometheus url that does not parse",
            with("[metrics]\nkind = \"prometheus\"\nurl = \"not a url\"\n[metrics.queries]\ncpu_pct = \"up\"\n") + SIGNED,
            "metrics.url",
            &["\"not a url\"", "write http(s)://HOST:PORT"],
        ),
        case("a prometheus source without queries", with(PROMETHEUS), "metrics", &["missing field `queries`"]),
        signed(
            "an empty [metrics.queries]",
            with(&format!("{PROMETHEUS}[metrics.queries]\n")) + SIGNED,
            "metrics.queries",
            &["no query configured", "set at least one of cpu_pct"],
        ),
        signed(
            "a blank query",
            with(&format!("{PROMETHEUS}[metrics.queries]\ncpu_pct = \"  \"\n")) + SIGNED,
            "metrics.queries.cpu_pct",
            &["is empty", "write a PromQL query"],
        ),
        signed(
            "a blank latency_label",
            with(&format!("{PROMETHEUS}[metrics.queries]\ncpu_pct = \"up\"\nlatency_label = \"\"\n")) + SIGNED,
            "metrics.queries.latency_label",
            &["is empty", "name the label"],
        ),
        case(
            "an unknown query key",
            with(&format!("{PROMETHEUS}[metrics.queries]\ncpu = \"up\"\n")),
            "metrics",
            &["unknown field `cpu`", "cpu_pct"],
        ),
        case("a query that is a number", with(&format!("{PROMETHEUS}[metrics.queries]\ncpu_pct = 5\n")), "metrics", &["invalid type"]),
        // [publish]
        case("an unknown key in [publish]", with("[publish]\nretries = 3\n"), "publish", &["unknown field `retries`"]),
        case("a publish timeout of zero", with("[publish]\ntimeout = \"0s\"\n"), "publish.timeout", &["must be between 10ms and 20s"]),
        case(
            "an unknown channel kind",
            swap(CACHE_TABLE, "[publish.cache]\nkind = \"kafka\"\n"),
            "publish.cache.kind",
            &["unknown variant `kafka`"],
        ),
        case(
            "a file channel without a path",
            swap(CACHE_TABLE, "[publish.cache]\nkind = \"file\"\n"),
            "publish.cache",
            &["missing field `path`"],
        ),
        case(
            "an unknown key in a channel",
            swap(PARAMETER_TABLE, &format!("{PARAMETER_TABLE}mode = \"0600\"\n")),
            "publish.parameter",
            &["unknown field `mode`"],
        ),
        case(
            "both channels on one file",
            swap(PARAMETER_TABLE, "[publish.parameter]\nkind = \"file\"\npath = \"out/cache.json\"\n"),
            "publish.parameter.path",
            &["must differ from publish.cache.path"],
        ),
        case(
            "a redis expiry under a minute",
            swap(CACHE_TABLE, &format!("{REDIS}expiry = \"10s\"\n")),
            "publish.cache.expiry",
            &["must be between 1m and 1 day"],
        ),
        case(
            "an ssm name without its leading slash",
            swap(PARAMETER_TABLE, "[publish.parameter]\nkind = \"ssm\"\nname = \"capacity/state\"\n"),
            "publish.parameter.name",
            &["starts with /"],
        ),
        case(
            "a blank ssm name",
            swap(PARAMETER_TABLE, "[publish.parameter]\nkind = \"ssm\"\nname = \" \"\n"),
            "publish.parameter.name",
            &["must not be blank"],
        ),
        signed(
            "a redis url that does not parse",
            swap(CACHE_TABLE, "[publish.cache]\nkind = \"redis\"\nurl = \"::nope\"\n") + SIGNED,
            "publish.cache.url",
            &["does not parse", "expected redis://"],
        ),
        signed(
            "a blank redis key",
            swap(CACHE_TABLE, &format!("{REDIS}key = \"\"\n")) + SIGNED,
            "publish.cache.key",
            &["the key is empty"],
        ),
        // [stages]
        case(
            "an unknown stage controller",
            with("[stages]\ncontroller = { kind = \"magic\" }\n"),
            "stages.controller.kind",
            &["unknown variant `magic`"],
        ),
        case("an unknown key in [stages]", with("[stages]\ntarget = []\n"), "stages", &["unknown field `target`"]),
        // [api]
        case("an api address that does not parse", with("[api]\naddress = \"localhost\"\n"), "api.address", &["invalid socket address"]),
        case("an unknown key in [api]", with("[api]\nadress = \"127.0.0.1:1\"\n"), "api", &["unknown field `adress`"]),
        case(
            "a token hash that is not hex",
            tokens("{ name = \"alice\", role = \"staff\", sha256 = \"hunter2\" }"),
            "api.tokens[0].sha256",
            &["must be 64 hex digits", "sha256sum"],
        ),
        case(
            "an unknown role",
            tokens(&format!("{{ name = \"alice\", role = \"root\", sha256 = \"{HASH}\" }}")),
            "api.tokens[0].role",
            &["unknown variant `root`"],
        ),
        case(
            "a blank token name",
            tokens(&format!("{{ name = \" \", role = \"staff\", sha256 = \"{HASH}\" }}")),
            "api.tokens[0].name",
            &["must not be blank"],
        ),
        case(
            "two tokens with one name",
            tokens(&format!(
                "{{ name = \"a\", role = \"staff\", sha256 = \"{HASH}\" }}, {{ name = \"a\", role = \"viewer\", sha256 = \"{}\" }}",
                HASH.replace('2', "3")
            )),
            "api.tokens[1].name",
            &["already the name of tokens[0]"],
        ),
        case(
            "a plain token in the config",
            tokens(&format!("{{ name = \"a\", role = \"staff\", sha256 = \"{HASH}\", token = \"hunter2\" }}")),
            "api.tokens[0]",
            &["unknown field `token`"],
        ),
        // [policies]
        case("[policies] without dir", with("[policies]\npublic_key = \"keys/policy.pub\"\n"), "policies", &["missing field `dir`"]),
        case(
            "[policies] without a public key",
            with("[policies]\ndir = \"policies\"\n"),
            "policies.public_key",
            &["is required unless allow_unsigned = true"],
        ),
        case(
            "allow_unsigned as a string",
            with("[policies]\ndir = \"policies\"\nallow_unsigned = \"yes\"\n"),
            "policies.allow_unsigned",
            &["expected a boolean"],
        ),
        case(
            "a poll out of range",
            with("[policies]\ndir = \"p\"\nallow_unsigned = true\npoll = \"1ms\"\n"),
            "policies.poll",
            &["must be between 100ms and 1h"],
        ),
        case(
            "a blank active version",
            with("[policies]\ndir = \"p\"\nallow_unsigned = true\nactive = \"\"\n"),
            "policies.active",
            &["must not be blank"],
        ),
        case(
            "a blank shadow version",
            with("[policies]\ndir = \"p\"\nallow_unsigned = true\nshadow = \" \"\n"),
            "policies.shadow",
            &["must not be blank"],
        ),
        case(
            "an unknown key in [policies]",
            with("[policies]\ndir = \"p\"\nallow_unsigned = true\nactiv = \"1.0.0\"\n"),
            "policies",
            &["unknown field `activ`"],
        ),
        case(
            "a policy dir that does not exist",
            with("[policies]\ndir = \"nowhere\"\nallow_unsigned = true\n"),
            "policies.dir",
            &["is not a directory", "sentinel policy sign"],
        ),
        signed(
            "a public key file that does not exist",
            with(&SIGNED.replace("keys/policy.pub", "keys/missing.pub")),
            "policies.public_key",
            &["cannot read public key", "sentinel policy keygen"],
        ),
        signed(
            "a public key file that is not a key",
            with(&SIGNED.replace("keys/policy.pub", "policies/capacity-policy-1.0.0.manifest.json")),
            "policies.public_key",
            &["public key"],
        ),
        // Outside the embedded default only signed policies run.
        case(
            "a policy file and [policies] together",
            format!("{}{SIGNED}", embedded_config("")),
            "policy",
            &["is set together with [policies]", "remove `policy`"],
        ),
        case(
            "prometheus metrics with a single policy file",
            with(&format!("{PROMETHEUS}[metrics.queries]\ncpu_pct = \"x\"\n")),
            "policies",
            &["is required with metrics.kind = \"prometheus\""],
        ),
        case(
            "an API beyond loopback with a single policy file",
            with("[api]\naddress = \"0.0.0.0:8080\"\n"),
            "policies",
            &["api.address = \"0.0.0.0:8080\" (not loopback)"],
        ),
        case(
            "redis with a single policy file",
            swap(CACHE_TABLE, REDIS),
            "policies",
            &["is required with publish.cache.kind = \"redis\"", "sentinel policy sign"],
        ),
        case(
            "postgres with a single policy file",
            swap(STORE_TABLE, "[store]\nkind = \"postgres\"\nurl = \"postgres://db/s\"\n"),
            "policies",
            &["is required with store.kind = \"postgres\""],
        ),
        case(
            "ssm with a single policy file",
            swap(PARAMETER_TABLE, "[publish.parameter]\nkind = \"ssm\"\nname = \"/capacity/state\"\n"),
            "policies",
            &["is required with publish.parameter.kind = \"ssm\""],
        ),
        case(
            "api-gateway stages with a single policy file",
            with("[stages]\ncontroller = { kind = \"api-gateway\" }\n"),
            "policies",
            &["is required with stages.controller = \"api-gateway\""],
        ),
        signed(
            "redis with unsigned policies allowed",
            swap(CACHE_TABLE, REDIS) + &SIGNED.replace("active = \"1.0.0\"\n", "allow_unsigned = true\n"),
            "policies.allow_unsigned",
            &["is allowed only with the embedded default", "sign the manifests"],
        ),
    ]
}

#[test]
fn every_broken_config_is_refused_by_check_and_tick_naming_the_key_and_creates_nothing() {
    let cases = cases();
    for case in &cases {
        let sb = Sandbox::with_config(&case.toml);
        if case.signed {
            SignedPolicies::install(sb.dir.path(), &[policy()]);
        }
        let before = sb.listing();
        let snapshot = sb.snapshot();
        for args in [&["check"][..], &["tick", "--at", "2026-10-20T14:00:00Z"]] {
            let ran = sb.sentinel(args);
            let shown = format!("{}: `{}` exited {:?}\nstdout:\n{}\nstderr:\n{}", case.what, ran.what, ran.code, ran.stdout, ran.stderr);
            assert_eq!(ran.code, Some(2), "{shown}");
            assert!(ran.stderr.contains(case.key), "does not name {:?}: {shown}", case.key);
            for says in case.says {
                assert!(ran.stderr.contains(says), "does not say {says:?}: {shown}");
            }
            assert!(!ran.stderr.contains("panicked"), "{shown}");
            assert!(ran.stdout.is_empty(), "printed a report for a refused config: {shown}");
            assert!(!ran.stderr.contains("hunter2"), "a token-like value is echoed: {shown}");
            assert_eq!(sb.listing(), before, "{}: `{}` created or removed files", case.what, ran.what);
            assert!(sb.snapshot().changes_since(&snapshot).is_empty(), "{}: `{}` changed a file", case.what, ran.what);
            assert!(!sb.path(STORE).exists() && !sb.path(CACHE).exists() && !sb.path(PARAMETER).exists(), "{shown}");
        }
    }
    eprintln!("{} broken configs refused by check and tick", cases.len());
}

#[test]
fn the_unbroken_config_checks_ticks_and_publishes() {
    // The control: the base every case breaks is valid, and the sandbox sees what a tick
    // creates, so the cases above would notice a store or a document being written.
    let sb = Sandbox::with_config(&embedded_config(""));
    let report = sb.sentinel(&["check"]).expect_code(0);
    assert!(report.stdout.contains("\"version\": \"1.0.0\""), "{}", report.stdout);
    assert_eq!(sb.listing(), ["sentinel.toml"], "check creates nothing");
    sb.sentinel(&["tick", "--at", "2026-10-20T14:00:00Z"]).expect_code(0);
    let listing = sb.listing();
    for file in [STORE, CACHE, PARAMETER] {
        assert!(listing.iter().any(|f| f == file), "a tick writes {file}: {listing:?}");
    }
}
