//! JSON in a store's columns (memory, pins, audit, tick records), read and written the same
//! way by the SQLite and the PostgreSQL store: a value that does not parse is corrupt data,
//! named with the row and what to do; each store turns these into its own failure.

/// Why a stored JSON value could not be read or written.
#[derive(Debug)]
pub enum StoredJson {
    /// Stored data that does not parse; `message` names the row and what to do.
    Corrupt {
        /// What kind of value it is (`memory`, `pin`, `a stage record`...).
        what: &'static str,
        /// Which row does not parse, the parser's reason and what to do.
        message: String,
    },
    /// A value that cannot be encoded (never expected of the domain's types).
    Unencodable(String),
}

/// A stored JSON value back as `T`, or corrupt data naming `what`, `which` row and `advice`.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    what: &'static str,
    which: impl std::fmt::Display,
    text: &str,
    advice: &str,
) -> Result<T, StoredJson> {
    serde_json::from_str(text).map_err(|e| StoredJson::Corrupt { what, message: format!("{which} does not parse ({e}); {advice}") })
}

/// A value as stored JSON text.
pub(crate) fn to_json<T: serde::Serialize>(what: &str, value: &T) -> Result<String, StoredJson> {
    serde_json::to_string(value).map_err(|e| StoredJson::Unencodable(format!("cannot encode the {what} as JSON: {e}")))
}
