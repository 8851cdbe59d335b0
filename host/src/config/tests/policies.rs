//! The `[policies]` table as the configuration file reads it.

use crate::config::Config;
use std::path::Path;
use std::path::PathBuf;

fn parse(table: &str) -> Result<Config, String> {
    Config::parse(&format!("[policies]\n{table}"), Path::new("/etc/sentinel/sentinel.toml")).map_err(|e| e.to_string())
}

#[test]
fn a_policies_table_resolves_its_paths_against_the_config_file() {
    let c = parse("dir = \"policies\"\npublic_key = \"keys/p.pub\"\nactive = \"2.0.0\"\nshadow = \"3.0.0\"\n").unwrap();
    let p = c.policies.unwrap();
    assert_eq!(p.dir, Path::new("/etc/sentinel/policies"));
    assert_eq!(p.public_key.as_deref(), Some(Path::new("/etc/sentinel/keys/p.pub")));
    assert_eq!(p.active, crate::config::policies::Selection::Version("2.0.0".into()));
    assert!(!p.allow_unsigned && p.precompiled_cache);
}

#[test]
fn a_policies_table_needs_a_public_key_unless_unsigned_is_allowed_and_refuses_unknown_keys() {
    assert!(parse("dir = \"p\"\n").unwrap_err().contains("policies.public_key: is required unless allow_unsigned = true"));
    assert_eq!(parse("dir = \"p\"\nallow_unsigned = true\n").unwrap().policies.unwrap().active, crate::config::policies::Selection::Latest);
    assert!(parse("dir = \"p\"\nallow_unsigned = true\nactiv = \"1\"\n").unwrap_err().contains("unknown field"));
}

const REDIS: &str = "[publish.cache]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:6379/0\"\n";

fn load(text: &str) -> Result<Config, String> {
    Config::parse(text, Path::new("/etc/sentinel/sentinel.toml")).map_err(|e| e.to_string())
}

#[test]
fn outside_the_embedded_default_a_single_unsigned_policy_file_is_refused() {
    let err = load(&format!("policy = \"p.wasm\"\n{REDIS}")).unwrap_err();
    assert!(err.contains("policies: is required with publish.cache.kind = \"redis\""), "{err}");
    assert!(err.contains("sentinel policy sign"), "says what to do: {err}");
    let err = load("[store]\nkind = \"postgres\"\nurl = \"postgres://db/s\"\n").unwrap_err();
    assert!(err.contains("store.kind = \"postgres\""), "{err}");
    let err = load("[stages]\ncontroller = { kind = \"api-gateway\" }\n").unwrap_err();
    assert!(err.contains("stages.controller"), "{err}");
    let err = load("[publish.parameter]\nkind = \"ssm\"\nname = \"/capacity/state\"\n").unwrap_err();
    let expected = if cfg!(feature = "aws") { "publish.parameter.kind = \"ssm\"" } else { "publish.parameter.kind: kind = \"ssm\" needs" };
    assert!(err.contains(expected), "{err}");
}

#[test]
fn allow_unsigned_is_refused_outside_the_embedded_default_and_signed_policies_load() {
    let err = load(&format!("{REDIS}[policies]\ndir = \"p\"\nallow_unsigned = true\n")).unwrap_err();
    assert!(err.contains("policies.allow_unsigned: is allowed only with the embedded default"), "{err}");
    let err = load(&format!("{REDIS}[policies]\ndir = \"p\"\npublic_key = \"k.pub\"\nallow_unsigned = true\n")).unwrap_err();
    assert!(err.contains("policies.allow_unsigned"), "a key does not make unsigned manifests acceptable: {err}");
    assert!(load(&format!("{REDIS}[policies]\ndir = \"p\"\npublic_key = \"k.pub\"\n")).is_ok());
    // The embedded default may still run a single file or unsigned manifests.
    load("policy = \"p.wasm\"\n").unwrap();
    assert!(load("[policies]\ndir = \"p\"\nallow_unsigned = true\n").is_ok());
}

/// "Embedded default" means no server reached and the API on loopback only: a metrics
/// server or an API other machines can reach needs signed policies too.
#[test]
fn a_prometheus_source_or_an_api_beyond_loopback_is_not_the_embedded_default() {
    let prometheus = "[metrics]\nkind = \"prometheus\"\nurl = \"http://127.0.0.1:9090\"\n[metrics.queries]\ncpu_pct = \"x\"\n";
    let err = load(&format!("policy = \"p.wasm\"\n{prometheus}")).unwrap_err();
    assert!(err.contains("policies: is required with metrics.kind = \"prometheus\""), "{err}");
    let err = load(&format!("{prometheus}[policies]\ndir = \"p\"\nallow_unsigned = true\n")).unwrap_err();
    assert!(err.contains("policies.allow_unsigned: is allowed only with the embedded default"), "{err}");
    let err = load("[api]\naddress = \"0.0.0.0:8080\"\n[policies]\ndir = \"p\"\nallow_unsigned = true\n").unwrap_err();
    assert!(err.contains("api.address = \"0.0.0.0:8080\" (not loopback)"), "{err}");
    load("[api]\naddress = \"127.0.0.1:8080\"\n[policies]\ndir = \"p\"\nallow_unsigned = true\n").unwrap();
    load("[api]\naddress = \"[::1]:8080\"\n").unwrap();
}

#[test]
fn a_config_with_both_a_policy_file_and_a_policies_table_is_refused_naming_both() {
    let err = load("policy = \"p.wasm\"\n[policies]\ndir = \"p\"\npublic_key = \"k.pub\"\n").unwrap_err();
    assert!(err.contains("policy: is set together with [policies]") && err.contains("remove `policy`"), "{err}");
}

#[test]
fn the_private_state_directory_defaults_beside_the_config_and_may_not_be_inside_the_policy_directory() {
    let c = load("[policies]\ndir = \"p\"\npublic_key = \"k.pub\"\nminimum_version = \"2.0.0\"\n").unwrap().policies.unwrap();
    assert_eq!(c.state_dir, PathBuf::from("/etc/sentinel/sentinel-state"));
    assert_eq!(c.minimum_version.as_deref(), Some("2.0.0"));
    let err = load("[policies]\ndir = \"p\"\npublic_key = \"k.pub\"\nstate_dir = \"p/.state\"\n").unwrap_err();
    assert!(err.contains("policies.state_dir: /etc/sentinel/p/.state is inside policies.dir"), "{err}");
    assert!(
        load("[policies]\ndir = \"p\"\npublic_key = \"k.pub\"\nminimum_version = \" \"\n")
            .unwrap_err()
            .contains("policies.minimum_version")
    );
}
