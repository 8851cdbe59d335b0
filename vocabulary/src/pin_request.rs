//! A pin as an operator typed it, and why one is refused (docs/behaviour.md §6).

use crate::state::Instant;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinRequest {
    pub state: String,
    pub reason: String,
    pub expires_at: Instant,
    pub actor: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
pub enum PinField {
    #[serde(alias = "State")]
    State,
    #[serde(alias = "Reason")]
    Reason,
    #[serde(alias = "ExpiresAt")]
    ExpiresAt,
    #[serde(alias = "Actor")]
    Actor,
}

impl PinField {
    /// The field's name in a request body (`expires_at`); serde writes the WIT case (`expires-at`).
    pub fn name(self) -> &'static str {
        match self {
            PinField::State => "state",
            PinField::Reason => "reason",
            PinField::ExpiresAt => "expires_at",
            PinField::Actor => "actor",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinError {
    pub field: PinField,
    pub message: String,
}

impl core::fmt::Display for PinError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.field.name(), self.message)
    }
}
