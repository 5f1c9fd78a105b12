//! One session: the environment its tools work in, the policy with the person it asks, the
//! client's roots it follows, and the token that ends its calls. It is made once, carried by
//! the runner's configuration (reachable from tools and hooks through [`SessionOf`]), and
//! ended once ([`Session::end`]), which cancels its calls and ends its environment's
//! processes.
//!
//! A front makes it: the [`Toolbox`](crate::toolbox::Toolbox) makes the session of a program
//! ([`Toolbox::session`](crate::toolbox::Toolbox::session)), and a server of many clients
//! (the MCP server) makes one for each client with [`Session::for_client`].
//!
//! ```
//! use std::sync::Arc;
//! use pi_tools::env::local::LocalEnv;
//! use pi_tools::session::{Session, SessionOf, WithSession};
//! use pi_tools::RunnerConfig;
//!
//! let session = Arc::new(Session::new(Arc::new(LocalEnv::new("/srv/project"))));
//! let config = RunnerConfig::default().with_session(session.clone());
//! assert_eq!(config.session().map(|s| s.env().cwd().to_path_buf()), Some("/srv/project".into()));
//! assert!(session.end());
//! assert!(!session.end(), "a session ends once");
//! assert!(session.cancel().is_cancelled());
//! ```

mod carry;
mod gate;
mod roots;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

use crate::env::ExecutionEnv;
use crate::policy::{Approver, PolicyHook};

pub use carry::{SessionOf, WithSession};
pub use gate::SessionPolicyGate;
pub use roots::ClientRoots;

/// One session's parts, with one lifecycle: made, ended, ended once.
pub struct Session {
    env: Arc<dyn ExecutionEnv>,
    policy: Option<Arc<PolicyHook>>,
    roots: Option<ClientRoots>,
    cancel: CancellationToken,
    ended: AtomicBool,
}

impl Session {
    /// A session working in `env`, with no policy (every call allowed) and no client roots.
    pub fn new(env: Arc<dyn ExecutionEnv>) -> Self {
        Session {
            env,
            policy: None,
            roots: None,
            cancel: CancellationToken::new(),
            ended: AtomicBool::new(false),
        }
    }

    /// This session, judging its calls by `policy` (a hook with the approver that asks this
    /// session's person, and the allowances they give for the session).
    pub fn with_policy(mut self, policy: Arc<PolicyHook>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// This session, following its client's roots with `roots` (see [`ClientRoots`]).
    pub fn with_client_roots(mut self, roots: ClientRoots) -> Self {
        self.roots = Some(roots);
        self
    }

    /// This session, ended (its calls cancelled) when `cancel` is: a server's session is
    /// given a child of the server's token.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The session of another client of the same server: it works in `env`, follows its own
    /// client's roots the same way, and is judged by the same policy through a hook of its
    /// own, which asks `approver` (else the approver of this session's policy) and keeps
    /// what that person allows for the session to this session.
    pub fn for_client(
        &self,
        env: Arc<dyn ExecutionEnv>,
        approver: Option<Arc<dyn Approver>>,
    ) -> Session {
        let policy = self.policy.as_ref().map(|policy| {
            let approver = approver.or_else(|| policy.approver().cloned());
            Arc::new(policy.for_session_asking(approver))
        });
        Session {
            env,
            policy,
            roots: self.roots.clone(),
            cancel: CancellationToken::new(),
            ended: AtomicBool::new(false),
        }
    }

    /// The same session working in another environment (one confined to the roots its
    /// client lists now): the same policy, allowances and person, calls ended with this
    /// session's; the environment is this value's own, ended with [`end`](Self::end).
    pub fn in_env(&self, env: Arc<dyn ExecutionEnv>) -> Session {
        Session {
            env,
            policy: self.policy.clone(),
            roots: self.roots.clone(),
            cancel: self.cancel.child_token(),
            ended: AtomicBool::new(false),
        }
    }

    /// The environment the session's tools work in.
    pub fn env(&self) -> &Arc<dyn ExecutionEnv> {
        &self.env
    }

    /// The policy that judges the session's calls, with its approver; `None` when every
    /// call is allowed.
    pub fn policy(&self) -> Option<&Arc<PolicyHook>> {
        self.policy.as_ref()
    }

    /// How the session follows its client's roots, if it does.
    pub fn client_roots(&self) -> Option<&ClientRoots> {
        self.roots.as_ref()
    }

    /// Cancelled when the session ends: every call of the session stops on it.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the session has ended.
    pub fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Ends the session: cancels its calls, then ends every process its environment started
    /// that still runs (background jobs included) and deletes the files kept for its end.
    /// Only the first call does anything; it returns whether this one did.
    pub fn end(&self) -> bool {
        if self.ended.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.cancel.cancel();
        self.env.end_session();
        true
    }

    /// The session sleeps (a server keeps it idle): its environment lets go of what it takes
    /// up again by itself at the next call. Nothing it made or still runs is lost.
    pub fn hibernate(&self) {
        if !self.is_ended() {
            self.env.hibernate();
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("cwd", &self.env.cwd())
            .field("policy", &self.policy.is_some())
            .field("client_roots", &self.roots.is_some())
            .field("ended", &self.is_ended())
            .finish()
    }
}
