//! The runtime kernel: the lean tool interface, results, messages, events, hooks, argument
//! validation and the runner.
//!
//! Nothing in here imports anything from the rest of the crate: the kernel compiles and runs
//! with tools written directly against [`AgentTool`], without the product layer.

mod ask;
mod content;
mod context;
mod error;
mod event;
pub(crate) mod glob;
mod hooks;
mod link;
mod message;
mod nested;
mod notices;
mod result;
mod runner;
pub mod text;
mod tool;
mod toolset;
mod validate;

pub use ask::{
    Answer, ClientAsker, ClientRoot, Question, Sampled, SamplingMessage, SamplingRequest,
    SamplingRole,
};
pub use content::{ContentBlock, EmbeddedResource, ResourceBody};
pub use context::{Extensions, OUTPUT_END_DETAIL, ProgressUpdater, ToolContext};
pub use error::ToolError;
pub use event::{CollectingSink, EventSink, LogLevel, NoopSink, ToolEvent};
pub use hooks::{
    AfterToolCall, AfterToolCallContext, AfterToolCallOverride, BeforeToolCall,
    BeforeToolCallContext, BeforeToolCallOutcome,
};
pub use link::ResourceLink;
#[cfg(feature = "mount")]
pub(crate) use link::{percent_decode, percent_encode};
pub use message::{ToolCall, ToolResultMessage};
pub use nested::{MAX_NESTED_CALLS, MAX_NESTING_DEPTH};
pub use notices::{Notice, Notices};
pub use result::{ToolResult, Usage, UsageCost};
pub use runner::{BatchOutcome, RunnerConfig, UnknownToolMessage, execute_tool_calls};
pub use tool::{AgentTool, BoxFuture, ExecutionMode};
pub use toolset::ToolSet;
pub(crate) use validate::types_of;
pub use validate::{ArgumentValidator, coerce_arguments};
