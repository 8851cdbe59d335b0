//! Pins with every invalid field, through the command line (`sentinel pin set`, exit 4) on the
//! embedded SQLite store and on a real PostgreSQL (the API's refusals: `bad_input_pins_api.rs`).
//! A valid pin exists first; each refusal names the field, and the stored pin, the audit and
//! everything else stored or published stay byte for byte as they were.

use capacity_tests::bad_input::{FORGED_REASON, REVERSED_REASON, Sandbox, Snapshot, embedded_config, policy};
use capacity_tests::servers::postgres::Postgres;
use capacity_tests::signed::SignedPolicies;

/// `pin set` flags, and what the refusal must say.
struct CliCase {
    what: &'static str,
    state: &'static str,
    reason: String,
    expires_in: &'static str,
    actor: &'static str,
    /// `field: message` as printed after `pin refused, nothing changed: `.
    says: &'static str,
}

fn cli_cases() -> Vec<CliCase> {
    let c =
        |what, state, reason: &str, expires_in, actor, says| CliCase { what, state, reason: reason.to_string(), expires_in, actor, says };
    vec![
        c(
            "an unknown state",
            "sideways",
            "r",
            "1h",
            "ops@example.com",
            "state: must be one of normal, constrained, critical, emergency (got `sideways`)",
        ),
        c("a blank state", "", "r", "1h", "ops@example.com", "state: must be one of"),
        c("a blank reason", "critical", "", "1h", "ops@example.com", "reason: must not be blank"),
        c("a whitespace reason", "critical", " \t  ", "1h", "ops@example.com", "reason: must not be blank"),
        c(
            "a reason over 500 characters",
            "critical",
            &"x".repeat(501),
            "1h",
            "ops@example.com",
            "reason: must be at most 500 characters (got 501)",
        ),
        c("an expiry at now", "critical", "r", "0s", "ops@example.com", "expires_at: must be in the future"),
        c("an expiry just over 24 h ahead", "critical", "r", "24h 1min", "ops@example.com", "expires_at: must be at most 24 hours ahead"),
        c("an expiry days ahead", "critical", "r", "7days", "ops@example.com", "expires_at: must be at most 24 hours ahead"),
        c("an expiry that does not parse", "critical", "r", "soon", "ops@example.com", "expires_at: --expires-in `soon` is not a duration"),
        c("an expiry in the past", "critical", "r", "-1h", "ops@example.com", "expires_at: --expires-in `-1h` is not a duration"),
        c("an expiry too large to represent", "critical", "r", "99999999999999999h", "ops@example.com", "expires_at: --expires-in"),
        c("a blank actor", "critical", "r", "1h", "", "actor: must not be blank"),
        c("a whitespace actor", "critical", "r", "1h", "   ", "actor: must not be blank"),
        // Security review, finding 5: text that would forge a log line or read reversed.
        c(
            "a reason with a newline and a fake log line",
            "critical",
            "ok\n2026-01-01T00:00:00Z  INFO fake line",
            "1h",
            "ops@example.com",
            FORGED_REASON,
        ),
        c("a reason with a right-to-left override", "critical", "abc\u{202E}fed", "1h", "ops@example.com", REVERSED_REASON),
        c(
            "an actor with a newline and a fake log line",
            "critical",
            "r",
            "1h",
            "ops\n2026-01-01T00:00:00Z  INFO fake line",
            "actor: must not contain control characters (such as a line break or a tab) or bidirectional formatting characters (found U+000A at character 4)",
        ),
        c(
            "an actor with a bidirectional isolate",
            "critical",
            "r",
            "1h",
            "\u{2066}ops",
            "actor: must not contain control characters (such as a line break or a tab) or bidirectional formatting characters (found U+2066 at character 1)",
        ),
    ]
}

/// Runs every CLI case against `sb` (whose config names the store), checking each with
/// `stored` (what the store holds, read independently) and the sandbox's files.
fn refuse_every_cli_case(sb: &Sandbox, stored: &dyn Fn() -> Vec<String>) -> usize {
    let set = sb.sentinel(&[
        "pin",
        "set",
        "--state",
        "critical",
        "--reason",
        "the pin that must survive",
        "--expires-in",
        "2h",
        "--actor",
        "ops@example.com",
    ]);
    set.expect_code(0);
    let (rows, files, shown) = (stored(), sb.snapshot(), sb.sentinel(&["pin", "show"]).expect_code(0).stdout);
    assert!(shown.contains("the pin that must survive"), "{shown}");
    let mut refusals = 0;
    for case in cli_cases() {
        let args = ["pin", "set", "--state", case.state, "--reason", &case.reason, "--expires-in", case.expires_in, "--actor", case.actor];
        let ran = sb.sentinel(&args);
        let what = format!("{}: `{}`", case.what, ran.what);
        assert_eq!(ran.code, Some(4), "{what} exited {:?}\n{}", ran.code, ran.stderr);
        assert!(
            ran.stderr.contains(&format!("pin refused, nothing changed: {}", case.says)),
            "{what}: does not say {:?}:\n{}",
            case.says,
            ran.stderr
        );
        assert!(ran.stdout.is_empty(), "{what}: printed an audit record: {}", ran.stdout);
        assert_eq!(stored(), rows, "{what}: the stored pin or audit changed");
        assert_unchanged(sb, &files, &what);
        refusals += 1;
    }
    // Clearing needs an actor too; a missing flag is a usage error (exit 2) naming it.
    let ran = sb.sentinel(&["pin", "clear", "--actor", " "]);
    assert_eq!(ran.code, Some(4), "{ran:?}");
    assert!(ran.stderr.contains("pin refused, nothing changed: actor: must not be blank"), "{}", ran.stderr);
    let ran = sb.sentinel(&["pin", "set", "--state", "critical", "--expires-in", "1h", "--actor", "ops@example.com"]);
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(ran.stderr.contains("--reason") && ran.stderr.contains("required"), "{}", ran.stderr);
    assert_eq!(stored(), rows, "the stored pin or audit changed");
    assert_unchanged(sb, &files, "pin clear / a missing flag");
    assert_eq!(sb.sentinel(&["pin", "show"]).expect_code(0).stdout, shown, "the valid pin is still the one shown");

    // The limits themselves are accepted, and the checks above see a replaced pin.
    let at_limits =
        ["pin", "set", "--state", "emergency", "--reason", &"x".repeat(500), "--expires-in", "24h", "--actor", "ops@example.com"];
    sb.sentinel(&at_limits).expect_code(0);
    assert_ne!(stored(), rows, "a replaced pin shows in the store");
    refusals + 2
}

fn assert_unchanged(sb: &Sandbox, before: &Snapshot, what: &str) {
    let changes = sb.snapshot().changes_since(before);
    assert!(changes.is_empty(), "{what}: changed what is stored or published: {changes:#?}");
}

#[test]
fn every_invalid_pin_field_is_refused_by_the_cli_naming_it_and_changes_nothing() {
    let sb = Sandbox::with_config(&embedded_config(""));
    // Something stored and published besides the pin: one tick.
    sb.sentinel(&["tick"]).expect_code(0);
    // The SQLite snapshot holds every row; the pin and audit rows are checked through it.
    let stored = || {
        let tables = sb.snapshot().tables.expect("the store exists");
        [&tables["pin"], &tables["pin_audit"]].into_iter().flatten().cloned().collect::<Vec<String>>()
    };
    let refused = refuse_every_cli_case(&sb, &stored);
    eprintln!("{refused} invalid pins refused on SQLite");
}

#[test]
fn every_invalid_pin_field_is_refused_on_postgres_and_its_rows_stay_byte_for_byte() {
    let pg = Postgres::start();
    let sb = Sandbox::new();
    let signed = SignedPolicies::install(sb.dir.path(), &[policy()]);
    let config = format!("[store]\nkind = \"postgres\"\nurl = \"{}\"\n{}", pg.url(), signed.toml("1.0.0"));
    sb.write("sentinel.toml", config);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let dsn = pg.dsn();
    // Every row of the pin and audit tables as PostgreSQL renders it.
    let stored = || {
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&dsn, tokio_postgres::NoTls).await.expect("connecting");
            tokio::spawn(connection);
            let mut rows = Vec::new();
            for table in ["pin", "pin_audit"] {
                let sql = format!("SELECT row_to_json(t)::text FROM {table} t ORDER BY 1");
                for row in client.query(&sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}")) {
                    rows.push(format!("{table}: {}", row.get::<_, String>(0)));
                }
            }
            rows
        })
    };
    let refused = refuse_every_cli_case(&sb, &stored);
    eprintln!("{refused} invalid pins refused on PostgreSQL");
}
