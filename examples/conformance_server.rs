//! The official MCP conformance suite's fixture tools (declared with `#[tool]`; those of the
//! tasks extension in `support/task_fixtures.rs`), resources and prompts, served over
//! Streamable HTTP, for `scripts/conformance.sh`.
//!
//! Run with `cargo run --example conformance_server -- 127.0.0.1:3001`; the server answers on
//! `http://127.0.0.1:3001/mcp` until SIGTERM or Ctrl-C.

use std::sync::Arc;
use std::time::Duration;

use pi_tools::mcp::{
    HttpOptions, McpPromptArgument, McpPromptContent, McpPromptInfo, McpPromptMessage, McpPrompts,
    McpResource, McpResourceContent, McpResourceTemplate, McpResources, McpTool, McpTools,
    PromptContext, init_stderr_logging, serve_http,
};
use pi_tools::{
    AgentTool, Answer, BoxFuture, ContentBlock, EmbeddedResource, Question, Registry, RunnerConfig,
    SamplingRequest, ToolContext, ToolError, ToolResult, tool,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[path = "support/task_fixtures.rs"]
mod task_fixtures;

/// A 1x1 red pixel.
const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// Returns a simple text, for the conformance suite.
#[tool]
async fn test_simple_text() -> Result<String, ToolError> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Always fails, for the conformance suite.
#[tool]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Returns a 1x1 PNG image, for the conformance suite.
#[tool]
async fn test_image_content() -> Result<ToolResult, ToolError> {
    Ok(ToolResult {
        content: vec![ContentBlock::image(RED_PIXEL_PNG, "image/png")],
        ..ToolResult::text("")
    })
}

/// A WAV of eight silent 8-bit samples at 8 kHz (a millisecond).
const SILENT_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// Returns a millisecond of silence as a WAV, for the conformance suite.
#[tool]
async fn test_audio_content() -> Result<ToolResult, ToolError> {
    Ok(ToolResult {
        content: vec![ContentBlock::audio(SILENT_WAV, "audio/wav")],
        ..ToolResult::default()
    })
}

/// Returns a text resource embedded whole, for the conformance suite.
#[tool]
async fn test_embedded_resource() -> Result<ToolResult, ToolError> {
    let resource = EmbeddedResource::text(
        "test://embedded-resource",
        "This is an embedded resource content.",
    )
    .with_mime_type("text/plain");
    Ok(ToolResult {
        content: vec![ContentBlock::resource(resource)],
        ..ToolResult::default()
    })
}

/// Returns a text, an image and an embedded JSON resource, in that order, for the
/// conformance suite.
#[tool]
async fn test_multiple_content_types() -> Result<ToolResult, ToolError> {
    let resource = EmbeddedResource::text(
        "test://mixed-content-resource",
        r#"{"test":"data","value":123}"#,
    )
    .with_mime_type("application/json");
    Ok(ToolResult {
        content: vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(RED_PIXEL_PNG, "image/png"),
            ContentBlock::resource(resource),
        ],
        ..ToolResult::default()
    })
}

/// Says where a deployment to `region` would go (it deploys nothing). The `region` argument
/// is mirrored into the `Mcp-Param-Region` header (SEP-2243), which the server checks
/// against it, for the conformance suite.
#[tool]
async fn test_param_header(
    /// Where to deploy; a client sends it in the `Mcp-Param-Region` header too.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
) -> Result<String, ToolError> {
    Ok(format!("A deployment would go to {region}."))
}

/// Reports progress three times, 50 ms apart, for the conformance suite.
#[tool]
async fn test_tool_with_progress(ctx: &ToolContext) -> Result<String, ToolError> {
    let mut output = String::new();
    for step in [0, 50, 100] {
        output.push_str(&format!("{step}/100\n"));
        ctx.update(ToolResult::text(output.clone()));
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    Ok("Progress reported: 0, 50 and 100 of 100.".to_owned())
}

/// Closes its answer stream before it answers, so the client must reconnect with
/// `Last-Event-ID` to get the answer, for the conformance suite's `server-sse-polling`
/// (SEP-1699).
#[tool]
async fn test_reconnection() -> Result<String, ToolError> {
    // The priming event (the id to reconnect from) reaches the client first.
    tokio::time::sleep(Duration::from_millis(100)).await;
    if !pi_tools::mcp::close_answer_stream() {
        return Err(ToolError::new(
            "The answer stream could not be closed: call this tool over Streamable HTTP with a session.",
        ));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok("Reconnection test completed: the answer came after the client reconnected.".to_owned())
}

/// Logs three lines at info level, 50 ms apart, for the conformance suite.
#[tool]
async fn test_tool_with_logging() -> Result<String, ToolError> {
    tracing::info!("Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    tracing::info!("Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    tracing::info!("Tool execution completed");
    Ok("Logged three messages.".to_owned())
}

/// Asks the person for a username and an email (`elicitation/create`), for the conformance
/// suite.
#[tool]
async fn test_elicitation(
    ctx: &ToolContext,
    /// The message to show the user.
    message: String,
) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let answer = ctx.ask(Question::new(message, form)).await?;
    Ok(format!("User response: {}", said(&answer)))
}

/// Asks the client's model to answer the prompt (`sampling/createMessage`), for the
/// conformance suite.
#[tool]
async fn test_sampling(
    ctx: &ToolContext,
    /// The prompt to send to the LLM.
    prompt: String,
) -> Result<String, ToolError> {
    let sampled = ctx.sample(SamplingRequest::new(prompt, 100)).await?;
    Ok(format!("LLM response: {}", sampled.text))
}

/// Asks with a form whose every primitive field has a default (SEP-1034), for the
/// conformance suite.
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: &ToolContext) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }
    });
    let answer = ctx
        .ask(Question::new("Please review the defaults.", form))
        .await?;
    Ok(format!("Elicitation completed: {}", said(&answer)))
}

/// Asks with a form of every kind of enumeration (SEP-1330), for the conformance suite.
#[tool]
async fn test_elicitation_sep1330_enums(ctx: &ToolContext) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
        }
    });
    let answer = ctx.ask(Question::new("Choose your options.", form)).await?;
    Ok(format!("Elicitation completed: {}", said(&answer)))
}

/// `action=..., content=...` of an answer, as the suite's fixtures say it.
fn said(answer: &Answer) -> String {
    match answer {
        Answer::Accept(content) => format!("action=accept, content={content}"),
        Answer::Decline => "action=decline, content={}".to_owned(),
        Answer::Cancel => "action=cancel, content={}".to_owned(),
    }
}

/// A one-field string form.
fn text_form(field: &str) -> Value {
    json!({
        "type": "object",
        "properties": {field: {"type": "string"}},
        "required": [field]
    })
}

/// The accepted text of `field`, or what the person did instead.
fn field(answer: &Answer, field: &str) -> Result<String, ToolError> {
    match answer {
        Answer::Accept(content) => content[field]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| ToolError::new(format!("The answer has no text `{field}`."))),
        other => Err(ToolError::new(format!(
            "The person did not answer: {}.",
            said(other)
        ))),
    }
}

/// Asks the person's name (SEP-2322, key `user_name`), for the conformance suite.
#[tool]
async fn test_input_required_result_elicitation(ctx: &ToolContext) -> Result<String, ToolError> {
    let question = Question::new("What is your name?", text_form("name")).with_id("user_name");
    let name = field(&ctx.ask(question).await?, "name")?;
    Ok(format!("Hello, {name}!"))
}

/// Asks the client's model the capital of France (SEP-2322), for the conformance suite.
#[tool]
async fn test_input_required_result_sampling(ctx: &ToolContext) -> Result<String, ToolError> {
    let request =
        SamplingRequest::new("What is the capital of France?", 100).with_id("capital_question");
    Ok(ctx.sample(request).await?.text)
}

/// Lists the client's roots (SEP-2322), for the conformance suite.
#[tool]
async fn test_input_required_result_list_roots(ctx: &ToolContext) -> Result<String, ToolError> {
    let roots = ctx.client_roots().await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Client roots: {}", uris.join(", ")))
}

/// Asks for a confirmation, answered with its signed state (SEP-2322), for the conformance
/// suite.
#[tool]
async fn test_input_required_result_request_state(ctx: &ToolContext) -> Result<String, ToolError> {
    confirmed(ctx).await
}

/// Asks for a confirmation whose state the suite tampers with (SEP-2322), for the conformance
/// suite.
#[tool]
async fn test_input_required_result_tampered_state(ctx: &ToolContext) -> Result<String, ToolError> {
    confirmed(ctx).await
}

async fn confirmed(ctx: &ToolContext) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"]
    });
    match ctx
        .ask(Question::new("Please confirm", form).with_id("confirm"))
        .await?
    {
        Answer::Accept(content) => Ok(format!("state-ok: confirmed {}", content["ok"])),
        other => Ok(format!("state-ok: {}", said(&other))),
    }
}

/// Asks the person, the client's model and the client's roots at once (SEP-2322), for the
/// conformance suite.
#[tool]
async fn test_input_required_result_multiple_inputs(
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    let name = ctx.ask(Question::new("What is your name?", text_form("name")).with_id("user_name"));
    let greeting = ctx.sample(SamplingRequest::new("Generate a greeting", 50).with_id("greeting"));
    let roots = ctx.client_roots();
    let (name, greeting, roots) = tokio::join!(name, greeting, roots);
    let (name, greeting, roots) = (field(&name?, "name")?, greeting?, roots?);
    Ok(format!("{} {name} ({} roots)", greeting.text, roots.len()))
}

/// Asks two questions, one per round (SEP-2322), for the conformance suite.
#[tool]
async fn test_input_required_result_multi_round(ctx: &ToolContext) -> Result<String, ToolError> {
    let name = ctx
        .ask(Question::new("Step 1: What is your name?", text_form("name")).with_id("step1"))
        .await?;
    let name = field(&name, "name")?;
    let color = ctx
        .ask(
            Question::new("Step 2: What is your favorite color?", text_form("color"))
                .with_id("step2"),
        )
        .await?;
    let color = field(&color, "color")?;
    Ok(format!("{name} likes {color}."))
}

/// Asks the person and the client's model at once: a client that declared only one of the
/// two is asked only that (SEP-2322), for the conformance suite.
#[tool]
async fn test_input_required_result_capabilities(ctx: &ToolContext) -> Result<String, ToolError> {
    let name = ctx.ask(Question::new("What is your name?", text_form("name")));
    let sampled = ctx.sample(SamplingRequest::new("Say hello", 50));
    let (name, sampled) = tokio::join!(name, sampled);
    let sampled = sampled?;
    Ok(match name {
        Ok(answer) => format!("{} ({})", sampled.text, said(&answer)),
        Err(_) => sampled.text,
    })
}

/// Needs the client's model, so a request that did not declare sampling is refused with
/// `-32021` (SEP-2575), for the conformance suite.
#[tool]
async fn test_missing_capability(ctx: &ToolContext) -> Result<String, ToolError> {
    Ok(ctx
        .sample(SamplingRequest::new("Say hello", 20))
        .await?
        .text)
}

/// Asks the person: in 2026-07-28 the question comes back as the call's result, never as a
/// request on the response stream (SEP-2575), for the conformance suite.
#[tool]
async fn test_streaming_elicitation(ctx: &ToolContext) -> Result<String, ToolError> {
    let question = Question::new("What is your name?", text_form("name"));
    Ok(format!(
        "Hello, {}!",
        field(&ctx.ask(question).await?, "name")?
    ))
}

/// Logs a line: a 2026-07-28 request that asks for no log level gets none (SEP-2575), for
/// the conformance suite.
#[tool]
async fn test_logging_tool(ctx: &ToolContext) -> Result<String, ToolError> {
    tracing::info!("test_logging_tool ran");
    ctx.log(
        pi_tools::LogLevel::Info,
        "test_logging_tool",
        "test_logging_tool ran",
    );
    Ok("Logged a line.".to_owned())
}

/// The suite's JSON Schema 2020-12 fixture: its input schema keeps `$schema`, `$defs` and
/// `additionalProperties` as written. A `#[tool]` gets the canonical schema (no `$schema`,
/// `$defs` inlined: what every model provider accepts), so this fixture is an `AgentTool`
/// of its own, whose `parameters()` MCP lists unchanged.
struct JsonSchema2020Tool {
    schema: Value,
}

impl JsonSchema2020Tool {
    fn new() -> Self {
        JsonSchema2020Tool {
            // The suite's fixture as 0.2.0 states it: SEP-1613's keywords and SEP-2106's
            // broader vocabulary (an `$anchor`, composition and conditionals).
            schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "$anchor": "addressDef",
                        "type": "object",
                        "properties": {
                            "street": {"type": "string"},
                            "city": {"type": "string"}
                        }
                    }
                },
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {
                    "properties": {"contactMethod": {"const": "phone"}},
                    "required": ["contactMethod"]
                },
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
        }
    }
}

impl AgentTool for JsonSchema2020Tool {
    fn name(&self) -> &str {
        "json_schema_2020_12_tool"
    }

    fn description(&self) -> &str {
        "Tool with JSON Schema 2020-12 features"
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute(
        &self,
        args: Value,
        _ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async move { Ok(ToolResult::text(format!("Received: {args}"))) })
    }
}

/// The suite's fixture resources: a text, a PNG, a template whose id comes back in its
/// data, and one to subscribe to.
struct FixtureResources;

impl McpResources for FixtureResources {
    fn list(&self) -> Vec<McpResource> {
        vec![
            McpResource::new("test://static-text", "static-text")
                .with_description("A static text resource, for the conformance suite.")
                .with_mime_type("text/plain"),
            McpResource::new("test://static-binary", "static-binary")
                .with_description("A 1x1 PNG, for the conformance suite.")
                .with_mime_type("image/png"),
            McpResource::new("test://watched-resource", "watched-resource")
                .with_description("A resource to subscribe to, for the conformance suite.")
                .with_mime_type("text/plain"),
        ]
    }

    fn templates(&self) -> Vec<McpResourceTemplate> {
        vec![
            McpResourceTemplate::new("test://template/{id}/data", "template-data")
                .with_description("Data for an id, for the conformance suite.")
                .with_mime_type("application/json"),
        ]
    }

    fn read<'a>(
        &'a self,
        uri: &'a str,
        _session: &'a pi_tools::session::Session,
    ) -> BoxFuture<'a, Option<Result<Vec<McpResourceContent>, String>>> {
        let text = |mime: &str, text: String| {
            Some(Ok(vec![McpResourceContent::Text {
                uri: uri.to_owned(),
                mime_type: Some(mime.to_owned()),
                text,
            }]))
        };
        let answer = match uri {
            "test://static-text" => text(
                "text/plain",
                "This is the content of the static text resource.".to_owned(),
            ),
            "test://watched-resource" => text("text/plain", "Watched content.".to_owned()),
            "test://static-binary" => Some(red_pixel().map(|data| {
                vec![McpResourceContent::Blob {
                    uri: uri.to_owned(),
                    mime_type: Some("image/png".to_owned()),
                    data,
                }]
            })),
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => text(
                    "application/json",
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string(),
                ),
                _ => None,
            },
        };
        Box::pin(std::future::ready(answer))
    }
}

/// The suite's fixture prompts: a plain one, one with two arguments (whose first is
/// completed), one embedding a resource, one with an image, and one that asks the person
/// for its context first.
struct FixturePrompts;

impl McpPrompts for FixturePrompts {
    fn list(&self) -> Vec<McpPromptInfo> {
        vec![
            McpPromptInfo::new("test_simple_prompt")
                .with_description("A simple prompt without arguments, for the conformance suite."),
            McpPromptInfo::new("test_prompt_with_arguments")
                .with_description("A prompt with two arguments, for the conformance suite.")
                .with_argument(
                    McpPromptArgument::new("arg1")
                        .with_description("First test argument")
                        .required(),
                )
                .with_argument(
                    McpPromptArgument::new("arg2")
                        .with_description("Second test argument")
                        .required(),
                ),
            McpPromptInfo::new("test_prompt_with_embedded_resource")
                .with_description("A prompt embedding a resource, for the conformance suite.")
                .with_argument(
                    McpPromptArgument::new("resourceUri")
                        .with_description("URI of the resource to embed")
                        .required(),
                ),
            McpPromptInfo::new("test_prompt_with_image")
                .with_description("A prompt with an image, for the conformance suite."),
            McpPromptInfo::new("test_input_required_result_prompt").with_description(
                "A prompt that asks the person what context to use (SEP-2322), for the conformance suite.",
            ),
        ]
    }

    fn get_asking<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a serde_json::Map<String, Value>,
        ctx: &'a PromptContext,
    ) -> BoxFuture<'a, Option<Result<Vec<McpPromptMessage>, String>>> {
        if name != "test_input_required_result_prompt" {
            return self.get(name, arguments);
        }
        Box::pin(async move {
            let question =
                Question::new("What context should the prompt use?", text_form("context"))
                    .with_id("user_context");
            let context = match ctx.ask(question).await {
                Ok(answer) => field(&answer, "context").map_err(|e| e.message().to_owned()),
                Err(why) => Err(why),
            };
            Some(context.map(|context| {
                vec![McpPromptMessage::user(format!(
                    "Use this context: {context}"
                ))]
            }))
        })
    }

    fn get<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a serde_json::Map<String, Value>,
    ) -> BoxFuture<'a, Option<Result<Vec<McpPromptMessage>, String>>> {
        let argument = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let messages = match name {
            "test_simple_prompt" => vec![McpPromptMessage::user(
                "This is a simple prompt for testing.",
            )],
            "test_prompt_with_arguments" => vec![McpPromptMessage::user(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            ))],
            "test_prompt_with_embedded_resource" => vec![
                McpPromptMessage::user_content(McpPromptContent::Resource(
                    McpResourceContent::Text {
                        uri: argument("resourceUri").to_owned(),
                        mime_type: Some("text/plain".to_owned()),
                        text: "Embedded resource content for testing.".to_owned(),
                    },
                )),
                McpPromptMessage::user("Please process the embedded resource above."),
            ],
            "test_prompt_with_image" => match red_pixel() {
                Ok(data) => vec![
                    McpPromptMessage::user_content(McpPromptContent::Image {
                        data,
                        mime_type: "image/png".to_owned(),
                    }),
                    McpPromptMessage::user("Please analyze the image above."),
                ],
                Err(why) => return Box::pin(std::future::ready(Some(Err(why)))),
            },
            _ => return Box::pin(std::future::ready(None)),
        };
        Box::pin(std::future::ready(Some(Ok(messages))))
    }

    fn complete<'a>(
        &'a self,
        prompt: &'a str,
        argument: &'a str,
        typed: &'a str,
    ) -> BoxFuture<'a, Vec<String>> {
        let values = if prompt == "test_prompt_with_arguments" && argument == "arg1" {
            ["paris", "park", "party", "test", "testing"]
                .into_iter()
                .filter(|v| v.starts_with(typed))
                .map(str::to_owned)
                .collect()
        } else {
            Vec::new()
        };
        Box::pin(std::future::ready(values))
    }
}

/// The 1x1 PNG's bytes.
fn red_pixel() -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(RED_PIXEL_PNG)
        .map_err(|e| format!("The fixture PNG is not base64: {e}."))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    init_stderr_logging();
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3001".to_owned());
    // The built-in tools are linked in too; serve only this file's fixtures.
    let registry = Registry::from_inventory()?;
    let tools: McpTools = registry
        .iter()
        .filter_map(|definition| {
            let tool = McpTool::with_definition(
                pi_tools::wrap(definition.clone(), None),
                definition.as_ref(),
            );
            match task_fixtures::serve(tool.clone()) {
                Some(fixture) => Some(fixture),
                None if definition.spec().name.starts_with("test_") => Some(tool),
                None => None,
            }
        })
        .chain([McpTool::new(Arc::new(JsonSchema2020Tool::new())).read_only(true)])
        .collect::<McpTools>()
        // A call of a tool that supports tasks is a task once it runs a quarter second.
        .with_task_after(Duration::from_millis(250))
        .with_resources(FixtureResources)
        .with_prompts(FixturePrompts);
    let listener = tokio::net::TcpListener::bind(&address).await?;
    eprintln!(
        "conformance server on http://{}/mcp",
        listener.local_addr()?
    );
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        on_signal.cancel();
    });
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let on_term = stop.clone();
    tokio::spawn(async move {
        terminate.recv().await;
        on_term.cancel();
    });
    serve_http(
        tools,
        RunnerConfig::default,
        listener,
        HttpOptions::default(),
        stop,
    )
    .await?;
    Ok(())
}
