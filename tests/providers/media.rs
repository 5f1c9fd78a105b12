//! Audio and embedded resources in each provider's tool result: no provider's tool result
//! takes audio (Anthropic's `tool_result` takes text, image, document and search_result
//! blocks; Responses' `function_call_output` text, image and file parts; a Chat Completions
//! tool message text; Gemini's `functionResponse` JSON and inline media parts for images and
//! documents), so audio and a binary resource become a line saying what was there, and an
//! embedded text resource is given as its text under a line naming it.

use pi_tools::dialect::Dialect;
use pi_tools::provider::{anthropic, gemini, openai, read_json, responses};
use pi_tools::{ContentBlock, EmbeddedResource, ToolCall, ToolResult, ToolResultMessage};
use serde_json::{Value, json};

/// 16 KB of base64: 12 KB of audio.
fn wav() -> String {
    "A".repeat(16_384)
}

fn message() -> ToolResultMessage {
    let call = ToolCall::new("call_1", "record", json!({}));
    let result = ToolResult {
        content: vec![
            ContentBlock::text("the take:"),
            ContentBlock::audio(wav(), "audio/wav"),
            ContentBlock::resource(
                EmbeddedResource::text("notes://take-1", "Hello.").with_mime_type("text/plain"),
            ),
            ContentBlock::resource(
                EmbeddedResource::blob("file:///takes/1.pdf", "JVBERi0xLjQK")
                    .with_mime_type("application/pdf"),
            ),
        ],
        ..ToolResult::default()
    };
    ToolResultMessage::new(&call, result, false)
}

const AUDIO: &str =
    "[audio, audio/wav, 12 KB, not shown: this provider's tool results take text and images]";
const PDF: &str = "[resource file:///takes/1.pdf, application/pdf, 9 bytes, not shown: this provider's tool results take text and images]";
const NOTE: &str = "[resource notes://take-1]\nHello.";

fn joined() -> String {
    ["the take:", AUDIO, NOTE, PDF].join("\n")
}

#[test]
fn anthropic_gets_a_text_block_for_each() {
    assert_eq!(
        anthropic::tool_results(&[message()]),
        json!({"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": "call_1", "is_error": false,
            "content": [
                {"type": "text", "text": "the take:"},
                {"type": "text", "text": AUDIO},
                {"type": "text", "text": NOTE},
                {"type": "text", "text": PDF}
            ]
        }]})
    );
}

#[test]
fn chat_completions_and_responses_get_them_in_the_text() {
    assert_eq!(
        openai::tool_messages(&[message()]),
        [json!({"role": "tool", "tool_call_id": "call_1", "content": joined()})]
    );
    assert_eq!(
        responses::function_call_outputs(&[message()]),
        [json!({"type": "function_call_output", "call_id": "call_1", "output": joined()})]
    );
}

#[test]
fn gemini_gets_them_in_the_output_and_no_media_part() {
    let reply = read_json(
        Dialect::Gemini,
        &json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "record", "args": {}, "id": "call_1"}}
        ]}}]}),
    )
    .expect("a reply");
    let content = gemini::function_responses(&reply, &[message()]);
    assert_eq!(
        content,
        json!({"role": "user", "parts": [{"functionResponse": {
            "name": "record", "id": "call_1", "response": {"output": joined()}
        }}]})
    );
    assert_eq!(
        content["parts"][0]["functionResponse"].get("parts"),
        None::<&Value>
    );
}

#[test]
fn the_text_of_a_result_names_what_it_cannot_show() {
    assert_eq!(
        message().text_content(),
        [
            "the take:",
            "[audio, audio/wav, 12 KB]",
            NOTE,
            "[resource file:///takes/1.pdf, application/pdf, 9 bytes]"
        ]
        .join("\n")
    );
}
