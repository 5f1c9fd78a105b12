//! Writing a subcommand's text to standard output or a file.

use std::io::{ErrorKind, Write};
use std::path::Path;

use super::Failure;

/// Writes `text` to standard output, ending it with a newline if it has none. A reader that
/// went away (`pi-tools catalog | head`) is not an error.
pub(super) fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    let result = out
        .write_all(text.as_bytes())
        .and_then(|()| {
            if text.ends_with('\n') {
                Ok(())
            } else {
                out.write_all(b"\n")
            }
        })
        .and_then(|()| out.flush());
    match result {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(Failure::general(format!(
            "cannot write to standard output ({e})"
        ))),
        _ => Ok(()),
    }
}

/// Writes `text` to `path` (with a final newline), or to standard output when `path` is
/// `None` or `-`.
pub(super) fn write(path: Option<&Path>, text: &str) -> Result<(), Failure> {
    let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
        return print(text);
    };
    let mut text = text.to_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| {
        Failure::general(format!(
            "cannot write `{}` ({e}); check that its directory exists and is writable",
            path.display()
        ))
    })
}

/// Pretty-printed JSON.
pub(super) fn json(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
