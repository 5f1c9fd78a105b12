//! The prompts the server offers (`prompts/list`, `prompts/get`, and `completion/complete`
//! of their arguments): the system prompt of its tools when it serves one, then the
//! program's own (see `prompt_set`).

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, GetPromptResult,
    ListPromptsResult, Prompt, PromptArgument, PromptMessage, Reference, Role,
};

use super::prompt_asks::PromptContext;
use super::prompt_set::{McpPromptContent, McpPromptInfo, McpPromptMessage, McpPromptRole};
use super::server::ToolServer;

impl ToolServer {
    /// `prompts/list`: the tools' system prompt, if served, then the program's prompts.
    pub(crate) fn prompt_listing(&self) -> ListPromptsResult {
        let served = self.served();
        let mut prompts: Vec<Prompt> = served
            .listed()
            .prompt
            .iter()
            .map(|p| Prompt::new(&p.name, Some(&p.description), None))
            .collect();
        if let Some(program) = &served.prompts {
            prompts.extend(program.list().into_iter().map(listed));
        }
        ListPromptsResult::with_all_items(prompts)
    }

    /// `prompts/get` of `name` with `arguments`; a program's prompt may ask the client
    /// through `ctx` (see `prompt_asks`).
    pub(crate) async fn prompt_named(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        ctx: &PromptContext,
    ) -> Result<GetPromptResult, ErrorData> {
        let served = self.served();
        if let Some(prompt) = served.listed().prompt.as_ref().filter(|p| p.name == name) {
            return Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                &prompt.text,
            )])
            .with_description(&prompt.description));
        }
        let arguments = arguments.unwrap_or_default();
        if let Some(program) = &served.prompts
            && let Some(info) = program.list().into_iter().find(|p| p.name == name)
        {
            let missing: Vec<&str> = info
                .arguments
                .iter()
                .filter(|a| a.required && !arguments.contains_key(&a.name))
                .map(|a| a.name.as_str())
                .collect();
            if !missing.is_empty() {
                return Err(ErrorData::invalid_params(
                    format!(
                        "The prompt `{name}` needs the argument{} {}. Send them in `arguments`.",
                        if missing.len() == 1 { "" } else { "s" },
                        missing
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None,
                ));
            }
            if let Some(got) = program.get_asking(name, &arguments, ctx).await {
                let messages = got.map_err(|why| ErrorData::invalid_params(why, None))?;
                let result = GetPromptResult::new(messages.into_iter().map(message).collect());
                return Ok(match info.description {
                    Some(description) => result.with_description(description),
                    None => result,
                });
            }
        }
        let names: Vec<String> = self
            .prompt_listing()
            .prompts
            .into_iter()
            .map(|p| p.name)
            .collect();
        Err(ErrorData::invalid_params(
            if names.is_empty() {
                format!("Unknown prompt `{name}`. This server offers no prompts.")
            } else if let [only] = names.as_slice() {
                format!(
                    "Unknown prompt `{name}`. The prompt is: {only}. Ask for it by its exact name."
                )
            } else {
                format!(
                    "Unknown prompt `{name}`. The prompts are: {}. Ask for one by its exact name.",
                    names.join(", ")
                )
            },
            None,
        ))
    }

    /// `completion/complete`: values for a prompt's argument or a resource template's.
    pub(crate) async fn completion(
        &self,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let served = self.served();
        let argument = &request.argument;
        let mut values = match &request.r#ref {
            Reference::Prompt(prompt) => match &served.prompts {
                Some(program) => {
                    program
                        .complete(&prompt.name, &argument.name, &argument.value)
                        .await
                }
                None => Vec::new(),
            },
            Reference::Resource(template) => match &served.resources {
                Some(resources) => {
                    resources
                        .complete(&template.uri, &argument.name, &argument.value)
                        .await
                }
                None => Vec::new(),
            },
            // A kind of reference newer than this server: nothing to offer.
            _ => Vec::new(),
        };
        let total = values.len();
        values.truncate(CompletionInfo::MAX_VALUES);
        let mut info =
            CompletionInfo::new(values).map_err(|why| ErrorData::internal_error(why, None))?;
        info.total = u32::try_from(total).ok();
        info.has_more = Some(total > CompletionInfo::MAX_VALUES);
        Ok(CompleteResult::new(info))
    }
}

fn listed(info: McpPromptInfo) -> Prompt {
    let arguments: Vec<PromptArgument> = info
        .arguments
        .into_iter()
        .map(|a| {
            let mut argument = PromptArgument::new(a.name);
            argument.description = a.description;
            argument.required = Some(a.required);
            argument
        })
        .collect();
    Prompt::new(
        info.name,
        info.description,
        (!arguments.is_empty()).then_some(arguments),
    )
}

fn message(message: McpPromptMessage) -> PromptMessage {
    let role = match message.role {
        McpPromptRole::User => Role::User,
        McpPromptRole::Assistant => Role::Assistant,
    };
    let content = match message.content {
        McpPromptContent::Text(text) => ContentBlock::text(text),
        McpPromptContent::Image { data, mime_type } => ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(data),
            mime_type,
        ),
        McpPromptContent::Resource(resource) => {
            ContentBlock::resource(super::resource_files::contents(resource))
        }
    };
    PromptMessage::new(role, content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::McpResourceContent;

    #[test]
    fn a_prompts_messages_keep_their_roles_and_kinds() {
        let wire = serde_json::to_value(vec![
            message(McpPromptMessage::user("hi")),
            message(McpPromptMessage {
                role: McpPromptRole::Assistant,
                content: McpPromptContent::Image {
                    data: vec![1, 2, 3],
                    mime_type: "image/png".into(),
                },
            }),
            message(McpPromptMessage::user_content(McpPromptContent::Resource(
                McpResourceContent::Text {
                    uri: "notes://a".into(),
                    mime_type: Some("text/plain".into()),
                    text: "A".into(),
                },
            ))),
        ])
        .expect("serialises");
        assert_eq!(
            wire,
            serde_json::json!([
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "image", "data": "AQID", "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "resource", "resource":
                    {"uri": "notes://a", "mimeType": "text/plain", "text": "A"}}}
            ])
        );
    }
}
