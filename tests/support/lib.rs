//! What the test binaries share: scripted tools and a logging sink for the kernel's tests
//! (here), hand-written definitions ([`FakeTool`]), an in-process MCP session (`mcp`), MCP
//! servers to mount (`mount`), a sandboxed workspace to attack (`sandbox`), a real sshd
//! (`ssh`), counting processes in /proc ([`procfs`]) and feeding a process its input
//! ([`spawn`]).

mod fake;
pub use fake::*;

#[cfg(doctest)]
mod docs;

/// The command line built for these tests (`CARGO_BIN_EXE_cli-under-test` in a test file):
/// cargo puts a package's binaries in the target directory and its test binaries in `deps/`
/// below it.
pub fn cli_under_test() -> std::path::PathBuf {
    let test = std::env::current_exe().expect("the test binary's path");
    let deps = test.parent().expect("the test binary is in deps/");
    let target = deps.parent().expect("deps/ is in the target directory");
    target.join("cli-under-test")
}

/// The configuration of the native-shape tests, here and over SSH: every family's native
/// tools, no sandbox, a bash deny and an edit deny to be judged through the native names.
pub const NATIVE_SHAPES_CONFIG: &str = r#"
[tools]
active = ["read", "bash", "edit", "write", "ls"]
shapes = "native"

[sandbox]
mode = "off"

[policy]
default = "allow"

[[policy.rule]]
tool = "bash"
command = ["touch", "denied"]
decision = "deny"
reason = "Nothing may be called denied."

[[policy.rule]]
tool = "edit"
path = "locked/**"
decision = "deny"
reason = "The locked directory is a person's to change."
"#;

#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "mount")]
pub mod mount;
pub mod procfs;
#[cfg(all(target_os = "linux", feature = "builtins"))]
pub mod sandbox;
pub mod spawn;
#[cfg(feature = "ssh")]
pub mod ssh;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_tools::{
    AgentTool, BoxFuture, EventSink, ExecutionMode, ToolContext, ToolError, ToolEvent, ToolResult,
};
use serde_json::{Value, json};

/// The schema of the scripted tools: `{i: number, note?: string}`.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "i": {"type": "number"},
            "note": {"type": "string"}
        },
        "required": ["i"]
    })
}

type Behaviour =
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send + Sync;
type Prepare = dyn Fn(Value) -> Result<Value, ToolError> + Send + Sync;

/// A tool whose behaviour is a closure.
pub struct Scripted {
    pub name: String,
    pub mode: ExecutionMode,
    pub schema: Value,
    pub behaviour: Box<Behaviour>,
    pub prepare: Option<Box<Prepare>>,
}

impl Scripted {
    pub fn new<F, Fut>(name: &str, behaviour: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
    {
        Scripted {
            name: name.to_owned(),
            mode: ExecutionMode::Parallel,
            schema: schema(),
            behaviour: Box::new(move |args, ctx| Box::pin(behaviour(args, ctx))),
            prepare: None,
        }
    }

    pub fn sequential(mut self) -> Self {
        self.mode = ExecutionMode::Sequential;
        self
    }

    pub fn with_prepare(
        mut self,
        prepare: impl Fn(Value) -> Result<Value, ToolError> + Send + Sync + 'static,
    ) -> Self {
        self.prepare = Some(Box::new(prepare));
        self
    }

    pub fn arc(self) -> Arc<dyn AgentTool> {
        Arc::new(self)
    }
}

impl AgentTool for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "A scripted test tool."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }

    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        match &self.prepare {
            Some(p) => p(args),
            None => Ok(args),
        }
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        (self.behaviour)(args, ctx)
    }
}

/// A tool that answers `ok <i>` at once.
pub fn echo(name: &str) -> Arc<dyn AgentTool> {
    Scripted::new(name, |args, _ctx| async move {
        Ok(ToolResult::text(format!("ok {}", args["i"])))
    })
    .arc()
}

/// A shared log of lines: events (`start:<id>`, `update:<id>`, `end:<id>`, `msg:<id>`) and
/// whatever tools write (`exec:<id>`).
#[derive(Clone, Default)]
pub struct Log(pub Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, line: impl Into<String>) {
        self.0.lock().unwrap().push(line.into());
    }

    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Position of a line; panics with the log when absent.
    pub fn pos(&self, line: &str) -> usize {
        let lines = self.lines();
        lines
            .iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("`{line}` not in log {lines:?}"))
    }
}

/// A sink that writes a short line per event into a [`Log`] and keeps the events.
#[derive(Clone, Default)]
pub struct LogSink {
    pub log: Log,
    pub events: Arc<Mutex<Vec<ToolEvent>>>,
}

impl LogSink {
    pub fn events(&self) -> Vec<ToolEvent> {
        self.events.lock().unwrap().clone()
    }
}

impl EventSink for LogSink {
    async fn emit(&self, event: ToolEvent) {
        let tag = match &event {
            ToolEvent::ToolExecutionStart { .. } => "start",
            ToolEvent::ToolExecutionUpdate { .. } => "update",
            ToolEvent::ToolExecutionLog { .. } => "log",
            ToolEvent::ToolExecutionEnd { .. } => "end",
            ToolEvent::Notice { .. } => "notice",
            ToolEvent::ToolExecutionNested { .. } => "nested",
            ToolEvent::MessageStart { .. } => "msg",
            ToolEvent::MessageEnd { .. } => return self.events.lock().unwrap().push(event),
        };
        self.log.push(format!("{tag}:{}", event.tool_call_id()));
        self.events.lock().unwrap().push(event);
    }
}

/// Tracks how many calls run at once.
#[derive(Clone, Default)]
pub struct Concurrency {
    active: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

impl Concurrency {
    pub fn enter(&self) -> Guard {
        let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        Guard(self.active.clone())
    }

    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

pub struct Guard(Arc<AtomicUsize>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The text of the first content block of a result message.
pub fn text_of(message: &pi_tools::ToolResultMessage) -> String {
    message
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}
