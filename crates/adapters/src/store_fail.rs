//! Why a store call failed, before the store's location is known: the backend's own error, or
//! one of the rules both stores keep (stored data that does not parse, a newer schema, a request
//! the store cannot carry out, a commit another tick superseded). One enum for SQLite and
//! PostgreSQL, each giving its backend error type and how that error reads to an operator.

use crate::stored_json::StoredJson;
use sentinel_core::ports::StoreError;

/// A failed store call; `B` is the backend's error (`rusqlite::Error`, PostgreSQL's
/// statement, connect and lost-commit errors).
#[derive(Debug)]
pub(crate) enum StoreFail<B> {
    /// The backend failed.
    Backend(B),
    /// Stored data that does not parse; `message` says what and what to do.
    Corrupt { what: &'static str, message: String },
    /// The store was migrated by a newer sentinel.
    NewerSchema { found: i64, known: i64 },
    /// A request the store cannot carry out, e.g. an unknown tick sequence.
    Invalid(String),
    /// Another tick was committed after the one this commit follows.
    Superseded { follows: u64, newest: u64 },
}

impl<B> StoreFail<B> {
    pub(crate) fn corrupt(what: &'static str, message: impl Into<String>) -> StoreFail<B> {
        StoreFail::Corrupt { what, message: message.into() }
    }

    /// The port's error for the store at `location`, while `doing` something; the backend's
    /// error as `backend` describes it (given the location, what was being done and the error).
    pub(crate) fn described(self, location: &str, doing: &str, backend: impl FnOnce(&str, &str, B) -> StoreError) -> StoreError {
        let location_text = location.to_string();
        match self {
            StoreFail::Backend(e) => backend(location, doing, e),
            StoreFail::Corrupt { what, message } => StoreError::Corrupt { location: location_text, what, message },
            StoreFail::NewerSchema { found, known } => StoreError::NewerSchema { location: location_text, found, known },
            StoreFail::Invalid(message) => StoreError::Unavailable { location: location_text, message: format!("{doing}: {message}") },
            StoreFail::Superseded { follows, newest } => StoreError::Superseded { location: location_text, follows, newest },
        }
    }
}

impl<B> From<StoredJson> for StoreFail<B> {
    fn from(e: StoredJson) -> StoreFail<B> {
        match e {
            StoredJson::Corrupt { what, message } => StoreFail::Corrupt { what, message },
            StoredJson::Unencodable(message) => StoreFail::Invalid(message),
        }
    }
}
