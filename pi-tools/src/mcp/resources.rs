//! Resources a server offers beside its tools (`resources/list`, `resources/templates/list`,
//! `resources/read`): a program's own, given with
//! [`McpTools::with_resources`](super::McpTools::with_resources), and the files the tools'
//! results point at (see `resource_files`).

use crate::core::BoxFuture;
use crate::session::Session;

/// A resource a server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpResource {
    /// Its URI, which `resources/read` takes.
    pub uri: String,
    /// A short name.
    pub name: String,
    /// What it holds, in a sentence.
    pub description: Option<String>,
    /// Its MIME type, when uniform.
    pub mime_type: Option<String>,
}

/// A family of resources a server can read, named by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpResourceTemplate {
    /// The template, e.g. `notes://{name}`.
    pub uri_template: String,
    /// A short name.
    pub name: String,
    /// What its resources hold, in a sentence.
    pub description: Option<String>,
    /// Their MIME type, when uniform.
    pub mime_type: Option<String>,
}

/// What `resources/read` gives for one URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpResourceContent {
    /// Text.
    Text {
        /// The URI read.
        uri: String,
        /// Its MIME type, when known.
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Bytes (sent base64-encoded).
    Blob {
        /// The URI read.
        uri: String,
        /// Its MIME type, when known.
        mime_type: Option<String>,
        /// The bytes.
        data: Vec<u8>,
    },
}

impl McpResource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        McpResource {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl McpResourceTemplate {
    /// A template with its URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        McpResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// A program's own resources, served beside the tools and the files their results point
/// at. The same for every session of the server.
pub trait McpResources: Send + Sync + 'static {
    /// The resources `resources/list` gives.
    fn list(&self) -> Vec<McpResource>;

    /// The templates `resources/templates/list` gives; none by default.
    fn templates(&self) -> Vec<McpResourceTemplate> {
        Vec::new()
    }

    /// Reads `uri` for the client's `session` (its environment, roots and policy):
    /// `None` when it is not one of these resources (the server then looks among the files
    /// its results pointed at, and else answers "not found"), else its contents or a
    /// sentence saying why it cannot be read and what to do.
    fn read<'a>(
        &'a self,
        uri: &'a str,
        session: &'a Session,
    ) -> BoxFuture<'a, Option<Result<Vec<McpResourceContent>, String>>>;

    /// Values for the variable `argument` of the template `template` that begin as
    /// `typed` does, the likeliest first (at most 100 are sent); none by default.
    fn complete<'a>(
        &'a self,
        template: &'a str,
        argument: &'a str,
        typed: &'a str,
    ) -> BoxFuture<'a, Vec<String>> {
        let _ = (template, argument, typed);
        Box::pin(std::future::ready(Vec::new()))
    }
}
