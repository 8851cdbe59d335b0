//! Which contract (the WIT package `capacity:sentinel@<version>`) a component was built for,
//! and whether this sentinel runs it. A minor version adds exports and never changes one, so a
//! component of the same major version runs (wasmtime finds `decision@3.0.0` when the host asks
//! for `decision@3.1.0`); another major version is refused at activation, naming both.

/// The contract this sentinel's bindings were generated from (`wit/`); a test keeps the two equal.
pub const CONTRACT: &str = "3.2.0";

const PACKAGE: &str = "capacity:sentinel/";

/// The contract version of the first `capacity:sentinel/...@<version>` export, if any.
pub(crate) fn contract_of<'a>(exports: impl IntoIterator<Item = &'a str>) -> Option<String> {
    exports.into_iter().find_map(|name| name.strip_prefix(PACKAGE)?.split_once('@').map(|(_, v)| v.to_string()))
}

/// True when an export named `capacity:sentinel/<interface>@<version>` exists in any version.
pub(crate) fn exports_interface<'a>(exports: impl IntoIterator<Item = &'a str>, interface: &str) -> bool {
    exports.into_iter().any(|name| name.strip_prefix(PACKAGE).and_then(|rest| rest.split_once('@')).is_some_and(|(i, _)| i == interface))
}

/// Whether a component of contract `version` runs here: the same major version (and, before
/// 1.0, the same minor), as semantic versioning defines compatibility.
pub(crate) fn runs_here(version: &str) -> bool {
    fn parts(v: &str) -> Option<(u64, u64)> {
        let mut it = v.split(['.', '-', '+']);
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    }
    match (parts(version), parts(CONTRACT)) {
        (Some((0, minor)), Some((0, ours))) => minor == ours,
        (Some((major, _)), Some((ours, _))) => major == ours && major > 0,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constant_is_the_package_version_in_wit() {
        let worlds = include_str!("../../../../wit/worlds.wit");
        assert!(worlds.starts_with(&format!("package capacity:sentinel@{CONTRACT};")), "wit/worlds.wit and CONTRACT differ");
    }

    #[test]
    fn same_major_runs_and_another_is_refused() {
        for (v, runs) in [
            ("3.0.0", true),
            ("3.1.0", true),
            ("3.7.2", true),
            ("2.0.0", false),
            ("1.1.0", false),
            ("1.0.0", false),
            ("4.0.0", false),
            ("0.9.0", false),
            ("x", false),
            ("1", false),
        ] {
            assert_eq!(runs_here(v), runs, "{v}");
        }
    }

    #[test]
    fn the_contract_is_read_from_the_export_names() {
        let exports = ["other:pkg/x@3.0.0", "capacity:sentinel/admission-types@1.0.0", "capacity:sentinel/decision@1.0.0"];
        assert_eq!(contract_of(exports).as_deref(), Some("1.0.0"));
        assert!(exports_interface(exports, "decision") && !exports_interface(exports, "decisio"));
        assert_eq!(contract_of(["capacity:sentinel/decision"]), None);
    }
}
