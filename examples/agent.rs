//! A whole agent: a task from the command line, the built-in tools plus one of our own, and a
//! model that calls them until it is done. No glue: the tools come from one configuration
//! in the environment it describes (by default, commands and edits may write only in the
//! current directory, and the system prompt says so), `pi_tools::provider` shapes each
//! request and reads each reply into a batch, and writes the results back in the provider's
//! own shape.
//!
//! ```sh
//! OPENAI_API_KEY=… cargo run --example agent -- "Write a haiku about Rust to haiku.txt"
//! OPENAI_API_KEY=… cargo run --example agent -- --provider openai-responses "List the files"
//! ANTHROPIC_API_KEY=… cargo run --example agent -- --provider anthropic "Count the words of README.md"
//! ANTHROPIC_API_KEY=… cargo run --example agent -- --native --provider anthropic "Fix the typo in README.md"
//! ```
//!
//! `--native` offers each family the tools its models were trained on (`[tools] shapes =
//! "native"`): Anthropic's text editor and bash, the Responses API's `apply_patch` and
//! `shell`; their calls run as the built-ins, with the same sandbox and checks.
//!
//! OpenAI-compatible servers (Chat Completions and Responses): `OPENAI_BASE_URL` (default
//! `https://api.openai.com/v1`), `OPENAI_API_KEY`. Anthropic: `ANTHROPIC_BASE_URL` (default
//! `https://api.anthropic.com`), `ANTHROPIC_API_KEY`. Gemini: `GEMINI_BASE_URL` (default
//! `https://generativelanguage.googleapis.com`), `GEMINI_API_KEY`. The model is
//! `PI_TOOLS_MODEL`. The tools work in the current directory. https endpoints go through
//! reqwest's rustls, trusting the system's certificates (`SSL_CERT_FILE` names others, such
//! as a local server's).

use std::sync::Arc;

use pi_tools::config::Config;
use pi_tools::dialect::Dialect;
use pi_tools::env::WithEnv;
use pi_tools::provider::{Request, read_json, user_message};
use pi_tools::toolbox::Toolbox;
use pi_tools::{CancellationToken, Extensions, NoopSink, Registry, tool};
use serde_json::Value;

/// Count the words of a text.
#[tool(read_only)]
async fn word_count(
    /// The text to count.
    text: String,
) -> Result<String, String> {
    Ok(text.split_whitespace().count().to_string())
}

/// The tools the model gets: six built-ins and ours. Everything else (the sandbox, the
/// timeouts) is the embedded default's.
const CONFIG: &str = r#"
[tools]
active = ["read", "write", "edit", "bash", "ls", "grep", "word_count"]
"#;

/// Where to send requests.
struct Endpoint {
    dialect: Dialect,
    base_url: String,
    key: String,
    model: String,
}

impl Endpoint {
    fn from_env(dialect: Dialect) -> Self {
        let var = |name: &str, default: &str| std::env::var(name).unwrap_or(default.to_owned());
        let (base_url, key, model) = match dialect.api() {
            "anthropic" => (
                var("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
                var("ANTHROPIC_API_KEY", ""),
                var("PI_TOOLS_MODEL", "claude-sonnet-4-5"),
            ),
            "gemini" => (
                var(
                    "GEMINI_BASE_URL",
                    "https://generativelanguage.googleapis.com",
                ),
                var("GEMINI_API_KEY", ""),
                var("PI_TOOLS_MODEL", "gemini-2.5-flash"),
            ),
            _ => (
                var("OPENAI_BASE_URL", "https://api.openai.com/v1"),
                var("OPENAI_API_KEY", ""),
                var("PI_TOOLS_MODEL", "gpt-4.1"),
            ),
        };
        Endpoint {
            dialect,
            base_url,
            key,
            model,
        }
    }

    /// Sends the conversation so far and returns the reply's JSON body.
    async fn send(
        &self,
        client: &reqwest::Client,
        system: &str,
        tools: &[Value],
        history: &[Value],
    ) -> Result<Value, Box<dyn std::error::Error>> {
        let request = Request::new(&self.model, history)
            .with_system(system)
            .with_tools(tools)
            .with_api_key(&self.key)
            .build(self.dialect)?;
        let url = format!("{}{}", self.base_url, request.path);
        let mut post = client.post(&url).json(&request.body);
        for (name, value) in &request.headers {
            post = post.header(*name, value);
        }
        let response = post.send().await?;
        let status = response.status();
        let body = response.text().await?;
        if !status.is_success() {
            return Err(format!("{url} answered {status}: {body}").into());
        }
        Ok(serde_json::from_str(&body)?)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut dialect = Dialect::OpenAi;
    let mut native = false;
    loop {
        match args.first().map(String::as_str) {
            Some("--provider") if args.len() > 1 => {
                dialect = args[1].parse()?;
                args.drain(..2);
            }
            Some("--native") => {
                native = true;
                args.remove(0);
            }
            _ => break,
        }
    }
    let task = args.join(" ");
    if task.is_empty() {
        return Err(
            "usage: agent [--native] [--provider openai|openai-strict|openai-responses|anthropic|gemini] TASK"
                .into(),
        );
    }
    let endpoint = Endpoint::from_env(dialect);

    // The tools (ours is registered by `#[tool]` like the built-ins), the configuration, and
    // the environment it describes, working in the current directory.
    let registered: Vec<_> = Registry::from_inventory()?.iter().cloned().collect();
    let text = if native {
        CONFIG.replace("[tools]", "[tools]\nshapes = \"native\"")
    } else {
        CONFIG.to_owned()
    };
    let config = Config::parse(&text, "agent's configuration", &registered)?;
    let env = config.local_env(std::env::current_dir()?)?;
    let toolbox = Toolbox::new(
        registered,
        &config,
        Extensions::new().with_env(Arc::new(env)),
    );
    // The prompt names the tools as this family's model sees them.
    let system = toolbox.prompt_for(dialect).to_string();
    // A tool the dialect cannot express is left out of the request, and said here once.
    let rendered = toolbox.dialect_schemas(dialect);
    for line in rendered.report() {
        eprintln!("{line}");
    }
    let schemas = rendered.schemas;

    // reqwest's TLS here has no crypto provider of its own (see Cargo.toml): *ring*.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let mut history = vec![user_message(dialect, &task)?];
    println!("user: {task}");
    loop {
        let body = endpoint.send(&client, &system, &schemas, &history).await?;
        let reply = read_json(dialect, &body)?;
        if !reply.thinking.is_empty() {
            println!("thinking: {}", reply.thinking);
        }
        if !reply.text.is_empty() {
            println!("assistant: {}", reply.text);
        }
        history.extend(reply.assistant.iter().cloned());
        if reply.calls.is_empty() {
            break;
        }
        let outcome = reply
            .run(
                toolbox.tool_set(),
                &toolbox.runner_config(),
                &CancellationToken::new(),
                &NoopSink,
            )
            .await;
        for (call, result) in reply.calls.iter().zip(&outcome.messages) {
            let mark = if result.is_error { "✗" } else { "✓" };
            let text = result
                .content
                .iter()
                .filter_map(|b| b.as_text())
                .collect::<Vec<_>>();
            println!(
                "{mark} {} {} → {}",
                call.name,
                call.arguments,
                text.join("\n")
            );
        }
        history.extend(reply.results(&outcome.messages));
        if outcome.terminate {
            break;
        }
    }
    Ok(())
}
