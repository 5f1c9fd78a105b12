//! What a session tells its client unasked: the notices of background jobs that ended, and
//! that the tools served changed (2025-11-25 sessions; the stateless house's clients hear
//! of changes on their `subscriptions/listen`, see `listen`).

use rmcp::service::RoleServer;

use super::server::ToolServer;

impl ToolServer {
    /// From the session's first call on, tells its client of each notice (a job that
    /// ended) as it comes, in a logging notification (see `logging::announcing_notices`).
    pub(super) fn announce_notices(&self, peer: &rmcp::service::Peer<RoleServer>) {
        use std::sync::atomic::Ordering;
        let Some(notices) = self.config.extensions.get::<crate::core::Notices>() else {
            return;
        };
        // The house's notices go into whichever result comes next; no client is there to
        // announce them to.
        if self.shared {
            return;
        }
        if self.announcing.swap(true, Ordering::Relaxed) {
            return;
        }
        tokio::spawn(super::logging::announcing_notices(
            self.level.clone(),
            peer.clone(),
            notices.clone(),
            self.session.cancel().clone(),
        ));
    }

    /// Sends its client `notifications/tools/list_changed` each time the tools served are
    /// replaced with others (see `tool_updates`), until the session ends or sleeps (a woken
    /// session is initialized again, and told from then on). Not for the stateless house,
    /// whose clients hear of changes on their `subscriptions/listen` (see `listen`).
    pub(super) fn tell_of_tool_changes(&self, peer: rmcp::service::Peer<RoleServer>) {
        let Some(mut replaced) = self.served.replacements().filter(|_| !self.shared) else {
            return;
        };
        // Only the token and the peer: the task must not keep the session alive.
        let ended = self.session.cancel().child_token();
        let earlier = self
            .telling
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(ended.clone());
        if let Some(earlier) = earlier {
            earlier.cancel();
        }
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = replaced.changed() => if changed.is_err() { return },
                    _ = ended.cancelled() => return,
                }
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }
}
