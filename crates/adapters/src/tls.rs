//! TLS for the HTTP clients the sentinel opens itself (an `https://` Prometheus): rustls with
//! the ring provider and the platform's certificate verifier (the system's trust store). The
//! provider is given to each client, never installed process-wide, so it cannot clash with the
//! AWS SDK's own.

use std::sync::Arc;

/// A client TLS configuration: TLS 1.2 and 1.3, the system's roots, no client certificate.
pub(crate) fn client_config() -> Result<rustls::ClientConfig, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map(|builder| builder.with_no_client_auth())
        .map_err(|e| format!("cannot set up TLS with the system's certificates: {e}"))
}

/// A `reqwest` client builder with `client_config`: every HTTP client the sentinel opens
/// starts here (reqwest has no TLS provider of its own in this build).
pub fn http_client() -> Result<reqwest::ClientBuilder, String> {
    Ok(reqwest::Client::builder().tls_backend_preconfigured(client_config()?))
}
