//! Why an MCP session could not start or ended abnormally.

/// An error that ends (or prevents) an MCP session. Everything a model should read (invalid
/// arguments, tool failures) is a tool result, never one of these.
///
/// Its `Debug` is its `Display`, so `main` returning it with `?` prints the sentence.
#[derive(thiserror::Error)]
pub enum McpError {
    /// A tool's `parameters()` is not a JSON object, so it cannot be an MCP `inputSchema`.
    #[error(
        "Tool `{tool}` cannot be served over MCP because its parameters() is not a JSON object \
         schema; make it return an object schema such as {{\"type\":\"object\",\"properties\":{{}}}}."
    )]
    SchemaNotAnObject {
        /// The tool's name.
        tool: String,
    },
    /// A tool's listing did not fit MCP's `Tool` type (a bug: [`crate::dialect::mcp::listing`]
    /// builds only what the type holds).
    #[error(
        "Tool `{tool}` cannot be listed over MCP: its listing does not fit the protocol's tool \
         type ({reason}). This is a bug; report it with the tool's name and schema."
    )]
    ListingRejected {
        /// The tool's name.
        tool: String,
        /// What the protocol type refused.
        reason: String,
    },
    /// The client closed the connection or sent something else before `initialize`.
    #[error(
        "The MCP session did not start: {0}. The client must open the session with an \
         `initialize` request on the server's input."
    )]
    Handshake(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The session's task panicked or was aborted.
    #[error(
        "The MCP session task stopped abnormally: {0}. This is a bug; the log on stderr has \
         the details."
    )]
    Session(#[source] tokio::task::JoinError),
    /// The HTTP server was asked to listen beyond this machine without a token.
    #[error(
        "Refusing to serve MCP over HTTP on {address} without a token: anyone who can reach \
         that address could run commands. Give a token (--token-file, or the \
         PI_TOOLS_MCP_TOKEN environment variable) or listen on a loopback address such as \
         127.0.0.1."
    )]
    Insecure {
        /// The address asked for.
        address: std::net::SocketAddr,
    },
    /// The HTTP listener failed.
    #[error("The MCP HTTP server failed: {0}.")]
    Io(#[source] std::io::Error),
}

// Debug is the sentence (as `ConfigError`'s), so `main` returning it with `?` prints that.
impl std::fmt::Debug for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
