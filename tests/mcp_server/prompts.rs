//! A program's own prompts and resources beside its tools, in process: listed after the
//! tools' system prompt, got with their arguments (a required one missing is refused with
//! the names), completed, and read.

use super::*;
use pi_tools::BoxFuture;
use pi_tools::mcp::{
    McpPrompt, McpPromptArgument, McpPromptContent, McpPromptInfo, McpPromptMessage, McpPrompts,
    McpResource, McpResourceContent, McpResourceTemplate, McpResources,
};

struct Greetings;

impl McpPrompts for Greetings {
    fn list(&self) -> Vec<McpPromptInfo> {
        vec![
            McpPromptInfo::new("greet")
                .with_description("Greets someone.")
                .with_argument(McpPromptArgument::new("who").required())
                .with_argument(McpPromptArgument::new("how")),
        ]
    }

    fn get<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a serde_json::Map<String, Value>,
    ) -> BoxFuture<'a, Option<Result<Vec<McpPromptMessage>, String>>> {
        let answer = (name == "greet").then(|| {
            let who = arguments["who"].as_str().unwrap_or_default();
            if who.is_empty() {
                return Err("`who` is empty: name someone to greet.".to_owned());
            }
            Ok(vec![
                McpPromptMessage::user(format!("Greet {who}.")),
                McpPromptMessage::user_content(McpPromptContent::Image {
                    data: vec![0x89, b'P', b'N', b'G'],
                    mime_type: "image/png".into(),
                }),
            ])
        });
        Box::pin(std::future::ready(answer))
    }

    fn complete<'a>(
        &'a self,
        prompt: &'a str,
        argument: &'a str,
        typed: &'a str,
    ) -> BoxFuture<'a, Vec<String>> {
        let names = ["ada", "alan", "grace"];
        let values = if (prompt, argument) == ("greet", "who") {
            names
                .iter()
                .filter(|n| n.starts_with(typed))
                .map(|n| n.to_string())
                .collect()
        } else {
            Vec::new()
        };
        Box::pin(std::future::ready(values))
    }
}

struct Notes;

impl McpResources for Notes {
    fn list(&self) -> Vec<McpResource> {
        vec![McpResource::new("notes://today", "today").with_mime_type("text/plain")]
    }

    fn templates(&self) -> Vec<McpResourceTemplate> {
        vec![McpResourceTemplate::new("notes://{day}", "a day's notes")]
    }

    fn read<'a>(
        &'a self,
        uri: &'a str,
        _session: &'a pi_tools::session::Session,
    ) -> BoxFuture<'a, Option<Result<Vec<McpResourceContent>, String>>> {
        let answer = match uri {
            "notes://today" => Some(Ok(vec![McpResourceContent::Text {
                uri: uri.to_owned(),
                mime_type: Some("text/plain".to_owned()),
                text: "Ship it.".to_owned(),
            }])),
            "notes://secret" => Some(Err("These notes are private.".to_owned())),
            _ => None,
        };
        Box::pin(std::future::ready(answer))
    }
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn a_programs_prompts_follow_the_system_prompt_with_their_arguments_and_completions() {
    let served = tools([McpTool::new(echo("echo"))])
        .with_prompt(McpPrompt {
            name: "system".into(),
            description: "The tools' prompt.".into(),
            text: "Be brief.".into(),
        })
        .with_prompts(Greetings);
    let mut pipe = RawPipe::start(served, RunnerConfig::default());
    let init = pipe.initialize().await;
    assert_eq!(init["result"]["capabilities"]["completions"], json!({}));

    pipe.send(request(1, "prompts/list", json!({}))).await;
    assert_eq!(
        pipe.recv().await["result"]["prompts"],
        json!([
            {"name": "system", "description": "The tools' prompt."},
            {"name": "greet", "description": "Greets someone.", "arguments": [
                {"name": "who", "required": true}, {"name": "how", "required": false}]}
        ])
    );

    pipe.send(request(
        2,
        "prompts/get",
        json!({"name": "greet", "arguments": {"who": "ada"}}),
    ))
    .await;
    assert_eq!(
        pipe.recv().await["result"],
        json!({"description": "Greets someone.", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Greet ada."}},
            {"role": "user", "content": {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}}
        ]})
    );

    pipe.send(request(3, "prompts/get", json!({"name": "greet"})))
        .await;
    assert_eq!(
        pipe.recv().await["error"],
        json!({"code": -32602, "message": "The prompt `greet` needs the argument `who`. Send them in `arguments`."})
    );
    pipe.send(request(
        4,
        "prompts/get",
        json!({"name": "greet", "arguments": {"who": ""}}),
    ))
    .await;
    assert_eq!(
        pipe.recv().await["error"]["message"],
        "`who` is empty: name someone to greet."
    );
    pipe.send(request(5, "prompts/get", json!({"name": "nope"})))
        .await;
    assert_eq!(
        pipe.recv().await["error"]["message"],
        "Unknown prompt `nope`. The prompts are: system, greet. Ask for one by its exact name."
    );

    pipe.send(request(
        6,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "a"}}),
    ))
    .await;
    assert_eq!(
        pipe.recv().await["result"]["completion"],
        json!({"values": ["ada", "alan"], "total": 2, "hasMore": false})
    );
}

#[tokio::test]
async fn a_programs_resources_are_listed_read_and_refused_with_their_sentence() {
    let served = tools([McpTool::new(echo("echo"))]).with_resources(Notes);
    let mut pipe = RawPipe::start(served, RunnerConfig::default());
    pipe.initialize().await;
    pipe.send(request(1, "resources/list", json!({}))).await;
    assert_eq!(
        pipe.recv().await["result"]["resources"],
        json!([{"uri": "notes://today", "name": "today", "mimeType": "text/plain"}])
    );
    pipe.send(request(2, "resources/templates/list", json!({})))
        .await;
    assert_eq!(
        pipe.recv().await["result"]["resourceTemplates"],
        json!([{"uriTemplate": "notes://{day}", "name": "a day's notes"}])
    );
    pipe.send(request(
        3,
        "resources/read",
        json!({"uri": "notes://today"}),
    ))
    .await;
    assert_eq!(
        pipe.recv().await["result"]["contents"],
        json!([{"uri": "notes://today", "mimeType": "text/plain", "text": "Ship it."}])
    );
    pipe.send(request(
        4,
        "resources/read",
        json!({"uri": "notes://secret"}),
    ))
    .await;
    assert_eq!(
        pipe.recv().await["error"],
        json!({"code": -32602, "message": "These notes are private."})
    );
    pipe.send(request(
        5,
        "resources/read",
        json!({"uri": "notes://never"}),
    ))
    .await;
    let missing = pipe.recv().await["error"].clone();
    assert_eq!(missing["code"], -32002, "{missing}");
    assert_eq!(missing["data"], json!({"uri": "notes://never"}));
}

#[tokio::test]
async fn an_unknown_prompt_is_refused_naming_the_one_there_is() {
    let served = tools([McpTool::new(echo("echo"))]).with_prompt(McpPrompt {
        name: "system".into(),
        description: "The tools' prompt.".into(),
        text: "Be brief.".into(),
    });
    let mut pipe = RawPipe::start(served, RunnerConfig::default());
    pipe.initialize().await;
    pipe.send(request(1, "prompts/get", json!({"name": "nope"})))
        .await;
    assert_eq!(
        pipe.recv().await["error"]["message"],
        "Unknown prompt `nope`. The prompt is: system. Ask for it by its exact name."
    );
}
