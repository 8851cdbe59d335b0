//! What the directory watcher compares between two looks: the policy directory's files and the
//! persisted state, by name, modification time and size.

use super::state;
use crate::policy::settings::PoliciesConfig;
use std::path::Path;
use std::time::SystemTime;

pub(super) type Fingerprint = Vec<(String, SystemTime, u64)>;

/// Names, modification times and sizes of the policy directory's files (its shadow logs
/// aside) and of the persisted state: a change in any means a look.
pub(super) fn fingerprint(config: &PoliciesConfig) -> Fingerprint {
    let mut out = files(&config.dir);
    let state = state::path(&config.state_dir);
    if let Ok(meta) = std::fs::metadata(&state)
        && let Ok(modified) = meta.modified()
    {
        out.push((state.display().to_string(), modified, meta.len()));
    }
    out
}

fn files(dir: &Path) -> Fingerprint {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((e.file_name().to_string_lossy().into_owned(), meta.modified().ok()?, meta.len()))
        })
        .collect();
    out.sort();
    out
}
