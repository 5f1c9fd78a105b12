//! Small hand-written product-face tools (configurable definitions) for the integration tests.

use std::sync::Arc;

use pi_tools::{
    BoxFuture, ExecutionMode, ToolConfigSpec, ToolContext, ToolDefinition, ToolError, ToolResult,
    ToolRole, ToolSpec,
};
use serde_json::{Value, json};

type Behaviour = dyn Fn(Value, ToolContext) -> Result<ToolResult, ToolError> + Send + Sync;

/// A configurable tool: its spec is set by hand, and `execute` runs a closure over the
/// arguments and context.
pub struct FakeTool {
    pub spec: ToolSpec,
    pub behaviour: Arc<Behaviour>,
    pub delay: Option<std::time::Duration>,
}

impl FakeTool {
    /// A tool with no arguments that answers `"<name> ok"`.
    pub fn new(name: &str) -> Self {
        let answer = format!("{name} ok");
        FakeTool {
            spec: ToolSpec::new(
                name,
                format!("The {name} tool."),
                json!({"type": "object", "properties": {}, "required": []}),
            ),
            behaviour: Arc::new(move |_, _| Ok(ToolResult::text(answer.clone()))),
            delay: None,
        }
    }

    pub fn snippet(mut self, snippet: &str) -> Self {
        self.spec.snippet = Some(snippet.to_owned());
        self
    }

    pub fn guidelines(mut self, lines: &[&str]) -> Self {
        self.spec.guidelines = lines.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    pub fn parameters(mut self, parameters: Value) -> Self {
        self.spec.parameters = parameters;
        self
    }

    pub fn label(mut self, label: &str) -> Self {
        self.spec.label = label.to_owned();
        self
    }

    pub fn description(mut self, description: &str) -> Self {
        self.spec.description = description.to_owned();
        self
    }

    pub fn mode(mut self, mode: ExecutionMode) -> Self {
        self.spec.mode = mode;
        self
    }

    pub fn read_only(mut self) -> Self {
        self.spec.read_only = true;
        self
    }

    pub fn destructive(mut self) -> Self {
        self.spec.destructive = true;
        self
    }

    pub fn role(mut self, role: ToolRole) -> Self {
        self.spec.role = role;
        self
    }

    pub fn config(mut self, spec: ToolConfigSpec) -> Self {
        self.spec.config = Some(spec);
        self
    }

    pub fn behaviour(
        mut self,
        f: impl Fn(Value, ToolContext) -> Result<ToolResult, ToolError> + Send + Sync + 'static,
    ) -> Self {
        self.behaviour = Arc::new(f);
        self
    }

    /// Sleeps this long before answering.
    pub fn delay(mut self, delay: std::time::Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    pub fn output_schema(mut self, schema: Value) -> Self {
        self.spec.output_schema = Some(schema);
        self
    }

    /// Says the tool comes from `origin` (a stand-in for a built-in says `BuiltIn`).
    pub fn origin(mut self, origin: pi_tools::ToolOrigin) -> Self {
        self.spec.origin = origin;
        self
    }

    pub fn examples(mut self, examples: Vec<Value>) -> Self {
        self.spec.examples = examples;
        self
    }

    pub fn arc(self) -> Arc<dyn ToolDefinition> {
        Arc::new(self)
    }
}

impl ToolDefinition for FakeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        let behaviour = self.behaviour.clone();
        let delay = self.delay;
        Box::pin(async move {
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            behaviour(args, ctx)
        })
    }
}

/// A typed tool configuration, as `config = ShellConfig` would declare it.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellConfig {
    pub timeout_secs: u64,
    #[serde(default)]
    pub shell: Option<String>,
}

fn shell_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"timeout_secs": {"type": "integer", "minimum": 0}, "shell": {"type": "string"}},
        "required": ["timeout_secs"]
    })
}

fn shell_load(value: Value) -> Result<std::sync::Arc<dyn std::any::Any + Send + Sync>, String> {
    serde_json::from_value::<ShellConfig>(value)
        .map(|c| std::sync::Arc::new(c) as std::sync::Arc<dyn std::any::Any + Send + Sync>)
        .map_err(|e| e.to_string())
}

fn shell_default() -> std::sync::Arc<dyn std::any::Any + Send + Sync> {
    std::sync::Arc::new(ShellConfig {
        timeout_secs: 30,
        shell: None,
    })
}

/// The spec `#[tool(config = ShellConfig)]` would generate.
pub fn shell_config_spec() -> ToolConfigSpec {
    ToolConfigSpec {
        schema: shell_schema,
        load: shell_load,
        default: shell_default,
    }
}

/// read, bash (with a [`ShellConfig`]), edit, write, grep, find and ls stand-ins.
pub fn builtin_like() -> Vec<Arc<dyn ToolDefinition>> {
    let tools = vec![
        FakeTool::new("bash")
            .snippet("Run shell commands")
            .config(shell_config_spec())
            .role(ToolRole::Shell),
        FakeTool::new("edit").snippet("Edit files"),
        FakeTool::new("find")
            .snippet("Find files")
            .role(ToolRole::Explore),
        FakeTool::new("grep")
            .snippet("Search file contents")
            .role(ToolRole::Explore),
        FakeTool::new("ls")
            .snippet("List directories")
            .role(ToolRole::Explore),
        FakeTool::new("read").snippet("Read file contents"),
        FakeTool::new("write").snippet("Write files"),
    ];
    tools
        .into_iter()
        .map(|t| t.origin(pi_tools::ToolOrigin::BuiltIn).arc())
        .collect()
}
