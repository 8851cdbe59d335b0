//! Latency samples and the hourly baseline learnt from them.

use crate::state::Instant;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySample {
    pub at: Instant,
    pub p95_ms: f64,
}

/// One API's samples for an hour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiSamples {
    pub api: String,
    pub samples: Vec<LatencySample>,
}

/// One API's baseline for an hour; absent while it has too few samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiBaseline {
    pub api: String,
    pub baseline_ms: Option<f64>,
    pub samples: u32,
}
