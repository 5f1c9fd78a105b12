//! Which of a client's answers can answer a question of the server's. JSON-RPC matches a
//! response to its request by the id's type and value; the protocol library also takes a
//! string that reads as a number for that number (`"3"` answers `3`), so a client, or
//! anything that can post in its session, could answer a question it was never asked
//! (a policy question among them) by a near miss. The server numbers every question it
//! sends, so an answer whose id is a string answers none of them.

use rmcp::model::{ClientJsonRpcMessage, NumberOrString};

/// Whether `message` is a response or an error whose id no question of the server's has.
pub(crate) fn answers_no_question(message: &ClientJsonRpcMessage) -> bool {
    let id = match message {
        ClientJsonRpcMessage::Response(response) => Some(&response.id),
        ClientJsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    };
    matches!(id, Some(NumberOrString::String(_)))
}

#[cfg(test)]
mod tests {
    use super::answers_no_question;
    use rmcp::model::ClientJsonRpcMessage;
    use serde_json::json;

    fn message(value: serde_json::Value) -> ClientJsonRpcMessage {
        serde_json::from_value(value).expect("a JSON-RPC message")
    }

    #[test]
    fn only_a_numbered_answer_can_answer_a_question() {
        let result = json!({"action": "decline"});
        assert!(answers_no_question(&message(
            json!({"jsonrpc": "2.0", "id": "3", "result": result})
        )));
        assert!(!answers_no_question(&message(
            json!({"jsonrpc": "2.0", "id": 3, "result": result})
        )));
        assert!(answers_no_question(&message(
            json!({"jsonrpc": "2.0", "id": "3", "error": {"code": -1, "message": "no"}})
        )));
        assert!(!answers_no_question(&message(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )));
    }
}
