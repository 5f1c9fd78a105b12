//! Calls of different sessions take turns on a server, and a server never carries anything
//! from one session's turn into another's.
//!
//! A server shared by the sessions of a gateway sees the progress token of every call it is
//! sent, and may name any of them in a progress notification: a call of one session could
//! then show progress made up by another's. Progress reaches only the running call whose
//! token it names (`client.rs`); so that this is always a call of the session the server is
//! working for, calls of one session run together, and a call of another session waits
//! until none of them runs. Waiting is not enough on its own: a server can go on after its
//! answer (a thread of its own) and name the token of the next session's call once it is
//! sent it. So when the turn passes to another session, the turn's generation goes up, and
//! a server whose process was started for an older generation is ended and started afresh
//! before the call is sent (`Server::connection`): nothing the old process does reaches the
//! new session's calls, and nothing it learnt stays in memory for it.
//!
//! A session is known by its execution environment (the HTTP gateway gives each session
//! its own); calls without one are one session. The owner is held by a weak reference, so
//! its address cannot be reused by a later session's environment while it is compared.

use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

use crate::core::ToolContext;
use crate::env::EnvOf;
use crate::env::ExecutionEnv;

/// Which session's calls a server runs now.
#[derive(Default)]
pub(crate) struct Sessions {
    state: Mutex<Owner>,
    changed: Notify,
}

#[derive(Default)]
struct Owner {
    /// The session whose calls run (while `running` > 0) or ran last.
    session: Option<Session>,
    running: usize,
    /// Goes up each time the turn passes to another session.
    generation: u64,
}

/// A session as a server's turns know it.
enum Session {
    /// Calls that carry no execution environment.
    Anonymous,
    /// Calls with this environment; weak, so that its address stays its own.
    Env(Weak<dyn ExecutionEnv>),
}

impl Session {
    fn of(env: Option<&Arc<dyn ExecutionEnv>>) -> Session {
        match env {
            Some(env) => Session::Env(Arc::downgrade(env)),
            None => Session::Anonymous,
        }
    }

    fn is(&self, other: &Session) -> bool {
        match (self, other) {
            (Session::Anonymous, Session::Anonymous) => true,
            (Session::Env(a), Session::Env(b)) => Weak::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// A call's turn on its server; the next session may go once every call of this one has
/// let go of its turn.
pub(crate) struct Turn<'a> {
    sessions: &'a Sessions,
    /// The turn's generation: a process started for an older one served another session.
    pub(crate) generation: u64,
}

impl Sessions {
    /// The current turn's generation.
    pub(crate) fn generation(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .generation
    }

    /// Waits until calls of the session of `ctx` may run on the server, and counts this one.
    pub(crate) async fn enter(&self, ctx: &ToolContext) -> Turn<'_> {
        self.enter_env(ctx.extensions().env()).await
    }

    /// [`Sessions::enter`] for the session whose environment is `env` (none: calls that
    /// carry no environment).
    pub(crate) async fn enter_env(&self, env: Option<&Arc<dyn ExecutionEnv>>) -> Turn<'_> {
        let session = Session::of(env);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the check, so a release between the two is not missed.
            changed.as_mut().enable();
            {
                let mut owner = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let same = owner.session.as_ref().is_some_and(|s| s.is(&session));
                if owner.running == 0 || same {
                    if !same {
                        if owner.session.is_some() {
                            owner.generation += 1;
                        }
                        owner.session = Some(session);
                    }
                    owner.running += 1;
                    return Turn {
                        sessions: self,
                        generation: owner.generation,
                    };
                }
            }
            changed.await;
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut owner = self
            .sessions
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        owner.running -= 1;
        if owner.running == 0 {
            drop(owner);
            self.sessions.changed.notify_waiters();
        }
    }
}
