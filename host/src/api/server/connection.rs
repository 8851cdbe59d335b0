//! One accepted connection: hyper's HTTP/1 connection serving the router, each request body
//! under its deadline, closed once idle for `api.idle_timeout`, watched for graceful shutdown,
//! and holding its permit of `api.max_connections` until it closes.

use super::deadline::DeadlineBody;
use crate::config::api::ApiLimits;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::time::Instant;
use tower::ServiceExt;

/// Serves `stream` on a task of its own.
pub(super) fn spawn(
    stream: TcpStream,
    peer: SocketAddr,
    permit: OwnedSemaphorePermit,
    http: &http1::Builder,
    router: &Router,
    limits: &ApiLimits,
    graceful: &GracefulShutdown,
) {
    // `Some(since)`: idle since then (the last response was produced); `None`: a request is in
    // progress, or none came yet (the header-read timeout covers that wait).
    let (idle_tx, idle_rx) = watch::channel(None::<Instant>);
    let router = router.clone();
    let body_timeout = limits.request_body_timeout;
    let service = service_fn(move |request: axum::http::Request<Incoming>| {
        idle_tx.send_replace(None);
        let idle_tx = idle_tx.clone();
        let response = router.clone().oneshot(request.map(|body| DeadlineBody::new(body, body_timeout)));
        async move {
            let response = response.await;
            idle_tx.send_replace(Some(Instant::now()));
            response
        }
    });
    let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
    let idle_timeout = limits.idle_timeout;
    tokio::spawn(async move {
        let _permit = permit;
        tokio::select! {
            served = connection => match served {
                Ok(()) => tracing::trace!(%peer, "connection closed"),
                // A header-read timeout, a client gone mid-request: the client's doing.
                Err(e) => tracing::debug!(%peer, "connection closed: {e}"),
            },
            () = idle_for(idle_rx, idle_timeout) => {
                tracing::debug!(%peer, "closing a connection idle for {}", sentinel_core::shown_duration::duration(idle_timeout));
            }
        }
    });
}

/// Completes once the connection has stayed idle for `limit` (no request since its last
/// response was produced). Dropping the connection then closes it: no request is in progress,
/// and a response still unwritten after `limit` is one its client does not read.
async fn idle_for(mut state: watch::Receiver<Option<Instant>>, limit: Duration) {
    loop {
        let since = *state.borrow_and_update();
        let changed = match since {
            Some(since) => tokio::select! {
                () = tokio::time::sleep_until(since + limit) => return,
                changed = state.changed() => changed,
            },
            None => state.changed().await,
        };
        if changed.is_err() {
            // The connection is gone (its service dropped): the other branch completes.
            return std::future::pending().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_for_counts_from_the_last_response_and_not_while_busy() {
        use tokio::time::timeout;
        let ms = Duration::from_millis;
        let (tx, rx) = watch::channel(None::<Instant>);
        let mut idle = tokio::spawn(idle_for(rx, ms(300)));
        // No request yet: never idle (the header-read timeout covers that wait).
        assert!(timeout(ms(600), &mut idle).await.is_err());
        tx.send_replace(Some(Instant::now()));
        assert!(timeout(ms(150), &mut idle).await.is_err());
        // A request in progress stops the count; its response restarts it.
        tx.send_replace(None);
        assert!(timeout(ms(600), &mut idle).await.is_err());
        tx.send_replace(Some(Instant::now()));
        assert!(timeout(ms(200), &mut idle).await.is_err());
        assert!(timeout(ms(2_000), &mut idle).await.is_ok());
    }
}
