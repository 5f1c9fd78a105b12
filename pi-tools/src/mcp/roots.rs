//! Client roots: when the client offers the `roots` capability, each call of a session runs
//! in an environment confined to the directories the client lists.
//!
//! The roots are asked for before every call rather than cached until
//! `notifications/roots/list_changed`: the protocol library handles a notification and a
//! request that follows it in separate tasks, so a call could otherwise start before the
//! notification that narrows its roots is seen. Asking each time (one round trip to the
//! client) means a call never runs with roots the client no longer lists. The environment
//! itself is kept while the list stays the same, so background jobs and the like survive
//! from call to call. How a session follows roots is its own ([`crate::session::ClientRoots`]).

#![expect(
    deprecated,
    reason = "roots are marked deprecated by a future protocol revision (SEP-2577), not yet gone; clients offer them today"
)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::{Peer, RoleServer};

use crate::core::{ResourceLink, RunnerConfig};
use crate::session::{Session, SessionOf, WithSession};

/// How long a call waits for the client's list of roots before it is refused.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(30);

/// The environments made for clients' roots: a session's for its one client, or the
/// stateless house's for every 2026-07-28 client (see `house`), each kept while it is among
/// the most recently used.
pub(crate) struct FollowedRoots {
    kept: Mutex<Kept>,
    /// How many configurations are kept at once: one for a session (its client's roots
    /// now), more for the house, whose clients list different roots.
    capacity: usize,
    /// Whether a configuration that is no longer kept is ended once no call uses it and no
    /// job runs in it (the house's, which would otherwise grow without bound), rather than
    /// with the session (a session's, whose jobs it keeps until then).
    end_retired: bool,
}

#[derive(Default)]
struct Kept {
    /// The roots listed and the configuration built for them, the most recently used last.
    configs: Vec<(Vec<PathBuf>, Arc<RunnerConfig>)>,
    /// The configurations of roots no longer kept, ended with the session (or, for the
    /// house, once idle).
    retired: Vec<Arc<RunnerConfig>>,
}

impl Default for FollowedRoots {
    fn default() -> Self {
        FollowedRoots::keeping(1, false)
    }
}

impl FollowedRoots {
    /// Keeps the configurations of the `capacity` roots most recently used; `end_retired`:
    /// one no longer kept is ended as soon as nothing uses it (see the field).
    pub(crate) fn keeping(capacity: usize, end_retired: bool) -> Self {
        FollowedRoots {
            kept: Mutex::new(Kept::default()),
            capacity: capacity.max(1),
            end_retired,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The configuration a call runs with: `None` for `base` itself (its session follows no
    /// client roots, a client without the `roots` capability, or no usable root listed),
    /// else one confined to the roots the client lists now. An error is the sentence that
    /// refuses the call.
    pub(crate) async fn config(
        &self,
        base: &RunnerConfig,
        peer: &Peer<RoleServer>,
    ) -> Result<Option<Arc<RunnerConfig>>, String> {
        if !Self::followed(base) {
            return Ok(None);
        }
        let offers = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers {
            return Ok(None);
        }
        let listed = match tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await {
            Err(_) => {
                return Err(format!(
                    "The client offers roots but did not list them within {} seconds, so the call was not run. Answer roots/list, then call again.",
                    ROOTS_TIMEOUT.as_secs()
                ));
            }
            Ok(Err(e)) => {
                return Err(format!(
                    "The client offers roots but its roots/list answer could not be used ({e}), so the call was not run. Answer roots/list with the directories to work in, then call again."
                ));
            }
            Ok(Ok(listed)) => listed,
        };
        let uris: Vec<String> = listed.roots.into_iter().map(|root| root.uri).collect();
        self.config_for(base, &uris)
    }

    /// Whether `base`'s session follows its client's roots.
    pub(crate) fn followed(base: &RunnerConfig) -> bool {
        base.session().and_then(|s| s.client_roots()).is_some()
    }

    /// The configuration a call runs with for the roots the client listed (`uris`, as
    /// listed): `None` for `base` itself (its session follows no client roots, or no usable
    /// root), else one confined to them. An error is the sentence that refuses the call.
    pub(crate) fn config_for(
        &self,
        base: &RunnerConfig,
        uris: &[String],
    ) -> Result<Option<Arc<RunnerConfig>>, String> {
        let Some(session) = base.session() else {
            return Ok(None);
        };
        let Some(follow) = session.client_roots() else {
            return Ok(None);
        };
        let mut roots: Vec<PathBuf> = uris
            .iter()
            .filter_map(|uri| {
                let path = ResourceLink::file_path(uri);
                if path.is_none() {
                    tracing::info!(%uri, "a client root that is not an absolute file:// URI is ignored");
                }
                path
            })
            .collect();
        // The first listed stays first: it may become the working directory.
        let mut seen = std::collections::HashSet::new();
        roots.retain(|root| seen.insert(root.clone()));
        if roots.is_empty() {
            tracing::debug!("the client lists no file:// root; the configuration's roots apply");
            return Ok(None);
        }
        let mut kept = self.lock();
        if let Some(at) = kept.configs.iter().position(|(same, _)| *same == roots) {
            let entry = kept.configs.remove(at);
            let config = entry.1.clone();
            kept.configs.push(entry);
            return Ok(Some(config));
        }
        let confined = Arc::new(session.in_env(follow.env_for(&roots)?));
        let config = Arc::new(base.clone().with_session(confined));
        tracing::info!(roots = ?roots, "the file tools and the sandbox follow the client's roots");
        kept.configs.push((roots, config.clone()));
        if kept.configs.len() > self.capacity {
            let (_, old) = kept.configs.remove(0);
            kept.retired.push(old);
        }
        if self.end_retired {
            kept.retired.retain(|old| !end_if_idle(old));
        }
        Ok(Some(config))
    }

    /// The session sleeps: every environment built for the client's roots lets go of what
    /// it takes up again by itself ([`Session::hibernate`]).
    pub(crate) fn hibernate(&self) {
        for session in self.sessions() {
            session.hibernate();
        }
    }

    /// Ends the session in every environment built for clients' roots (their jobs too).
    pub(crate) fn end(&self) {
        let ended = {
            let mut kept = self.lock();
            let configs = std::mem::take(&mut kept.configs);
            let retired = std::mem::take(&mut kept.retired);
            configs.into_iter().map(|(_, config)| config).chain(retired)
        };
        for config in ended {
            if let Some(session) = config.session() {
                session.end();
            }
        }
    }

    /// The sessions of every environment built for clients' roots.
    fn sessions(&self) -> Vec<Arc<Session>> {
        let kept = self.lock();
        kept.configs
            .iter()
            .map(|(_, config)| config)
            .chain(&kept.retired)
            .filter_map(|config| config.session().cloned())
            .collect()
    }
}

/// Ends the session of a configuration no longer kept when no call holds it and none of its
/// jobs runs; whether it did. One with a job running lives on (its job tools reach it no
/// more, but its end is still told, and it ends with the house at the latest).
fn end_if_idle(config: &Arc<RunnerConfig>) -> bool {
    if Arc::strong_count(config) > 1 {
        return false;
    }
    let Some(session) = config.session() else {
        return true;
    };
    let running = session.env().jobs().is_some_and(|jobs| {
        jobs.list()
            .iter()
            .any(|job| job.state() == crate::env::jobs::JobState::Running)
    });
    if running {
        return false;
    }
    session.end();
    true
}

#[cfg(test)]
mod tests {
    use super::FollowedRoots;
    use std::path::PathBuf;
    use std::sync::Arc;

    use crate::core::RunnerConfig;
    use crate::env::local::LocalEnv;
    use crate::session::{ClientRoots, Session, SessionOf, WithSession};

    fn following() -> RunnerConfig {
        let roots = ClientRoots::new(|roots: &[PathBuf]| {
            Ok(Arc::new(LocalEnv::new(roots[0].clone())) as Arc<dyn crate::env::ExecutionEnv>)
        });
        let session = Session::new(Arc::new(LocalEnv::new("/"))).with_client_roots(roots);
        RunnerConfig::default().with_session(Arc::new(session))
    }

    fn session(config: &RunnerConfig) -> Arc<Session> {
        config.session().cloned().expect("a session")
    }

    #[test]
    fn the_house_keeps_the_most_recently_used_roots_and_ends_the_others_once_unused() {
        let base = following();
        let kept = FollowedRoots::keeping(2, true);
        let config = |uri: &str| {
            kept.config_for(&base, &[uri.to_owned()])
                .expect("a configuration")
                .expect("confined")
        };
        let a = config("file:///a");
        let b = config("file:///b");
        assert!(
            Arc::ptr_eq(&a, &config("file:///a")),
            "a list used again is kept"
        );
        let (session_a, session_b) = (session(&a), session(&b));
        drop(a);
        // `b` is the least recently used: `c` takes its place, but a call still holds it.
        let c = config("file:///c");
        assert!(
            !session_b.is_ended(),
            "a configuration a call holds is not ended"
        );
        drop(b);
        // `a` is given up for `d`: every configuration given up and unused ends.
        let _d = config("file:///d");
        assert!(session_a.is_ended() && session_b.is_ended());
        assert!(!session(&c).is_ended(), "a kept one lives on");
        kept.end();
        assert!(
            session(&c).is_ended(),
            "the end of the house ends every one"
        );
    }
}
