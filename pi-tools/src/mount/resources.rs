//! Mounted servers' resources, re-served by the gateway under their mount names: a
//! resource `uri` of the server mounted as `docs` is `mcp-mount://docs/<uri, percent-encoded>`
//! to the gateway's clients, and named `docs__<name>`, as its tools are. A read goes to
//! the server in its turn among the gateway's sessions (see `sessions`), and what a
//! sandboxed server planted while reading is taken away as after a call.

use std::sync::Arc;

use rmcp::model::{ReadResourceRequestParams, Resource, ResourceContents};

use super::mounts::Mounts;
use super::server::{Server, ServerState};
use crate::core::{percent_decode, percent_encode};
use crate::env::ExecutionEnv;

/// The scheme of a mounted server's resource, as the gateway serves it.
const SCHEME: &str = "mcp-mount://";

/// A resource of a mounted server, as the gateway lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountedResource {
    /// The gateway's URI for it: `mcp-mount://<server>/<the server's URI, percent-encoded>`.
    pub uri: String,
    /// `<server>__<the server's name for it>`.
    pub name: String,
    /// The server's description of it.
    pub description: Option<String>,
    /// Its MIME type, when the server gives one.
    pub mime_type: Option<String>,
}

/// What a mounted server's resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountedContent {
    /// Text.
    Text {
        /// The gateway's URI of what was read.
        uri: String,
        /// Its MIME type, when given.
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Bytes, base64-encoded as the server sent them.
    Blob {
        /// The gateway's URI of what was read.
        uri: String,
        /// Its MIME type, when given.
        mime_type: Option<String>,
        /// The bytes, base64-encoded.
        base64: String,
    },
}

impl Mounts {
    /// The resources of every running server that offers any, under their mount names (a
    /// server not started yet is not started for this). A server whose listing fails is
    /// left out, with the reason in the log.
    pub async fn resources(&self) -> Vec<MountedResource> {
        let listings = futures::future::join_all(self.servers().iter().map(listing)).await;
        listings.into_iter().flatten().collect()
    }

    /// Reads a resource by the gateway's URI, in the turn of the session whose
    /// environment is `env`: `None` when `uri` names no mounted server's resource, else
    /// its contents (with the gateway's URIs) or a sentence saying why not.
    pub async fn read_resource(
        &self,
        uri: &str,
        env: Option<&Arc<dyn ExecutionEnv>>,
    ) -> Option<Result<Vec<MountedContent>, String>> {
        let (name, remote) = split(uri)?;
        let server = self.servers().iter().find(|s| s.name() == name)?;
        Some(read(server, &remote, env).await)
    }
}

async fn listing(server: &Server) -> Vec<MountedResource> {
    // Only a server the tools started: listing resources starts none.
    if !matches!(server.state().await, ServerState::Running(_)) {
        return Vec::new();
    }
    let Ok(connection) = server.connection().await else {
        return Vec::new();
    };
    let offers = connection
        .peer()
        .peer_info()
        .is_some_and(|info| info.capabilities.resources.is_some());
    if !offers {
        return Vec::new();
    }
    match connection.peer().list_all_resources().await {
        Ok(resources) => resources
            .into_iter()
            .map(|resource| listed(server.name(), &resource))
            .collect(),
        Err(e) => {
            tracing::warn!(
                server = server.name(),
                "listing its resources failed ({e}); they are not served"
            );
            Vec::new()
        }
    }
}

fn listed(server: &str, resource: &Resource) -> MountedResource {
    MountedResource {
        uri: gateway_uri(server, &resource.uri),
        name: format!("{server}__{}", resource.name),
        description: resource.description.clone(),
        mime_type: resource.mime_type.clone(),
    }
}

async fn read(
    server: &Server,
    remote: &str,
    env: Option<&Arc<dyn ExecutionEnv>>,
) -> Result<Vec<MountedContent>, String> {
    let turn = server.sessions().enter_env(env).await;
    let connection = server.connection_for(turn.generation).await?;
    let read = connection
        .peer()
        .read_resource(ReadResourceRequestParams::new(remote))
        .await;
    let undone = server.undo_plants();
    if !undone.is_empty() {
        tracing::warn!(
            server = server.name(),
            "taken away after a resource read: {}",
            undone.join(", ")
        );
    }
    let result = read.map_err(|e| {
        format!(
            "The MCP server `{}` could not read {remote}: {e}.",
            server.name()
        )
    })?;
    result
        .contents
        .into_iter()
        .map(|contents| match contents {
            ResourceContents::TextResourceContents {
                uri, mime_type, text, ..
            } => Ok(MountedContent::Text {
                uri: gateway_uri(server.name(), &uri),
                mime_type,
                text,
            }),
            ResourceContents::BlobResourceContents {
                uri, mime_type, blob, ..
            } => Ok(MountedContent::Blob {
                uri: gateway_uri(server.name(), &uri),
                mime_type,
                base64: blob,
            }),
            _ => Err(format!(
                "The MCP server `{}` answered the read of {remote} with contents of a kind this gateway does not know; read it from the server itself.",
                server.name()
            )),
        })
        .collect()
}

/// The gateway's URI of the resource `uri` of the server mounted as `server`.
pub(super) fn gateway_uri(server: &str, uri: &str) -> String {
    format!(
        "{SCHEME}{server}/{}",
        percent_encode(uri.as_bytes(), b"-._~")
    )
}

/// The server's name and its own URI, from a gateway URI; `None` for any other URI.
fn split(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (server, encoded) = rest.split_once('/')?;
    let remote = String::from_utf8(percent_decode(encoded)?).ok()?;
    Some((server.to_owned(), remote))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_uri_goes_through_the_gateways_and_back() {
        let uri = gateway_uri("docs", "test://static/resource/1?x=a b");
        assert_eq!(
            uri,
            "mcp-mount://docs/test%3A%2F%2Fstatic%2Fresource%2F1%3Fx%3Da%20b"
        );
        assert_eq!(
            split(&uri),
            Some((
                "docs".to_owned(),
                "test://static/resource/1?x=a b".to_owned()
            ))
        );
        assert_eq!(split("file:///x"), None);
        assert_eq!(split("mcp-mount://docs/%zz"), None);
    }
}
