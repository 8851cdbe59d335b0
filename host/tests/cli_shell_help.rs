//! `sentinel completions SHELL` and `sentinel man`: generated from the CLI definition, so a
//! real bash completes the real commands and groff reads every page without a warning.

use std::process::Command;

fn sentinel(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_sentinel")).args(args).env("RUST_LOG", "off").output().unwrap();
    assert!(out.status.success(), "sentinel {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// What bash's completion offers after `words`, with the cursor on the last word.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        "source {}; COMP_WORDS=({line}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; _sentinel sentinel {} {}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash").args(["--norc", "-c", &program]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn bash_completes_the_commands_and_their_flags() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("sentinel.bash");
    std::fs::write(&script, sentinel(&["completions", "bash"]).stdout).unwrap();
    assert_eq!(bash_completes(&script, &["sentinel", "po"]), ["policy"]);
    assert_eq!(bash_completes(&script, &["sentinel", "policy", "tu"]), ["tune"]);
    assert!(bash_completes(&script, &["sentinel", "trace", "import", "--rep"]).contains(&"--repeated-timestamps".to_string()));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let text = String::from_utf8(sentinel(&["completions", shell]).stdout).unwrap();
        assert!(text.contains("tune") && text.contains("repeated-timestamps"), "{shell}: {text}");
    }
}

#[test]
fn the_man_pages_cover_every_command_and_read_cleanly() {
    let page = String::from_utf8(sentinel(&["man"]).stdout).unwrap();
    assert!(page.contains(".TH sentinel 1"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    sentinel(&["man", "--out-dir", &dir.path().display().to_string()]);
    let mut pages: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    pages.sort();
    for expected in
        ["sentinel.1", "sentinel-run.1", "sentinel-policy-tune.1", "sentinel-trace-import.1", "sentinel-init.1", "sentinel-completions.1"]
    {
        assert!(pages.iter().any(|p| p == expected), "{expected} in {pages:?}");
    }
    // Every page the first one refers to exists.
    let referred: Vec<&str> = page.lines().filter_map(|l| l.strip_prefix("sentinel\\-")?.strip_suffix("(1)")).collect();
    assert_eq!(referred.len(), 14, "one per command: {referred:?}");
    for name in referred {
        let file = format!("sentinel-{}.1", name.replace("\\-", "-"));
        assert!(pages.contains(&file), "{file} is referred to but not written: {pages:?}");
    }
    // groff reads each without a warning (-ww: all warnings; -z: no output).
    for name in &pages {
        let out = Command::new("groff").args(["-man", "-Tutf8", "-ww", "-z"]).arg(dir.path().join(name)).output().unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
