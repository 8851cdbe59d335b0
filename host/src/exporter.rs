//! The Prometheus text endpoint of `--metrics-addr`: `GET /metrics`.

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use sentinel_core::telemetry::Telemetry;
use std::net::SocketAddr;
use std::sync::Arc;

/// The endpoint's one route, `GET /metrics`: the sentinel's telemetry in the OpenMetrics text
/// format, for Prometheus to scrape.
pub fn router(telemetry: Arc<Telemetry>) -> Router {
    Router::new().route("/metrics", get(metrics)).with_state(telemetry)
}

async fn metrics(State(t): State<Arc<Telemetry>>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], t.render())
}

/// The metrics endpoint could not listen.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on --metrics-addr {addr}: {cause}: choose a free address and port, or stop what holds it")]
pub struct CannotListen {
    addr: SocketAddr,
    cause: std::io::Error,
}

/// Binds `addr` and serves in the background; binding errors are returned now.
pub async fn serve(addr: SocketAddr, telemetry: Arc<Telemetry>) -> Result<SocketAddr, CannotListen> {
    let cannot = |cause| CannotListen { addr, cause };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(cannot)?;
    let local = listener.local_addr().map_err(cannot)?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router(telemetry)).await {
            tracing::error!("the metrics endpoint stopped: {e}");
        }
    });
    tracing::info!("metrics on http://{local}/metrics");
    Ok(local)
}
