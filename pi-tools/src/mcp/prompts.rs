//! The prompt the server offers (`prompts/list`, `prompts/get`): the system prompt of its
//! tools, when it serves one.

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, ListPromptsResult, Prompt, PromptMessage, Role};

use super::server::ToolServer;

impl ToolServer {
    /// `prompts/list`: the prompt, if the server serves one.
    pub(crate) fn prompt_listing(&self) -> ListPromptsResult {
        let prompts = self
            .served()
            .prompt
            .iter()
            .map(|p| Prompt::new(&p.name, Some(&p.description), None))
            .collect();
        ListPromptsResult::with_all_items(prompts)
    }

    /// `prompts/get` of `name`.
    pub(crate) fn prompt_named(&self, name: &str) -> Result<GetPromptResult, ErrorData> {
        match &self.served().prompt {
            Some(prompt) if prompt.name == name => {
                Ok(
                    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, &prompt.text)])
                        .with_description(&prompt.description),
                )
            }
            Some(prompt) => Err(ErrorData::invalid_params(
                format!(
                    "Unknown prompt `{}`. The prompt is: {}. Ask for it by its exact name.",
                    name, prompt.name
                ),
                None,
            )),
            None => Err(ErrorData::invalid_params(
                format!("Unknown prompt `{name}`. This server offers no prompts."),
                None,
            )),
        }
    }
}
