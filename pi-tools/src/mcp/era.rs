//! The two eras of MCP on one endpoint: a request is of the stateless era (2026-07-28 and
//! later) when it names such a protocol version in its own `_meta`
//! (`io.modelcontextprotocol/protocolVersion`), or belongs to a stdio session that began
//! with one; every other request is of the session era (2025-11-25 and before, opened with
//! `initialize`). The protocol library routes each request by the same rule; this module
//! says which era a request is of for what pi-tools decides itself: how a policy question
//! and the client's roots travel, and where log lines go.

use rmcp::ErrorData;
use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::service::{RequestContext, RoleServer};

use super::logging::SessionLevel;

tokio::task_local! {
    /// Set by the HTTP gate around a request of the stateless era: it is served by the
    /// server's stateless house (see `house`), never by a session's server.
    pub(crate) static STATELESS_REQUEST: ();
}

/// Whether the request being handled in this task was marked by the HTTP gate as one of
/// the stateless era.
pub(crate) fn in_stateless_request() -> bool {
    STATELESS_REQUEST.try_with(|()| ()).is_ok()
}

/// Whether a request with this `_meta` protocol version (`None`: none named) is of the
/// stateless era.
pub(crate) fn names_stateless_era(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether the request of `context` is of the stateless era (2026-07-28 or later): it
/// names such a version in its `_meta`, or its stdio session began with such a request.
pub(crate) fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    names_stateless_era(context.protocol_version().as_ref())
}

/// The level at which a stateless-era request gets log lines: the one its `_meta` asks for
/// (`io.modelcontextprotocol/logLevel`), or none at all when it asks for none.
pub(crate) fn request_level(context: &RequestContext<RoleServer>) -> SessionLevel {
    match context.meta.log_level() {
        Some(level) => SessionLevel::at(level),
        None => SessionLevel::off(),
    }
}

/// The error for a method the stateless era removed, saying what replaces it.
pub(crate) fn removed(method: &str, instead: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {method} is not part of MCP 2026-07-28, which this request names in its _meta. {instead}"
        ),
        None,
    )
}

/// What replaces `logging/setLevel` in the stateless era.
pub(crate) const SET_LEVEL_INSTEAD: &str = "Send the level each request wants in its own _meta as `io.modelcontextprotocol/logLevel` (no level: no log lines).";

/// What replaces `method` when the stateless era removed it; `None` for a method it keeps.
pub(crate) fn removed_instead(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => {
            "Name the protocol version and client capabilities in each request's _meta, and ask `server/discover` for the server's versions and capabilities; or open a 2025-11-25 session with `initialize` and no 2026-07-28 _meta."
        }
        "ping" => "Any request shows the server is there; `server/discover` is the cheapest.",
        "logging/setLevel" => SET_LEVEL_INSTEAD,
        "resources/subscribe" | "resources/unsubscribe" => {
            "The resources this server serves do not change once listed, so there is nothing to subscribe to: read them with resources/read."
        }
        _ => return None,
    })
}
