//! The link's frames and the messages they carry (the protocol is described on the module,
//! `env::link`).

use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::env::ExecOutcome;

/// The line the server prints before its first frame (after it the stream is frames only).
pub(crate) const HELLO: &[u8] = b"\x1epi-tools-link 1\n";

/// What `pi-tools env-server --check` prints: a client starts only a server that prints
/// exactly its own.
pub(crate) const SERVES: &str = concat!("pi-tools ", env!("CARGO_PKG_VERSION"), ", link 1");

/// The largest frame either side accepts (a tool result is the largest payload).
const MAX_FRAME: u32 = 256 << 20;

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// Run a command.
    Exec = 1,
    /// Cancel the call of this id.
    Cancel = 2,
    /// Run a tool call beside the files.
    Call = 3,
    /// End a session's background jobs.
    EndSession = 4,
    /// A chunk of a command's merged output.
    Output = 11,
    /// A chunk of a command's stderr (also sent as `Output`).
    Stderr = 12,
    /// A command ended.
    Done = 13,
    /// A request failed.
    Failed = 14,
    /// A tool call's result message.
    Result = 15,
    /// A session's jobs are ended.
    Ended = 16,
}

impl Kind {
    fn from_byte(byte: u8) -> Option<Kind> {
        Some(match byte {
            1 => Kind::Exec,
            2 => Kind::Cancel,
            3 => Kind::Call,
            4 => Kind::EndSession,
            11 => Kind::Output,
            12 => Kind::Stderr,
            13 => Kind::Done,
            14 => Kind::Failed,
            15 => Kind::Result,
            16 => Kind::Ended,
            _ => return None,
        })
    }
}

/// One frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub(crate) kind: Kind,
    pub(crate) id: u64,
    pub(crate) payload: Vec<u8>,
}

impl Frame {
    /// A frame with a JSON payload.
    pub(crate) fn json(kind: Kind, id: u64, value: &impl Serialize) -> Frame {
        Frame {
            kind,
            id,
            payload: serde_json::to_vec(value).unwrap_or_default(),
        }
    }

    /// The frame as bytes on the stream.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let len = u32::try_from(1 + 8 + self.payload.len()).unwrap_or(u32::MAX);
        let mut bytes = Vec::with_capacity(4 + len as usize);
        bytes.extend_from_slice(&len.to_be_bytes());
        bytes.push(self.kind as u8);
        bytes.extend_from_slice(&self.id.to_be_bytes());
        bytes.extend_from_slice(&self.payload);
        bytes
    }

    /// Reads the next frame; `None` at the end of the stream between frames.
    pub(crate) async fn read(input: &mut (impl AsyncRead + Unpin)) -> io::Result<Option<Frame>> {
        let mut len = [0u8; 4];
        match input.read_exact(&mut len).await {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let len = u32::from_be_bytes(len);
        if !(9..=MAX_FRAME).contains(&len) {
            return Err(bad(format!("a frame of {len} bytes")));
        }
        let mut body = vec![0u8; len as usize];
        input.read_exact(&mut body).await?;
        let kind =
            Kind::from_byte(body[0]).ok_or_else(|| bad(format!("frame kind {}", body[0])))?;
        let id = u64::from_be_bytes(body[1..9].try_into().unwrap_or_default());
        body.drain(..9);
        Ok(Some(Frame {
            kind,
            id,
            payload: body,
        }))
    }

    /// The JSON payload.
    pub(crate) fn parse<T: for<'de> Deserialize<'de>>(&self) -> io::Result<T> {
        serde_json::from_slice(&self.payload)
            .map_err(|e| bad(format!("a {:?} frame that is not valid ({e})", self.kind)))
    }
}

fn bad(what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the environment link got {what}; both ends must be pi-tools of one version"),
    )
}

/// [`Kind::Exec`]: a command for [`ExecutionEnv::exec`](crate::env::ExecutionEnv::exec).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExecMessage {
    /// The client's session, whose background jobs this command's belong to.
    pub(crate) session: u64,
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    /// The timeout in milliseconds; none when absent.
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) env: Vec<(String, String)>,
    /// Send stderr chunks as [`Kind::Stderr`] too.
    pub(crate) stderr: bool,
}

/// [`Kind::Call`]: a tool call, run by the server's own registered tool of that name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CallMessage {
    pub(crate) tool: String,
    pub(crate) cwd: PathBuf,
    pub(crate) arguments: serde_json::Value,
}

/// [`Kind::EndSession`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct SessionMessage {
    pub(crate) session: u64,
}

/// [`Kind::Done`]: how the command ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct OutcomeMessage {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) aborted: bool,
}

impl From<ExecOutcome> for OutcomeMessage {
    fn from(o: ExecOutcome) -> Self {
        OutcomeMessage {
            exit_code: o.exit_code,
            signal: o.signal,
            timed_out: o.timed_out,
            aborted: o.aborted,
        }
    }
}

impl From<OutcomeMessage> for ExecOutcome {
    fn from(o: OutcomeMessage) -> Self {
        ExecOutcome {
            exit_code: o.exit_code,
            signal: o.signal,
            timed_out: o.timed_out,
            aborted: o.aborted,
        }
    }
}

/// [`Kind::Failed`]: the error, with its kind kept where the client side tells kinds apart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FailureMessage {
    pub(crate) kind: String,
    pub(crate) message: String,
}

/// The kinds that cross the link by name; any other arrives as `Other`.
const KINDS: [(io::ErrorKind, &str); 8] = [
    (io::ErrorKind::NotFound, "not-found"),
    (io::ErrorKind::PermissionDenied, "permission-denied"),
    (io::ErrorKind::NotADirectory, "not-a-directory"),
    (io::ErrorKind::InvalidInput, "invalid-input"),
    (io::ErrorKind::Unsupported, "unsupported"),
    (io::ErrorKind::TimedOut, "timed-out"),
    (io::ErrorKind::FileTooLarge, "file-too-large"),
    (io::ErrorKind::IsADirectory, "is-a-directory"),
];

impl From<&io::Error> for FailureMessage {
    fn from(err: &io::Error) -> Self {
        let kind = KINDS
            .iter()
            .find(|(k, _)| *k == err.kind())
            .map_or("other", |(_, name)| name);
        FailureMessage {
            kind: kind.to_owned(),
            message: err.to_string(),
        }
    }
}

impl From<FailureMessage> for io::Error {
    fn from(f: FailureMessage) -> Self {
        let kind = KINDS
            .iter()
            .find(|(_, name)| *name == f.kind)
            .map_or(io::ErrorKind::Other, |(k, _)| *k);
        io::Error::new(kind, f.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_round_trip_and_a_bad_frame_is_refused() {
        let frames = [
            Frame::json(Kind::Exec, 7, &SessionMessage { session: 3 }),
            Frame {
                kind: Kind::Output,
                id: u64::MAX,
                payload: b"\0raw\xff".to_vec(),
            },
            Frame {
                kind: Kind::Cancel,
                id: 1,
                payload: Vec::new(),
            },
        ];
        let bytes: Vec<u8> = frames.iter().flat_map(Frame::encode).collect();
        let mut input = &bytes[..];
        for frame in &frames {
            assert_eq!(
                Frame::read(&mut input).await.expect("read").as_ref(),
                Some(frame)
            );
        }
        assert_eq!(Frame::read(&mut input).await.expect("end"), None);

        let mut bad = &[0u8, 0, 0, 9, 99, 0, 0, 0, 0, 0, 0, 0, 1][..];
        let err = Frame::read(&mut bad).await.expect_err("unknown kind");
        assert!(err.to_string().contains("frame kind 99"), "{err}");
        let mut short = &[0u8, 0, 0, 20, 1, 0][..];
        assert_eq!(
            Frame::read(&mut short).await.expect_err("cut").kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn error_kinds_cross_the_link() {
        let err = io::Error::new(io::ErrorKind::NotADirectory, "x is a file");
        let back: io::Error = FailureMessage::from(&err).into();
        assert_eq!(back.kind(), io::ErrorKind::NotADirectory);
        assert_eq!(back.to_string(), "x is a file");
        let other: io::Error = FailureMessage::from(&io::Error::other("y")).into();
        assert_eq!(other.kind(), io::ErrorKind::Other);
    }
}
