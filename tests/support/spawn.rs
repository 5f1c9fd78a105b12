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

/// The JSON lines a process writes (its standard output, read on a thread of its own), in
/// order of arrival: [`JsonLines::wait`] takes the next one a test looks for and keeps the
/// others in [`JsonLines::seen`]. A line that is not JSON is skipped.
pub struct JsonLines {
    lines: std::sync::mpsc::Receiver<serde_json::Value>,
    /// Lines read while waiting for something else, in order.
    pub seen: Vec<serde_json::Value>,
    patience: std::time::Duration,
}

impl JsonLines {
    /// Reads `output` line by line; a [`wait`](JsonLines::wait) gives up after `patience`.
    pub fn read(
        output: impl std::io::Read + Send + 'static,
        patience: std::time::Duration,
    ) -> Self {
        use std::io::BufRead;
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(output).lines() {
                let Ok(line) = line else { return };
                let Ok(value) = serde_json::from_str(&line) else {
                    continue;
                };
                if send.send(value).is_err() {
                    return;
                }
            }
        });
        JsonLines {
            lines,
            seen: Vec::new(),
            patience,
        }
    }

    /// The first line matching `wanted`, among those kept or read within the patience;
    /// panics naming `what` and the lines seen when none comes.
    pub fn wait(
        &mut self,
        wanted: impl Fn(&serde_json::Value) -> bool,
        what: &str,
    ) -> serde_json::Value {
        if let Some(at) = self.seen.iter().position(&wanted) {
            return self.seen.remove(at);
        }
        let deadline = std::time::Instant::now() + self.patience;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "no {what} within {:?}; seen: {:?}",
                    self.patience, self.seen
                ),
            }
        }
    }
}
