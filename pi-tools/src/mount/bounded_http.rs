//! rmcp's Streamable HTTP client, over reqwest, with the bounds a stdio server's reader
//! applies (see [`super::lines`]) put on what it reads before rmcp decodes it.
//!
//! rmcp's own reqwest client limits a JSON body or an event to a number of bytes and then
//! decodes it; a body just under the limit made of small values (16 MB of `0,`, 8 M
//! values) took over 1 GB to decode. So this client sends the POSTs itself and reads the
//! answer: a JSON body or an event of the answer's stream longer than `[mcp]
//! max_message_bytes`, or with more JSON values than one per
//! [`BYTES_PER_VALUE`](super::lines::BYTES_PER_VALUE) bytes of it, is not decoded, and
//! the request it answers gets an error in its place (its text says why). Only that call
//! fails: over HTTP each answer comes on its own response, so the server's other calls go
//! on. The server's own stream (a GET, opened only in a session) keeps rmcp's reader,
//! whose events pass the same value count.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, StatusCode, header};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde::Deserialize;
use sse_stream::{Sse, SseStream};

use super::lines::{call_answer, too_many_values};

/// The JSON-RPC error code of an answer the gateway refused to read; its message says why.
pub(crate) const REFUSED: i32 = -32099;

type Failure = StreamableHttpError<reqwest::Error>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// The client: reqwest's, and the largest message a server may send.
#[derive(Clone)]
pub(crate) struct BoundedHttp {
    http: reqwest::Client,
    max_message: usize,
}

impl BoundedHttp {
    /// A client for a server whose messages may be up to `max_message` bytes; `Err` says
    /// why TLS could not be set up.
    pub(crate) fn new(max_message: usize) -> Result<Self, String> {
        Ok(BoundedHttp {
            http: super::tls::client()?,
            max_message,
        })
    }

    /// Why `bytes`, a message of the server, is not read, if it is not.
    fn refusal(&self, bytes: &[u8]) -> Option<String> {
        if bytes.len() > self.max_message {
            return Some(too_long(self.max_message));
        }
        too_many_values(bytes, self.max_message)
    }

    /// Reads a JSON body of at most the limit; `Err` holds why it was not read.
    async fn read_body(
        &self,
        response: reqwest::Response,
    ) -> Result<Result<Vec<u8>, String>, Failure> {
        if response
            .content_length()
            .is_some_and(|length| length > self.max_message as u64)
        {
            return Ok(Err(too_long(self.max_message)));
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(StreamableHttpError::Client)?;
            if chunk.len() > self.max_message - body.len() {
                return Ok(Err(too_long(self.max_message)));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(match self.refusal(&body) {
            Some(why) => Err(why),
            None => Ok(body),
        })
    }

    /// The events of an answer's stream, each bounded; `id` is the request it answers.
    fn events(&self, response: reqwest::Response, id: Option<RequestId>) -> Events {
        let max_message = self.max_message;
        let mut since_event = 0usize;
        let mut last = 0u8;
        // Bytes since the last blank line: past the limit, the stream ends with an error.
        let bytes = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(|e| std::io::Error::other(e.to_string()))?;
            for &byte in chunk.iter() {
                since_event += 1;
                if byte == b'\n' && last == b'\n' {
                    since_event = 0;
                }
                if byte != b'\r' {
                    last = byte;
                }
                if since_event > max_message {
                    return Err(std::io::Error::other(TooLong));
                }
            }
            Ok(chunk)
        });
        let client = self.clone();
        let mut ended = false;
        SseStream::from_bytes_stream(bytes)
            .filter_map(move |event| {
                let item = if ended {
                    None
                } else {
                    match event {
                        Ok(event) => Some(Ok(client.bound_event(event))),
                        Err(SseError::Body(e)) if is_too_long(e.as_ref()) => {
                            ended = true;
                            let why = too_long(client.max_message);
                            id.clone().map(|id| Ok(refused_event(id, &why)))
                        }
                        Err(e) => Some(Err(e)),
                    }
                };
                std::future::ready(item)
            })
            .boxed()
    }

    /// `event` as it is, or, when its data is not to be read, an error answer to the
    /// request it answers in its place (nothing when it answers none).
    fn bound_event(&self, mut event: Sse) -> Sse {
        let Some(data) = &event.data else {
            return event;
        };
        let Some(why) = self.refusal(data.as_bytes()) else {
            return event;
        };
        tracing::warn!("an event of a mounted server was not read: {why}");
        event.data = id_of(data.as_bytes()).map(|id| refused_answer(id, &why));
        event
    }
}

/// The error that ends an event stream whose event passes the limit.
#[derive(Debug)]
struct TooLong;

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an event longer than the limit")
    }
}

impl std::error::Error for TooLong {}

/// `error` and the causes beneath it that its own text leaves out.
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = inner.source();
    }
    text
}

fn is_too_long(error: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .and_then(|e| e.get_ref())
        .is_some_and(|e| e.is::<TooLong>())
}

fn too_long(max_message: usize) -> String {
    format!(
        "it sent a message longer than {max_message} bytes, the limit of [mcp] max_message_bytes"
    )
}

/// The `id` of a message, read without keeping anything else of it.
fn id_of(bytes: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Head {
        id: Option<RequestId>,
    }
    serde_json::from_slice::<Head>(bytes).ok()?.id
}

/// The error answer to request `id` whose answer was not read, for `why`.
fn refused(id: RequestId, why: &str) -> ServerJsonRpcMessage {
    let error = ErrorData::new(
        ErrorCode(REFUSED),
        format!("the gateway did not read its answer: {why}"),
        None,
    );
    ServerJsonRpcMessage::error(error, Some(id))
}

fn refused_answer(id: RequestId, why: &str) -> String {
    serde_json::to_string(&refused(id, why)).unwrap_or_default()
}

fn refused_event(id: RequestId, why: &str) -> Sse {
    Sse {
        event: None,
        data: Some(refused_answer(id, why)),
        id: None,
        retry: None,
    }
}

/// Whether a `Content-Type` is `expected`, parameters aside.
fn media_type_is(value: Option<&HeaderValue>, expected: &str) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// Headers rmcp's own client refuses to take from the caller.
fn reserved(name: &HeaderName) -> bool {
    name == header::ACCEPT
        || name.as_str().eq_ignore_ascii_case(HEADER_SESSION_ID)
        || name.as_str().eq_ignore_ascii_case(HEADER_LAST_EVENT_ID)
}

/// The failure rmcp's client gives for a refused request with a challenge, a rate limit or
/// a server error.
fn status_failure(response: &reqwest::Response) -> Option<Failure> {
    let status = response.status();
    let challenge = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match (status, challenge) {
        (StatusCode::UNAUTHORIZED, Some(challenge)) => {
            return Some(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                challenge,
            )));
        }
        (StatusCode::FORBIDDEN, Some(challenge)) => {
            return Some(StreamableHttpError::InsufficientScope(
                InsufficientScopeError::new(challenge, None),
            ));
        }
        _ => {}
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        return Some(HttpStatusError::new(status.as_u16(), retry_after).into());
    }
    None
}

impl StreamableHttpClient for BoundedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let id = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let is_call = matches!(
            &message,
            ClientJsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::CallToolRequest(_))
        );
        let mut request = self
            .http
            .post(uri.as_ref())
            .header(
                header::ACCEPT,
                format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
            )
            .header(header::CONTENT_TYPE, JSON_MIME_TYPE)
            .body(serde_json::to_vec(&message)?);
        if let Some(token) = auth_header {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            if reserved(&name) {
                return Err(StreamableHttpError::ReservedHeaderConflict(
                    name.to_string(),
                ));
            }
            request = request.header(name, value);
        }
        let in_session = session_id.is_some();
        if let Some(session) = session_id {
            request = request.header(HEADER_SESSION_ID, session.as_ref());
        }
        // Said with its causes: rmcp shows only an error's own text, and reqwest's is
        // "error sending request" whatever refused it (a certificate, a refused connection,
        // a name that does not resolve).
        let response = request
            .send()
            .await
            .map_err(|e| StreamableHttpError::Io(std::io::Error::other(with_causes(&e))))?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && in_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let failed = match status_failure(&response) {
            // An answer with a challenge is not read, as rmcp's own client does.
            Some(
                failure @ (StreamableHttpError::AuthRequired(_)
                | StreamableHttpError::InsufficientScope(_)),
            ) => return Err(failure),
            other => other,
        };
        if status.is_success() && media_type_is(content_type.as_ref(), EVENT_STREAM_MIME_TYPE) {
            return Ok(StreamableHttpPostResponse::Sse(
                self.events(response, id),
                session,
            ));
        }
        if !media_type_is(content_type.as_ref(), JSON_MIME_TYPE) {
            return match (failed, &id) {
                (Some(failure), _) => Err(failure),
                (None, _) if !status.is_success() => Err(
                    StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}").into()),
                ),
                // Nothing is awaited: the body does not matter.
                (None, None) => Ok(StreamableHttpPostResponse::Accepted),
                (None, Some(_)) => Err(StreamableHttpError::UnexpectedContentType(
                    content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
                )),
            };
        }
        let body = match self.read_body(response).await? {
            Ok(body) => body,
            Err(why) => {
                tracing::warn!("an answer of a mounted server was not read: {why}");
                return match id {
                    Some(id) => Ok(StreamableHttpPostResponse::Json(refused(id, &why), session)),
                    None => Ok(StreamableHttpPostResponse::Accepted),
                };
            }
        };
        // The answer to a call, read straight into its result rather than through rmcp's
        // union of every result type, as a stdio server's is.
        if is_call
            && status.is_success()
            && let Some((answer_id, result)) = call_answer(&body)
            && Some(&answer_id) == id.as_ref()
        {
            let message =
                ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), answer_id);
            return Ok(StreamableHttpPostResponse::Json(message, session));
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
            // A server that refuses keeps its JSON-RPC error, whatever its status.
            Ok(message @ ServerJsonRpcMessage::Error(_)) => {
                Ok(StreamableHttpPostResponse::Json(message, session))
            }
            _ if !status.is_success() => Err(failed.unwrap_or_else(|| {
                StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}").into())
            })),
            Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
            Err(_) if id.is_none() => Ok(StreamableHttpPostResponse::Accepted),
            Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("the answer is not a JSON-RPC message ({e})"),
            ))),
        }
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        _limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        // The limit is the client's own (`[mcp] max_message_bytes`, as rmcp's config is).
        self.post_message(uri, message, session_id, auth_header, custom_headers)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Failure> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            self.max_message,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Failure> {
        let events = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size.min(self.max_message),
            )
            .await?;
        let client = self.clone();
        Ok(events
            .map(move |event| event.map(|event| client.bound_event(event)))
            .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(data: &str) -> Sse {
        Sse {
            event: Some("message".to_owned()),
            data: Some(data.to_owned()),
            id: Some("7".to_owned()),
            retry: None,
        }
    }

    #[test]
    fn an_event_past_the_bounds_becomes_an_error_answer_to_its_request_or_nothing() {
        let client = BoundedHttp::new(1 << 16).expect("TLS can be set up");
        // Within the bounds (4096 values at most): as it is.
        let small = event(r#"{"jsonrpc":"2.0","id":3,"result":{"items":[0,0,0]}}"#);
        assert_eq!(client.bound_event(small.clone()), small);
        // 5000 values answering request 3: an error answer to request 3 in its place.
        let zeros = vec!["0"; 5000].join(",");
        let big = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"items":[{zeros}]}}}}"#);
        let bounded = client.bound_event(event(&big));
        let answer: ServerJsonRpcMessage =
            serde_json::from_str(bounded.data.as_deref().expect("an answer")).expect("a message");
        let ServerJsonRpcMessage::Error(error) = answer else {
            panic!("not an error: {bounded:?}");
        };
        assert_eq!(error.id, Some(RequestId::Number(3)));
        assert_eq!(error.error.code.0, REFUSED);
        assert_eq!(
            error.error.message,
            "the gateway did not read its answer: it sent a message of 5007 JSON values; the gateway decodes at most 4096 in one message (one per 16 bytes of [mcp] max_message_bytes)"
        );
        assert_eq!(bounded.id.as_deref(), Some("7"));
        // A notification of as many values answers nothing: its data is dropped.
        let note = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"items":[{zeros}]}}}}"#);
        assert_eq!(client.bound_event(event(&note)).data, None);
        // Longer than the limit: likewise.
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"a","result":{{"t":"{}"}}}}"#,
            "x".repeat(1 << 16)
        );
        let bounded = client.bound_event(event(&long));
        assert!(
            bounded.data.as_deref().is_some_and(|d| d.contains(r#""id":"a""#)
                && d.contains("it sent a message longer than 65536 bytes, the limit of [mcp] max_message_bytes")),
            "{bounded:?}"
        );
    }
}
