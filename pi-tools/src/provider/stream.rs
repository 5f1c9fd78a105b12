//! A streamed reply: the server-sent-event body, fed in chunks as they arrive (split anywhere,
//! inside a UTF-8 character or a JSON string), each provider's deltas put back together into
//! the reply they stand for, which is then read like a JSON body.

use serde_json::Value;
use sse_parse::SseParser;

use super::format::{self, StreamState};
use super::keep::{self, Keep};
use super::walk::{At, Path};
use super::{Reply, ReplyError};
use crate::dialect::Dialect;

/// Reads a streamed reply: [`feed`](ReplyStream::feed) it the body's bytes as they come,
/// then [`finish`](ReplyStream::finish) it for the [`Reply`].
///
/// ```
/// use pi_tools::dialect::Dialect;
/// use pi_tools::provider::ReplyStream;
///
/// let body = "event: message_start\n\
///     data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null}}\n\n\
///     event: content_block_start\n\
///     data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"ls\",\"input\":{}}}\n\n\
///     event: content_block_delta\n\
///     data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"sr\"}}\n\n\
///     event: content_block_delta\n\
///     data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"c\\\"}\"}}\n\n\
///     event: content_block_stop\n\
///     data: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
///     event: message_delta\n\
///     data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n\
///     event: message_stop\n\
///     data: {\"type\":\"message_stop\"}\n\n";
/// let mut stream = ReplyStream::new(Dialect::Anthropic);
/// for chunk in body.as_bytes().chunks(7) {
///     stream.feed(chunk).unwrap();
/// }
/// let reply = stream.finish().unwrap();
/// assert_eq!(reply.calls[0].arguments, serde_json::json!({"path": "src"}));
/// ```
#[derive(Debug)]
pub struct ReplyStream {
    dialect: Dialect,
    parser: SseParser,
    /// Events read so far (the next one's number).
    events: usize,
    /// Bytes fed so far: the accumulated arguments parsed at the end may hold one value per
    /// [`keep::BYTES_PER_VALUE`] of them.
    bytes: usize,
    /// What the events may still keep past one value per [`keep::BYTES_PER_VALUE`] bytes of
    /// each: [`keep::LEAST_VALUES`] for the whole stream, so that many dense events do not
    /// each keep that many.
    spare: usize,
    /// The format's reply under reconstruction; `None` for a dialect without replies.
    state: Option<Box<dyn StreamState>>,
    /// What the format uses of an event's data: only that is decoded.
    keep: &'static Keep,
}

/// One event of the stream, as the provider's accumulator sees it.
pub(super) struct Event<'a> {
    /// The `event:` field (empty when the event has none).
    pub(super) name: &'a str,
    /// The `data:` field, parsed.
    pub(super) data: At<'a>,
}

impl<'a> Event<'a> {
    /// The event's type: its data's `type`, else its `event:` name.
    pub(super) fn kind(&self) -> Result<&'a str, ReplyError> {
        Ok(self.data.str("type")?.unwrap_or(self.name))
    }
}

impl ReplyStream {
    /// A stream of events in `dialect`'s wire format, before its first byte. MCP has no
    /// replies: feeding or finishing its stream is an error saying so.
    pub fn new(dialect: Dialect) -> Self {
        ReplyStream {
            dialect,
            parser: SseParser::new(),
            events: 0,
            bytes: 0,
            spare: keep::LEAST_VALUES,
            state: format::wire(dialect).map(|wire| (wire.stream)()),
            keep: format::wire(dialect).map_or(&Keep::All, |wire| wire.event),
        }
    }

    /// Takes the next bytes of the body, any number, split anywhere. An event that cannot be
    /// read (its data is not JSON, a field has the wrong type, the provider reports an error)
    /// is an error at once.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), ReplyError> {
        self.bytes = self.bytes.saturating_add(bytes.len());
        self.parser.feed(bytes);
        self.drain()
    }

    /// Ends the stream and reads the reply its events made. A body that stops inside an
    /// event, or before the provider's last event, is an error saying it was cut off.
    pub fn finish(mut self) -> Result<Reply, ReplyError> {
        // A block without its closing blank line is dropped by the event-stream rules; ending
        // it here shows whether there was one, which means the body was cut off.
        let before = self.events;
        self.parser.feed(b"\n\n");
        if self.parser.next_event().is_some() {
            return Err(self.error(
                format!("events[{before}]"),
                "the body ends inside this event (it has no closing blank line): it was cut off; pass the whole body",
            ));
        }
        self.parser.finish();
        let dialect = self.dialect;
        let state = self.state.ok_or_else(|| {
            let mut e = ReplyError::new(dialect, "", format::lists_only(dialect));
            e.streamed = true;
            e
        })?;
        let rebuilt = state
            .finish()
            .map_err(|reason| self::cut_off(dialect, reason))?;
        // The rebuilt reply is the reader's: its items and blocks are moved, not copied, and
        // the calls' arguments put together from their deltas are parsed within the budget of
        // the whole stream.
        let budget = keep::Budget::of_bytes(self.bytes);
        let read = match format::wire(dialect) {
            Some(wire) => super::read_owned(dialect, wire, rebuilt, &budget),
            None => Err(ReplyError::new(dialect, "", format::lists_only(dialect))),
        };
        read.map_err(|mut e| {
            e.streamed = true;
            e
        })
    }

    fn drain(&mut self) -> Result<(), ReplyError> {
        while let Some(event) = self.parser.next_event() {
            let Some(state) = self.state.as_mut() else {
                return Err(self.error(String::new(), format::lists_only(self.dialect)));
            };
            let number = self.events;
            self.events += 1;
            let path = Path::key("", &format!("events[{number}]"));
            if state.marker(event.data.trim()) {
                continue;
            }
            if event.data.is_empty() {
                continue;
            }
            // Each event is decoded on its own, within the budget of its own length.
            let budget = keep::Budget::of_bytes(event.data.len());
            let data = keep::from_str(&event.data, self.keep, &budget).map_err(|e| {
                let reason = if budget.spent() {
                    budget.reason()
                } else {
                    format!("the event's data is not valid JSON ({e})")
                };
                stream_error(self.dialect, path.as_str().to_owned(), reason)
            })?;
            // What is kept whole may outlive the event (an item, a block, a part): past one
            // value per 16 bytes of the event, it is drawn from what the stream has spare.
            let past = budget
                .kept_whole()
                .saturating_sub(event.data.len() / keep::BYTES_PER_VALUE);
            if past > self.spare {
                return Err(self.error(path.as_str().to_owned(), too_dense_stream()));
            }
            self.spare -= past;
            let at = At::new(self.dialect, &data, &path);
            if let Some(error) = at.field("error")? {
                return Err(stream_error(
                    self.dialect,
                    path.as_str().to_owned(),
                    format!(
                        "the provider reports an error: {}",
                        error
                            .get("message")
                            .and_then(Value::as_str)
                            .map_or_else(|| error.to_string(), str::to_owned)
                    ),
                ));
            }
            let event = Event {
                name: &event.event,
                data: at,
            };
            state.event(&event).map_err(|mut e| {
                e.streamed = true;
                e
            })?;
        }
        Ok(())
    }

    fn error(&self, path: String, reason: impl Into<String>) -> ReplyError {
        stream_error(self.dialect, path, reason)
    }
}

/// An error of a stream's event at `path`.
fn stream_error(dialect: Dialect, path: String, reason: impl Into<String>) -> ReplyError {
    let mut e = ReplyError::new(dialect, path, reason);
    e.streamed = true;
    e
}

/// Why a stream whose events keep too many values is refused: a complete sentence.
fn too_dense_stream() -> String {
    format!(
        "its events keep more JSON values than pi-tools decodes for a stream of their size: one for every {} bytes of each event, and {} more in all (an object counts as {}), and keeping them would take memory far out of proportion to the stream; check what sent it, and have the tool take such data as text or in smaller calls",
        keep::BYTES_PER_VALUE,
        keep::LEAST_VALUES,
        keep::OBJECT_VALUES
    )
}

/// The error for a stream that ended before the provider's last event.
fn cut_off(dialect: Dialect, reason: String) -> ReplyError {
    let mut e = ReplyError::new(
        dialect,
        "",
        format!(
            "the stream ended before the reply did ({reason}): it was cut off; pass the whole body"
        ),
    );
    e.streamed = true;
    e
}

/// An index field of an event (`index`, `output_index`, …).
pub(super) fn index(at: &At<'_>, key: &str) -> Result<usize, ReplyError> {
    at.required(key)?
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n < 4096)
        .ok_or_else(|| at.error_at(key, "expected a small non-negative integer"))
}
