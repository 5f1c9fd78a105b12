//! Small hand-written product-face tools (configurable definitions) for the integration tests.

use std::sync::Arc;

use pi_tools::{
    BoxFuture, ExecutionMode, ToolConfigSpec, ToolContext, ToolDefinition, ToolError, ToolResult,
    ToolRole,
};
use serde_json::{Value, json};

type Behaviour = dyn Fn(Value, ToolContext) -> Result<ToolResult, ToolError> + Send + Sync;

/// A configurable tool: every product-face property can be set, and `execute` runs a
/// closure over the arguments and context.
pub struct FakeTool {
    pub name: String,
    pub label: Option<String>,
    pub description: String,
    pub snippet: Option<String>,
    pub guidelines: Vec<String>,
    pub parameters: Value,
    pub mode: ExecutionMode,
    pub read_only: bool,
    pub destructive: bool,
    pub role: ToolRole,
    pub config: Option<ToolConfigSpec>,
    pub behaviour: Arc<Behaviour>,
    pub delay: Option<std::time::Duration>,
    pub examples: Vec<Value>,
}

impl FakeTool {
    /// A tool with no arguments that answers `"<name> ok"`.
    pub fn new(name: &str) -> Self {
        let answer = format!("{name} ok");
        FakeTool {
            name: name.to_owned(),
            label: None,
            description: format!("The {name} tool."),
            snippet: None,
            guidelines: Vec::new(),
            parameters: json!({"type": "object", "properties": {}, "required": []}),
            mode: ExecutionMode::Parallel,
            read_only: false,
            destructive: false,
            role: ToolRole::General,
            config: None,
            behaviour: Arc::new(move |_, _| Ok(ToolResult::text(answer.clone()))),
            delay: None,
            examples: Vec::new(),
        }
    }

    pub fn snippet(mut self, snippet: &str) -> Self {
        self.snippet = Some(snippet.to_owned());
        self
    }

    pub fn guidelines(mut self, lines: &[&str]) -> Self {
        self.guidelines = lines.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    pub fn parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    pub fn label(mut self, label: &str) -> Self {
        self.label = Some(label.to_owned());
        self
    }

    pub fn description(mut self, description: &str) -> Self {
        self.description = description.to_owned();
        self
    }

    pub fn mode(mut self, mode: ExecutionMode) -> Self {
        self.mode = mode;
        self
    }

    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    pub fn destructive(mut self) -> Self {
        self.destructive = true;
        self
    }

    pub fn role(mut self, role: ToolRole) -> Self {
        self.role = role;
        self
    }

    pub fn config(mut self, spec: ToolConfigSpec) -> Self {
        self.config = Some(spec);
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

    pub fn examples(mut self, examples: Vec<Value>) -> Self {
        self.examples = examples;
        self
    }

    pub fn arc(self) -> Arc<dyn ToolDefinition> {
        Arc::new(self)
    }
}

impl ToolDefinition for FakeTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.snippet.as_deref()
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        self.guidelines.clone()
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.mode
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

    fn config(&self) -> Option<ToolConfigSpec> {
        self.config
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn destructive(&self) -> bool {
        self.destructive
    }

    fn role(&self) -> ToolRole {
        self.role
    }

    fn examples(&self) -> Vec<Value> {
        self.examples.clone()
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
    vec![
        FakeTool::new("bash")
            .snippet("Run shell commands")
            .config(shell_config_spec())
            .role(ToolRole::Shell)
            .arc(),
        FakeTool::new("edit").snippet("Edit files").arc(),
        FakeTool::new("find")
            .snippet("Find files")
            .role(ToolRole::Explore)
            .arc(),
        FakeTool::new("grep")
            .snippet("Search file contents")
            .role(ToolRole::Explore)
            .arc(),
        FakeTool::new("ls")
            .snippet("List directories")
            .role(ToolRole::Explore)
            .arc(),
        FakeTool::new("read").snippet("Read file contents").arc(),
        FakeTool::new("write").snippet("Write files").arc(),
    ]
}
