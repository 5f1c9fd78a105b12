//! What a session keeps of its answer streams, so a client whose stream was cut (a proxy
//! that drops long streams, a network change) can reconnect with `Last-Event-ID` and get
//! what it missed, even once the call has ended.
//!
//! The protocol library keeps a stream's events only while its call runs: once the call
//! answers, it forgets the stream, and a client that reconnects a moment later would get
//! nothing. So each answer stream is read to its end here, whether or not its client still
//! listens, and its last events are kept: at most [`KEPT_EVENTS`] of each of the last
//! [`KEPT_STREAMS`] streams, for [`KEPT_FOR`] after the stream ends.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::{Stream, StreamExt};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Events kept of each stream (the library's own buffer per stream is as large).
pub(crate) const KEPT_EVENTS: usize = 16;
/// Streams kept per session.
const KEPT_STREAMS: usize = 8;
/// How long an ended stream's events stay.
pub(crate) const KEPT_FOR: Duration = Duration::from_secs(60);

/// One session's kept streams.
#[derive(Default)]
pub(crate) struct Replay {
    streams: Mutex<VecDeque<Kept>>,
}

/// One stream's last events.
struct Kept {
    /// The stream's part of its events' ids (`INDEX/STREAM`).
    stream: String,
    events: VecDeque<(usize, ServerSseMessage)>,
    ended: Option<Instant>,
}

/// What a `Last-Event-ID` finds among the kept streams.
pub(crate) enum Found {
    /// The events after it, in order.
    Events(Vec<ServerSseMessage>),
    /// Its stream is kept, but no longer from that point.
    Lost,
    /// No kept stream has it.
    Unknown,
}

/// `INDEX/STREAM`, as the library numbers the events of an answer stream.
fn parse(event_id: &str) -> Option<(usize, &str)> {
    let (index, stream) = event_id.split_once('/')?;
    Some((index.parse().ok()?, stream))
}

impl Replay {
    fn streams(&self) -> MutexGuard<'_, VecDeque<Kept>> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `inner`, read to its end in a task of its own and kept; the stream returned gives
    /// its events for as long as the client listens.
    pub(crate) fn keep<S>(
        self: &Arc<Self>,
        inner: S,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static + use<S>
    where
        S: Stream<Item = ServerSseMessage> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(KEPT_EVENTS);
        let replay = Arc::clone(self);
        tokio::spawn(async move {
            let mut inner = std::pin::pin!(inner);
            let mut stream = None;
            let mut listening = true;
            while let Some(event) = inner.next().await {
                if let Some(id) = event.event_id.as_deref()
                    && let Some((index, name)) = parse(id)
                {
                    replay.record(name, index, &event);
                    stream.get_or_insert_with(|| name.to_owned());
                }
                // A client that left is not written to; the rest is still kept.
                listening = listening && tx.send(event).await.is_ok();
            }
            if let Some(stream) = stream {
                replay.ended(&stream);
            }
        });
        futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|event| (event, rx))
        })
    }

    fn record(&self, stream: &str, index: usize, event: &ServerSseMessage) {
        let mut streams = self.streams();
        let now = Instant::now();
        streams.retain(|kept| {
            kept.ended
                .is_none_or(|at| now.duration_since(at) < KEPT_FOR)
        });
        let position = streams.iter().position(|kept| kept.stream == stream);
        let kept = match position {
            Some(i) => &mut streams[i],
            None => {
                if streams.len() >= KEPT_STREAMS {
                    streams.pop_front();
                }
                streams.push_back(Kept {
                    stream: stream.to_owned(),
                    events: VecDeque::new(),
                    ended: None,
                });
                streams.back_mut().expect("just pushed")
            }
        };
        if kept.events.iter().any(|(i, _)| *i == index) {
            return;
        }
        if kept.events.len() >= KEPT_EVENTS {
            kept.events.pop_front();
        }
        kept.events.push_back((index, event.clone()));
    }

    fn ended(&self, stream: &str) {
        if let Some(kept) = self.streams().iter_mut().find(|kept| kept.stream == stream) {
            kept.ended = Some(Instant::now());
        }
    }

    /// The kept events after `last_event_id`.
    pub(crate) fn after(&self, last_event_id: &str) -> Found {
        let Some((index, stream)) = parse(last_event_id) else {
            return Found::Unknown;
        };
        let now = Instant::now();
        let streams = self.streams();
        let Some(kept) = streams
            .iter()
            .find(|kept| kept.stream == stream)
            .filter(|kept| {
                kept.ended
                    .is_none_or(|at| now.duration_since(at) < KEPT_FOR)
            })
        else {
            return Found::Unknown;
        };
        match kept.events.front() {
            Some((first, _)) if *first > index + 1 => Found::Lost,
            _ => Found::Events(
                kept.events
                    .iter()
                    .filter(|(i, _)| *i > index)
                    .map(|(_, event)| event.clone())
                    .collect(),
            ),
        }
    }
}
