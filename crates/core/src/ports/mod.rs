//! The sentinel's ports: one small trait per capability the tick needs. The tick talks only
//! to these; `adapters/` holds one implementation per real system (and the embedded defaults).

pub mod baselines;
pub mod history;
pub mod leadership;
pub mod memory;
pub mod metrics;
pub mod pins;
pub mod publisher;
pub mod stage_ledger;
pub mod stages;

/// A failure of the sentinel's store (memory, pins, audit, baselines, tick records).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be used right now: it cannot be opened or reached, a connection was lost,
    /// another process kept it locked too long, the disk is full, or a request cannot be carried
    /// out.
    #[error("the store at {location} cannot be used: {message} (check the path or server, its permissions and free space)")]
    Unavailable {
        /// The store as messages name it: the SQLite file's path, or `host:port/db` for
        /// PostgreSQL (never a user or password).
        location: String,
        /// What was being done and what failed, with what to do when known.
        message: String,
    },
    /// Data in the store does not read back: a row that does not parse, a name this sentinel
    /// does not know, a damaged database file.
    #[error("{what} in the store at {location} is unreadable: {message}")]
    Corrupt {
        /// The store as messages name it: the SQLite file's path, or `host:port/db` for
        /// PostgreSQL (never a user or password).
        location: String,
        /// What is unreadable, e.g. `memory`, `a stage record`, `the pin audit` or
        /// `the database file`.
        what: &'static str,
        /// Which row and why it does not read, and what an operator can do about it.
        message: String,
    },
    /// The store was migrated by a newer sentinel; this one refuses to use it rather than
    /// misread it.
    #[error("the store at {location} has schema version {found}, newer than this sentinel knows ({known}); upgrade the sentinel")]
    NewerSchema {
        /// The store as messages name it: the SQLite file's path, or `host:port/db` for
        /// PostgreSQL (never a user or password).
        location: String,
        /// The schema version the store has.
        found: i64,
        /// The newest schema version this sentinel knows.
        known: i64,
    },
    /// The tick's commit was refused: another sentinel committed a tick after the one this tick
    /// read before deciding (see `TickCommit::follows`), so its memory is no longer the newest.
    #[error(
        "the store at {location} already holds tick {newest}, committed by another sentinel after this one read tick \
         {follows}: this tick decided on memory that is no longer the newest, so it stores and publishes nothing and the \
         newer decision stands (normal once after a failover; if it repeats, check that every sentinel uses the same lock)"
    )]
    Superseded {
        /// The store as messages name it: the SQLite file's path, or `host:port/db` for
        /// PostgreSQL (never a user or password).
        location: String,
        /// The newest tick sequence this tick saw before deciding.
        follows: u64,
        /// The newest tick sequence the store holds now.
        newest: u64,
    },
}
