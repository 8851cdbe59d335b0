//! The HTTP/1 server loop of `sentinel serve`, with the limits of `[api]` ([`ApiLimits`]) that
//! keep slow and idle clients (slowloris) from holding it:
//!
//! - `header_read_timeout`: hyper closes a connection whose request header is not complete
//!   within it, counted from the accept and, on a kept-alive connection, from the moment it
//!   went idle after a response (hyper 1.12 restarts the timer then). A client trickling header
//!   bytes gains nothing: it is a deadline, not a gap between bytes.
//! - `request_body_timeout`: the whole body must arrive within it after the header
//!   ([`deadline::DeadlineBody`]); a handler reading a late body gets an error (the pin route
//!   answers 400 naming the key) and the connection is closed with the unread rest.
//! - `idle_timeout`: a connection that finished a request and sends no next one is closed
//!   after it; a client that does not read its response is closed after it too.
//! - `max_connections`: a semaphore permit is taken *before* each accept, so beyond the limit
//!   new connections wait, unaccepted, in the kernel's listen backlog (they cost the process
//!   no file descriptor) and are accepted in arrival order as open ones close: since the
//!   timeouts close every slow or idle connection, a probe waits at most about one
//!   `header_read_timeout` behind up to `max_connections` slow clients. Reaching the limit is
//!   logged as a warning, at most once a minute, with how often it was reached meanwhile. A
//!   limit the process's open-file limit cannot hold (besides [`RESERVED_FDS`] for its own
//!   files) is lowered to what it can, with a warning: past it, accept would fail, probes too.
//!
//! Shutdown: no new connections; idle ones close at once, requests in flight finish (the
//! caller bounds the wait).

mod connection;
pub mod deadline;

use crate::config::api::ApiLimits;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;
use hyper_util::server::graceful::GracefulShutdown;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How often, at most, reaching `api.max_connections` is logged as a warning.
const LIMIT_WARNING_EVERY: Duration = Duration::from_secs(60);

/// File descriptors left for everything but API connections: the store, the policy, the
/// runtime, logs (`sentinel serve` holds about 16 of its own).
pub const RESERVED_FDS: u64 = 32;

/// How long to wait before accepting again after an accept failed for want of resources
/// (file descriptors, memory): what hyper 0.14 and axum do.
const ACCEPT_RETRY: Duration = Duration::from_secs(1);

/// Serves `router` on `listener` under `limits` until `shutdown` completes, then stops
/// accepting and returns once every open connection has closed.
pub async fn serve(listener: TcpListener, router: Router, limits: ApiLimits, shutdown: impl Future<Output = ()>) {
    let limits = ApiLimits { max_connections: connection_cap(limits.max_connections), ..limits };
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout).keep_alive(true);
    let permits = Arc::new(Semaphore::new(limits.max_connections as usize));
    let graceful = GracefulShutdown::new();
    let mut warning = LimitWarning::default();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                warning.reached(&limits);
                tokio::select! {
                    permit = permits.clone().acquire_owned() => permit.expect("the connection semaphore is never closed"),
                    () = &mut shutdown => break,
                }
            }
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(&e, &limits).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        connection::spawn(stream, peer, permit, &http, &router, &limits, &graceful);
    }
    drop(listener);
    tracing::debug!(connections = graceful.count(), "no longer accepting; closing the open connections");
    graceful.shutdown().await;
}

/// `api.max_connections`, lowered (with a warning) to what the open-file limit leaves after
/// [`RESERVED_FDS`].
fn connection_cap(configured: u32) -> u32 {
    let Some(open_files) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current else {
        return configured;
    };
    let room = open_files.saturating_sub(RESERVED_FDS).max(1);
    if u64::from(configured) <= room {
        return configured;
    }
    let cap = u32::try_from(room).unwrap_or(u32::MAX);
    tracing::warn!(
        "api.max_connections ({configured}) is more than the open-file limit ({open_files}) leaves for connections \
         after {RESERVED_FDS} for the process's own files: serving at most {cap} connections at once; raise the \
         limit (ulimit -n, systemd LimitNOFILE=) or lower api.max_connections"
    );
    cap
}

/// A failed accept: a connection reset before it was accepted is nothing; anything else (out
/// of file descriptors) is logged, and accepting resumes after a pause.
async fn accept_failed(e: &std::io::Error, limits: &ApiLimits) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(
        "cannot accept an API connection: {e}; retrying in {ACCEPT_RETRY:?} (if the process is out of file \
         descriptors, lower api.max_connections ({}) or raise its open-file limit)",
        limits.max_connections
    );
    tokio::time::sleep(ACCEPT_RETRY).await;
}

/// The warning that `api.max_connections` is reached, at most once per [`LIMIT_WARNING_EVERY`].
#[derive(Debug, Default)]
struct LimitWarning {
    last: Option<Instant>,
    /// Times the limit was reached since the last warning.
    reached: u64,
}

impl LimitWarning {
    fn reached(&mut self, limits: &ApiLimits) {
        self.reached += 1;
        if self.last.is_some_and(|last| last.elapsed() < LIMIT_WARNING_EVERY) {
            return;
        }
        tracing::warn!(
            max_connections = limits.max_connections,
            times = self.reached,
            "api.max_connections ({}) reached ({} times since the last warning): new connections wait in the \
             listen backlog until open ones close; slow and idle clients are closed after \
             api.header_read_timeout ({}), api.request_body_timeout ({}) or api.idle_timeout ({}). If it lasts, \
             clients are holding connections (a flood) or the limit is too low for them",
            limits.max_connections,
            self.reached,
            sentinel_core::shown_duration::duration(limits.header_read_timeout),
            sentinel_core::shown_duration::duration(limits.request_body_timeout),
            sentinel_core::shown_duration::duration(limits.idle_timeout),
        );
        self.last = Some(Instant::now());
        self.reached = 0;
    }
}
