//! A file a result points at rather than carries: bash's whole output when only its tail
//! fits, the rest of a file a read cut short. A front that has a place for it (MCP's
//! `resource_link` content) gives it to the client, which can fetch it; the others leave it
//! out, since the result's text already names the file.

use serde::{Deserialize, Serialize};

/// One file a result points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// Where it is, as a URI (`file:///…` for a file).
    pub uri: String,
    /// A short name (the file's name).
    pub name: String,
    /// What it holds, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to the file at the absolute `path`, named by its last component.
    pub fn file(path: &std::path::Path) -> Self {
        ResourceLink {
            uri: file_uri(path),
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string()),
            description: None,
            mime_type: None,
            size: None,
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

    /// Sets the size in bytes.
    pub fn with_size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

/// The `file://` URI of an absolute path: each byte outside the unreserved set and `/` is
/// percent-encoded, so any name (spaces, `#`, `?`, bytes that are not UTF-8) survives the
/// trip back through [`file_path`].
fn file_uri(path: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    format!(
        "file://{}",
        percent_encode(path.as_os_str().as_bytes(), b"/-._~")
    )
}

/// `bytes` with each byte outside the ASCII letters and digits and `keep` written `%XX`.
pub(crate) fn percent_encode(bytes: &[u8], keep: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &byte in bytes {
        if byte.is_ascii_alphanumeric() || keep.contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The bytes `text` percent-encodes; `None` when a `%` is not followed by two hex digits.
pub(crate) fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

impl ResourceLink {
    /// The absolute path a `file://` URI names (with an empty or `localhost` host), its
    /// percent-encoding undone; `None` for any other URI.
    pub fn file_path(uri: &str) -> Option<std::path::PathBuf> {
        file_path(uri)
    }
}

fn file_path(uri: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let rest = uri.strip_prefix("file://")?;
    let rest = match rest.strip_prefix("localhost") {
        Some(after) if after.starts_with('/') => after,
        _ => rest,
    };
    if !rest.starts_with('/') || rest.contains(['?', '#']) {
        return None;
    }
    let out = percent_decode(rest)?;
    Some(std::path::PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    use super::*;

    #[test]
    fn a_file_uri_takes_any_name_there_and_back() {
        let odd = std::ffi::OsStr::from_bytes(b"/tmp/a b#c?d%e\xff.log");
        let uri = file_uri(Path::new(odd));
        assert_eq!(uri, "file:///tmp/a%20b%23c%3Fd%25e%FF.log");
        assert_eq!(file_path(&uri), Some(PathBuf::from(odd)));
        assert_eq!(
            file_path("file://localhost/etc/hosts"),
            Some(PathBuf::from("/etc/hosts"))
        );
        assert_eq!(file_path("file://host/etc/hosts"), None);
        assert_eq!(file_path("https://example.com/x"), None);
        assert_eq!(file_path("file:///x%2"), None);
        assert_eq!(file_path("file:///srv/%zz"), None);
        assert_eq!(file_path("file:///x?y"), None);
    }
}
