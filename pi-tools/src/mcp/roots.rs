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

/// One session's environment for its client's roots.
#[derive(Default)]
pub(crate) struct FollowedRoots {
    /// The roots last listed and the configuration built for them.
    current: tokio::sync::Mutex<Option<(Vec<PathBuf>, Arc<RunnerConfig>)>>,
    /// The session in the environments of roots the client no longer lists, ended with the
    /// session.
    retired: Mutex<Vec<Arc<Session>>>,
}

impl FollowedRoots {
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
        self.config_for(base, &uris).await
    }

    /// Whether `base`'s session follows its client's roots.
    pub(crate) fn followed(base: &RunnerConfig) -> bool {
        base.session().and_then(|s| s.client_roots()).is_some()
    }

    /// The configuration a call runs with for the roots the client listed (`uris`, as
    /// listed): `None` for `base` itself (its session follows no client roots, or no usable
    /// root), else one confined to them. An error is the sentence that refuses the call.
    pub(crate) async fn config_for(
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
        let mut current = self.current.lock().await;
        if let Some((same, config)) = &*current
            && *same == roots
        {
            return Ok(Some(config.clone()));
        }
        let confined = Arc::new(session.in_env(follow.env_for(&roots)?));
        let config = Arc::new(base.clone().with_session(confined));
        tracing::info!(roots = ?roots, "the file tools and the sandbox follow the client's roots");
        if let Some((_, old)) = current.replace((roots, config.clone()))
            && let Some(old) = old.session()
        {
            self.retired
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(old.clone());
        }
        Ok(Some(config))
    }

    /// The session sleeps: every environment built for the client's roots lets go of what
    /// it takes up again by itself ([`Session::hibernate`]).
    pub(crate) fn hibernate(&self) {
        if let Ok(current) = self.current.try_lock()
            && let Some((_, config)) = &*current
            && let Some(session) = config.session()
        {
            session.hibernate();
        }
        for session in self
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            session.hibernate();
        }
    }

    /// Ends the session in every environment built for the client's roots.
    pub(crate) fn end(&mut self) {
        let current = self.current.get_mut().take();
        let retired = std::mem::take(self.retired.get_mut().unwrap_or_else(|e| e.into_inner()));
        let sessions = current
            .iter()
            .filter_map(|(_, config)| config.session().cloned())
            .chain(retired);
        for session in sessions {
            session.end();
        }
    }
}
