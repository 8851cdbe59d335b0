//! `sentinel serve`: the HTTP API (state, staff pins, audit, metrics, probes, OpenAPI) on the
//! configured address, under the connection limits of `[api]` (`crate::api::server`: header,
//! body and idle timeouts, a connection cap). SIGINT/SIGTERM stop it: no new connections,
//! requests in flight finish (for up to 10 s), then it exits 0.

use crate::api::{ApiState, router};
use crate::config::Config;
use clap::Args;
use sentinel_core::policy::lifecycle::watcher::Watcher;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// How long requests in flight may take to finish after a shutdown signal.
const DRAIN: Duration = Duration::from_secs(10);

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The config file (default: the embedded default).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Listen here instead of `[api] address` (port 0: any free port, logged at start).
    #[arg(long)]
    pub addr: Option<SocketAddr>,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(serve(config, args.addr))
}

async fn serve(config: Config, addr: Option<SocketAddr>) -> anyhow::Result<ExitCode> {
    // An API other machines can reach is a deployment, whichever way the address was given:
    // it runs signed policies only (the config's own address was checked when it loaded).
    if let Some(addr) = addr.filter(|a| !a.ip().is_loopback()) {
        crate::config::policies::require_signatures(Some(&format!("--addr {addr} (not loopback)")), config.policies.as_ref())
            .map_err(|(key, message)| anyhow::anyhow!("{key}: {message}"))?;
    }
    let policy = crate::setup::active_policy(&config).await?;
    // Follows the version `run` activates (the persisted state), verified the same way.
    let watcher = policy.lifecycle().cloned().map(Watcher::start);
    let stores = crate::setup::open_store(&config).await?;
    let state = ApiState::new(stores.memory, stores.pins, policy.shared(), &config.api.tokens)
        .map_err(|e| anyhow::anyhow!("the policy does not describe itself: {e}"))?
        .with_policies(config.policies.clone(), crate::setup::policy_limits(&config));
    let state = match &config.api.oidc {
        Some(oidc) => {
            let verifier = crate::api::oidc::Verifier::new(oidc.clone()).map_err(|e| anyhow::anyhow!("api.oidc: {e}"))?;
            tracing::info!(issuer = %oidc.issuer, audience = %oidc.audience, algorithms = ?oidc.algorithms, "accepting OpenID Connect tokens");
            state.with_oidc(verifier)
        }
        None => state,
    };
    if state.tokens.is_empty() && state.oidc.is_none() {
        tracing::warn!("no API tokens are configured ({}): every /v1 call will be refused with 401", config.api.tokens_source);
    }
    let addr = addr.unwrap_or(config.api.address);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on {addr} (api.address or --addr): {e}"))?;
    let local = listener.local_addr()?;
    let limits = config.api.limits;
    tracing::info!(
        tokens = config.api.tokens.len(),
        header_read_timeout = %sentinel_core::shown_duration::duration(limits.header_read_timeout),
        request_body_timeout = %sentinel_core::shown_duration::duration(limits.request_body_timeout),
        idle_timeout = %sentinel_core::shown_duration::duration(limits.idle_timeout),
        max_connections = limits.max_connections,
        "serving the API on http://{local} ({})",
        config.source
    );

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::api::server::serve(listener, router(state), limits, async {
        let _ = stop_rx.await;
    }));
    shutdown_signal().await?;
    tracing::info!("shutdown requested: finishing the requests in flight");
    let _ = stop_tx.send(());
    match tokio::time::timeout(DRAIN, server).await {
        Ok(Ok(())) => tracing::info!("the API stopped"),
        Ok(Err(e)) => return Err(anyhow::anyhow!("the API server task failed: {e}")),
        Err(_) => tracing::warn!("requests still in flight after {DRAIN:?}; stopping anyway"),
    }
    if let Some(watcher) = watcher {
        watcher.stop().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits for SIGINT or SIGTERM.
async fn shutdown_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| anyhow::anyhow!("cannot listen for SIGTERM: {e}"))?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.map_err(|e| anyhow::anyhow!("cannot listen for SIGINT: {e}"))?,
        _ = term.recv() => {}
    }
    Ok(())
}
