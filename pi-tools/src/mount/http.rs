//! Reaching a Streamable HTTP server: rmcp's transport over our bounded reqwest client
//! ([`super::bounded_http`]) with the entry's bearer token and headers.

use std::collections::HashMap;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::bounded_http::BoundedHttp;
use super::client::{Connection, ToolsChanged};
use crate::config::{ServerSettings, ServerTransport};

/// Connects to the server `settings` names by `url` and runs the handshake. A JSON answer
/// or an event of its streams longer than `max_message` bytes (`[mcp] max_message_bytes`),
/// or with more values than one per 16 bytes of it, is not decoded: the request it answers
/// fails with the reason. `tools_changed` runs each time the server says its tool list
/// changed.
pub(crate) async fn connect(
    settings: &ServerSettings,
    max_message: usize,
    tools_changed: ToolsChanged,
) -> Result<Connection, String> {
    let ServerTransport::Http {
        url,
        token_file,
        headers,
    } = &settings.transport
    else {
        return Err("the entry has no `url`".to_owned());
    };
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
    if let Some(file) = token_file {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let path = crate::env::expand_tilde(&file.to_string_lossy(), home.as_deref());
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "its token_file `{}` cannot be read ({e}); put the bearer token in it",
                file.display()
            )
        })?;
        let token = text.lines().next().unwrap_or("").trim();
        if token.is_empty() {
            return Err(format!(
                "its token_file `{}` is empty; put the bearer token on its first line",
                file.display()
            ));
        }
        config.auth_header = Some(token.to_owned());
    }
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = http::HeaderName::try_from(name.as_str())
            .map_err(|e| format!("its header name `{name}` is not valid ({e})"))?;
        let value = http::HeaderValue::try_from(value.as_str())
            .map_err(|e| format!("the value of its header `{name}` is not valid ({e})"))?;
        custom.insert(name, value);
    }
    config.custom_headers = custom;
    config.max_json_response_size = max_message;
    config.max_sse_event_size = max_message;
    let transport =
        StreamableHttpClientTransport::with_client(BoundedHttp::new(max_message)?, config);
    Connection::open(transport, tools_changed)
        .await
        .map_err(|e| format!("{e} at {url}"))
}
