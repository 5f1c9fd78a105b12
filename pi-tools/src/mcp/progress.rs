//! Progress: a running call's updates become MCP progress notifications carrying only the
//! output that is new since the last one, with a heartbeat while the call is silent; its
//! log lines become log messages.

use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::time::Instant;

use crate::core::{EventSink, ToolEvent};

/// At most one output notification per call in this interval; the output of updates in
/// between goes out with the next one.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// A call that sent nothing for this long gets a heartbeat, so the gap between two
/// notifications stays under twice this (the heartbeat checks once per interval).
pub(crate) const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

/// The most output text one notification carries: its newest part.
pub(crate) const MAX_TAIL_BYTES: usize = 4096;

/// The event sink of one `tools/call`: forwards `tool_execution_update` events to the client
/// as `notifications/progress` for the request's progress token, and ignores the rest.
pub(crate) struct ProgressSink {
    target: Option<Target>,
}

struct Target {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    state: Mutex<State>,
}

struct State {
    started: Instant,
    last_sent: Option<Instant>,
    sent: u64,
    /// The output as of the last notification, so the next one carries only what followed.
    sent_text: String,
}

impl State {
    /// The progress value of the next notification, or `None` when it is too soon.
    fn admit(&mut self, now: Instant, interval: Duration) -> Option<u64> {
        if self
            .last_sent
            .is_some_and(|last| now.duration_since(last) < interval)
        {
            return None;
        }
        self.last_sent = Some(now);
        self.sent += 1;
        Some(self.sent)
    }
}

impl ProgressSink {
    /// A sink that notifies `peer` when the request carried a progress token, and discards
    /// everything otherwise.
    pub(crate) fn new(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        ProgressSink {
            target: token.map(|token| Target {
                peer,
                token,
                state: Mutex::new(State {
                    started: Instant::now(),
                    last_sent: None,
                    sent: 0,
                    sent_text: String::new(),
                }),
            }),
        }
    }

    /// Sends "running for N s" whenever the call has sent nothing for
    /// [`HEARTBEAT_INTERVAL`]; never returns (race it against the call).
    pub(crate) async fn heartbeat(&self) -> std::convert::Infallible {
        let Some(target) = &self.target else {
            return std::future::pending().await;
        };
        let mut ticks = tokio::time::interval(HEARTBEAT_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            let now = Instant::now();
            let (progress, elapsed) = {
                let mut state = target.lock();
                let Some(progress) = state.admit(now, HEARTBEAT_INTERVAL) else {
                    continue;
                };
                (progress, now.duration_since(state.started).as_secs())
            };
            target
                .send(progress, format!("running for {elapsed} s"))
                .await;
        }
    }
}

impl Target {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
}

impl EventSink for ProgressSink {
    async fn emit(&self, event: ToolEvent) {
        let (target, partial_result) = match (&self.target, event) {
            (
                _,
                ToolEvent::ToolExecutionLog {
                    level,
                    logger,
                    message,
                    ..
                },
            ) => {
                super::logging::forward_tool_log(level, &logger, message);
                return;
            }
            (Some(target), ToolEvent::ToolExecutionUpdate { partial_result, .. }) => {
                (target, partial_result)
            }
            _ => return,
        };
        let text = partial_result.text_content();
        let admitted = {
            let mut state = target.lock();
            let tail = new_tail(&state.sent_text, &text).to_owned();
            if tail.is_empty() {
                None
            } else {
                state
                    .admit(Instant::now(), PROGRESS_INTERVAL)
                    .map(|progress| {
                        state.sent_text = text;
                        (progress, tail)
                    })
            }
        };
        if let Some((progress, tail)) = admitted {
            target.send(progress, tail).await;
        }
    }

    /// Log lines go to the client as `notifications/message`, filtered by its level.
    fn wants_logs(&self) -> bool {
        true
    }
}

/// The part of `now` that follows `before`, at most [`MAX_TAIL_BYTES`] of its end.
///
/// Output usually grows at its end; when the tool keeps only a window of it (bash keeps the
/// last lines), the last line of `before` is looked for inside `now` instead, and when
/// neither works the whole of `now` counts as new.
fn new_tail<'a>(before: &str, now: &'a str) -> &'a str {
    let fresh = if let Some(rest) = now.strip_prefix(before) {
        rest
    } else {
        let body = before.strip_suffix('\n').unwrap_or(before);
        let last_line = body.rfind('\n').map_or(before, |at| &before[at + 1..]);
        let anchor = clip_start(last_line, 256);
        match (anchor.is_empty(), now.rfind(anchor)) {
            (false, Some(at)) => &now[at + anchor.len()..],
            _ => now,
        }
    };
    clip_start(fresh, MAX_TAIL_BYTES)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_one_per_interval_with_an_increasing_counter() {
        let t0 = Instant::now();
        let mut state = State {
            started: t0,
            last_sent: None,
            sent: 0,
            sent_text: String::new(),
        };
        assert_eq!(state.admit(t0, PROGRESS_INTERVAL), Some(1));
        assert_eq!(
            state.admit(t0 + Duration::from_millis(99), PROGRESS_INTERVAL),
            None
        );
        assert_eq!(
            state.admit(t0 + PROGRESS_INTERVAL, PROGRESS_INTERVAL),
            Some(2)
        );
        assert_eq!(
            state.admit(t0 + Duration::from_millis(150), PROGRESS_INTERVAL),
            None
        );
        assert_eq!(
            state.admit(t0 + Duration::from_millis(250), PROGRESS_INTERVAL),
            Some(3)
        );
    }

    #[test]
    fn only_the_new_output_is_sent_and_at_most_its_last_4_kb() {
        assert_eq!(new_tail("", "a\n"), "a\n");
        assert_eq!(new_tail("a\n", "a\nb\n"), "b\n");
        assert_eq!(new_tail("a\n", "a\n"), "");
        // A rolling window: the old end is found inside the new text.
        assert_eq!(new_tail("line 1\nline 2\n", "line 2\nline 3\n"), "line 3\n");
        // Nothing in common: all of it is new.
        assert_eq!(new_tail("x", "y"), "y");
        let long = "é".repeat(5000);
        let tail = new_tail("", &long);
        assert!(tail.len() <= MAX_TAIL_BYTES && tail.len() >= MAX_TAIL_BYTES - 1);
        assert!(tail.chars().all(|c| c == 'é'));
    }
}
