//! How a session travels: [`WithSession`] writes it into what carries it to the tools (the
//! extensions of a batch or of one call), [`SessionOf`] reads it back. These two are the
//! only code that knows how the extensions keep it.

use std::sync::Arc;

use crate::core::{BeforeToolCall, BeforeToolCallContext, Extensions, RunnerConfig, ToolContext};
use crate::env::WithEnv;

use super::{Session, SessionPolicyGate};

/// Reads the session a batch or a call belongs to.
pub trait SessionOf {
    /// The session, if one was given ([`WithSession`]).
    fn session(&self) -> Option<&Arc<Session>>;
}

impl SessionOf for Extensions {
    fn session(&self) -> Option<&Arc<Session>> {
        self.get::<Arc<Session>>()
    }
}

impl SessionOf for RunnerConfig {
    fn session(&self) -> Option<&Arc<Session>> {
        self.extensions.session()
    }
}

impl SessionOf for ToolContext {
    fn session(&self) -> Option<&Arc<Session>> {
        self.extensions().session()
    }
}

impl SessionOf for BeforeToolCallContext {
    fn session(&self) -> Option<&Arc<Session>> {
        self.extensions.session()
    }
}

/// Gives a batch (or one call) its session, and with it the session's environment, in place
/// of any other.
pub trait WithSession: Sized {
    /// This, belonging to `session`.
    fn with_session(self, session: Arc<Session>) -> Self;
}

impl WithSession for Extensions {
    fn with_session(self, session: Arc<Session>) -> Self {
        self.with_env(Arc::clone(session.env())).with(session)
    }
}

impl WithSession for ToolContext {
    fn with_session(self, session: Arc<Session>) -> Self {
        let extensions = self.extensions().clone().with_session(session);
        self.with_extensions(extensions)
    }
}

/// A runner configuration with no before-call hook also gets the one that judges each call
/// by the policy of its session ([`SessionPolicyGate`]), when the session has a policy. A
/// hook of the caller's own is kept as it is: it runs the gate itself if it wants the policy.
impl WithSession for RunnerConfig {
    fn with_session(mut self, session: Arc<Session>) -> Self {
        if self.before_tool_call.is_none()
            && let Some(policy) = session.policy()
        {
            self.before_tool_call = Some(
                Arc::new(SessionPolicyGate::new(Arc::clone(policy))) as Arc<dyn BeforeToolCall>
            );
        }
        self.extensions = std::mem::take(&mut self.extensions).with_session(session);
        self
    }
}
