//! What a config that cannot be used says, for the person who wrote it: a missing file says how
//! to make one; a misspelt key inside a table is shown on its own line (its value not echoed: it
//! may be a secret); a duration written as a bare number gets examples. Each through the real
//! binary, exit 2, nothing created.

use capacity_tests::bad_input::{Sandbox, embedded_config};

const STORE_TABLE: &str = "[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n";

/// The working config with `old` replaced by `new`.
fn swap(old: &str, new: &str) -> String {
    let text = embedded_config("");
    assert!(text.contains(old), "the base config holds {old:?}");
    text.replace(old, new)
}

#[test]
fn a_missing_or_unreadable_config_file_is_refused_naming_it() {
    let sb = Sandbox::new();
    let ran = sb.run(&["check", "--config", "nope.toml"]).expect_code(2);
    assert!(ran.stderr.contains("cannot read config nope.toml") && ran.stderr.contains("No such file"), "{}", ran.stderr);
    assert!(ran.stderr.contains("`sentinel init --signed DIR` writes a config"), "a missing config says how to make one: {}", ran.stderr);
    sb.write("binary.toml", b"\x89PNG\r\n\x1a\n\x00\xff");
    for args in [&["check", "--config", "binary.toml"][..], &["tick", "--config", "binary.toml"]] {
        let ran = sb.run(args).expect_code(2);
        assert!(ran.stderr.contains("cannot read config binary.toml") && ran.stderr.contains("UTF-8"), "{}", ran.stderr);
    }
    assert_eq!(sb.listing(), ["binary.toml"], "nothing created");
}

#[test]
fn an_unknown_key_is_shown_on_its_own_line_and_a_bare_number_for_a_duration_gets_examples() {
    let text = swap(STORE_TABLE, &format!("{STORE_TABLE}pth = \"y.db\"\n"));
    let line = text.lines().position(|l| l.starts_with("pth")).expect("the misspelt line") + 1;
    let sb = Sandbox::with_config(&text);
    let ran = sb.run(&["check", "--config", "sentinel.toml"]).expect_code(2);
    assert!(ran.stderr.contains(&format!("at line {line}, column 1")), "the misspelt key's line {line}: {}", ran.stderr);
    assert!(ran.stderr.contains(&format!("{line} | pth = ...\n")) && ran.stderr.contains("| ^^^\n"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("y.db"), "the misspelt key's value is not echoed (it may be a secret): {}", ran.stderr);
    let sb = Sandbox::with_config(&format!("tick_deadline = 20\n{}", embedded_config("")));
    let ran = sb.run(&["check", "--config", "sentinel.toml"]).expect_code(2);
    assert!(ran.stderr.contains("tick_deadline:") && ran.stderr.contains("such as \"20s\""), "{}", ran.stderr);
}
