//! A mounted server's tool as one of ours: `server__tool`, its description and schema as
//! the server lists them, its hints as our read-only and destructive flags, and a call that
//! goes to the server with our cancellation, timeout and progress.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client::CallFailure;
use super::content::{check_structured, map_result};
use super::server::Server;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::tool::names::{MOUNT_SEPARATOR, mounted_name};
use crate::tool::{ToolDefinition, ToolOrigin, ToolSpec, from_fn};

/// What a call of one tool of a mounted server needs.
struct MountedCall {
    server: Server,
    /// The tool's name on the server.
    remote: String,
    /// Its name here (`server__tool`).
    name: String,
    read_only: bool,
    /// The tool's output schema, compiled, when the server lists one that compiles.
    output: Option<jsonschema::Validator>,
}

/// The tool `tool` of `server`, with the server's `instructions`: its spec from the server's
/// listing, and calls that go to the server.
pub(crate) fn mounted_tool(
    server: &Server,
    tool: &rmcp::model::Tool,
    instructions: Option<&str>,
) -> Arc<dyn ToolDefinition> {
    let spec = mounted_spec(server, tool, instructions);
    let call = Arc::new(MountedCall {
        server: server.clone(),
        remote: tool.name.to_string(),
        name: spec.name.clone(),
        read_only: spec.read_only,
        output: spec
            .output_schema
            .as_ref()
            .and_then(|schema| jsonschema::validator_for(schema).ok()),
    });
    from_fn(spec, move |args, ctx| {
        let call = call.clone();
        async move { call.call(args, ctx).await }
    })
}

/// The spec of `tool` of `server` as the server lists it.
fn mounted_spec(server: &Server, tool: &rmcp::model::Tool, instructions: Option<&str>) -> ToolSpec {
    let remote = tool.name.to_string();
    // `math.factorial` is a fine MCP name and no provider's: the name here is rewritten
    // (or renamed by the entry), and the call still goes out as `math.factorial`.
    let name = mounted_name(server.name(), &server.settings().local_name(&remote));
    let description = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map_or_else(
            || format!("The `{remote}` tool of the MCP server `{}`.", server.name()),
            str::to_owned,
        );
    let snippet = description
        .lines()
        .next()
        .map(|line| line.trim().to_owned())
        .filter(|line| !line.is_empty());
    let guidelines = instructions
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(|i| {
                // Continuation lines indented, so they stay within the guideline's bullet.
                let i = i.replace('\n', "\n  ");
                vec![format!(
                    "The {server}{MOUNT_SEPARATOR}* tools come from the MCP server `{server}`, whose instructions are: {i}",
                    server = server.name()
                )]
            })
            .unwrap_or_default();
    let mut parameters = Value::Object((*tool.input_schema).clone());
    if let Some(object) = parameters.as_object_mut() {
        // Our schemas are JSON Schema 2020-12 without a `$schema` of their own.
        object.remove("$schema");
        if !object.contains_key("type") {
            object.insert("type".to_owned(), Value::from("object"));
        }
    }
    // Unknown properties are refused (with the closest known one named) unless the
    // server's schema explicitly allows them.
    let accepts_unknown_properties = parameters
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false));
    let annotations = tool.annotations.as_ref();
    let read_only = annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
    // MCP's default for destructiveHint is true when the tool is not read-only.
    let destructive = !read_only && annotations.and_then(|a| a.destructive_hint).unwrap_or(true);
    let label = tool
        .title
        .clone()
        .or_else(|| annotations.and_then(|a| a.title.clone()))
        .unwrap_or_else(|| name.clone());
    ToolSpec {
        label,
        snippet,
        guidelines,
        read_only,
        destructive,
        accepts_unknown_properties,
        origin: ToolOrigin::Mounted {
            server: server.name().to_owned(),
        },
        output_schema: tool.output_schema.as_ref().map(|schema| {
            let mut schema = (**schema).clone();
            schema.remove("$schema");
            Value::Object(schema)
        }),
        ..ToolSpec::new(name, description, parameters)
    }
}

/// The error for a call of `name`, a tool the MCP server `server` listed once and no longer
/// lists.
pub(crate) fn no_longer_offered(name: &str, server: &str) -> String {
    format!(
        "Tool {name} is no longer offered: the MCP server `{server}` took it out of its tool list. List the tools again and call one of those."
    )
}

impl MountedCall {
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        // A tool set taken before the server's list changed still holds it.
        if self.server.no_longer_offers(&self.remote) {
            return Err(ToolError::new(no_longer_offered(
                &self.name,
                self.server.name(),
            )));
        }
        let Value::Object(arguments) = args else {
            return Err(ToolError::new(format!(
                "The arguments of {} must be a JSON object.",
                self.name
            )));
        };
        // Calls of other sessions wait, and a process that served another session is
        // replaced: progress can then only reach this session's calls.
        let session = self.server.sessions().enter(&ctx).await;
        let connection = self
            .server
            .connection_for(session.generation)
            .await
            .map_err(ToolError::new)?;
        // A tool that may change things runs alone among this server's calls.
        let _turn = if self.read_only || self.server.settings().parallel {
            None
        } else {
            Some(self.server.mutations().lock().await)
        };
        let own = ctx.cancellation().child_token();
        let call = connection.call(&self.remote, arguments, ctx.updater(), &own);
        let outcome = match self.server.settings().call_timeout {
            None => call.await.map_err(Timed::from),
            Some(limit) => timed(call, limit, &own).await,
        };
        let undone = self.server.undo_plants();
        match outcome {
            Ok(result) => map_result(result, self.server.name())
                .and_then(|result| match &self.output {
                    Some(validator) => {
                        check_structured(&result, validator, self.server.name(), &self.remote)
                            .map(|()| result)
                    }
                    None => Ok(result),
                })
                .map(|mut result| {
                if !undone.is_empty() {
                    result.content.push(crate::core::ContentBlock::text(format!(
                        "[The sandbox took away what the MCP server `{}` made where other programs load or run files by themselves later, outside any sandbox: {}.]",
                        self.server.name(),
                        undone.join(", ")
                    )));
                }
                result
            }),
            Err(Timed::Out(limit)) => Err(ToolError::new(format!(
                "Tool {} timed out after {} s (call_timeout_secs of [mcp.servers.{}]) and the MCP server was told to cancel it. Retry with less work, or raise call_timeout_secs.",
                self.name,
                limit.as_secs(),
                self.server.name()
            ))),
            Err(Timed::Failed(CallFailure::Cancelled)) => Err(ToolError::new(format!(
                "The call of {} was cancelled, and the MCP server `{}` was told to stop it.",
                self.name,
                self.server.name()
            ))),
            Err(Timed::Failed(failure @ CallFailure::Closed)) => {
                let why = self.server.failure_text(&failure).await;
                Err(ToolError::new(format!(
                    "The MCP server `{server}` stopped while {tool} was running: {why}. Whether the call took effect is unknown; check before calling it again. The next call starts the server again.",
                    server = self.server.name(),
                    tool = self.name
                )))
            }
            Err(Timed::Failed(CallFailure::Other(text))) => Err(ToolError::new(format!(
                "The MCP server `{}` could not run {}: {text}.",
                self.server.name(),
                self.name
            ))),
        }
    }
}

/// How a call with its own time limit ended, when it did not return a result.
enum Timed {
    Out(Duration),
    Failed(CallFailure),
}

impl From<CallFailure> for Timed {
    fn from(failure: CallFailure) -> Self {
        Timed::Failed(failure)
    }
}

/// Awaits `call`, cancelling `token` (which makes it send `notifications/cancelled` and
/// return) once `limit` has passed.
async fn timed<T>(
    call: impl Future<Output = Result<T, CallFailure>>,
    limit: Duration,
    token: &CancellationToken,
) -> Result<T, Timed> {
    let mut call = std::pin::pin!(call);
    tokio::select! {
        out = &mut call => return out.map_err(Timed::from),
        _ = tokio::time::sleep(limit) => {}
    }
    token.cancel();
    let _ = call.await;
    Err(Timed::Out(limit))
}
