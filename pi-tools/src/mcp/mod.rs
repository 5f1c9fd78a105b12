//! An MCP server for the active tools, over stdio or Streamable HTTP.
//!
//! [`serve_stdio`] (or [`serve_http`], for many clients at once) makes a set of tools an
//! [MCP](https://modelcontextprotocol.io) server, so
//! any MCP client (an editor, a desktop assistant, another agent) can list and call them with
//! pi-tools' validation, hooks, limits and per-file write safety.
//!
//! # Registering the server in an MCP client
//!
//! Clients start a stdio server as a child process. With the `pi-tools` binary on `PATH`,
//! the usual client configuration entry is:
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "pi-tools": { "command": "pi-tools", "args": ["mcp"] }
//!   }
//! }
//! ```
//!
//! # Serving from a binary
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use pi_tools::mcp::{McpTool, McpTools, init_stderr_logging, serve_stdio};
//! use pi_tools::{AgentTool, RunnerConfig};
//!
//! # fn active_tools() -> Vec<Arc<dyn AgentTool>> { Vec::new() }
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     init_stderr_logging();
//!     let tools: McpTools = active_tools().into_iter().map(McpTool::new).collect();
//!     serve_stdio(tools, RunnerConfig::default()).await?;
//!     Ok(())
//! }
//! ```
//!
//! # What the server does
//!
//! - `initialize` answers with the server name `pi-tools`, this crate's version, the tools
//!   and logging capabilities and the [`McpTools::with_instructions`] text; `ping` is
//!   answered; `logging/setLevel` sets the level at which a call's own `tracing` events
//!   (see [`init_stderr_logging`]) and its log lines (a tool's `ctx.log(..)`; bash sends
//!   each stderr line as a `warning` from logger `bash`) reach the client as
//!   `notifications/message`.
//! - `prompts/list` and `prompts/get` offer the [`McpTools::with_prompt`] prompt, when one
//!   is set (`pi-tools mcp` offers its system prompt as `system_prompt`), as one user
//!   message; another name is a `-32602` error naming the prompt. A program's own prompts
//!   ([`McpTools::with_prompts`]) follow it; one may ask the client before it gives its
//!   messages ([`McpPrompts::get_asking`] with a [`PromptContext`]), by request in a
//!   2025-11-25 session and as an input-required result in 2026-07-28.
//! - `tools/list` lists every tool with its name, title, description, its canonical
//!   `parameters()` schema as `inputSchema`, and the `readOnlyHint` / `destructiveHint`
//!   annotations, as [`dialect::mcp::listing`](crate::dialect::mcp::listing) builds them
//!   (the same entry `pi-tools schema --dialect mcp` prints). With
//!   [`McpTools::with_updates`], [`ToolListUpdates::replace`] changes the tools while the
//!   server runs (`pi-tools mcp` follows its mounted servers' lists and its configuration
//!   file's declared tools so): `initialize`
//!   declares `tools: { listChanged: true }`, each 2025-11-25 session is sent
//!   `notifications/tools/list_changed`, and every request lists and calls the new tools.
//! - `tools/call` runs the call as a one-call batch of [`execute_tool_calls`]: the same
//!   lookup, argument preparation, validation, hooks, timeout and cancellation as the runner.
//!   Invalid arguments (with every violation) and tool failures come back as results with
//!   `isError: true` and the runner's text; an unknown tool is a `-32602` error naming the
//!   tools served, as the specification has it. Text content stays text; images become MCP
//!   image content.
//! - When a call carries a progress token, the tool's `ctx.update(..)`s become
//!   `notifications/progress` with an increasing counter and, as the message, only the
//!   output that is new (at most 4 KB each; more goes out as several): at once after a
//!   quiet spell, then at most every 100 ms, the last before the result. A call silent for
//!   a second gets a `running for N s` heartbeat. See `progress.rs` and
//!   [`OUTPUT_END_DETAIL`](crate::OUTPUT_END_DETAIL) for how the new part is found.
//! - **Two eras on one endpoint**, chosen per request over both transports: a request
//!   naming MCP 2026-07-28 in its `_meta` (`io.modelcontextprotocol/protocolVersion` and
//!   `clientCapabilities`) is served without `initialize` or a session; `server/discover`
//!   answers in both eras; an unknown version gets `-32022` with the supported list. For
//!   such a request a policy `ask` and the client's roots come back as an
//!   `InputRequiredResult` with a signed `requestState` (see `mrtr.rs`), log lines follow
//!   the level in its `_meta` (none asked, none sent), `logging/setLevel`, `ping` and
//!   `initialize` are `-32601`.
//! - With the `io.modelcontextprotocol/tasks` extension declared (in a request's `_meta`, or
//!   at `initialize`), a call of a tool that supports tasks ([`TaskSupport`]) becomes a task
//!   once it runs past its time ([`McpTool::task_after`], [`McpTools::with_task_after`]), or
//!   at once for a tool that runs only as one; `tasks/get` polls it, `tasks/update` answers
//!   the questions its tool asks in it, `tasks/cancel` cancels it.
//! - A tool's own questions ([`ToolContext::ask`](crate::ToolContext::ask),
//!   [`sample`](crate::ToolContext::sample),
//!   [`client_roots`](crate::ToolContext::client_roots)) go to a 2025-11-25 client as
//!   `elicitation/create`, `sampling/createMessage` and `roots/list` when it declared the
//!   capability; for a 2026-07-28 request they are the call's `InputRequiredResult`, whose
//!   retry runs the tool again from the start with the answers (see `tool_round.rs`), and a
//!   capability the request did not declare is `-32021` when the tool fails without it.
//! - Unusable input lines are answered (`-32700`, or `-32600` naming the reason); a request
//!   before `initialize` or reusing an in-flight id is refused; reading stops while
//!   `max_concurrency` plus 64 requests are unanswered (see [`serve_split`]).
//! - `notifications/cancelled` cancels that call's token; at the end of the input every
//!   request already read is answered (calls run to completion), then the session ends.
//! - Calls of parallel-mode tools run concurrently; a sequential-mode tool runs alone (a
//!   shared/exclusive lock across requests). With [`RunnerConfig::max_concurrency`] set
//!   (`[tools] max_concurrency` in the configuration), at most that many calls execute at
//!   once across the whole session, and the others wait their turn; a call cancelled while
//!   it waits ends at once. File mutations stay serialised per file by the execution
//!   environment in [`RunnerConfig::extensions`].
//!
//! [`execute_tool_calls`]: crate::execute_tool_calls
//! [`RunnerConfig::extensions`]: crate::RunnerConfig::extensions
//! [`RunnerConfig::max_concurrency`]: crate::RunnerConfig::max_concurrency

mod answer_ids;
mod answering;
mod asker;
mod call_line;
mod direct;
mod elicit;
mod era;
mod error;
mod from_toolbox;
mod hibernation;
mod house;
mod http;
mod http_conn;
mod http_explain;
mod http_gate;
mod http_proxy;
mod line_write;
mod lines;
mod listen;
mod listen_bound;
mod logging;
mod mrtr;
mod opening;
mod outbox;
mod param_headers;
mod progress;
mod prompt_asks;
mod prompt_set;
mod prompts;
mod replay;
mod resource_files;
mod resources;
mod result;
mod roots;
mod serve;
mod served;
mod server;
mod session_bound;
mod session_call;
mod session_manager;
mod sessions;
mod stateless;
mod stdio;
mod task_call;
mod task_support;
mod tasks;
mod tasks_2025;
mod tasks_2025_edge;
mod told;
mod tool_round;
mod tool_updates;
mod tools;
mod unknown_method;

/// How a session follows its client's roots; it belongs to the session ([`crate::session`]).
pub use crate::session::ClientRoots;
pub use answering::close_answer_stream;
pub use error::McpError;
pub use http::{HEALTH_PATH, HttpOptions, MCP_PATH, serve_http};
pub use http_conn::ConnectionLimits;
pub use logging::init_stderr_logging;
pub use prompt_asks::PromptContext;
pub use prompt_set::{
    McpPromptArgument, McpPromptContent, McpPromptInfo, McpPromptMessage, McpPromptRole, McpPrompts,
};
pub use resources::{McpResource, McpResourceContent, McpResourceTemplate, McpResources};
pub use serve::{serve, serve_split, serve_split_until, serve_stdio};
pub use session_bound::WhenFull;
pub use stdio::{StdinStream, StdoutStream, stdio};
pub use task_support::TaskSupport;
pub use tool_updates::ToolListUpdates;
pub use tools::{DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_TASK_AFTER, McpPrompt, McpTool, McpTools};
