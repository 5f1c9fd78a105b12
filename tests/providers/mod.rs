//! Provider wire formats both ways, with replies hand-written from each provider's API
//! reference: the same batch in every provider's shape (two parallel calls, an image result,
//! an unknown tool, arguments that are not a JSON object), as a JSON body and as an event
//! stream split at every byte; strict-mode nulls; and the errors for what cannot be read.

mod agent;
#[cfg(feature = "cli")]
mod agent_native;
mod anthropic;
mod cli;
mod gemini;
mod media;
mod memory;
mod openai;
mod request;
mod responses;
#[cfg(feature = "cli")]
mod tls;
mod typed;

use std::sync::Arc;

use pi_tools::dialect::Dialect;
use pi_tools::provider::{Reply, ReplyStream, read_reply};
use pi_tools::{ContentBlock, NoopSink, RunnerConfig, ToolOutput, ToolSet, tool, wrap};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Echo a text back.
#[tool]
async fn echo(
    /// The text to echo.
    text: String,
) -> Result<String, String> {
    Ok(text)
}

/// Draw a picture.
#[tool]
async fn picture() -> Result<ToolOutput, String> {
    Ok(
        ToolOutput::text("a red pixel")
            .with_block(ContentBlock::image("iVBORw0KGgo=", "image/png")),
    )
}

/// Count up to a limit.
#[tool]
async fn count(
    /// Where to stop.
    #[default = 10]
    limit: u64,
    /// A note to keep.
    note: Option<String>,
) -> Result<String, String> {
    Ok(format!("limit={limit} note={note:?}"))
}

/// How many words, typed.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Tally {
    /// The words counted.
    words: usize,
}

/// Count the words of a text.
#[tool]
async fn tally(
    /// The text.
    text: String,
) -> Result<Tally, String> {
    Ok(Tally {
        words: text.split_whitespace().count(),
    })
}

fn tools() -> ToolSet {
    ToolSet::new([
        wrap(Arc::new(EchoTool), None),
        wrap(Arc::new(PictureTool), None),
        wrap(Arc::new(CountTool), None),
        wrap(Arc::new(TallyTool), None),
    ])
}

/// Runs the reply's calls and renders their results for its provider.
fn run(reply: &Reply) -> Vec<Value> {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let outcome = runtime.block_on(reply.run(
        &tools(),
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &NoopSink,
    ));
    assert!(!outcome.terminate);
    reply.results(&outcome.messages)
}

/// Reads an event-stream body whole, then fed in chunks of many sizes, one byte at a time
/// first (so chunks end inside UTF-8 characters and inside JSON strings): every way gives the
/// same reply.
fn read_stream_every_way(provider: Dialect, body: &str) -> Reply {
    let bytes = body.as_bytes();
    assert!(
        !body.is_ascii(),
        "the body has characters of several bytes to split"
    );
    let whole = read_reply(provider, bytes).expect("the stream reads");
    for size in [1, 2, 3, 5, 7, 11, 13, 17, 64, 100, 1000] {
        let mut stream = ReplyStream::new(provider);
        for chunk in bytes.chunks(size) {
            stream.feed(chunk).expect("a chunk");
        }
        assert_eq!(
            stream.finish().as_ref(),
            Ok(&whole),
            "chunks of {size} bytes"
        );
    }
    whole
}

/// An event-stream body from `(event name, data)` pairs (an empty name: no `event:` line).
fn sse(events: &[(&str, Value)]) -> String {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body
}

/// The text a call gets when its arguments are not valid JSON (`{"text": "tw` cut short).
const CUT_ARGUMENTS: &str = "The call was not run: its arguments are not valid JSON (EOF while parsing a string at line 1 column 12). Call echo again with its arguments as one JSON object.";

/// The text a call to a tool nobody has gets.
const NOT_FOUND: &str = "Tool nosuch not found";

/// The names and arguments of a reply's calls, for comparing.
fn calls(reply: &Reply) -> Vec<(String, String, Value)> {
    reply
        .calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect()
}

/// Strict mode: `null` for the optional `limit` and `note` means absent, so `limit`'s
/// default applies; the strict schema the model saw made both required and nullable.
fn strict_nulls_take_the_defaults(mut reply: Reply) {
    use pi_tools::ToolDefinition;
    use pi_tools::dialect::transform;
    let strict = transform(&CountTool.spec().parameters, Dialect::OpenAiStrict).unwrap();
    assert_eq!(strict["required"], serde_json::json!(["limit", "note"]));
    assert_eq!(
        strict["properties"]["limit"]["anyOf"][1],
        serde_json::json!({"type": "null"})
    );
    reply.strict = true;
    assert_eq!(
        reply.calls_without_strict_nulls(&tools())[0].arguments,
        serde_json::json!({})
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let outcome = runtime.block_on(reply.run(
        &tools(),
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &NoopSink,
    ));
    assert_eq!(
        outcome.messages[0].content,
        [ContentBlock::text("limit=10 note=None")]
    );
    assert!(!outcome.messages[0].is_error);
}
