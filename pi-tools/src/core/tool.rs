//! The lean tool interface the runner knows.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::context::ToolContext;
use super::error::ToolError;
use super::result::ToolResult;

/// A boxed, `Send` future, as returned by [`AgentTool::execute`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Whether a tool may run beside other calls of its batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// May run concurrently with the other calls of its batch (the default).
    #[default]
    Parallel,
    /// Forces the whole batch to run one call at a time, in order.
    Sequential,
}

impl ExecutionMode {
    /// `"parallel"` or `"sequential"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionMode::Parallel => "parallel",
            ExecutionMode::Sequential => "sequential",
        }
    }
}

impl std::fmt::Display for ExecutionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ExecutionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "parallel" => Ok(ExecutionMode::Parallel),
            "sequential" => Ok(ExecutionMode::Sequential),
            other => Err(format!(
                "unknown execution mode `{other}`: use \"parallel\" or \"sequential\""
            )),
        }
    }
}

/// A tool as the runtime kernel sees it: self-describing and executable.
///
/// Object-safe: the runner holds `Arc<dyn AgentTool>`. Tools written with `#[tool]` get this
/// through `pi_tools::wrap`; implement it by hand only for tools built at run time.
pub trait AgentTool: Send + Sync {
    /// The name the model calls the tool by.
    fn name(&self) -> &str;

    /// A short human label for user interfaces.
    fn label(&self) -> &str {
        self.name()
    }

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The canonical JSON schema of the arguments (an object schema).
    fn parameters(&self) -> &Value;

    /// The JSON schema of the tool's structured result (`ToolResult::structured_content`),
    /// for a tool that returns a typed value; `None` (the default) for one that returns
    /// content only. MCP lists it as `outputSchema`.
    fn output_schema(&self) -> Option<&Value> {
        None
    }

    /// Whether the tool may run beside others of its batch.
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }

    /// Whether arguments may carry properties the schema does not declare. By default they
    /// may not: validation names an unknown property and the closest known one, so a model
    /// learns that `file_path` was not `path` instead of having it silently ignored.
    fn accepts_unknown_properties(&self) -> bool {
        false
    }

    /// Reshapes raw arguments before validation (e.g. to accept an old argument layout).
    /// The default passes them through.
    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        Ok(args)
    }

    /// Runs the tool on validated arguments. Failures are returned as `Err`, never panics;
    /// long work watches `ctx.cancellation()` and reports progress with `ctx.update`.
    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>>;
}
