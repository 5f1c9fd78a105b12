//! A whole agent: a task from the command line, the built-in tools plus one of our own, and a
//! model that calls them until it is done. No glue: `pi_tools::provider` reads each reply
//! into a batch and writes the results back in the provider's own shape.
//!
//! ```sh
//! OPENAI_API_KEY=… cargo run --example agent -- "Write a haiku about Rust to haiku.txt"
//! ANTHROPIC_API_KEY=… cargo run --example agent -- --provider anthropic "Count the words of README.md"
//! ```
//!
//! OpenAI-compatible servers: `OPENAI_BASE_URL` (default `https://api.openai.com/v1`),
//! `OPENAI_API_KEY`. Anthropic: `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`),
//! `ANTHROPIC_API_KEY`. The model is `PI_TOOLS_MODEL`. The tools work in the current
//! directory. (In this repository reqwest is built without TLS, so use an `http://` server
//! such as a local one; in your own crate, reqwest's default features bring TLS.)

use std::sync::Arc;

use pi_tools::dialect::{Dialect, tool_schema};
use pi_tools::env::{LocalEnv, WithEnv};
use pi_tools::provider::{Provider, read_json};
use pi_tools::{NoopSink, Registry, RunnerConfig, ToolSet, tool, wrap};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Count the words of a text.
#[tool(read_only)]
async fn word_count(
    /// The text to count.
    text: String,
) -> Result<String, String> {
    Ok(text.split_whitespace().count().to_string())
}

/// The tools the model gets: six built-ins and ours.
const TOOLS: [&str; 7] = ["read", "write", "edit", "bash", "ls", "grep", "word_count"];

/// Where to send requests, and how.
struct Endpoint {
    provider: Provider,
    url: String,
    key: String,
    model: String,
}

impl Endpoint {
    fn from_env(provider: Provider) -> Result<Self, String> {
        let var = |name: &str, default: &str| std::env::var(name).unwrap_or(default.to_owned());
        let (url, key, model) = match provider {
            Provider::OpenAi => (
                format!(
                    "{}/chat/completions",
                    var("OPENAI_BASE_URL", "https://api.openai.com/v1")
                ),
                var("OPENAI_API_KEY", ""),
                var("PI_TOOLS_MODEL", "gpt-4.1"),
            ),
            Provider::Anthropic => (
                format!(
                    "{}/v1/messages",
                    var("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
                ),
                var("ANTHROPIC_API_KEY", ""),
                var("PI_TOOLS_MODEL", "claude-sonnet-4-5"),
            ),
            other => return Err(format!("--provider takes openai or anthropic, not {other}")),
        };
        Ok(Endpoint {
            provider,
            url,
            key,
            model,
        })
    }

    /// Sends the conversation so far and returns the reply's JSON body.
    async fn send(
        &self,
        client: &reqwest::Client,
        tools: &[Value],
        history: &[Value],
    ) -> Result<Value, Box<dyn std::error::Error>> {
        let request = match self.provider {
            Provider::Anthropic => client
                .post(&self.url)
                .header("x-api-key", &self.key)
                .header("anthropic-version", "2023-06-01")
                .json(&json!({"model": self.model, "max_tokens": 4096,
                              "tools": tools, "messages": history})),
            _ => client
                .post(&self.url)
                .bearer_auth(&self.key)
                .json(&json!({"model": self.model, "tools": tools, "messages": history})),
        };
        let response = request.send().await?;
        let status = response.status();
        let body = response.text().await?;
        if !status.is_success() {
            return Err(format!("{} answered {status}: {body}", self.url).into());
        }
        Ok(serde_json::from_str(&body)?)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut provider = Provider::OpenAi;
    if args.first().map(String::as_str) == Some("--provider") && args.len() > 1 {
        provider = args[1].parse()?;
        args.drain(..2);
    }
    let task = args.join(" ");
    if task.is_empty() {
        return Err("usage: agent [--provider openai|anthropic] TASK".into());
    }
    let endpoint = Endpoint::from_env(provider)?;

    // The tools, found in the registry (ours is registered by `#[tool]` like the built-ins),
    // working in the current directory.
    let registry = Registry::from_inventory()?;
    let definitions = TOOLS
        .iter()
        .map(|name| registry.get(name).cloned().ok_or(format!("no tool {name}")))
        .collect::<Result<Vec<_>, _>>()?;
    let tools: ToolSet = definitions
        .iter()
        .map(|d| wrap(Arc::clone(d), None))
        .collect();
    let config =
        RunnerConfig::default().with_env(Arc::new(LocalEnv::new(std::env::current_dir()?)));
    let dialect = match provider {
        Provider::Anthropic => Dialect::Anthropic,
        _ => Dialect::OpenAi,
    };
    let schemas = definitions
        .iter()
        .map(|d| tool_schema(d.as_ref(), dialect))
        .collect::<Result<Vec<_>, _>>()?;

    let client = reqwest::Client::new();
    let mut history = vec![json!({"role": "user", "content": task})];
    println!("user: {task}");
    loop {
        let reply = read_json(provider, &endpoint.send(&client, &schemas, &history).await?)?;
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
            .run(&tools, &config, &CancellationToken::new(), &NoopSink)
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
