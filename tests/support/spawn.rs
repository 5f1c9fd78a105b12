//! Running a binary under test with some standard input and collecting what it printed.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `command` with `stdin` as its standard input and waits for it to finish.
pub fn feed(mut command: Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let written = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes());
    // A binary that refuses its arguments exits without reading its input.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "stdin accepts the input: {e}"
        );
    }
    child.wait_with_output().expect("the binary finishes")
}
