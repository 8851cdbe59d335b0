//! One call on the store's connection: waiting for this process's previous call, (re)connecting
//! when needed, the work, all bounded by the store's timeout as a whole.
//!
//! A call is either a transaction (`BEGIN`, the statements, `COMMIT`; rolled back on failure)
//! or a single statement, which PostgreSQL runs atomically on its own: a read, or a write that
//! is safe to repeat. A single statement costs one round trip (`query_typed`: parse, bind and
//! execute in one message) where a transaction costs four, and the tick's reads queue on the one
//! connection, so the hot path uses single statements wherever one statement says it all.

use super::errors::{Fail, PgFail, breaks_connection};
use super::{PostgresStore, Shared, Slot, Stage};
use sentinel_core::ports::StoreError;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use tokio::sync::MutexGuard;
use tokio::time::Instant;
use tokio_postgres::Client;

/// The future a unit of work in a call returns.
pub(super) type Work<'c, T> = Pin<Box<dyn Future<Output = Result<T, Fail>> + Send + 'c>>;

impl PostgresStore {
    /// Runs `work` in one transaction on the store's connection; `doing` names the operation in
    /// errors ("committing the tick"). The transaction commits when `work` succeeds and rolls
    /// back otherwise. A `BEGIN` that fails because a reused connection turned out dead is
    /// retried once on a fresh one (nothing can have been written); a commit cut off is
    /// reported as such and never retried.
    pub(super) async fn run<T, F>(&self, doing: &'static str, work: F) -> Result<T, StoreError>
    where
        T: Send,
        F: for<'c> FnOnce(&'c Client) -> Work<'c, T> + Send,
    {
        let shared = &*self.shared;
        let deadline = Instant::now() + shared.timeout;
        let stage = AtomicU8::new(Stage::Waiting as u8);
        let attempt = async {
            let mut slot = shared.slot.lock().await;
            let mut retried = false;
            loop {
                let fresh = shared.ready(&mut slot, deadline, &stage).await?;
                let Some(conn) = slot.conn.as_ref() else { continue };
                match conn.client.batch_execute("BEGIN").await {
                    Ok(()) => break,
                    Err(e) if breaks_connection(&e, &conn.client) => {
                        slot.discard();
                        if !fresh && !retried {
                            retried = true;
                            tracing::debug!(store = shared.location, error = %e, "the PostgreSQL connection was lost; reconnecting");
                            continue;
                        }
                        return Err(Fail::Backend(PgFail::Statement(e)));
                    }
                    Err(e) => {
                        slot.busy = false;
                        return Err(Fail::Backend(PgFail::Statement(e)));
                    }
                }
            }
            let Some(conn) = slot.conn.as_ref() else {
                return Err(Fail::Invalid("the connection vanished mid-call; retry".into()));
            };
            let client = &conn.client;
            let finished = match work(client).await {
                Ok(value) => match client.batch_execute("COMMIT").await {
                    Ok(()) => Ok(value),
                    Err(e) if breaks_connection(&e, client) => Err(Fail::Backend(PgFail::CommitLost(e))),
                    Err(e) => Err(Fail::Backend(PgFail::Statement(e))),
                },
                Err(fail) => {
                    if !client.is_closed()
                        && !fail.breaks_connection()
                        && let Err(e) = client.batch_execute("ROLLBACK").await
                    {
                        tracing::debug!(store = shared.location, error = %e, "rolling back failed; the connection is replaced");
                        slot.discard();
                        return Err(fail);
                    }
                    Err(fail)
                }
            };
            finish(&mut slot, finished)
        };
        shared.bounded(doing, deadline, &stage, attempt).await
    }

    /// Runs `work`, one statement that is safe to repeat, on the store's connection without a
    /// transaction of its own. When a reused connection turns out dead under it, the statement
    /// is repeated once on a fresh connection (a read, or a write that sets the same value
    /// again), so a PostgreSQL restart heals on the next call as with [`PostgresStore::run`].
    pub(super) async fn run_statement<T, F>(&self, doing: &'static str, work: F) -> Result<T, StoreError>
    where
        T: Send,
        F: for<'c> Fn(&'c Client) -> Work<'c, T> + Send + Sync,
    {
        let shared = &*self.shared;
        let deadline = Instant::now() + shared.timeout;
        let stage = AtomicU8::new(Stage::Waiting as u8);
        let attempt = async {
            let mut slot = shared.slot.lock().await;
            let mut retried = false;
            loop {
                let fresh = shared.ready(&mut slot, deadline, &stage).await?;
                let Some(conn) = slot.conn.as_ref() else { continue };
                let done = work(&conn.client).await;
                let lost = match &done {
                    Err(fail) => fail.breaks_connection() || conn.client.is_closed(),
                    Ok(_) => false,
                };
                if lost && !fresh && !retried {
                    retried = true;
                    slot.discard();
                    tracing::debug!(store = shared.location, "the PostgreSQL connection was lost; reconnecting");
                    continue;
                }
                return finish(&mut slot, done);
            }
        };
        shared.bounded(doing, deadline, &stage, attempt).await
    }
}

impl Shared {
    /// Bounds a call's `attempt` by its deadline, naming in the error what it was doing and,
    /// from `stage`, where the timeout cut it off.
    async fn bounded<T>(
        &self,
        doing: &str,
        deadline: Instant,
        stage: &AtomicU8,
        attempt: impl Future<Output = Result<T, Fail>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout_at(deadline, attempt).await {
            Ok(result) => result.map_err(|fail| fail.into_store_error(&self.location, doing)),
            Err(_) => Err(self.timed_out(doing, stage)),
        }
    }

    /// Makes the slot's connection ready for a call and marks it busy: a connection left busy
    /// (the last call was cut off mid-request, its state unknown) or found closed is replaced,
    /// and a missing one opened. Returns whether the connection is new.
    async fn ready(&self, slot: &mut MutexGuard<'_, Slot>, deadline: Instant, stage: &AtomicU8) -> Result<bool, Fail> {
        let stale = slot.conn.as_ref().is_some_and(|c| c.client.is_closed());
        if slot.busy || stale {
            slot.discard();
        }
        let fresh = slot.conn.is_none();
        if fresh {
            stage.store(Stage::Connecting as u8, Ordering::Relaxed);
            slot.conn = Some(self.open(deadline).await?);
        }
        stage.store(Stage::Working as u8, Ordering::Relaxed);
        slot.busy = true;
        Ok(fresh)
    }
}

/// Ends a call: the connection stays for the next one unless it closed or the failure broke it.
fn finish<T>(slot: &mut MutexGuard<'_, Slot>, finished: Result<T, Fail>) -> Result<T, Fail> {
    let closed = slot.conn.as_ref().is_none_or(|c| c.client.is_closed());
    let keep = !closed && !finished.as_ref().err().is_some_and(Fail::breaks_connection);
    slot.busy = false;
    if !keep {
        slot.discard();
    }
    finished
}
