//! Clients behind a proxy. A reverse proxy, a load balancer or a sidecar connects from one
//! address for all of its clients, so the bound on connections per client address would
//! make them one client (the 65th is closed on arrival). The addresses named trusted
//! (`[mcp] trusted_proxies`) are not bounded per address; each request they send names its
//! client in `Forwarded` (RFC 7239 `for=`) or else `X-Forwarded-For`, read from the right:
//! the right-most hop that is not a trusted proxy is the client (the hops left of it could
//! be written by the client itself). That client may have at most `max_per_client` requests
//! open at once (an answer stream open counts until it ends); one more is answered 429.
//! The health probe is answered whatever the bound. A header from any other address is
//! ignored: its connections are bounded by its own address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::http::HEALTH_PATH;
use super::http_conn::client_of;

/// The trusted proxies, and the requests open per client they forward.
pub(crate) struct Proxies {
    trusted: Vec<IpAddr>,
    max_per_client: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open request of a forwarded client; its place is given back when dropped (with the
/// answer's body).
pub(crate) struct Held {
    proxies: Arc<Proxies>,
    client: IpAddr,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut open = self.proxies.open();
        if let Some(count) = open.get_mut(&self.client) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.client);
            }
        }
    }
}

impl Proxies {
    /// Proxies at `trusted` (none: every address is its own client), their clients bounded
    /// to `max_per_client` open requests each.
    pub(crate) fn new(trusted: &[IpAddr], max_per_client: usize) -> Arc<Self> {
        Arc::new(Proxies {
            trusted: trusted.iter().map(IpAddr::to_canonical).collect(),
            max_per_client,
            open: Mutex::default(),
        })
    }

    fn open(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether connections from `peer` come from a trusted proxy.
    pub(crate) fn trusts(&self, peer: IpAddr) -> bool {
        self.trusted.contains(&peer.to_canonical())
    }

    /// Admits a request a trusted proxy at `peer` sends for its client: a place among the
    /// client's open requests, or the 429 that says it has too many. The health probe needs
    /// no place.
    pub(crate) fn admit(
        self: &Arc<Self>,
        peer: IpAddr,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<Option<Held>, TooManyRequests> {
        if path == HEALTH_PATH {
            return Ok(None);
        }
        let client = client_of(self.client(peer, headers));
        let mut open = self.open();
        let count = open.entry(client).or_default();
        if *count >= self.max_per_client {
            return Err(TooManyRequests(self.max_per_client));
        }
        *count += 1;
        Ok(Some(Held {
            proxies: Arc::clone(self),
            client,
        }))
    }

    /// The client a request from the trusted proxy at `peer` is for: the right-most hop of
    /// its forwarding header that is not a trusted proxy; the left-most hop when all are;
    /// the proxy itself when the header is missing or a hop cannot be read (`unknown`, an
    /// obfuscated name), as nothing better is known.
    fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let hops = forwarded_hops(headers);
        let mut client = peer;
        for hop in hops.iter().rev() {
            let Some(ip) = hop else {
                return peer;
            };
            client = *ip;
            if !self.trusts(*ip) {
                break;
            }
        }
        client
    }
}

/// The hops a request passed, left (the first) to right, from `Forwarded`'s `for=` when the
/// request carries one, else from `X-Forwarded-For`; `None` for a hop that is no address.
fn forwarded_hops(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let values = |name| -> Vec<&str> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect()
    };
    let forwarded = values(header::FORWARDED);
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .filter_map(|element| {
                element.split(';').find_map(|pair| {
                    let (key, value) = pair.split_once('=')?;
                    key.trim()
                        .eq_ignore_ascii_case("for")
                        .then(|| node_address(value))
                })
            })
            .collect();
    }
    values(header::HeaderName::from_static("x-forwarded-for"))
        .iter()
        .map(|hop| node_address(hop))
        .collect()
}

/// The address of a node as `Forwarded` writes it (`192.0.2.60`, `"192.0.2.60:4711"`,
/// `"[2001:db8::1]:4711"`) or `X-Forwarded-For` does (`2001:db8::1`).
fn node_address(node: &str) -> Option<IpAddr> {
    let node = node.trim().trim_matches('"');
    if let Ok(ip) = node.parse() {
        return Some(ip);
    }
    if let Some(bracketed) = node.strip_prefix('[') {
        return bracketed.split(']').next()?.parse().ok();
    }
    node.rsplit_once(':')?.0.parse().ok()
}

/// A forwarded client past its bound (of this many requests open).
#[derive(Debug)]
pub(crate) struct TooManyRequests(usize);

impl IntoResponse for TooManyRequests {
    /// 429; the proxy's connection stays open for its other clients.
    fn into_response(self) -> Response {
        let max = self.0;
        let mut response = (
        StatusCode::TOO_MANY_REQUESTS,
        Body::from(format!(
            "Too Many Requests: this client already has {max} requests open through the proxy (`[mcp] max_connections_per_client`). Wait for an answer before sending more, or raise the setting.\n"
        )),
    )
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn the_client_is_the_rightmost_hop_that_is_not_a_trusted_proxy() {
        let proxies = Proxies::new(&[ip("10.0.0.1"), ip("10.0.0.2")], 2);
        let peer = ip("10.0.0.1");
        let xff = headers(&[("x-forwarded-for", "6.6.6.6, 192.0.2.7, 10.0.0.2")]);
        assert_eq!(proxies.client(peer, &xff), ip("192.0.2.7"));
        let forwarded = headers(&[
            ("forwarded", "for=6.6.6.6"),
            (
                "forwarded",
                "for=\"[2001:db8::5]:4711\";proto=https, For=10.0.0.2",
            ),
        ]);
        assert_eq!(proxies.client(peer, &forwarded), ip("2001:db8::5"));
        assert_eq!(
            proxies.client(peer, &headers(&[("forwarded", "for=\"192.0.2.9:80\"")])),
            ip("192.0.2.9")
        );
        // Nothing known: the proxy itself; only proxies: the first of them.
        assert_eq!(proxies.client(peer, &HeaderMap::new()), peer);
        assert_eq!(
            proxies.client(peer, &headers(&[("forwarded", "for=unknown")])),
            peer
        );
        assert_eq!(
            proxies.client(peer, &headers(&[("x-forwarded-for", "10.0.0.2")])),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn a_forwarded_client_has_its_own_bound_and_the_probe_none() {
        let proxies = Proxies::new(&[ip("127.0.0.1")], 1);
        let peer = ip("127.0.0.1");
        let one = headers(&[("x-forwarded-for", "192.0.2.1")]);
        let two = headers(&[("x-forwarded-for", "192.0.2.2")]);
        let held = proxies.admit(peer, "/mcp", &one).expect("room");
        assert!(proxies.admit(peer, "/mcp", &one).is_err());
        assert!(proxies.admit(peer, HEALTH_PATH, &one).is_ok());
        assert!(proxies.admit(peer, "/mcp", &two).is_ok());
        drop(held);
        assert!(proxies.admit(peer, "/mcp", &one).is_ok());
        assert!(proxies.trusts(ip("::ffff:127.0.0.1")));
        assert!(!proxies.trusts(ip("127.0.0.2")));
    }
}
