//! The policy directory is assumed hostile (docs/threat-model.md): its files are read only after
//! the manifest's signature holds, only when they are regular files, and never past the signed
//! size (the second security review, finding 2: a FIFO hung `tick` and `check`, a link to
//! `/dev/zero` grew the process to 2.1 GB).

use super::{V1, install};
use crate::policy::lifecycle::manifest::{self, IntegrityError};
use crate::policy::lifecycle::signing::{self, Trust};
use std::path::Path;
use std::time::{Duration, Instant};

fn fifo(path: &Path) {
    assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// `verify` of version 1.0.0 in `dir`, which must answer within a second.
fn verify(dir: &Path, trust: &Trust) -> Result<manifest::Verified, IntegrityError> {
    let started = Instant::now();
    let answer = manifest::verify(&manifest::find(dir, "1.0.0").unwrap(), trust);
    assert!(started.elapsed() < Duration::from_secs(1), "verify waited {:?}", started.elapsed());
    answer
}

fn component(dir: &Path) -> std::path::PathBuf {
    dir.join(format!("{V1}.wasm"))
}

#[test]
fn an_unsigned_manifest_is_refused_before_its_component_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[V1]);
    std::fs::remove_file(component(dir.path())).unwrap();
    fifo(&component(dir.path()));
    let (_, public) = signing::keygen(&dir.path().join("k")).unwrap();
    let trust = Trust { key: Some(signing::read_public(&public).unwrap()), allow_unsigned: false };
    let Err(err) = verify(dir.path(), &trust) else { panic!("accepted") };
    assert!(matches!(err, IntegrityError::Signature { .. }), "the signature is checked first: {err}");
}

#[test]
fn a_fifo_a_device_or_a_link_is_refused_unread() {
    let trust = Trust { key: None, allow_unsigned: true };
    for (kind, plant) in [
        ("fifo", &(|p: &Path| fifo(p)) as &dyn Fn(&Path)),
        ("link to /dev/zero", &|p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
    ] {
        let dir = tempfile::tempdir().unwrap();
        install(dir.path(), &[V1]);
        let file = component(dir.path());
        std::fs::remove_file(&file).unwrap();
        plant(&file);
        let err = verify(dir.path(), &trust).err().unwrap_or_else(|| panic!("{kind}: accepted"));
        let IntegrityError::Missing { message, .. } = &err else { panic!("{kind}: {err}") };
        assert!(message.contains("not a regular file") || message.contains("symbolic link"), "{kind}: {err}");
    }
}

#[test]
fn a_component_larger_than_signed_is_read_one_byte_past_its_size_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[V1]);
    let file = component(dir.path());
    let signed = std::fs::metadata(&file).unwrap().len();
    let grown = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    grown.set_len(signed + (64 << 20)).unwrap();
    let Err(err) = verify(dir.path(), &Trust { key: None, allow_unsigned: true }) else { panic!("accepted") };
    let IntegrityError::Size { expected, actual, .. } = err else { panic!("{err}") };
    assert_eq!((expected, actual), (signed, signed + (64 << 20)), "the message gives the file's real size");
}
