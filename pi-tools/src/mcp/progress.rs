//! Progress: a running call's updates become MCP progress notifications, throttled.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};

use crate::core::{EventSink, ToolEvent};

/// At most one progress notification per call in this interval; updates in between are
/// dropped (the final result follows anyway).
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// The event sink of one `tools/call`: forwards `tool_execution_update` events to the client
/// as `notifications/progress` for the request's progress token, and ignores the rest.
pub(crate) struct ProgressSink {
    target: Option<Target>,
}

struct Target {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    state: Mutex<Throttle>,
}

#[derive(Default)]
struct Throttle {
    last_sent: Option<Instant>,
    sent: u64,
}

impl Throttle {
    /// The progress value of the next notification, or `None` when it is too soon.
    fn admit(&mut self, now: Instant) -> Option<u64> {
        if self
            .last_sent
            .is_some_and(|last| now.duration_since(last) < PROGRESS_INTERVAL)
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
                state: Mutex::new(Throttle::default()),
            }),
        }
    }
}

impl EventSink for ProgressSink {
    async fn emit(&self, event: ToolEvent) {
        let (Some(target), ToolEvent::ToolExecutionUpdate { partial_result, .. }) =
            (&self.target, event)
        else {
            return;
        };
        let admitted = target
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .admit(Instant::now());
        let Some(progress) = admitted else { return };
        let mut param = ProgressNotificationParam::new(target.token.clone(), progress as f64);
        let text = partial_result.text_content();
        if !text.is_empty() {
            param = param.with_message(text);
        }
        // A client that went away cannot be told; the call itself still finishes.
        if let Err(err) = target.peer.notify_progress(param).await {
            tracing::debug!(%err, "a progress notification could not be sent");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_admits_one_per_interval_with_an_increasing_counter() {
        let mut throttle = Throttle::default();
        let t0 = Instant::now();
        assert_eq!(throttle.admit(t0), Some(1));
        assert_eq!(throttle.admit(t0 + Duration::from_millis(10)), None);
        assert_eq!(throttle.admit(t0 + Duration::from_millis(99)), None);
        assert_eq!(throttle.admit(t0 + PROGRESS_INTERVAL), Some(2));
        assert_eq!(throttle.admit(t0 + Duration::from_millis(150)), None);
        assert_eq!(throttle.admit(t0 + Duration::from_millis(250)), Some(3));
    }
}
