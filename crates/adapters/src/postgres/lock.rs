//! `Leadership` for the shared store: a session-level advisory lock
//! (`pg_try_advisory_lock(key)`) on a connection of its own, held by the lease. It must not be
//! the store's connection, nor any pooled one: the lock belongs to the session, and a session
//! that outlives the lease keeps it. So the connection goes back to the leadership only once
//! `pg_advisory_unlock` has said the lock is released, and the next `acquire` reuses it (a
//! tick then pays one round trip for the lock, not a new backend); a kept connection that has
//! died is replaced by a new one. If the sentinel dies, PostgreSQL frees the lock as soon as
//! it notices the session is gone.
//!
//! A leader that stops running without dying (frozen by SIGSTOP or a hung host, cut off by the
//! network) would keep its session, and the lock with it, for as long as the kernel keeps the
//! socket. So the lock is a lease: the session has `idle_session_timeout` set to the lease, and
//! a heartbeat (`SELECT 1`, four times per lease) keeps it alive while the process runs. A holder
//! that stops beating for a lease loses its session, PostgreSQL frees the lock, and another
//! sentinel decides the next minute; whatever the stale holder writes when it resumes is fenced
//! by sequence (the store refuses its commit, the channels its document).

use super::{advice, parse_url};
use sentinel_core::ports::leadership::{Leadership, Lease, LockError};
use sentinel_core::sync::Lock;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Config, NoTls};

/// How often a waiting `acquire` tries again.
pub const RETRY_EVERY: Duration = Duration::from_millis(100);

/// How long a leader that stops answering keeps the PostgreSQL lock, unless `store.lease` says.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(20);

/// The leadership lock `lock_key` in the database at a URL.
pub struct PostgresLeadership {
    /// The parsed URL, or why it does not parse (reported by `acquire`).
    config: Result<Config, String>,
    location: String,
    timeout: Duration,
    key: i64,
    /// How long the session may go without a heartbeat before PostgreSQL ends it.
    lease: Duration,
    /// The dedicated connection between leases, holding no lock.
    idle: Idle,
}

/// Where a released lease puts its connection back.
type Idle = Arc<Lock<Option<Dedicated>>>;

/// Keeps `conn` for the next `acquire` (closing any connection kept before).
fn keep(idle: &Idle, conn: Dedicated) {
    let old = idle.lock().replace(conn);
    if let Some(old) = old {
        old.close();
    }
}

impl std::fmt::Debug for PostgresLeadership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLeadership")
            .field("location", &self.location)
            .field("key", &self.key)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The held lock and the connection that holds it; dropping it releases the lock.
pub struct PostgresLease {
    conn: Option<Dedicated>,
    key: i64,
    what: String,
    timeout: Duration,
    idle: Idle,
}

impl std::fmt::Debug for PostgresLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresLease").field("what", &self.what).finish_non_exhaustive()
    }
}

impl Lease for PostgresLease {
    /// Unlocks before returning; the connection goes back to the leadership for the next tick.
    fn release(mut self: Box<Self>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        let conn = self.conn.take();
        let (key, what, timeout, idle) = (self.key, std::mem::take(&mut self.what), self.timeout, self.idle.clone());
        Box::pin(async move {
            if let Some(conn) = conn {
                unlock(conn, key, what, timeout, &idle).await;
            }
        })
    }
}

/// `pg_advisory_unlock`, bounded by `timeout`. When PostgreSQL says the lock is released, the
/// connection is kept in `idle` for the next lease; otherwise it is closed (closing the
/// session frees the lock anyway).
async fn unlock(conn: Dedicated, key: i64, what: String, timeout: Duration, idle: &Idle) {
    let statement = "SELECT pg_advisory_unlock($1::bigint)";
    match tokio::time::timeout(timeout, conn.client.query_typed_one(statement, &[(&key, Type::INT8)])).await {
        Ok(Ok(row)) if row.try_get::<_, bool>(0).unwrap_or(false) => return keep(idle, conn),
        Ok(Ok(_)) => tracing::warn!(lock = what, "the leadership lock was no longer held when released (was the connection reset?)"),
        Ok(Err(e)) => {
            tracing::debug!(lock = what, error = %e, "unlocking failed; closing the session frees the lock")
        }
        Err(_) => tracing::debug!(lock = what, "unlocking got no answer; closing the session frees the lock"),
    }
    let Dedicated { client, mut task } = conn;
    drop(client);
    if tokio::time::timeout(timeout, &mut task).await.is_err() {
        task.abort();
    }
}

/// A connection of the lock's own, the task driving it and its heartbeat. The heartbeat holds
/// the client weakly: dropping `client` still closes the connection.
struct Dedicated {
    client: Arc<Client>,
    task: JoinHandle<()>,
}

/// `SELECT 1` every quarter lease while the client lives, so a running sentinel's session never
/// idles out and a frozen one's does.
fn heartbeat(client: std::sync::Weak<Client>, every: Duration) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(client) = client.upgrade() else { return };
            if client.simple_query("SELECT 1").await.is_err() {
                return;
            }
        }
    });
}

impl Dedicated {
    /// Closes the connection politely (the task ends once the client is gone).
    fn close(self) {
        drop(self.client);
    }

    /// Closes it at once: for a connection whose state is unknown.
    fn abort(self) {
        self.task.abort();
    }
}

impl Drop for PostgresLease {
    /// A lease dropped without `release` (a tick cut short) unlocks in the background.
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        let (key, what, timeout, idle) = (self.key, std::mem::take(&mut self.what), self.timeout, self.idle.clone());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to unlock on: closing the socket ends the session, which frees the lock.
            conn.abort();
            return;
        };
        runtime.spawn(async move { unlock(conn, key, what, timeout, &idle).await });
    }
}

impl PostgresLeadership {
    /// The lock `lock_key` in the database at `url` (as for [`super::connect`]); connecting
    /// and each statement are bounded by `timeout`. Nothing is touched until `acquire`, and a
    /// URL that does not parse is reported there.
    pub fn new(url: &str, timeout: Duration, lock_key: i64) -> PostgresLeadership {
        let (config, location) = match parse_url(url, timeout) {
            Ok((config, location)) => (Ok(config), location),
            Err((location, message)) => (Err(message), location),
        };
        PostgresLeadership {
            config,
            location,
            timeout,
            key: lock_key,
            lease: DEFAULT_LEASE,
            idle: Arc::new(Lock::new("idle lock connection", None)),
        }
    }

    /// With a lease other than [`DEFAULT_LEASE`] (at least a second).
    pub fn with_lease(mut self, lease: Duration) -> PostgresLeadership {
        self.lease = lease.max(Duration::from_secs(1));
        self
    }

    /// The lock's key.
    pub fn lock_key(&self) -> i64 {
        self.key
    }

    /// `pg_advisory_lock(KEY) on host:port/db`, as messages name it.
    fn what(&self) -> String {
        format!("pg_advisory_lock({}) on {}", self.key, self.location)
    }

    fn failed(&self, message: String) -> LockError {
        LockError::Failed { what: self.what(), message }
    }

    /// A new connection for the lock alone.
    async fn open(&self) -> Result<Dedicated, LockError> {
        let config = self.config.as_ref().map_err(|message| self.failed(message.clone()))?;
        let connecting = tokio::time::timeout(self.timeout, config.connect(NoTls)).await;
        let (client, connection) = match connecting {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => {
                let mut message = format!("cannot connect: {}", advice(&e));
                if e.as_db_error().is_none() {
                    message.push_str(&format!("; check that PostgreSQL is running at {} and accepts TCP connections", self.location));
                }
                return Err(self.failed(message));
            }
            Err(_) => {
                return Err(self.failed(format!(
                    "no answer from the server within {:?} while connecting; check that PostgreSQL is running at {} \
                     and reachable",
                    self.timeout, self.location
                )));
            }
        };
        let what = self.what();
        let task = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(lock = what, error = %e, "the connection of the leadership lock ended; PostgreSQL has released any lock it held");
            }
        });
        let conn = Dedicated { client: Arc::new(client), task };
        // The lease: the server ends the session (and frees the lock) once it has heard nothing
        // for a lease; the heartbeat speaks four times a lease. From PostgreSQL 14 on.
        let lease_ms = self.lease.as_millis().max(1);
        let setting = format!("SET idle_session_timeout = {lease_ms}");
        match tokio::time::timeout(self.timeout, conn.client.batch_execute(&setting)).await {
            Ok(Ok(())) => heartbeat(Arc::downgrade(&conn.client), self.lease / 4),
            Ok(Err(e)) => tracing::warn!(
                lock = self.what(),
                error = %e,
                "could not set idle_session_timeout (PostgreSQL before 14?): a leader that freezes keeps the lock until it \
                 resumes or its host dies; upgrade PostgreSQL to bound it"
            ),
            Err(_) => return Err(self.failed(format!("no answer from the server within {:?} while setting up the lease", self.timeout))),
        }
        Ok(conn)
    }

    /// One `pg_try_advisory_lock` on `conn`.
    async fn try_lock(&self, conn: &Dedicated) -> Result<bool, LockError> {
        let attempt = "SELECT pg_try_advisory_lock($1::bigint)";
        match tokio::time::timeout(self.timeout, conn.client.query_typed_one(attempt, &[(&self.key, Type::INT8)])).await {
            Ok(Ok(row)) => row.try_get(0).map_err(|e| self.failed(advice(&e))),
            Ok(Err(e)) => Err(self.failed(format!("taking it failed: {}", advice(&e)))),
            Err(_) => {
                Err(self.failed(format!("no answer from the server within {:?}; PostgreSQL may be overloaded or hung", self.timeout)))
            }
        }
    }

    /// The lock and, when PostgreSQL says, the session holding it, for messages.
    async fn describe_held(&self, conn: &Dedicated) -> String {
        match tokio::time::timeout(self.timeout, holder_of(&conn.client, self.key)).await {
            Ok(Ok(Some(holder))) => format!("{} (held by {holder})", self.what()),
            _ => self.what(),
        }
    }
}

#[async_trait::async_trait]
impl Leadership for PostgresLeadership {
    async fn acquire(&self, wait: Option<Duration>) -> Result<Box<dyn Lease>, LockError> {
        let started = Instant::now();
        let kept = self.idle.lock().take().filter(|c| !c.client.is_closed());
        let mut reused = kept.is_some();
        let mut conn = match kept {
            Some(conn) => conn,
            None => self.open().await?,
        };
        loop {
            match self.try_lock(&conn).await {
                Ok(true) => {
                    let lease = PostgresLease {
                        conn: Some(conn),
                        key: self.key,
                        what: self.what(),
                        timeout: self.timeout,
                        idle: self.idle.clone(),
                    };
                    return Ok(Box::new(lease));
                }
                Ok(false) => {}
                Err(e) => {
                    conn.abort(); // a lock granted after the timeout dies with the session
                    if reused {
                        // The kept connection went stale between minutes: once more on a new one.
                        reused = false;
                        conn = self.open().await?;
                        continue;
                    }
                    return Err(e);
                }
            }
            let Some(wait) = wait else {
                let what = self.describe_held(&conn).await;
                keep(&self.idle, conn);
                return Err(LockError::Held { what });
            };
            let waited = started.elapsed();
            if waited >= wait {
                let what = self.describe_held(&conn).await;
                keep(&self.idle, conn);
                return Err(LockError::TimedOut { what, waited });
            }
            tokio::time::sleep(RETRY_EVERY.min(wait - waited)).await;
        }
    }
}

/// The session holding the advisory lock `key` in this database, from `pg_locks`, as
/// `server process N, application A, client C`; `None` when no session holds it. Reads only:
/// what a refused acquire says, and what `check --connect` reports without taking the lock.
pub(super) async fn holder_of(client: &tokio_postgres::Client, key: i64) -> Result<Option<String>, tokio_postgres::Error> {
    let key = key as u64;
    let (high, low) = ((key >> 32) as i64, (key & 0xffff_ffff) as i64);
    let query = "SELECT l.pid, a.application_name, host(a.client_addr)
         FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid::bigint = $1 AND l.objid::bigint = $2
         LIMIT 1";
    let Some(row) = client.query_opt(query, &[&high, &low]).await? else { return Ok(None) };
    let pid: Option<i32> = row.try_get(0).ok();
    let app: Option<String> = row.try_get(1).ok().flatten().filter(|a: &String| !a.is_empty());
    let client_addr: Option<String> = row.try_get(2).ok().flatten();
    let mut held = format!("server process {}", pid.map_or("?".into(), |p| p.to_string()));
    if let Some(app) = app {
        held.push_str(&format!(", application {app}"));
    }
    if let Some(client_addr) = client_addr {
        held.push_str(&format!(", client {client_addr}"));
    }
    Ok(Some(held))
}
