//! A local https server for the agent example's tests and the mount tests' (which include
//! this file with `#[path]`): axum over a TLS listener whose certificate is made here, for
//! `localhost` and `127.0.0.1`.

use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::server::TlsStream;

/// Accepts TCP connections and completes the TLS handshake before axum sees them.
pub struct Listener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl Listener {
    /// The listener, and the PEM text of the certificate a client must trust.
    pub fn new(tcp: TcpListener) -> (Listener, String) {
        let made =
            rcgen::generate_simple_self_signed(["localhost".to_owned(), "127.0.0.1".to_owned()])
                .expect("a certificate can be made");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
        let chain = vec![CertificateDer::from(made.cert.der().to_vec())];
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the default protocol versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("the certificate and key match");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        (Listener { tcp, acceptor }, made.cert.pem())
    }
}

impl axum::serve::Listener for Listener {
    type Io = TlsStream<TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            // A client that fails the handshake is dropped; the next one is served.
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
