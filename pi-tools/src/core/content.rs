//! Content blocks: what a tool result shows the model.

use serde::{Deserialize, Serialize};

/// One block of a tool result's content, in MCP's wire shape (`{"type":"text","text":…}`,
/// `{"type":"image","data":…,"mimeType":…}`, `{"type":"audio","data":…,"mimeType":…}` and
/// `{"type":"resource","resource":{"uri":…,"mimeType":…,"text"|"blob":…}}`).
///
/// Every front carries text. MCP carries every kind as it is; a model provider's tool result
/// takes text and images, so there an embedded text resource is given as its text and audio
/// or a binary resource as a line that says what was there ([`ContentBlock::stand_in`]).
///
/// New kinds may be added: a `match` needs a `_` arm.
///
/// ```
/// use pi_tools::{ContentBlock, EmbeddedResource};
///
/// let blocks = [
///     ContentBlock::text("the recording and its transcript:"),
///     ContentBlock::audio("UklGRg==", "audio/wav"),
///     ContentBlock::resource(
///         EmbeddedResource::text("notes://take-1", "Hello.").with_mime_type("text/plain"),
///     ),
/// ];
/// assert_eq!(
///     serde_json::to_value(&blocks[1]).unwrap(),
///     serde_json::json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
/// );
/// assert_eq!(
///     blocks[1].stand_in("this provider takes text"),
///     "[audio, audio/wav, 4 bytes, not shown: this provider takes text]"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text itself.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// The image's MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// A sound, base64-encoded.
    Audio {
        /// Base64 of the audio bytes.
        data: String,
        /// The audio's MIME type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A resource carried whole (rather than pointed at, as a
    /// [`ResourceLink`](super::ResourceLink) is).
    Resource {
        /// The resource: its URI, MIME type and text or bytes.
        resource: EmbeddedResource,
    },
}

/// A resource carried whole in a result: MCP's `resource` content, `{uri, mimeType?, text}`
/// or `{uri, mimeType?, blob}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Where it comes from, as a URI.
    pub uri: String,
    /// Its MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its text or its bytes.
    #[serde(flatten)]
    pub body: ResourceBody,
}

/// What an [`EmbeddedResource`] holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceBody {
    /// Text (`"text"` on the wire).
    Text {
        /// The text.
        text: String,
    },
    /// Bytes (`"blob"` on the wire), base64-encoded.
    Blob {
        /// Base64 of the bytes.
        blob: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// An image block from base64 data and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 data and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A block carrying `resource` whole.
    pub fn resource(resource: EmbeddedResource) -> Self {
        ContentBlock::Resource { resource }
    }

    /// The text of a text block, `None` for any other kind.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        }
    }

    /// The block as text for a front that takes text only where it can be text: a text
    /// block's text, and an embedded text resource as `[resource <uri>]` and its text on the
    /// next line; `None` for an image, audio or a binary resource.
    pub fn readable_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            ContentBlock::Text { text } => Some(text.as_str().into()),
            ContentBlock::Resource { resource } => resource
                .as_text()
                .map(|text| format!("[resource {}]\n{text}", resource.uri).into()),
            _ => None,
        }
    }

    /// The line a front that cannot carry this block gives in its place, saying what was
    /// there and `why` it is not: `[audio, audio/wav, 12 KB, not shown: why]`, or
    /// `[resource file:///a.pdf, application/pdf, 3 KB, not shown: why]`.
    pub fn stand_in(&self, why: &str) -> String {
        format!("[{}, not shown: {why}]", self.summary())
    }

    /// What the block is, in a few words: its kind (with the URI of a resource), its MIME
    /// type and its size, e.g. `audio, audio/wav, 12 KB`.
    pub fn summary(&self) -> String {
        match self {
            ContentBlock::Text { text } => format!("text, {}", size(text.len())),
            ContentBlock::Image { data, mime_type } => {
                format!("image, {mime_type}, {}", size(base64_len(data)))
            }
            ContentBlock::Audio { data, mime_type } => {
                format!("audio, {mime_type}, {}", size(base64_len(data)))
            }
            ContentBlock::Resource { resource } => {
                let bytes = match &resource.body {
                    ResourceBody::Text { text } => text.len(),
                    ResourceBody::Blob { blob } => base64_len(blob),
                };
                let mime = resource
                    .mime_type
                    .as_deref()
                    .unwrap_or(match resource.body {
                        ResourceBody::Text { .. } => "text",
                        ResourceBody::Blob { .. } => "application/octet-stream",
                    });
                format!("resource {}, {mime}, {}", resource.uri, size(bytes))
            }
        }
    }
}

impl EmbeddedResource {
    /// A text resource at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: None,
            body: ResourceBody::Text { text: text.into() },
        }
    }

    /// A binary resource at `uri`, from the base64 of its bytes.
    pub fn blob(uri: impl Into<String>, base64: impl Into<String>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: None,
            body: ResourceBody::Blob {
                blob: base64.into(),
            },
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Its text, `None` for a binary resource.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            ResourceBody::Text { text } => Some(text),
            ResourceBody::Blob { .. } => None,
        }
    }
}

/// How many bytes the base64 text `data` encodes (padding and line breaks aside).
fn base64_len(data: &str) -> usize {
    let digits = data
        .bytes()
        .filter(|b| !matches!(b, b'=' | b'\n' | b'\r'))
        .count();
    digits * 3 / 4
}

/// A size for people: bytes below a kilobyte, then KB and MB (of 1024) rounded.
fn size(bytes: usize) -> String {
    const KB: usize = 1024;
    match bytes {
        1 => "1 byte".to_owned(),
        b if b < KB => format!("{b} bytes"),
        b if b < KB * KB => format!("{} KB", b.div_ceil(KB)),
        b => format!("{:.1} MB", b as f64 / (KB * KB) as f64),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_kind_has_mcps_wire_shape_there_and_back() {
        let blocks = [
            (
                ContentBlock::audio("AAAA", "audio/wav"),
                json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
            ),
            (
                ContentBlock::resource(EmbeddedResource::text("test://a", "hi")),
                json!({"type": "resource", "resource": {"uri": "test://a", "text": "hi"}}),
            ),
            (
                ContentBlock::resource(
                    EmbeddedResource::blob("test://b", "AAAA").with_mime_type("application/pdf"),
                ),
                json!({"type": "resource", "resource":
                    {"uri": "test://b", "mimeType": "application/pdf", "blob": "AAAA"}}),
            ),
        ];
        for (block, wire) in blocks {
            assert_eq!(serde_json::to_value(&block).expect("serialises"), wire);
            let back: ContentBlock = serde_json::from_value(wire).expect("deserialises");
            assert_eq!(back, block);
        }
    }

    #[test]
    fn a_stand_in_says_kind_type_and_size() {
        let audio = ContentBlock::audio("A".repeat(16_384), "audio/wav");
        assert_eq!(
            audio.stand_in("text only here"),
            "[audio, audio/wav, 12 KB, not shown: text only here]"
        );
        let pdf = ContentBlock::resource(EmbeddedResource::blob("file:///a.pdf", "AAA="));
        assert_eq!(
            pdf.summary(),
            "resource file:///a.pdf, application/octet-stream, 2 bytes"
        );
        assert_eq!(size(3 * 1024 * 1024 / 2), "1.5 MB");
    }

    #[test]
    fn a_text_resource_reads_as_text_and_media_do_not() {
        let note = ContentBlock::resource(EmbeddedResource::text("notes://a", "body"));
        assert_eq!(
            note.readable_text().as_deref(),
            Some("[resource notes://a]\nbody")
        );
        assert_eq!(note.as_text(), None);
        assert_eq!(
            ContentBlock::audio("AAAA", "audio/wav").readable_text(),
            None
        );
    }
}
