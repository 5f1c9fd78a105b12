//! The files a session's results pointed at (`resource_link` content: bash's whole output
//! when only its tail fit, the rest of a file a read cut short), read back through
//! `resources/read`, and the program's own resources beside them.
//!
//! A file is read as the read tool would read it: through the session's environment (so
//! within its roots: the client's, `[paths] allowed_roots`, or the working directory), and
//! only where the policy allows `read` of it without asking. Spilled output lives outside
//! the roots, in the process's temporary directory, and each session reads only the spill
//! files its own results named.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use base64::Engine as _;
use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use rmcp::service::{RequestContext, RoleServer};

use super::resources::{McpResource, McpResourceContent, McpResourceTemplate};
use super::server::ToolServer;
use crate::core::{ResourceLink, RunnerConfig};
use crate::env::EnvOf;
use crate::session::SessionOf;

/// How many of its results' links a session keeps readable (the most recent).
const KEPT_LINKS: usize = 256;

/// The links a session's results gave, the most recent last.
#[derive(Default)]
pub(crate) struct IssuedLinks(Mutex<VecDeque<ResourceLink>>);

impl IssuedLinks {
    /// Keeps `links` readable (a link given again moves to the end).
    pub(crate) fn remember(&self, links: &[ResourceLink]) {
        if links.is_empty() {
            return;
        }
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for link in links {
            kept.retain(|k| k.uri != link.uri);
            if kept.len() >= KEPT_LINKS {
                kept.pop_front();
            }
            kept.push_back(link.clone());
        }
    }

    fn gave(&self, uri: &str) -> bool {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().any(|k| k.uri == uri)
    }

    fn listed(&self) -> Vec<Resource> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().rev().map(listed_link).collect()
    }
}

fn listed_link(link: &ResourceLink) -> Resource {
    let mut resource = Resource::new(&link.uri, &link.name);
    resource.description = link.description.clone();
    resource.mime_type = link.mime_type.clone();
    resource.size = link.size;
    resource
}

/// A link as `resource_link` content.
pub(crate) fn link_content(link: ResourceLink) -> rmcp::model::ContentBlock {
    rmcp::model::ContentBlock::resource_link(listed_link(&link))
}

fn listed(resource: McpResource) -> Resource {
    let mut listed = Resource::new(resource.uri, resource.name);
    listed.description = resource.description;
    listed.mime_type = resource.mime_type;
    listed
}

fn listed_template(template: McpResourceTemplate) -> ResourceTemplate {
    let mut listed = ResourceTemplate::new(template.uri_template, template.name);
    listed.description = template.description;
    listed.mime_type = template.mime_type;
    listed
}

pub(crate) fn contents(content: McpResourceContent) -> ResourceContents {
    match content {
        McpResourceContent::Text {
            uri,
            mime_type,
            text,
        } => with_mime(ResourceContents::text(text, uri), mime_type),
        McpResourceContent::Blob {
            uri,
            mime_type,
            data,
        } => with_mime(
            ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(data), uri),
            mime_type,
        ),
    }
}

fn with_mime(contents: ResourceContents, mime_type: Option<String>) -> ResourceContents {
    match mime_type {
        Some(mime) => contents.with_mime_type(mime),
        None => contents,
    }
}

impl ToolServer {
    /// `resources/list`: the program's resources, then the files this session's results
    /// pointed at, the most recent first.
    pub(crate) fn resource_listing(&self) -> ListResourcesResult {
        let mut resources: Vec<Resource> = self
            .served()
            .resources
            .as_ref()
            .map(|r| r.list().into_iter().map(listed).collect())
            .unwrap_or_default();
        resources.extend(self.issued_links().listed());
        ListResourcesResult::with_all_items(resources)
    }

    /// `resources/templates/list`: the program's templates.
    pub(crate) fn resource_templates(&self) -> ListResourceTemplatesResult {
        let templates = self
            .served()
            .resources
            .as_ref()
            .map(|r| r.templates().into_iter().map(listed_template).collect())
            .unwrap_or_default();
        ListResourceTemplatesResult::with_all_items(templates)
    }

    /// `resources/read` of `uri`, within the roots a call of the request would run in:
    /// the client's (asked for as before a call, in a session), else the configuration's.
    pub(crate) async fn read_resource_for(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        let followed = if super::era::is_stateless(context) {
            None
        } else {
            self.followed_roots()
                .config(self.config(), &context.peer)
                .await
                .map_err(|why| ErrorData::invalid_request(why, None))?
        };
        let config = followed.as_deref().unwrap_or(self.config());
        self.read_resource_at(uri, config).await
    }

    /// `resources/read` of `uri`, with `config` the session's configuration for the call
    /// (its roots).
    async fn read_resource_at(
        &self,
        uri: &str,
        config: &RunnerConfig,
    ) -> Result<ReadResourceResult, ErrorData> {
        let session = config.session().unwrap_or(self.client_session());
        if let Some(resources) = &self.served().resources
            && let Some(read) = resources.read(uri, session).await
        {
            let read = read.map_err(|why| ErrorData::invalid_params(why, None))?;
            return Ok(ReadResourceResult::new(
                read.into_iter().map(contents).collect(),
            ));
        }
        let Some(path) = ResourceLink::file_path(uri) else {
            return Err(not_found(uri));
        };
        let max = self.served().max_message_bytes / 2;
        let bytes = if is_spill(&path) {
            if !self.issued_links().gave(uri) {
                return Err(not_found(uri));
            }
            read_local(&path, uri, max).await?
        } else {
            self.read_as_the_read_tool(&path, uri, config, max).await?
        };
        let mime = self
            .issued_links()
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|k| k.uri == uri)
            .and_then(|k| k.mime_type.clone());
        let content = match String::from_utf8(bytes) {
            Ok(text) => McpResourceContent::Text {
                uri: uri.to_owned(),
                mime_type: Some(mime.unwrap_or_else(|| "text/plain".to_owned())),
                text,
            },
            Err(bytes) => McpResourceContent::Blob {
                uri: uri.to_owned(),
                mime_type: Some("application/octet-stream".to_owned()),
                data: bytes.into_bytes(),
            },
        };
        Ok(ReadResourceResult::new(vec![contents(content)]))
    }

    /// Reads `path` through the session's environment, where the policy lets `read` read
    /// it without asking.
    async fn read_as_the_read_tool(
        &self,
        path: &Path,
        uri: &str,
        config: &RunnerConfig,
        max: usize,
    ) -> Result<Vec<u8>, ErrorData> {
        let shown = path.display().to_string();
        if let Some(policy) = config.session().and_then(|s| s.policy()) {
            policy
                .allows_unasked("read", &serde_json::json!({ "path": shown }))
                .map_err(|why| {
                    ErrorData::invalid_request(
                        format!(
                            "{why} A resource read cannot ask anyone, so nothing was read; call the read tool on {shown} instead."
                        ),
                        None,
                    )
                })?;
        }
        let Some(env) = config.env() else {
            return Err(not_found(uri));
        };
        let meta = env.metadata(path).await.map_err(|e| unreadable(uri, &e))?;
        if meta.is_dir {
            return Err(ErrorData::invalid_params(
                format!(
                    "{uri} is a directory, not a file. Call the ls tool on {shown} to list it."
                ),
                None,
            ));
        }
        check_size(uri, &shown, meta.len, max)?;
        env.read_file(path).await.map_err(|e| unreadable(uri, &e))
    }
}

/// Whether `path` is in the directory bash spills output to.
fn is_spill(path: &Path) -> bool {
    let dir = crate::env::spill_dir();
    path.parent() == Some(dir.as_path())
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("bash-") && n.ends_with(".log"))
}

async fn read_local(path: &PathBuf, uri: &str, max: usize) -> Result<Vec<u8>, ErrorData> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| unreadable(uri, &e))?;
    check_size(uri, &path.display().to_string(), meta.len(), max)?;
    tokio::fs::read(path).await.map_err(|e| unreadable(uri, &e))
}

fn check_size(uri: &str, shown: &str, len: u64, max: usize) -> Result<(), ErrorData> {
    if len > max as u64 {
        return Err(ErrorData::invalid_params(
            format!(
                "{uri} holds {len} bytes, more than the {max} this server sends in one message, so it was not read. Read it in parts with the read tool (path {shown}, with offset and limit) or with bash (`sed -n`, `tail`)."
            ),
            None,
        ));
    }
    Ok(())
}

fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "No resource {uri}: this server reads the resources it lists and the files its results in this session pointed at. List them with resources/list."
        ),
        Some(serde_json::json!({ "uri": uri })),
    )
}

fn unreadable(uri: &str, error: &std::io::Error) -> ErrorData {
    if error.kind() == std::io::ErrorKind::NotFound {
        return not_found(uri);
    }
    ErrorData::invalid_request(
        format!(
            "{uri} could not be read: {error}. Files are read within the session's roots; read it with the read tool or bash if it is elsewhere."
        ),
        None,
    )
}
