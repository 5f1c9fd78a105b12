//! Progress: a running call's updates become MCP progress notifications that together carry
//! its output once, in order, with a heartbeat while the call is silent; its log lines
//! become log messages.
//!
//! The tool's updates are only recorded ([`EventSink::emit`] never waits on the client);
//! one pump per call ([`ProgressSink::pump`]) sends what is new: at once after a quiet
//! spell, then at most once per [`PROGRESS_INTERVAL`], so a burst of updates becomes one
//! notification and the last update is never left unsent. New output longer than
//! [`MAX_TAIL_BYTES`] goes out as several notifications.

use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::core::{EventSink, OUTPUT_END_DETAIL, ToolEvent};

/// At most one round of output notifications per call in this interval; the output of
/// updates in between goes out with the next round.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// A call that sent nothing for this long gets a heartbeat.
pub(crate) const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

/// The most output text one notification carries.
pub(crate) const MAX_TAIL_BYTES: usize = 4096;

/// Output waiting to be sent beyond this (a client that reads too slowly) loses its oldest
/// part, and the next notification says how much.
const MAX_PENDING_BYTES: usize = 4 << 20;

/// The event sink of one `tools/call`: forwards `tool_execution_update` events to the client
/// as `notifications/progress` for the request's progress token, and log lines as log
/// messages.
pub(crate) struct ProgressSink {
    target: Option<Target>,
}

struct Target {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    state: Mutex<State>,
    /// Woken by every update with new output.
    wake: Notify,
    /// Cancelled when the call has ended: what is pending goes out, and the pump stops.
    ended: CancellationToken,
}

struct State {
    started: Instant,
    /// When the last notification went out (the call's start before the first).
    last_sent: Instant,
    /// When the last output went out, if any has: output waits for the interval after it.
    last_output: Option<Instant>,
    /// Notifications sent: the progress value of the last one.
    sent: u64,
    /// The last update's text and the output end it reported, to find what the next adds.
    seen: Seen,
    /// New output not sent yet.
    pending: String,
    /// Bytes dropped from `pending` because the client did not keep up.
    skipped: u64,
}

/// The output as the previous update showed it.
#[derive(Default)]
struct Seen {
    text: String,
    end: Option<u64>,
}

/// What an update adds to the output seen so far.
struct Fresh<'a> {
    /// Bytes of new output the update's window no longer shows (it came faster than the
    /// tool reports).
    unseen: u64,
    /// The new output the update shows.
    text: &'a str,
    /// The update does not continue the previous one (a tool that reports a status, not a
    /// growing output): it replaces what was not sent yet.
    replaces: bool,
}

impl Seen {
    /// What `text` (ending at `end`, when the tool says) adds to the output seen so far.
    fn advance<'a>(&mut self, text: &'a str, end: Option<u64>) -> Fresh<'a> {
        let fresh = match (self.end.or(Some(0).filter(|_| self.text.is_empty())), end) {
            (Some(before), Some(now)) if now >= before => {
                let new = now - before;
                let shown = clip_start(text, usize::try_from(new).unwrap_or(usize::MAX));
                Fresh {
                    unseen: new.saturating_sub(shown.len() as u64),
                    text: shown,
                    replaces: false,
                }
            }
            _ => match new_part(&self.text, text) {
                Some(part) => Fresh {
                    unseen: 0,
                    text: part,
                    replaces: false,
                },
                None => Fresh {
                    unseen: 0,
                    text,
                    replaces: true,
                },
            },
        };
        self.text.clear();
        self.text.push_str(text);
        self.end = end;
        fresh
    }
}

impl ProgressSink {
    /// A sink that notifies `peer` when the request carried a progress token, and discards
    /// everything but log lines otherwise.
    pub(crate) fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        let now = Instant::now();
        ProgressSink {
            target: token.map(|token| Target {
                peer,
                token,
                state: Mutex::new(State {
                    started: now,
                    last_sent: now,
                    last_output: None,
                    sent: 0,
                    seen: Seen::default(),
                    pending: String::new(),
                    skipped: 0,
                }),
                wake: Notify::new(),
                ended: CancellationToken::new(),
            }),
        }
    }

    /// Sends the call's progress until [`ProgressSink::end`]: new output at most once per
    /// [`PROGRESS_INTERVAL`], and "running for N s" whenever nothing went out for
    /// [`HEARTBEAT_INTERVAL`]. After the end it sends what is still pending and returns, so
    /// every notification precedes the call's result.
    pub(crate) async fn pump(&self) {
        let Some(target) = &self.target else {
            return;
        };
        loop {
            let (last_sent, last_output) = {
                let state = target.lock();
                (state.last_sent, state.last_output)
            };
            tokio::select! {
                biased;
                () = target.ended.cancelled() => {
                    target.flush().await;
                    return;
                }
                () = target.wake.notified() => {
                    // Updates that come within the interval join this round; the call's
                    // end does not wait for it.
                    if let Some(last) = last_output {
                        tokio::select! {
                            () = tokio::time::sleep_until(last + PROGRESS_INTERVAL) => {}
                            () = target.ended.cancelled() => {}
                        }
                    }
                    target.flush().await;
                }
                () = tokio::time::sleep_until(last_sent + HEARTBEAT_INTERVAL) => {
                    target.heartbeat().await;
                }
            }
        }
    }

    /// Ends the pump: what is pending goes out, and then [`ProgressSink::pump`] returns.
    pub(crate) fn end(&self) {
        if let Some(target) = &self.target {
            target.ended.cancel();
        }
    }
}

impl Target {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends the pending output, in pieces of at most [`MAX_TAIL_BYTES`].
    async fn flush(&self) {
        let (mut text, skipped) = {
            let mut state = self.lock();
            (
                std::mem::take(&mut state.pending),
                std::mem::take(&mut state.skipped),
            )
        };
        if skipped > 0 {
            text.insert_str(
                0,
                &format!("[{skipped} bytes of output were not sent: the client read too slowly]\n"),
            );
        }
        if !text.is_empty() {
            self.lock().last_output = Some(Instant::now());
        }
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let piece = clip_end(rest, MAX_TAIL_BYTES);
            rest = &rest[piece.len()..];
            let progress = self.next_progress();
            self.send(progress, piece.to_owned()).await;
        }
    }

    /// "running for N s", or the output waiting, if some is.
    async fn heartbeat(&self) {
        let beat = {
            let mut state = self.lock();
            if state.pending.is_empty() {
                let now = Instant::now();
                state.last_sent = now;
                state.sent += 1;
                Some((state.sent, now.duration_since(state.started).as_secs()))
            } else {
                None
            }
        };
        match beat {
            Some((progress, elapsed)) => {
                self.send(progress, format!("running for {elapsed} s"))
                    .await;
            }
            None => self.flush().await,
        }
    }

    fn next_progress(&self) -> u64 {
        let mut state = self.lock();
        state.last_sent = Instant::now();
        state.sent += 1;
        state.sent
    }

    async fn send(&self, progress: u64, message: String) {
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress as f64);
        if !message.is_empty() {
            param = param.with_message(message);
        }
        // A client that went away cannot be told; the call itself still finishes.
        if let Err(err) = self.peer.notify_progress(param).await {
            tracing::debug!(%err, "a progress notification could not be sent");
        }
    }

    /// Records an update's new output and wakes the pump.
    fn record(&self, text: &str, end: Option<u64>) {
        {
            let mut state = self.lock();
            let fresh = state.seen.advance(text, end);
            if fresh.replaces {
                state.pending.clear();
            }
            if fresh.unseen > 0 {
                let note = format!(
                    "\n[{} bytes of output came too fast to show here; the result has the whole output]\n",
                    fresh.unseen
                );
                state.pending.push_str(&note);
            }
            if fresh.text.is_empty() && fresh.unseen == 0 {
                return;
            }
            state.pending.push_str(fresh.text);
            if state.pending.len() > MAX_PENDING_BYTES {
                let keep = clip_start(&state.pending, MAX_PENDING_BYTES / 2).len();
                let cut = state.pending.len() - keep;
                state.pending.drain(..cut);
                state.skipped += cut as u64;
            }
        }
        self.wake.notify_one();
    }
}

impl EventSink for ProgressSink {
    async fn emit(&self, event: ToolEvent) {
        match (&self.target, event) {
            (
                _,
                ToolEvent::ToolExecutionLog {
                    level,
                    logger,
                    message,
                    ..
                },
            ) => super::logging::forward_tool_log(level, &logger, message),
            (Some(target), ToolEvent::ToolExecutionUpdate { partial_result, .. }) => {
                let end = partial_result
                    .details
                    .get(OUTPUT_END_DETAIL)
                    .and_then(serde_json::Value::as_u64);
                target.record(&partial_result.text_content(), end);
            }
            _ => {}
        }
    }

    /// Log lines go to the client as `notifications/message`, filtered by its level.
    fn wants_logs(&self) -> bool {
        true
    }
}

/// The part of `now` that follows `before`, for a tool that does not say where its output
/// ends; `None` when `now` does not continue `before` at all. Output usually grows at its
/// end; when the tool shows only a window of it, the longest end of `before` that starts
/// `now` is taken as what both show.
fn new_part<'a>(before: &str, now: &'a str) -> Option<&'a str> {
    if let Some(rest) = now.strip_prefix(before) {
        return Some(rest);
    }
    // The shared part starts `now`, so it ends where some occurrence of `now`'s first line
    // in `before` runs to `before`'s end.
    let first_line = now.find('\n').map_or(now, |at| &now[..=at]);
    if first_line.is_empty() || !first_line.ends_with('\n') {
        return None;
    }
    let mut from = 0;
    while let Some(at) = before[from..].find(first_line) {
        let start = from + at;
        if let Some(rest) = now.strip_prefix(&before[start..]) {
            return Some(rest);
        }
        from = start + 1;
        while !before.is_char_boundary(from) {
            from += 1;
        }
    }
    None
}

/// The last `max` bytes of `text` at most, starting at a character boundary.
fn clip_start(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The first `max` bytes of `text` at most, ending at a character boundary (at least one
/// character).
fn clip_end(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == 0 {
        end = text.chars().next().map_or(0, char::len_utf8);
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_new_part_of_a_growing_output_is_what_follows() {
        assert_eq!(new_part("", "a\n"), Some("a\n"));
        assert_eq!(new_part("a\n", "a\nb\n"), Some("b\n"));
        assert_eq!(new_part("a\n", "a\n"), Some(""));
        // A window that dropped its first line: the shared part is found.
        assert_eq!(
            new_part("line 1\nline 2\n", "line 2\nline 3\n"),
            Some("line 3\n")
        );
        // Nothing in common: a status that replaces the previous one.
        assert_eq!(new_part("x", "y"), None);
        assert_eq!(new_part("line 1", "line 2"), None);
    }

    #[test]
    fn a_reported_output_end_gives_the_exact_new_part_even_for_repeated_lines() {
        let mut seen = Seen::default();
        let text = |fresh: Fresh<'_>| {
            assert!(!fresh.replaces);
            (fresh.unseen, fresh.text.to_owned())
        };
        assert_eq!(text(seen.advance("y\ny\n", Some(4))), (0, "y\ny\n".into()));
        // The window kept its size while two more lines came: the offsets say so.
        assert_eq!(text(seen.advance("y\ny\n", Some(8))), (0, "y\ny\n".into()));
        assert_eq!(text(seen.advance("y\ny\n", Some(8))), (0, String::new()));
        // More came than the window shows: what it no longer shows is counted.
        assert_eq!(text(seen.advance("y\ny\n", Some(20))), (8, "y\ny\n".into()));
    }

    #[test]
    fn pieces_end_at_character_boundaries() {
        let long = "é".repeat(5000);
        let piece = clip_end(&long, MAX_TAIL_BYTES);
        assert_eq!(piece.len(), MAX_TAIL_BYTES);
        let piece = clip_end(&long[2..], 3);
        assert_eq!(piece, "é");
        let tail = clip_start(&long, 5);
        assert_eq!(tail, "éé");
    }
}
