//! The HTTP client of servers mounted by a url: reqwest, with rustls on *ring* and the
//! system's certificates.
//!
//! reqwest's own `rustls` feature brings rustls's default provider, aws-lc-rs, whose C
//! library needs cmake and a C compiler and takes most of a clean build: a plain
//! `cargo add pi-tools` would pay that for a feature most users call over plain http, if
//! at all. So reqwest gets rustls without a provider, and the client a configuration built
//! here: the process's default provider when the program installed one (it chose), *ring*
//! otherwise. Certificates are checked as reqwest checks them by default (the platform's
//! verifier: on Linux the system's store, or the file `SSL_CERT_FILE` names).

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::crypto::CryptoProvider;
use rustls_platform_verifier::BuilderVerifierExt;

/// The client every url-mounted server's transport uses. `Err` says why TLS could not be
/// set up (no usable certificate store, say).
pub(crate) fn client() -> Result<reqwest::Client, String> {
    let provider = CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map_err(|e| format!("TLS cannot be set up ({e})"))?
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(config)
        .build()
        .map_err(|e| format!("the HTTP client cannot be made ({e})"))
}
