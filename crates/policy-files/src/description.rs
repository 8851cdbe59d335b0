//! Reading and checking a `policy.toml`: the one reader every caller uses.

use std::fmt;
use std::path::{Path, PathBuf};
use vocabulary::PolicyDescription;

/// A `policy.toml` as read: what it describes and its text (whose digest names a native policy).
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyFile {
    /// Its name, version and thresholds, checked.
    pub description: PolicyDescription,
    /// The file's text, as read.
    pub text: String,
}

/// Why a `policy.toml` was refused; each names the file.
#[derive(Debug)]
pub enum PolicyFileError {
    /// The file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not TOML of a policy, or a value is wrong (the message names the key).
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The version the file names is not the name of its folder.
    Folder {
        /// The file.
        path: PathBuf,
        /// The version it names.
        version: String,
        /// The folder it is in.
        folder: String,
    },
}

impl fmt::Display for PolicyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyFileError::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            PolicyFileError::Invalid { path, message } => write!(f, "{}: {message}", path.display()),
            PolicyFileError::Folder { path, version, folder } => write!(
                f,
                "{}: version {version} does not match its folder {folder}: name the folder by the version (policies/{version}/policy.toml)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for PolicyFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PolicyFileError::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A `policy.toml`'s text, parsed and checked; the error names the first key that is wrong.
pub fn parse(text: &str) -> Result<PolicyDescription, String> {
    let description: PolicyDescription = toml::from_str(text).map_err(|e| e.to_string())?;
    description.check()?;
    Ok(description)
}

/// The `policy.toml` at `path`, read, parsed and checked.
pub fn read(path: &Path) -> Result<PolicyFile, PolicyFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| PolicyFileError::Read { path: path.to_path_buf(), source })?;
    let description = parse(&text).map_err(|message| PolicyFileError::Invalid { path: path.to_path_buf(), message })?;
    Ok(PolicyFile { description, text })
}

/// [`read`], for a file that ships as a version (`policies/<version>/policy.toml`): its folder
/// must be named by the version it describes.
pub fn read_version(path: &Path) -> Result<PolicyFile, PolicyFileError> {
    let file = read(path)?;
    let folder = path
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if folder != file.description.version {
        return Err(PolicyFileError::Folder { path: path.to_path_buf(), version: file.description.version, folder });
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = include_str!("../../../policies/1.0.0/policy.toml");

    #[test]
    fn a_shipped_policy_reads_and_a_wrong_value_is_refused_naming_its_key() {
        assert_eq!(parse(POLICY).unwrap().version, "1.0.0");
        let wrong = POLICY.replacen("version = \"1.0.0\"", "version = \"1.0\"", 1);
        assert!(parse(&wrong).unwrap_err().starts_with("version:"), "{}", parse(&wrong).unwrap_err());
        assert!(parse("name = \"x\"").is_err(), "a file without thresholds is refused");
    }

    #[test]
    fn a_version_in_the_wrong_folder_is_refused_and_a_missing_file_is_named() {
        let dir = crate::scratch("version-folder");
        std::fs::create_dir(dir.join("1.1.0")).unwrap();
        let path = dir.join("1.1.0/policy.toml");
        std::fs::write(&path, POLICY).unwrap();
        let e = read_version(&path).unwrap_err().to_string();
        assert!(e.contains("version 1.0.0 does not match its folder 1.1.0"), "{e}");
        assert_eq!(read(&path).unwrap().description.version, "1.0.0", "a file read as a base need not sit in its folder");
        let missing = dir.join("nowhere/policy.toml");
        let e = read(&missing).unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot read {}", missing.display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
