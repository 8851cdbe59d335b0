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
    #[error("the store at {location} cannot be used: {message} (check the path or server, its permissions and free space)")]
    Unavailable { location: String, message: String },
    #[error("{what} in the store at {location} is unreadable: {message}")]
    Corrupt { location: String, what: &'static str, message: String },
    #[error("the store at {location} has schema version {found}, newer than this sentinel knows ({known}); upgrade the sentinel")]
    NewerSchema { location: String, found: i64, known: i64 },
    #[error(
        "the store at {location} already holds tick {newest}, committed by another sentinel after this one read tick \
         {follows}: this tick decided on memory that is no longer the newest, so it stores and publishes nothing and the \
         newer decision stands (normal once after a failover; if it repeats, check that every sentinel uses the same lock)"
    )]
    Superseded { location: String, follows: u64, newest: u64 },
}
