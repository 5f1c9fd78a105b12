//! What the HTTP transport answers itself, around the protocol library: the bearer token, a
//! POST body that is not one usable JSON-RPC message (400 with the JSON-RPC error, as over
//! stdio), DELETE's status (200, or 404 for a session that is not live), the health
//! probe, and a header mismatch's refusal made a sentence with its fix (`http_explain`).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, ProtocolVersion};
use serde_json::{Value, json};
use subtle::ConstantTimeEq;
use tokio::sync::OwnedSemaphorePermit;

use super::answer_ids::answers_no_question;
use super::http_explain::explained;
use super::listen_bound::{ListenBound, TOO_MANY_LISTENS};
use super::sessions::Sessions;

/// JSON-RPC's codes for a body that is not JSON, and for JSON that is not a request.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// What the gate checks requests against.
pub(crate) struct Gate {
    /// The bearer token every request must carry, if the server has one.
    pub(crate) token: Option<String>,
    /// The server's sessions (`None` when stateless).
    pub(crate) sessions: Option<Arc<Sessions>>,
    /// The largest body accepted (`[mcp] max_message_bytes`).
    pub(crate) max_message_bytes: usize,
    /// How long a client may take to send a body.
    pub(crate) body_timeout: Duration,
    /// The 2026-07-28 `subscriptions/listen` requests open (see `listen_bound`).
    pub(crate) listens: ListenBound,
}

/// The middleware in front of the MCP endpoint.
pub(crate) async fn gate(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if let Some(expected) = &gate.token
        && !carries_token(&request, expected)
    {
        return unauthorized();
    }
    match *request.method() {
        Method::POST if is_json(&request) => {
            let checked = tokio::time::timeout(
                gate.body_timeout,
                checked_body(request, gate.max_message_bytes),
            );
            let Ok(checked) = checked.await else {
                return slow_body(gate.body_timeout);
            };
            let (request, kind) = match checked {
                Ok(checked) => checked,
                Err(refusal) => return refusal.into_response(),
            };
            if kind == Kind::StrayAnswer {
                // Taken as it is, answered as any response is (202), and dropped: the
                // library would match it to the question numbered alike.
                tracing::debug!(
                    "an answer whose id is a string answers no question of the server's; it is dropped"
                );
                return StatusCode::ACCEPTED.into_response();
            }
            if let Kind::Initialize(declared) = kind {
                // A new session past the bound is refused (or takes the place of the least
                // recently used idle one, when the server is set so). Its place is kept from
                // here until the session is made.
                let response = match &gate.sessions {
                    Some(sessions) if !request.headers().contains_key("mcp-session-id") => {
                        let Some(opening) = sessions.make_room() else {
                            return too_many_sessions(sessions.max, sessions.when_full);
                        };
                        opening.scope(next.run(request)).await
                    }
                    _ => next.run(request).await,
                };
                return offering_tasks(response, declared, gate.max_message_bytes).await;
            }
            if let Kind::Listen(id) = kind {
                // Open until its client closes it: a place among the listens, held by the
                // response's body, or a refusal.
                let place = match gate.listens.open() {
                    Ok(place) => place,
                    Err(refusal) => {
                        let mut response = Refusal {
                            status: StatusCode::SERVICE_UNAVAILABLE,
                            id,
                            code: TOO_MANY_LISTENS,
                            message: refusal,
                        }
                        .into_response();
                        response
                            .headers_mut()
                            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                        return response;
                    }
                };
                let response = super::era::STATELESS_REQUEST
                    .scope((), next.run(request))
                    .await;
                return holding(response, place);
            }
            if kind == Kind::StatelessEra {
                // Served on its own by the library (with a session id or not), by the
                // server's stateless house (see `house`), never by a session's server.
                // Only `initialize` makes a session, and it is never of this kind.
                let response = super::era::STATELESS_REQUEST
                    .scope((), next.run(request))
                    .await;
                return explained(response).await;
            }
            explained(next.run(request).await).await
        }
        Method::DELETE => delete(&gate, request, next).await,
        _ => next.run(request).await,
    }
}

/// `GET /healthz`: 200 while the server runs. It needs no token and tells nothing about the
/// tools, so a load balancer or an orchestrator's probe can call it.
pub(crate) async fn health() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        "{\"status\":\"ok\"}\n",
    )
        .into_response()
}

/// Whether the request's `Authorization` is `Bearer <expected>` (the scheme in any case, as
/// RFC 7235 has it; the token compared in constant time).
fn carries_token(request: &Request, expected: &str) -> bool {
    let Some((scheme, given)) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
    else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && bool::from(given.trim().as_bytes().ct_eq(expected.as_bytes()))
}

fn unauthorized() -> Response {
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "Unauthorized: send the server's token as `Authorization: Bearer <token>`.\n",
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// 408 for a body that did not arrive in time.
fn slow_body(within: Duration) -> Response {
    let mut response = (
        StatusCode::REQUEST_TIMEOUT,
        format!(
            "Request Timeout: the body did not arrive within {} s. Send the whole request at once.\n",
            within.as_secs_f32()
        ),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// 503 for a new session when every session kept is busy (a call running or a stream
/// open) and the bound, `max`, is reached.
fn too_many_sessions(max: usize, when_full: super::session_bound::WhenFull) -> Response {
    let limit = crate::env::descriptor_limit()
        .map(|l| format!(" (the soft limit on open files, `ulimit -n`, is {l})"))
        .unwrap_or_default();
    let why = match when_full {
        super::session_bound::WhenFull::Refuse => format!(
            "the server already keeps {max} sessions, as many as it can keep running at once{limit} (`[mcp] max_sessions`), and it refuses a new one rather than end one of them"
        ),
        super::session_bound::WhenFull::EndIdle => format!(
            "every one of the {max} sessions the server keeps{limit} (`[mcp] max_sessions`) is busy"
        ),
    };
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "Service Unavailable: {why}. Retry later, end sessions you no longer use (DELETE), or ask the operator to raise the server's limit on open files (`ulimit -n`), to end idle sessions by time (`--session-idle-secs`) or to let a new session end the least recently used idle one (`[mcp] when_full = \"end_idle\"`).\n"
        ),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// A body declared as JSON (other types are refused by the protocol library with 415).
fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// `response`, whose body keeps `place` until it is dropped (its stream ended or its
/// client gone).
fn holding(response: Response, place: OwnedSemaphorePermit) -> Response {
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            let _held = &place;
            chunk
        });
        Body::from_stream(stream)
    })
}

/// What a usable message is, as far as the gate cares.
#[derive(Clone, PartialEq, Eq)]
enum Kind {
    /// `initialize`, which makes a new session; whether its client declared the tasks
    /// extension (its answer offers MCP 2025-11-25's tasks if not, see `tasks_2025_edge`).
    Initialize(bool),
    /// A request of a session that may be one whose 2025-11-25 answer the server gives
    /// itself, renamed on its way (see `tasks_2025_edge`).
    MayDivert,
    /// A response or error whose id is a string: the server numbers its questions
    /// (elicitation, roots), and JSON-RPC ids match by type and value, so it answers none
    /// of them, though the protocol library would take `"3"` for `3`.
    StrayAnswer,
    /// A request of the stateless era (one with the complete per-request `_meta` of MCP
    /// 2026-07-28, or naming that version or a later one), served without a session.
    StatelessEra,
    /// A `subscriptions/listen` of the stateless era, with its id: served so, and held to
    /// the bound on open listens.
    Listen(Value),
    /// Anything else.
    Other,
}

/// The request with its body read, when the body is one JSON-RPC message, and what kind
/// of message it is; else the answer that says why not.
async fn checked_body(request: Request, max: usize) -> Result<(Request, Kind), Refusal> {
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, max).await.map_err(|_| Refusal {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        id: Value::Null,
        code: INVALID_REQUEST,
        message: format!(
            "Invalid Request: the message is larger than {max} bytes (`[mcp] max_message_bytes`). Send a smaller message (put large data in files), or raise the setting."
        ),
    })?;
    let kind = check_message(&bytes)?;
    if kind == Kind::MayDivert {
        let mut message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let body = match super::tasks_2025_edge::divert(&mut message) {
            true => Body::from(message.to_string()),
            false => Body::from(bytes),
        };
        return Ok((Request::from_parts(parts, body), Kind::Other));
    }
    Ok((Request::from_parts(parts, Body::from(bytes)), kind))
}

/// Refuses a body that is not one JSON-RPC message, with the JSON-RPC error a stdio client
/// would get for the same line; says what kind of message it is.
fn check_message(bytes: &[u8]) -> Result<Kind, Refusal> {
    let not_a_message = match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(ClientJsonRpcMessage::Request(request)) => {
            let stateless = request
                .request
                .get_meta()
                .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                || super::era::names_stateless_era(
                    request.request.get_meta().protocol_version().as_ref(),
                );
            return Ok(match request.request {
                ClientRequest::InitializeRequest(init) => {
                    Kind::Initialize(init.params.capabilities.supports_tasks())
                }
                ClientRequest::SubscriptionsListenRequest(_) if stateless => {
                    Kind::Listen(serde_json::to_value(&request.id).unwrap_or(Value::Null))
                }
                // As the library routes it: a request with the complete per-request
                // `_meta` of 2026-07-28, or naming that version, is served on its own.
                _ if stateless => Kind::StatelessEra,
                ref other if super::tasks_2025_edge::may_divert(other.method()) => Kind::MayDivert,
                _ => Kind::Other,
            });
        }
        Ok(message) if answers_no_question(&message) => return Ok(Kind::StrayAnswer),
        Ok(_) => return Ok(Kind::Other),
        Err(not_a_message) => not_a_message,
    };
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        let what = if bytes.iter().all(u8::is_ascii_whitespace) {
            "the body is empty".to_owned()
        } else {
            format!("the body is not JSON ({e})")
        };
        Refusal {
            status: StatusCode::BAD_REQUEST,
            id: Value::Null,
            code: PARSE_ERROR,
            message: format!("Parse error: {what}. Send one JSON-RPC message as the body."),
        }
    })?;
    let (id, reason) = match &value {
        Value::Array(_) => (
            Value::Null,
            "a batch (JSON array) is not accepted: since protocol version 2025-06-18 a POST carries one message. Send each message in its own request.".to_owned(),
        ),
        Value::Object(object) => (
            object
                .get("id")
                .filter(|id| id.is_string() || id.is_i64())
                .cloned()
                .unwrap_or(Value::Null),
            format!(
                "the body is not a JSON-RPC request, notification or response ({not_a_message}). See the MCP specification for the message's shape."
            ),
        ),
        _ => (
            Value::Null,
            "the body is not a JSON object. Send one JSON-RPC message as the body.".to_owned(),
        ),
    };
    Err(Refusal {
        status: StatusCode::BAD_REQUEST,
        id,
        code: INVALID_REQUEST,
        message: format!("Invalid Request: {reason}"),
    })
}

/// `response`, the answer to an `initialize` whose client did (`declared`) or did not
/// declare the tasks extension, offering MCP 2025-11-25's tasks (see `tasks_2025_edge`),
/// as a JSON body or in an event stream (each event passed on once it is complete).
async fn offering_tasks(response: Response, declared: bool, max: usize) -> Response {
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if content_type.starts_with("text/event-stream") {
        return response.map(|body| {
            let chunks = body.into_data_stream().map(Some);
            let ended = futures::stream::once(async { None });
            let events = chunks.chain(ended).scan(Vec::new(), move |pending, chunk| {
                let out = match chunk {
                    Some(Ok(bytes)) => {
                        pending.extend_from_slice(&bytes);
                        let complete = pending
                            .windows(2)
                            .rposition(|w| w == b"\n\n")
                            .map_or(0, |at| at + 2);
                        let events: Vec<u8> = pending.drain(..complete).collect();
                        let events = String::from_utf8_lossy(&events);
                        Ok(super::tasks_2025_edge::offer_in_events(&events, declared).into())
                    }
                    Some(Err(e)) => Err(e),
                    None => Ok(axum::body::Bytes::from(std::mem::take(pending))),
                };
                std::future::ready(Some(out))
            });
            Body::from_stream(events)
        });
    }
    if !content_type.starts_with("application/json") {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, max).await else {
        return internal_error("the answer to initialize could not be read");
    };
    let Ok(mut answer) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    super::tasks_2025_edge::offer_in_initialize(&mut answer, declared);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(answer.to_string()))
}

fn internal_error(what: &str) -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("Internal Server Error: {what}; this is a bug in pi-tools.\n"),
    )
        .into_response()
}

/// A body refused with a JSON-RPC error.
struct Refusal {
    status: StatusCode,
    id: Value,
    code: i64,
    message: String,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        });
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    }
}

/// DELETE ends a live session with 200 (the library says 202, which some clients take for a
/// failure), and answers 404 for a session that is not live (unknown, ended or expired).
async fn delete(gate: &Gate, request: Request, next: Next) -> Response {
    // The session ends here, awake or asleep; the library's own DELETE then finds nothing.
    let live = match (&gate.sessions, request.headers().get("mcp-session-id")) {
        (Some(sessions), Some(id)) => id.to_str().is_ok_and(|id| sessions.end(id)),
        _ => false,
    };
    let mut response = next.run(request).await;
    if response.status() == StatusCode::ACCEPTED {
        if live {
            *response.status_mut() = StatusCode::OK;
        } else {
            return (
                StatusCode::NOT_FOUND,
                "Not Found: no live session has this id (it ended, expired or never existed). Open a new session with `initialize`.\n",
            )
                .into_response();
        }
    }
    response
}
