//! The shadow's evidence for `policy shadow-report` and `policy promote`: the shadow log and the
//! store's records of its period, scored by [`sentinel_core::replay::shadow_score`].

use crate::config::Config;
use sentinel_core::replay::gate::Gate;
use sentinel_core::replay::shadow_score::{self, Evidence, ShadowPeriod};
use std::path::Path;

/// Scores the shadow `version`'s log against the active version, judged by `gate` (a file).
pub fn evidence(config: &Config, period: &ShadowPeriod, gate: Option<&Path>) -> anyhow::Result<Evidence> {
    let p = super::policies(config)?;
    let since = period.reach_back(sentinel_core::clock::now_seconds());
    let records = super::block_on(crate::setup::recorded_ticks(config, since))?;
    let gate = gate.map(|path| Gate::load(path).map(|g| (path.display().to_string(), g))).transpose()?;
    let limits = crate::setup::policy_limits(config);
    Ok(shadow_score::score(&p, limits, period, records, gate)?)
}
