//! What a new operator meets on the first day, as the quick install shows it: the live line of
//! `sentinel run` says what its marks and times mean, `sentinel policy --help` says what the
//! command does, and the scaffold of `policy new` ships with the same folder the README uses.

use capacity_tests::sentinel_bin::sentinel;
use std::process::Command;

#[test]
fn the_live_line_names_its_channels_and_its_time_zone() {
    let dir = tempfile::tempdir().unwrap();
    // `script` gives the run a terminal, where the live line is printed.
    let shown = format!("{} run --speed 600 --ticks 2", sentinel().display());
    let out =
        Command::new("script").args(["-qec", &shown, "/dev/null"]).current_dir(dir.path()).output().expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines[0].starts_with("times in UTC (the Z)") && lines[0].contains("+ published, ! failed"), "the header: {text}");
    let ticks: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with('[')).collect();
    assert_eq!(ticks.len(), 2, "{text}");
    for line in ticks {
        assert!(line.ends_with("cache+ parameter+"), "each channel by name: {line}");
        let time = line.split_whitespace().nth(1).unwrap_or_default();
        assert!(time.len() == 6 && time.ends_with('Z'), "the minute in UTC, marked: {line}");
    }
}

#[test]
fn policy_help_says_it_builds_signs_and_ships_and_the_scaffold_builds_into_dist() {
    let out = Command::new(sentinel()).args(["--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let line = help.lines().find(|l| l.trim_start().starts_with("policy ")).expect("a policy line");
    for word in ["build", "tune", "sign", "activate", "promote"] {
        assert!(line.contains(word), "`sentinel --help` says what `policy` does: {line}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(sentinel())
        .args(["policy", "new", "1.4.0", "--from", "1.0.0", "--dir", "policies"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let readme = std::fs::read_to_string(dir.path().join("policies/1.4.0/README.md")).unwrap();
    let repository_readme = std::fs::read_to_string(capacity_tests::paths::workspace().join("README.md")).unwrap();
    assert!(repository_readme.contains("sentinel policy build policies/1.1.0 -o dist "), "the README builds into dist/");
    assert!(readme.contains("sentinel policy build policies/1.4.0 -o dist/") && !readme.contains("build/"), "{readme}");
    assert!(said.contains("-o dist/`") && !said.contains("build/"), "{said}");
}
