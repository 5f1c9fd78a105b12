//! A server mounted by an `https` url: a real Streamable HTTP server on a local port behind
//! TLS, with a certificate made here for `127.0.0.1`. The gateway trusts it when
//! `SSL_CERT_FILE` names it, as any program on the machine would, and refuses it otherwise,
//! saying that the certificate was the cause. And the `mount` feature brings TLS by itself,
//! on *ring*: the test of that is what cargo resolves for pi-tools alone.

use super::*;

#[path = "../providers/tls.rs"]
mod tls;

/// Serves [`super::hostile_http::answer`]'s MCP server over https at `/json`, on `runtime`;
/// its port and the PEM text of its certificate.
fn serve(runtime: &tokio::runtime::Runtime) -> (u16, String) {
    runtime.block_on(async {
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port");
        let port = tcp.local_addr().expect("its address").port();
        let (listener, certificate) = tls::Listener::new(tcp);
        let app = axum::Router::new().route(
            "/json",
            axum::routing::post(
                |body: String| async move { super::hostile_http::answer(&body, false) },
            ),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        (port, certificate)
    })
}

#[test]
fn a_server_mounted_by_an_https_url_is_reached_only_when_its_certificate_is_trusted() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let (port, certificate) = serve(&runtime);
    let setup = Setup::new(&format!(
        "[tools]\nactive = [\"web__echo\"]\n\n[mcp.servers.web]\nurl = \"https://127.0.0.1:{port}/json\"\n"
    ));
    let trusted = setup.etc.path().join("trusted.pem");
    std::fs::write(&trusted, &certificate).expect("the certificate is written");
    // Another certificate than the server's, by another name: what a machine that never
    // heard of the server's trusts (rcgen's default name would make it look like the
    // server's issuer, and the refusal a bad signature).
    let mut params =
        rcgen::CertificateParams::new(["127.0.0.1".to_owned()]).expect("the parameters");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "an unrelated authority");
    let key = rcgen::KeyPair::generate().expect("a key");
    let other = params.self_signed(&key).expect("a certificate can be made");
    let unrelated = setup.etc.path().join("unrelated.pem");
    std::fs::write(&unrelated, other.pem()).expect("the certificate is written");

    let mut gateway = StdioGateway::start(&setup, &[("SSL_CERT_FILE", &path_text(&trusted))]);
    let answer = gateway.call(2, "web__echo", json!({"text": "over https"}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["content"],
        json!([{"type": "text", "text": "over https"}])
    );
    assert!(gateway.end_input().success());

    let mut gateway = StdioGateway::start(&setup, &[("SSL_CERT_FILE", &path_text(&unrelated))]);
    let answer = gateway.call(2, "web__echo", json!({"text": "over https"}));
    // The whole refusal; only the port differs from run to run.
    let url = format!("https://127.0.0.1:{port}/json");
    let message = format!(
        "Tool web__echo cannot be called because its server is not available. The MCP server `web` could not be started: the MCP handshake failed (Io error: error sending request for url ({url}): client error (Connect): invalid peer certificate: UnknownIssuer, when it was to send initialize request) at {url}; no process of its own. Fix its entry [mcp.servers.web] (or the server itself); its tools fail until then."
    );
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": message, "data": {"tools": []}}})
    );
    assert!(gateway.end_input().success());
}

/// The features cargo resolves for `crate` in pi-tools's tree with `mount` alone (as a crate
/// that depends on it gets them). Run through cargo, since every build of this workspace
/// unifies features with the tests' own.
fn features_with_mount_alone(krate: &str) -> String {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--manifest-path", manifest])
        .args([
            "-p",
            "pi-tools",
            "--no-default-features",
            "--features",
            "mount",
        ])
        .args([
            "-e", "normal", "--prefix", "none", "-f", "{p} {f}", "-i", krate,
        ])
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The first line is the crate itself: its name, version and features.
    stdout
        .lines()
        .next()
        .and_then(|line| line.strip_prefix(&format!("{krate} v")))
        .and_then(|rest| rest.split_once(' '))
        .map(|(_, features)| features.to_owned())
        .unwrap_or_else(|| panic!("no features of {krate} in: {stdout}"))
}

/// reqwest gets rustls, without the default provider (aws-lc-rs, a C build with cmake):
/// rustls has *ring* only, which the gateway's client configuration uses.
#[test]
fn the_mount_feature_alone_gives_reqwest_tls_on_ring() {
    assert_eq!(
        features_with_mount_alone("reqwest"),
        "__rustls,__tls,json,rustls-no-provider,stream"
    );
    assert_eq!(
        features_with_mount_alone("rustls"),
        "log,logging,ring,std,tls12"
    );
}
