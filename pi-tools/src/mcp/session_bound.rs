//! How many HTTP sessions a server keeps: as many as the process's descriptors hold when
//! every one of them is awake with a command running, beside the connections.
//!
//! A sleeping session holds no descriptor (see `hibernation`), but any of them may be woken
//! at once, by as many requests, and a call keeps running when its client's connection is
//! cut (its stream is resumed later). So the descriptors must hold every session kept, awake
//! and running a command, plus every connection, plus what the process holds of its own.
//! Past the bound a new session is refused with the reason (or, with [`WhenFull::EndIdle`],
//! takes the place of the least recently used idle one; see `sessions`): no session kept
//! then fails for want of a descriptor.

/// What a new HTTP session meets when the server already keeps as many as its bound.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WhenFull {
    /// It is refused with `503` and the reason, and every session kept goes on (the
    /// default): a session never breaks for another's sake. Sessions a client leaves
    /// without `DELETE` hold their place until they end, so a server for clients that do
    /// should also end idle sessions by time (`--session-idle-secs`).
    #[default]
    Refuse,
    /// The least recently used session with no call running and no stream open ends (its
    /// next request gets 404) and the new one takes its place; the new one is refused
    /// only when every session is busy (`[mcp] when_full = "end_idle"`).
    EndIdle,
}

/// The most sessions kept when none is configured and the descriptors hold more: a sleeping
/// idle session costs about 7 KB (docs/mcp.md has the measurement), so these fit in about
/// 28 MB.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 4096;

/// What an awake session holds while one command runs, counted in /proc (docs/mcp.md): two
/// while idle (its root's handle and its Landlock ruleset) and four more for the command
/// (its output pipes and process handle). A background job holds those four for as long as
/// it runs, its session asleep or not: a session with several jobs at once takes more, and
/// when the descriptors run out the call says EMFILE (see `env::descriptors`).
pub(crate) const DESCRIPTORS_PER_SESSION: usize = 6;

/// What the process holds besides sessions and connections: standard streams, the runtime's
/// event queues, the listener, the log, the shared inotify instances (at most 16, see the
/// sandbox's `dir_watch`), the search indexes' watches, and room for a mounted server or two.
pub(crate) const DESCRIPTORS_OF_THE_PROCESS: usize = 64;

/// The sessions `descriptors` hold beside `connections` (at least one).
pub(crate) fn sessions_held(descriptors: usize, connections: usize) -> usize {
    let left = descriptors.saturating_sub(connections + DESCRIPTORS_OF_THE_PROCESS);
    (left / DESCRIPTORS_PER_SESSION).max(1)
}

/// The session bound: the configured one, or [`DEFAULT_MAX_SESSIONS`], lowered to what the
/// soft limit on open files holds beside `connections`. A configured bound lowered is said
/// in the log with the reason and the fix.
pub(crate) fn max_sessions(configured: Option<usize>, connections: usize) -> usize {
    bound(configured, connections, crate::env::descriptor_limit())
}

fn bound(configured: Option<usize>, connections: usize, limit: Option<usize>) -> usize {
    let wanted = configured.unwrap_or(DEFAULT_MAX_SESSIONS).max(1);
    let Some(limit) = limit else {
        return wanted;
    };
    let held = sessions_held(limit, connections);
    if wanted <= held {
        return wanted;
    }
    if configured.is_some() {
        tracing::warn!(
            "[mcp] max_sessions = {wanted} is lowered to {held}: the soft limit on open files \
             (ulimit -n) is {limit}, and {connections} connections plus {held} sessions awake \
             at once, {DESCRIPTORS_PER_SESSION} descriptors each, fill it. Raise the limit \
             (`ulimit -n`, or LimitNOFILE= for a systemd service) to keep more sessions."
        );
    } else {
        tracing::info!(
            "sessions kept: {held}, as many as the soft limit on open files ({limit}) holds \
             beside {connections} connections"
        );
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_high_limit_keeps_the_default_or_the_setting() {
        assert_eq!(bound(None, 1024, Some(65_536)), DEFAULT_MAX_SESSIONS);
        assert_eq!(bound(Some(10_000), 1024, Some(65_536)), 10_000);
        assert_eq!(bound(Some(10), 1024, None), 10);
    }

    #[test]
    fn the_common_soft_limit_lowers_the_bound() {
        // 1,024 descriptors, half of them for connections.
        let held = bound(None, 512, Some(1024));
        assert_eq!(
            held,
            (1024 - 512 - DESCRIPTORS_OF_THE_PROCESS) / DESCRIPTORS_PER_SESSION
        );
        assert!(
            held * DESCRIPTORS_PER_SESSION + 512 + DESCRIPTORS_OF_THE_PROCESS <= 1024,
            "every session awake and every connection fit"
        );
        assert_eq!(bound(Some(4096), 512, Some(1024)), held);
        assert_eq!(bound(Some(50), 512, Some(1024)), 50);
    }

    #[test]
    fn a_tiny_limit_keeps_one_session() {
        assert_eq!(bound(None, 16, Some(32)), 1);
    }
}
