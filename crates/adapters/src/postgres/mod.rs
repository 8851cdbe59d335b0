//! The shared store on PostgreSQL: the same tables and the same semantics as the embedded
//! SQLite store (memory, pins and their audit, latency samples, baselines, tick records,
//! stage status; docs/behaviour.md §4 to §7 and §11), for several sentinel replicas and operators
//! on several machines. Leadership is a session advisory lock on a dedicated connection
//! ([`PostgresLeadership`]).
//!
//! One connection per store, behind an async mutex: the sentinel makes a handful of short calls
//! a minute, and the mutex keeps this process's calls one at a time on it. A call is one
//! transaction, or one statement on its own where one statement says it all (the reads, and
//! recording a publication); each is bounded by the store's timeout as a whole (waiting for
//! the mutex, reconnecting, the statements and the commit; see `call`). The connection is
//! replaced lazily: when it is found closed, when a call was cut off by the timeout mid-request
//! (its state is unknown), or after a protocol-level failure. A `BEGIN`, or a lone statement,
//! that fails because a reused connection turned out dead is retried once on a fresh one, so a
//! PostgreSQL restart heals on the next call; a commit cut off is reported as such and never
//! retried.
//!
//! JSON values are stored in `json` columns, which keep the text exactly as written (and
//! reject text that is not JSON); a value that parses as JSON but not as the record it should
//! be is reported as `StoreError::Corrupt`, as with SQLite. TLS is not built in: use
//! `sslmode=disable` or `prefer` (the default), or a local TLS proxy.

mod baselines;
mod call;
mod errors;
mod inspect;
mod lock;
mod memory;
mod pins;
mod schema;
mod stages;

pub use inspect::{Inspection, inspect};
pub use lock::{DEFAULT_LEASE, PostgresLeadership, PostgresLease, RETRY_EVERY};
pub use schema::SCHEMA_VERSION;

use crate::settings::postgres_url::parse as parse_url;
use sentinel_core::ports::StoreError;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_postgres::config::SslMode;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, Config, NoTls};

/// How often a connection attempt is repeated while the server says it is starting up.
const STARTUP_RETRY: Duration = Duration::from_millis(100);

/// The PostgreSQL store. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct PostgresStore {
    shared: Arc<Shared>,
}

struct Shared {
    config: Config,
    /// `host:port/db`, as errors name the server (never the password).
    location: String,
    timeout: Duration,
    slot: tokio::sync::Mutex<Slot>,
}

/// The connection, if there is one, and whether a call was using it.
#[derive(Default)]
struct Slot {
    conn: Option<Conn>,
    /// Set while a call is in flight. Still set when the next call starts means the last one
    /// was cut off by its timeout mid-request: the connection's state is unknown, replace it.
    busy: bool,
}

impl Slot {
    fn discard(&mut self) {
        self.conn = None;
        self.busy = false;
    }
}

/// A client and the task driving its connection.
struct Conn {
    client: Client,
    task: JoinHandle<()>,
}

impl Drop for Conn {
    /// Ends the connection now, also when a request is still waiting for an answer (from a
    /// hung server, the task would otherwise wait forever). The server sees the socket close
    /// and ends the session, rolling back whatever was open.
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("location", &self.shared.location)
            .field("timeout", &self.shared.timeout)
            .finish_non_exhaustive()
    }
}

/// Connects to the store at `url` (a `postgres://user:password@host:port/db` URL or a libpq
/// `key=value` string) and brings its schema up to [`SCHEMA_VERSION`]; both bounded by
/// `timeout`. A database written by a newer sentinel is refused with
/// `StoreError::NewerSchema`. Every later call is bounded by `timeout` too.
pub async fn connect(url: &str, timeout: Duration) -> Result<PostgresStore, StoreError> {
    PostgresStore::connect(url, timeout).await
}

impl PostgresStore {
    /// See [`connect`].
    pub async fn connect(url: &str, timeout: Duration) -> Result<PostgresStore, StoreError> {
        let (config, location) = parse_url(url, timeout).map_err(|(location, message)| StoreError::Unavailable { location, message })?;
        if matches!(config.get_ssl_mode(), SslMode::Require) {
            return Err(StoreError::Unavailable {
                location,
                message: "the URL asks for sslmode=require, but this sentinel connects without TLS; \
                          use sslmode=disable or prefer, or a local TLS proxy"
                    .into(),
            });
        }
        let shared = Shared { config, location, timeout, slot: tokio::sync::Mutex::new(Slot::default()) };
        let deadline = Instant::now() + timeout;
        let stage = AtomicU8::new(Stage::Connecting as u8);
        let opening = async {
            let mut conn = shared.open(deadline).await.map_err(|f| f.into_store_error(&shared.location, "connecting"))?;
            stage.store(Stage::Working as u8, Ordering::Relaxed);
            schema::migrate(&mut conn.client).await.map_err(|f| f.into_store_error(&shared.location, "migrating the schema"))?;
            Ok::<_, StoreError>(conn)
        };
        let conn = match tokio::time::timeout_at(deadline, opening).await {
            Ok(opened) => opened?,
            Err(_) => return Err(shared.timed_out("connecting and migrating the schema", &stage)),
        };
        shared.slot.lock().await.conn = Some(conn);
        Ok(PostgresStore { shared: Arc::new(shared) })
    }

    /// The server as errors name it: `host:port/db`.
    pub fn location(&self) -> &str {
        &self.shared.location
    }
}

/// Where a call was when its timeout cut it off, for the message.
#[repr(u8)]
enum Stage {
    /// Waiting for this process's previous call on the connection.
    Waiting = 0,
    Connecting = 1,
    Working = 2,
}

impl Shared {
    /// A new connection, with its task spawned and the session's timeouts set. Retried while
    /// the server says it is starting up, as long as the deadline allows.
    async fn open(&self, deadline: Instant) -> Result<Conn, Fail> {
        loop {
            match self.config.connect(NoTls).await {
                Ok((client, connection)) => {
                    let location = self.location.clone();
                    let task = tokio::spawn(async move {
                        if let Err(e) = connection.await {
                            tracing::debug!(store = location, error = %e, "the PostgreSQL connection ended; the next call reconnects");
                        }
                    });
                    let conn = Conn { client, task };
                    // A statement or a transaction left open beyond the timeout is abandoned by
                    // this side already: let the server end it too, and free its locks.
                    let ms = self.timeout.as_millis().max(1);
                    let settings = format!("SET statement_timeout = {ms}; SET idle_in_transaction_session_timeout = {ms}");
                    if let Err(e) = conn.client.batch_execute(&settings).await {
                        return Err(Fail::Backend(PgFail::Connect(e)));
                    }
                    return Ok(conn);
                }
                Err(e) if e.code() == Some(&SqlState::CANNOT_CONNECT_NOW) && Instant::now() + STARTUP_RETRY < deadline => {
                    tracing::debug!(store = self.location, error = %e, "PostgreSQL is starting up; retrying");
                    tokio::time::sleep(STARTUP_RETRY).await;
                }
                Err(e) => return Err(Fail::Backend(PgFail::Connect(e))),
            }
        }
    }

    fn timed_out(&self, doing: &str, stage: &AtomicU8) -> StoreError {
        let t = self.timeout;
        let location = self.location.clone();
        let message = match stage.load(Ordering::Relaxed) {
            0 => format!(
                "{doing}: waited {t:?} for this process's previous call to the server, which is not answering; \
                 check that PostgreSQL is up and not overloaded"
            ),
            1 => format!(
                "{doing}: no answer from the server within {t:?} while connecting; check that PostgreSQL is \
                 running at {location} and reachable (a server or firewall that accepts connections but never \
                 answers looks like this)"
            ),
            _ => format!(
                "{doing}: no answer from the server within {t:?}; PostgreSQL may be overloaded, hung, or waiting \
                 on a lock held by another session. The connection is dropped and the next call reconnects"
            ),
        };
        StoreError::Unavailable { location, message }
    }
}

use errors::*;
