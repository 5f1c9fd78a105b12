//! How a session follows its client's roots: the directories a client (an MCP client with
//! the `roots` capability) says to work in become the session's environment.

use std::path::PathBuf;
use std::sync::Arc;

use crate::env::ExecutionEnv;

/// Builds the environment for a session confined to the given absolute directories (in
/// the client's order), or says why it cannot.
type MakeEnv = dyn Fn(&[PathBuf]) -> Result<Arc<dyn ExecutionEnv>, String> + Send + Sync;

/// Makes a session follow its client's roots. Give it to the session
/// ([`Session::with_client_roots`](super::Session::with_client_roots)): a session whose
/// client offers the `roots` capability then runs each call in the environment this builds
/// from the `file://` roots the client lists at that moment (other roots are ignored, with a
/// log line). A client without the capability, or one that lists no usable root, works in
/// the session's own environment.
#[derive(Clone)]
pub struct ClientRoots(Arc<MakeEnv>);

impl ClientRoots {
    /// Follows client roots with `make`, which builds the environment for a list of roots
    /// (absolute directories, in the client's order, without repeats), or returns the
    /// sentence that says why it cannot.
    pub fn new(
        make: impl Fn(&[PathBuf]) -> Result<Arc<dyn ExecutionEnv>, String> + Send + Sync + 'static,
    ) -> Self {
        ClientRoots(Arc::new(make))
    }

    /// The environment for `roots`, or the sentence that says why there is none.
    pub fn env_for(&self, roots: &[PathBuf]) -> Result<Arc<dyn ExecutionEnv>, String> {
        (self.0)(roots)
    }
}

impl std::fmt::Debug for ClientRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientRoots")
    }
}
