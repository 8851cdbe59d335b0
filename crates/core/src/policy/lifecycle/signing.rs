//! ed25519 signatures over manifests. A key pair is two hex files: `NAME.key` (the 32-byte
//! secret, mode 0600) and `NAME.pub` (the 32-byte public key). A signature is
//! `X.manifest.sig`: JSON with the signer's public key and the signature of the manifest's
//! exact bytes, both hex.

use super::entry::Entry;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Which manifests the sentinel loads.
#[derive(Debug, Clone)]
pub struct Trust {
    /// Manifests signed by this key load.
    pub key: Option<VerifyingKey>,
    /// Unsigned manifests load too (with a warning): the embedded default only.
    pub allow_unsigned: bool,
}

/// What the signature beside a manifest says, checked against the trusted key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "kebab-case")]
pub enum SignatureStatus {
    /// Signed by the trusted key.
    Valid,
    /// Signed and the signature verifies, but by a key that is not the trusted one.
    OtherKey(String),
    /// No `.manifest.sig` beside the manifest.
    Unsigned,
    /// The signature does not verify: the manifest or the signature was changed.
    Invalid(String),
}

impl SignatureStatus {
    /// A few words for `policy verify`: `valid`, `unsigned`, `signed by untrusted key <its first 16
    /// hex digits>` or `INVALID: <why>`.
    pub fn label(&self) -> String {
        match self {
            SignatureStatus::Valid => "valid".into(),
            SignatureStatus::OtherKey(k) => format!("signed by untrusted key {}", &k[..k.len().min(16)]),
            SignatureStatus::Unsigned => "unsigned".into(),
            SignatureStatus::Invalid(why) => format!("INVALID: {why}"),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureFile {
    key: String,
    signature: String,
}

/// Where the signature of `entry`'s manifest is: `X.manifest.sig` beside `X.manifest.json`.
pub(crate) fn signature_path(entry: &Entry) -> PathBuf {
    entry.manifest_path.with_extension("sig")
}

/// What the signature beside `entry` says, against `trust`.
pub fn check(entry: &Entry, trust: &Trust) -> SignatureStatus {
    let path = signature_path(entry);
    let text = match crate::plain_files::read_whole(&path, 4096) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return SignatureStatus::Unsigned,
        Err(e) => return SignatureStatus::Invalid(format!("cannot read {}: {e}", path.display())),
    };
    let file: SignatureFile = match serde_json::from_slice(&text) {
        Ok(f) => f,
        Err(e) => return SignatureStatus::Invalid(format!("{} is not a signature file: {e}", path.display())),
    };
    let key = match parse_public(&file.key) {
        Ok(k) => k,
        Err(e) => return SignatureStatus::Invalid(format!("{}: key: {e}", path.display())),
    };
    let signature = match hex::decode(file.signature.trim()).ok().and_then(|b| Signature::from_slice(&b).ok()) {
        Some(s) => s,
        None => return SignatureStatus::Invalid(format!("{}: signature is not 64 hex bytes", path.display())),
    };
    if key.verify(&entry.manifest_bytes, &signature).is_err() {
        return SignatureStatus::Invalid(format!(
            "the signature in {} does not match the manifest's bytes (the manifest or the signature was changed)",
            path.display()
        ));
    }
    match &trust.key {
        Some(trusted) if trusted == &key => SignatureStatus::Valid,
        _ => SignatureStatus::OtherKey(hex::encode(key.as_bytes())),
    }
}

/// Why `status` is refused under `trust`, if it is.
pub fn refusal(status: &SignatureStatus, trust: &Trust) -> Option<String> {
    match status {
        SignatureStatus::Valid => None,
        SignatureStatus::Invalid(why) => Some(why.clone()),
        SignatureStatus::Unsigned if trust.allow_unsigned => None,
        SignatureStatus::Unsigned => {
            Some("it is not signed; sign it with `sentinel policy sign --key FILE` (or set allow_unsigned = true)".into())
        }
        SignatureStatus::OtherKey(_) if trust.allow_unsigned && trust.key.is_none() => None,
        SignatureStatus::OtherKey(k) => Some(match &trust.key {
            Some(t) => format!("it is signed by key {k}, not by the trusted key {}", hex::encode(t.as_bytes())),
            None => format!("it is signed by key {k}, and no public_key is configured"),
        }),
    }
}

/// Signs one manifest, writing its `.manifest.sig`.
pub fn sign(entry: &Entry, key: &SigningKey) -> std::io::Result<PathBuf> {
    let signature = key.sign(&entry.manifest_bytes);
    let file = SignatureFile { key: hex::encode(key.verifying_key().as_bytes()), signature: hex::encode(signature.to_bytes()) };
    let path = signature_path(entry);
    std::fs::write(&path, serde_json::to_string_pretty(&file).map_err(std::io::Error::other)? + "\n")?;
    Ok(path)
}

fn decode32(text: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(text.trim()).map_err(|e| format!("not hex: {e}"))?;
    bytes.try_into().map_err(|b: Vec<u8>| format!("expected 32 bytes, got {}", b.len()))
}

/// An ed25519 public key from its hex text (32 bytes; surrounding whitespace ignored), or why not.
pub(crate) fn parse_public(text: &str) -> Result<VerifyingKey, String> {
    VerifyingKey::from_bytes(&decode32(text)?).map_err(|e| format!("not an ed25519 public key: {e}"))
}

/// Reads a public key file (`NAME.pub`, as [`keygen`] writes it); the error names the file.
pub fn read_public(path: &Path) -> Result<VerifyingKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read public key {}: {e}", path.display()))?;
    parse_public(&text).map_err(|e| format!("public key {}: {e}", path.display()))
}

/// Reads a signing key file (`NAME.key`, 32 hex bytes) for `sentinel policy sign`; the error names
/// the file.
pub fn read_secret(path: &Path) -> Result<SigningKey, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read signing key {}: {e}", path.display()))?;
    Ok(SigningKey::from_bytes(&decode32(&text).map_err(|e| format!("signing key {}: {e}", path.display()))?))
}

/// A fresh key pair from the operating system's random source, as `PREFIX.key` and
/// `PREFIX.pub`.
pub fn keygen(prefix: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    use std::io::Read;
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut seed)?;
    let key = SigningKey::from_bytes(&seed);
    let (secret, public) = (prefix.with_extension("key"), prefix.with_extension("pub"));
    if let Some(folder) = prefix.parent().filter(|f| !f.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)?;
    }
    for p in [&secret, &public] {
        if p.exists() {
            return Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, format!("{} exists; not overwriting", p.display())));
        }
    }
    write_private(&secret, &(hex::encode(key.to_bytes()) + "\n"))?;
    std::fs::write(&public, hex::encode(key.verifying_key().as_bytes()) + "\n")?;
    Ok((secret, public))
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(text.as_bytes())
}
