//! Logs for a stdio server go to stderr: stdout belongs to the protocol.

use tracing_subscriber::EnvFilter;

/// Installs a `tracing` subscriber that writes plain-text logs to stderr, filtered by the
/// `RUST_LOG` environment variable (default: warnings and errors). Does nothing when the
/// process already has a global subscriber, so an application's own logging setup wins.
pub fn init_stderr_logging() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    if installed.is_err() {
        tracing::debug!("a tracing subscriber was already installed; it is kept");
    }
}
