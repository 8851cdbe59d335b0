//! What `sentinel check --connect` learns of the store without changing it: a connection with
//! the sentinel's own URL and timeout, the schema's version (read, never migrated: a preflight
//! of a newer binary must not lift the schema under the running one), and whether a session
//! holds the sentinel's lock (read from `pg_locks`, never taken: a running sentinel that met its
//! lock held would stop).

use super::{Shared, Slot, parse_url};
use sentinel_core::ports::StoreError;
use std::time::Duration;
use tokio::time::Instant;

/// The store as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// `schema_migrations`' newest version; 0 before the first sentinel started.
    pub schema: i64,
    /// The session holding the lock key (`pid N, application A, client C`), if one does.
    pub lock_holder: Option<String>,
}

/// Reads the schema's version and the lock's holder at `url`, bounded by `timeout`.
pub async fn inspect(url: &str, timeout: Duration, lock_key: i64) -> Result<Inspection, StoreError> {
    let (config, location) = parse_url(url, timeout).map_err(|(location, message)| StoreError::Unavailable { location, message })?;
    let shared = Shared { config, location: location.clone(), timeout, slot: tokio::sync::Mutex::new(Slot::default()) };
    let deadline = Instant::now() + timeout;
    let reading = async {
        let conn = shared.open(deadline).await.map_err(|f| f.into_store_error(&location, "connecting"))?;
        let read = |doing: &'static str| {
            let location = location.clone();
            move |e: tokio_postgres::Error| {
                super::errors::Fail::Backend(super::errors::PgFail::Statement(e)).into_store_error(&location, doing)
            }
        };
        let exists: bool = conn
            .client
            .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
            .await
            .and_then(|row| row.try_get(0))
            .map_err(read("reading the schema's version"))?;
        let schema: i64 = if exists {
            conn.client
                .query_one("SELECT COALESCE(MAX(version), 0)::bigint FROM schema_migrations", &[])
                .await
                .and_then(|row| row.try_get(0))
                .map_err(read("reading the schema's version"))?
        } else {
            0
        };
        let lock_holder = super::lock::holder_of(&conn.client, lock_key).await.map_err(read("reading who holds the lock (pg_locks)"))?;
        Ok::<_, StoreError>(Inspection { schema, lock_holder })
    };
    match tokio::time::timeout_at(deadline, reading).await {
        Ok(found) => found,
        Err(_) => Err(StoreError::Unavailable {
            location: location.clone(),
            message: format!("no answer within {timeout:?}; check that PostgreSQL is up at {location} and not overloaded (store.timeout)"),
        }),
    }
}
