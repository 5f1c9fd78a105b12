//! A short guide: one page per task, each with an example that compiles (and, where it
//! needs no process or network, runs) as a test.
//!
//! - [`writing_a_tool`]: an annotated `async fn` becomes a tool.
//! - [`configuring_the_toolbox`]: `pi-tools.toml`, where it is found, and the active set.
//! - [`running_a_batch`]: a model's tool calls through the runner.
//! - [`typed_results_and_nested_calls`]: a tool's output schema, and tools that call tools.
//! - [`choosing_where_tools_work`]: a directory, allowed roots, another machine.
//! - [`serving_over_mcp`]: the active tools to any MCP client.
//! - [`choosing_a_dialect`]: which schema dialect a provider (or SDK) needs.
//! - [`closing_the_loop`]: a provider's request out, its reply in, the results into the history.
//!
// The MCP page exists with the feature `mcp`; without it the link goes to docs.rs's.
#![cfg_attr(
    not(feature = "mcp"),
    doc = "[`serving_over_mcp`]: https://docs.rs/pi-tools/latest/pi_tools/guide/serving_over_mcp/"
)]

/// # Writing a tool
///
/// Annotate an `async fn` with [`#[tool]`](macro@crate::tool). Its parameters become the
/// arguments (their doc comments become the schema's descriptions; an `Option` is optional),
/// its doc comment becomes the description, and `Ok`/`Err` become the result the model sees.
/// A first parameter `&ToolContext` gives progress updates, cancellation and the execution
/// environment.
///
/// ```
/// use pi_tools::{ToolContext, ToolError, ToolOutput, tool};
///
/// /// Count the words of a text.
/// #[tool(
///     snippet = "Count words",
///     guidelines = ["Use guide_word_count for long texts."],
///     examples = [r#"{"text": "one two three"}"#],
///     read_only
/// )]
/// async fn guide_word_count(
///     ctx: &ToolContext,
///     /// The text to count.
///     text: String,
///     /// Count only words longer than this many characters.
///     min_len: Option<usize>,
/// ) -> Result<ToolOutput, ToolError> {
///     ctx.update(pi_tools::ToolResult::text("counting…"));
///     let n = text.split_whitespace().filter(|w| w.len() > min_len.unwrap_or(0)).count();
///     Ok(ToolOutput::text(n.to_string()))
/// }
///
/// use pi_tools::ToolDefinition;
/// // What the tool says about itself is one value, its spec:
/// let spec = GuideWordCountTool.spec();
/// assert_eq!(spec.name, "guide_word_count");
/// assert_eq!(spec.parameters["required"], serde_json::json!(["text"]));
/// assert_eq!(spec.examples, [serde_json::json!({"text": "one two three"})]);
/// ```
///
/// Messages in `Err` are for the model: write whole sentences that say what to do next. The
/// attribute's keys (`name`, `label`, `snippet`, `guidelines`, `mode`, `config`, `renderer`,
/// `prepare`, `read_only`, `destructive`, `examples`) are listed on [`macro@crate::tool`].
/// Tools are registered where they are declared: [`Registry::from_inventory`] finds every
/// one linked into the binary.
///
/// [`Registry::from_inventory`]: crate::Registry::from_inventory
pub mod writing_a_tool {}

/// # Configuring the toolbox
///
/// A `pi-tools.toml` says which tools are active (and in which order the prompt lists them),
/// how batches run, per-tool settings, path confinement and the prompt's closing guidelines;
/// see [`config`](crate::config) for every key. The command line finds it in this order:
///
/// 1. `--config FILE` (anywhere on the command line);
/// 2. the `PI_TOOLS_CONFIG` environment variable;
/// 3. `pi-tools.toml` in the working directory;
/// 4. the embedded default ([`DEFAULT_TOML`](crate::config::DEFAULT_TOML)).
///
/// `pi-tools check` prints which one it used. In code, [`ConfigSource`] does the same search,
/// [`Config::local_env`] gives the environment the configuration describes (`[paths]` and
/// `[sandbox]`: by default, commands and edits may write only in the working directory), and
/// a [`Toolbox`] turns the registered tools, the configuration and that environment into
/// what the runner, the prompt, the schemas and the catalog need. This is the one way to
/// assemble an agent's tools; the command line takes it too, so a configuration means the
/// same in a program of one's own as in `pi-tools run` and `pi-tools mcp`:
///
/// ```
/// use std::sync::Arc;
///
/// use pi_tools::config::{Config, ConfigSource};
/// use pi_tools::env::WithEnv;
/// use pi_tools::toolbox::Toolbox;
/// use pi_tools::{Extensions, Registry};
///
/// let registered: Vec<_> = Registry::from_inventory().unwrap().iter().cloned().collect();
/// let config = Config::parse(
///     "[tools]\nactive = [\"read\", \"grep\", \"bash\"]\ntimeout_secs = 60\n",
///     "pi-tools.toml",
///     &registered,
/// )
/// .unwrap();
/// let project = tempfile::tempdir().unwrap();
/// let env = config.local_env(project.path()).unwrap();
/// let toolbox = Toolbox::new(registered, &config, Extensions::new().with_env(Arc::new(env)));
/// assert_eq!(toolbox.active_names(), ["read", "grep", "bash"]);
/// // The model is told what the sandbox enforces, because this environment enforces it.
/// let prompt = toolbox.prompt().to_string();
/// assert!(prompt.contains("Commands and file edits may write only in the working directory"));
/// // toolbox.tool_set() and toolbox.runner_config() run a model's calls;
/// // toolbox.schemas(dialect) lists the tools for a provider.
///
/// // With no flag, no variable and no ./pi-tools.toml, the embedded default applies.
/// let empty = std::env::temp_dir().join("pi-tools-guide-no-config");
/// std::fs::create_dir_all(&empty).unwrap();
/// assert_eq!(ConfigSource::discover(None, None, &empty), ConfigSource::Embedded);
/// ```
///
/// To load the project's configuration as the command line does, give [`ConfigSource`] the
/// flag's path (if your program has one), the variable and the directory, and load what it
/// found. A `pi-tools.toml` found in the working directory applies only when it tightens the
/// embedded default, or once the user has trusted its exact content with `pi-tools trust`
/// (see [`trust`](crate::config::trust)): one that loosens the default (turns on `grep`,
/// mounts a server, declares a tool, turns the sandbox off) and was never trusted is an
/// error that names what needs trust. [`ConfigSource::load`] reads the user's trust
/// records; [`load_trusted`](crate::config::ConfigSource::load_trusted) takes the records to
/// use and also says the trust state.
///
/// ```
/// use pi_tools::Registry;
/// use pi_tools::config::{CONFIG_ENV, ConfigSource};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registered: Vec<_> = Registry::from_inventory()?.iter().cloned().collect();
/// let project = tempfile::tempdir()?;
/// let file = project.path().join("pi-tools.toml");
/// # let env_var = None; // the doc test ignores the variable of whoever runs it
/// # let _ = CONFIG_ENV;
/// # /*
/// let env_var = std::env::var_os(CONFIG_ENV);
/// # */
///
/// // Fewer tools than the default: it tightens, so it applies without trust.
/// std::fs::write(&file, "[tools]\nactive = [\"read\", \"edit\"]\n")?;
/// let config = ConfigSource::discover(None, env_var.clone(), project.path()).load(&registered)?;
/// assert_eq!(config.active, ["read", "edit"]);
///
/// // grep is off by default: a found file that turns it on needs `pi-tools trust` first.
/// std::fs::write(&file, "[tools]\nactive = [\"read\", \"grep\"]\n")?;
/// let source = ConfigSource::discover(None, env_var, project.path());
/// let refused = source.load_trusted(&registered, None).expect_err("never trusted");
/// assert!(refused.to_string().contains("pi-tools trust"), "{refused}");
/// # Ok(())
/// # }
/// ```
///
/// A toolbox given no environment works unconfined in the process's current directory, and
/// then tells the model of no sandbox: the sentence about where commands may write comes
/// from what the environment enforces ([`ExecutionEnv::confinement`]), never from the
/// configuration alone.
///
/// A call to a registered tool that the configuration leaves inactive fails with a message
/// that names the `[tools] active` key, so the person running the agent knows what to change.
///
/// [`ConfigSource`]: crate::config::ConfigSource
/// [`ConfigSource::load`]: crate::config::ConfigSource::load
/// [`Config::local_env`]: crate::config::Config::local_env
/// [`ExecutionEnv::confinement`]: crate::env::ExecutionEnv::confinement
/// [`Toolbox`]: crate::toolbox::Toolbox
pub mod configuring_the_toolbox {}

/// # Running a batch
///
/// A model answers with tool calls; [`execute_tool_calls`](crate::execute_tool_calls) runs
/// them (validating and coercing arguments first, in parallel unless a tool or the
/// configuration says otherwise) and returns one result message per call, in the calls'
/// order. Events (start, progress, end) go to an [`EventSink`](crate::EventSink).
///
/// ```
/// use std::sync::Arc;
///
/// use pi_tools::{CancellationToken, NoopSink, RunnerConfig, ToolCall, ToolSet};
/// use pi_tools::{execute_tool_calls, tool, wrap};
/// use serde_json::json;
///
/// /// Add two numbers.
/// #[tool]
/// async fn guide_add(a: i64, b: i64) -> Result<String, String> {
///     Ok((a + b).to_string())
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let tools = ToolSet::new([wrap(Arc::new(GuideAddTool), None)]);
/// let calls = [
///     ToolCall::new("1", "guide_add", json!({"a": 2, "b": "3"})), // "3" is coerced to 3
///     ToolCall::new("2", "guide_add", json!({"a": 2})),
/// ];
/// let outcome = execute_tool_calls(
///     &tools,
///     &calls,
///     &RunnerConfig::default(),
///     &CancellationToken::new(),
///     &NoopSink,
/// )
/// .await;
/// assert_eq!(outcome.messages[0].content[0].as_text(), Some("5"));
/// assert!(outcome.messages[1].is_error); // `b` is missing: the model is told so
/// # });
/// ```
///
/// From the command line, `pi-tools run batch.json` does the same with the configured
/// toolbox (`--json` for one event a line).
pub mod running_a_batch {}

/// # Typed results and nested calls
///
/// A `#[tool]` fn that returns `Result<T, _>` for a `T: Serialize + JsonSchema` has a typed
/// result: `T`'s schema (doc comments as descriptions) is the tool's output schema, which
/// MCP lists as `outputSchema` and the catalog shows, and each value is the result's
/// `structured_content` beside its text for the model (compact JSON, or `#[tool(text = f)]`).
/// A tool can call the others of its batch with [`ToolContext::call_tool`], or
/// [`ToolContext::call_tool_as`] to read the typed result: the nested call goes through the
/// whole pipeline (validation, the before-hook with the policy, the mutation queue, the
/// after-hook), is cancelled with its caller, and its events reach the sink as
/// `tool_execution_nested` under the caller's id.
///
/// ```
/// use pi_tools::{
///     CancellationToken, CollectingSink, RunnerConfig, ToolCall, ToolContext, ToolDefinition,
///     ToolError, ToolSet, execute_tool_calls, tool, wrap,
/// };
/// use serde_json::json;
/// use std::sync::Arc;
///
/// /// A sum.
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Sum {
///     /// The two numbers added.
///     total: i64,
/// }
///
/// /// Add two numbers.
/// #[tool]
/// async fn guide_sum(a: i64, b: i64) -> Result<Sum, ToolError> {
///     Ok(Sum { total: a + b })
/// }
///
/// /// Add three numbers, two at a time, through guide_sum.
/// #[tool]
/// async fn guide_sum_three(ctx: &ToolContext, a: i64, b: i64, c: i64) -> Result<Sum, ToolError> {
///     let first: Sum = ctx.call_tool_as("guide_sum", json!({"a": a, "b": b})).await?;
///     ctx.call_tool_as("guide_sum", json!({"a": first.total, "b": c})).await
/// }
///
/// let schema = GuideSumTool.spec().output_schema.clone().unwrap();
/// assert_eq!(schema["properties"]["total"]["description"], "The two numbers added.");
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let tools = ToolSet::new([
///     wrap(Arc::new(GuideSumTool), None),
///     wrap(Arc::new(GuideSumThreeTool), None),
/// ]);
/// let calls = [ToolCall::new("1", "guide_sum_three", json!({"a": 1, "b": 2, "c": 3}))];
/// let sink = CollectingSink::new();
/// let outcome =
///     execute_tool_calls(&tools, &calls, &RunnerConfig::default(), &CancellationToken::new(), &sink)
///         .await;
/// assert_eq!(outcome.messages[0].text_content(), r#"{"total":6}"#);
/// assert_eq!(outcome.messages[0].structured_content, Some(json!({"total": 6})));
/// // The two nested calls' start and end events, under the caller's id.
/// let nested = sink.events().iter().filter(|e| e.kind() == "tool_execution_nested").count();
/// assert_eq!(nested, 4);
/// # });
/// ```
///
/// A failed nested call is an `Err` whose text names the tool and says why (the policy's
/// denial, say); the caller decides whether its own call fails with it. Depth and the number
/// of nested calls per call are bounded ([`MAX_NESTING_DEPTH`], [`MAX_NESTED_CALLS`]).
///
/// [`ToolContext::call_tool`]: crate::ToolContext::call_tool
/// [`ToolContext::call_tool_as`]: crate::ToolContext::call_tool_as
/// [`MAX_NESTING_DEPTH`]: crate::MAX_NESTING_DEPTH
/// [`MAX_NESTED_CALLS`]: crate::MAX_NESTED_CALLS
pub mod typed_results_and_nested_calls {}

/// # Choosing where tools work
///
/// Every file and process a tool touches goes through an
/// [`ExecutionEnv`](crate::env::ExecutionEnv): [`LocalEnv`](crate::env::local::LocalEnv) works on
/// this machine in a directory (optionally confined to allowed roots, with commands in a
/// sandbox), [`SshEnv`] on another machine. A batch's tools get one with
/// [`with_env`](crate::env::WithEnv::with_env) on its [`RunnerConfig`](crate::RunnerConfig),
/// and reach it with [`ctx.env()`](crate::env::ToolContextExt::env). A tool of your own
/// written against it works wherever the built-in tools do.
///
/// ```
/// use std::sync::Arc;
///
/// use pi_tools::env::{ToolContextExt, WithEnv, resolve_path};
/// use pi_tools::env::local::LocalEnv;
/// use pi_tools::{CancellationToken, NoopSink, RunnerConfig, ToolCall, ToolContext, ToolSet};
/// use pi_tools::{execute_tool_calls, tool, wrap};
/// use serde_json::json;
///
/// /// Count the lines of a text file.
/// #[tool(read_only)]
/// async fn guide_line_count(
///     ctx: &ToolContext,
///     /// The file, relative to the working directory or absolute.
///     path: String,
/// ) -> Result<String, String> {
///     let env = ctx.env();
///     let bytes = env
///         .read_file(&resolve_path(&*env, &path))
///         .await
///         .map_err(|e| format!("Cannot read {path}: {e}. Check the path."))?;
///     Ok(bytes.iter().filter(|&&b| b == b'\n').count().to_string())
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let project = tempfile::tempdir().unwrap();
/// std::fs::write(project.path().join("notes.txt"), "one\ntwo\n").unwrap();
/// let outside = tempfile::tempdir().unwrap();
/// std::fs::write(outside.path().join("secret.txt"), "key\n").unwrap();
///
/// // The tools work in `project`, and may not reach past it.
/// let env = LocalEnv::new(project.path())
///     .with_allowed_roots([project.path()])
///     .unwrap();
/// let config = RunnerConfig::default().with_env(Arc::new(env));
/// let tools = ToolSet::new([wrap(Arc::new(GuideLineCountTool), None)]);
/// let secret = outside.path().join("secret.txt");
/// let calls = [
///     ToolCall::new("1", "guide_line_count", json!({"path": "notes.txt"})),
///     ToolCall::new("2", "guide_line_count", json!({"path": secret})),
/// ];
/// let outcome =
///     execute_tool_calls(&tools, &calls, &config, &CancellationToken::new(), &NoopSink).await;
/// assert_eq!(outcome.messages[0].content[0].as_text(), Some("2"));
/// let refused = outcome.messages[1].content[0].as_text().unwrap();
/// assert!(refused.contains("is outside the allowed directories"), "{refused}");
/// # });
/// ```
///
/// Over SSH the same tools work on another machine:
/// `SshEnv::connect(SshTarget::parse("me@build-box")?, "/srv/project").await?` gives the
/// environment (see the README's section on SSH). From the command line, `[env]` and
/// `[paths]` in `pi-tools.toml` say the same.
///
// The link goes to the item when it is built (feature `ssh`), else to its page on docs.rs.
#[cfg_attr(feature = "ssh", doc = "[`SshEnv`]: crate::env::remote::SshEnv")]
#[cfg_attr(
    not(feature = "ssh"),
    doc = "[`SshEnv`]: https://docs.rs/pi-tools/latest/pi_tools/env/remote/struct.SshEnv.html"
)]
pub mod choosing_where_tools_work {}

/// # Serving over MCP
///
/// `pi-tools mcp` serves the active tools of the configuration over MCP on standard input
/// and output; a binary with tools of its own gets the same subcommand by calling
/// [`cli::main`]. In code, a toolbox gives the served tools in one call
/// ([`McpTools::from`]: the active tools with their titles and hints, the prompt's
/// guidelines as the server's instructions); name the server and call [`serve_stdio`]:
///
/// ```no_run
/// use pi_tools::mcp::{McpTools, serve_stdio};
/// use pi_tools::toolbox::Toolbox;
///
/// async fn serve(toolbox: Toolbox) -> Result<(), Box<dyn std::error::Error>> {
///     let tools = McpTools::from(&toolbox)
///         .with_server_info(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
///     serve_stdio(tools, toolbox.runner_config()).await?;
///     Ok(())
/// }
/// ```
///
/// Build the toolbox as in [`configuring_the_toolbox`], with the environment the
/// configuration describes, so the server's tools run in its sandbox.
///
/// An MCP client's configuration then names the binary and its arguments, e.g.
/// `{"command": "pi-tools", "args": ["mcp", "--config", "pi-tools.toml"]}`.
///
/// [`McpTools::from`]: crate::mcp::McpTools
/// [`serve_stdio`]: crate::mcp::serve_stdio
#[cfg_attr(feature = "cli", doc = "[`cli::main`]: crate::cli::main")]
#[cfg_attr(
    not(feature = "cli"),
    doc = "[`cli::main`]: https://docs.rs/pi-tools/latest/pi_tools/cli/fn.main.html"
)]
#[cfg(feature = "mcp")]
pub mod serving_over_mcp {}

/// # Asking the person or the client's model
///
/// A tool can put a question of its own to the person behind the client that called it
/// ([`ToolContext::ask`]: a message and a form, a JSON Schema object of flat properties;
/// the answer is [`Answer`]`::Accept(content)`, `Decline` or `Cancel`), ask the client's
/// model for a message ([`ToolContext::sample`] with a [`SamplingRequest`]), or list the
/// client's roots ([`ToolContext::client_roots`]). The MCP server carries these to its
/// client in both eras (see `docs/mcp.md`); where nobody can answer (the CLI's `run`, a
/// client without the capability) the call gets a [`ToolError`] saying so, which the tool
/// may return as it is.
///
/// **Ask before you act.** An MCP 2026-07-28 client is asked with the call's result, and
/// its retry runs the tool again from the start, each question (asked in the same order,
/// the same each time) now finding its answer. Whatever the tool did before a question is
/// done again, so ask first, and make the questions depend only on the arguments and the
/// earlier answers.
///
/// A prompt the MCP server serves can ask the same three things before it gives its
/// messages: `McpPrompts::get_asking` gets a `pi_tools::mcp::PromptContext`, carried in both
/// eras the same way (in 2026-07-28 the retried `prompts/get` makes the messages again).
///
/// See [`Question`] for an example.
///
/// [`ToolContext::ask`]: crate::ToolContext::ask
/// [`ToolContext::sample`]: crate::ToolContext::sample
/// [`ToolContext::client_roots`]: crate::ToolContext::client_roots
/// [`Answer`]: crate::Answer
/// [`SamplingRequest`]: crate::SamplingRequest
/// [`ToolError`]: crate::ToolError
/// [`Question`]: crate::Question
pub mod asking_the_client {}

/// # Choosing a schema dialect
///
/// Every tool has one canonical schema; [`dialect`](crate::dialect) derives what each
/// provider accepts (`pi-tools schema --dialect NAME` prints it):
///
/// | dialect | for |
/// |---|---|
/// | `mcp` | MCP clients (`inputSchema`) |
/// | `openai` | OpenAI function calling without strict mode |
/// | `openai-strict` | OpenAI with `strict: true`: every property required, optional ones nullable |
/// | `anthropic` | Anthropic's `input_schema` |
/// | `gemini` | Gemini function declarations (an OpenAPI 3.0 subset) |
///
/// **OpenAI Agents SDK:** a tool with `strict_json_schema=True` (the SDK's default) needs the
/// `openai-strict` dialect. The plain `openai` schema leaves optional fields out of
/// `required`; strict mode then makes them required without making them nullable, so the
/// model can no longer leave them out.
///
/// ```
/// use pi_tools::dialect::{Dialect, transform};
/// use serde_json::json;
///
/// let canonical = json!({
///     "type": "object",
///     "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
///     "required": ["path"]
/// });
/// let strict = transform(&canonical, Dialect::OpenAiStrict).unwrap();
/// assert_eq!(strict["required"], json!(["path", "limit"]));
/// assert_eq!(strict["properties"]["limit"]["anyOf"][1], json!({"type": "null"}));
/// ```
///
/// Properties keep their declaration order in every dialect.
pub mod choosing_a_dialect {}

/// # Closing the loop with a provider
///
/// One turn of an agent is the same for every provider, and only the HTTP client is yours:
/// [`Request`](crate::provider::Request) shapes what to post (the path after the base URL,
/// the headers, and the JSON body with the system prompt and the tools where that API takes
/// them); [`read_json`](crate::provider::read_json) reads the reply into the batch the
/// runner runs; and [`Reply::results`](crate::provider::Reply::results) renders the results
/// as what goes next into the history. The toolbox of [`configuring_the_toolbox`] gives the
/// prompt, the runner and the tools in the same dialect the reply is read in
/// ([`Toolbox::schemas`](crate::toolbox::Toolbox::schemas)), so nothing below changes from
/// one provider to another but the [`Dialect`](crate::dialect::Dialect):
///
/// ```
/// use std::sync::Arc;
///
/// use pi_tools::config::Config;
/// use pi_tools::env::WithEnv;
/// use pi_tools::dialect::Dialect;
/// use pi_tools::provider::{ProviderRequest, ReplyError, Request, read_json, user_message};
/// use pi_tools::toolbox::Toolbox;
/// use pi_tools::{CancellationToken, Extensions, NoopSink, Registry, tool};
/// use serde_json::{Value, json};
///
/// /// Shout a text.
/// #[tool]
/// async fn guide_shout(text: String) -> Result<String, String> {
///     Ok(text.to_uppercase())
/// }
///
/// /// What to post for the conversation so far (`history`, in the dialect's own shape).
/// fn request(dialect: Dialect, toolbox: &Toolbox, history: &[Value]) -> ProviderRequest {
///     let system = toolbox.prompt().to_string();
///     // A tool the dialect cannot express is left out (`.excluded` says which and why).
///     let tools = toolbox.dialect_schemas(dialect).schemas;
///     Request::new("my-model", history)
///         .with_system(&system)
///         .with_tools(&tools)
///         .with_api_key("sk-…")
///         .build(dialect)
///         .expect("a dialect with requests")
/// }
///
/// /// Runs the calls of the reply `body`, and keeps its turn and their results in
/// /// `history`; `false` when the loop is over.
/// async fn step(dialect: Dialect, toolbox: &Toolbox, body: &Value, history: &mut Vec<Value>)
///     -> Result<bool, ReplyError> {
///     let reply = read_json(dialect, body)?;
///     history.extend(reply.assistant.iter().cloned());
///     if reply.calls.is_empty() {
///         return Ok(false);
///     }
///     let cancel = CancellationToken::new();
///     let outcome = reply
///         .run(toolbox.tool_set(), &toolbox.runner_config(), &cancel, &NoopSink)
///         .await;
///     history.extend(reply.results(&outcome.messages));
///     Ok(!outcome.terminate)
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registered: Vec<_> = Registry::from_inventory().unwrap().iter().cloned().collect();
/// let toml = "[tools]\nactive = [\"guide_shout\"]\n";
/// let config = Config::parse(toml, "pi-tools.toml", &registered).unwrap();
/// let project = tempfile::tempdir().unwrap();
/// let env = config.local_env(project.path()).unwrap();
/// let toolbox = Toolbox::new(registered, &config, Extensions::new().with_env(Arc::new(env)));
///
/// let mut history = vec![user_message(Dialect::Anthropic, "Shout hi.").unwrap()];
/// let post = request(Dialect::Anthropic, &toolbox, &history);
/// // POST post.body as JSON to the base URL followed by post.path, with post.headers.
/// assert_eq!(post.path, "/v1/messages");
/// assert!(post.headers.contains(&("x-api-key", "sk-…".to_owned())));
/// assert_eq!(post.body["tools"][0]["name"], "guide_shout");
/// // The JSON body of the model's answer:
/// let body = json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
///     "content": [{"type": "tool_use", "id": "toolu_1", "name": "guide_shout", "input": {"text": "hi"}}]});
/// assert!(step(Dialect::Anthropic, &toolbox, &body, &mut history).await.unwrap());
/// assert_eq!(history[2], json!({"role": "user", "content": [{"type": "tool_result",
///     "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "HI"}], "is_error": false}]}));
/// # });
/// ```
///
/// One [`Dialect`](crate::dialect::Dialect) names the whole wire format: the tools
/// (`toolbox.schemas(dialect)`), the request, and the reader, so strict tools go with replies
/// read as strict. Where each API takes what [`Request::build`](crate::provider::Request::build)
/// puts in:
///
/// | dialect | path (after the base URL) | key | system prompt | tools |
/// |---|---|---|---|---|
/// | `OpenAi`, `OpenAiStrict` (Chat Completions) | `/chat/completions` | `Authorization: Bearer` | the first of `messages`, role `system` | the dialect's (`strict: true` for `OpenAiStrict`, whose replies are read as strict) |
/// | `OpenAiResponses` | `/responses` | `Authorization: Bearer` | `instructions` | the `openai-strict` rules, flat, `strict: true` |
/// | `Anthropic` (Messages) | `/v1/messages` | `x-api-key`, with `anthropic-version` | `system`, with `max_tokens` | `input_schema` |
/// | `Gemini` | `/v1beta/models/{model}:generateContent` | `x-goog-api-key` | `systemInstruction` | in one `functionDeclarations` |
///
/// The history is in the dialect's own shape: the first user message is
/// [`user_message`](crate::provider::user_message)`(dialect, task)`; after that, what the
/// reply and the results give. For a streamed reply
/// ([`Request::with_stream`](crate::provider::Request::with_stream)`(true)`: `"stream": true`
/// in the body, or Gemini's `streamGenerateContent?alt=sse`), feed
/// the body's chunks to a [`ReplyStream`](crate::provider::ReplyStream) and `finish()` it
/// instead of `read_json`.
/// [`examples/agent.rs`](https://github.com/pi-tools/pi-tools/blob/main/examples/agent.rs)
/// is the whole loop with reqwest; `pi-tools run --dialect …` does one step from the shell.
pub mod closing_the_loop {}
