//! One job: a command that runs on while the model does other things. It keeps the end of
//! its output in a [`Ring`], takes input through its control channel, and once it ends
//! says so in a [`Notice`] for the model's next result.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::JobControl;
use super::ring::{Ring, Slice};
use crate::core::text::signal_name;
use crate::core::{Notice, Notices};
use crate::env::{ExecOutcome, OutputSink};

/// How many of a job's last lines its end notice quotes.
const NOTICE_LINES: usize = 5;

/// The most bytes of output an end notice quotes.
const NOTICE_BYTES: usize = 1000;

/// A job of the session (see [`Jobs`](super::Jobs)).
pub struct Job {
    id: u64,
    command: String,
    started: Instant,
    state: Mutex<State>,
    /// Woken when output arrives or the job ends.
    changed: Notify,
    control: mpsc::UnboundedSender<JobControl>,
    cancel: CancellationToken,
    notices: Notices,
    on_terminal: bool,
}

struct State {
    ring: Ring,
    /// Where the last read ended.
    read_to: u64,
    /// The call that started the job still waits: its output goes there too.
    attached: Option<OutputSink>,
    /// How it ended, and when; `None` while it runs.
    ended: Option<(Result<ExecOutcome, String>, Instant)>,
}

/// What a job's output read gives.
#[derive(Debug, Clone)]
pub struct JobRead {
    /// The bytes read, from `start` on.
    pub bytes: Vec<u8>,
    /// Their offset in the job's whole output.
    pub start: u64,
    /// Bytes between the offset asked for and `start` dropped at the bound of kept output.
    pub dropped: u64,
    /// Bytes the job has written in all.
    pub total: u64,
}

/// How a job stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// It runs.
    Running,
    /// It ended: how.
    Ended(ExecOutcome),
    /// It could not run: why.
    Failed(String),
}

impl Job {
    pub(super) fn new(
        id: u64,
        command: String,
        ring_bytes: usize,
        attached: OutputSink,
        control: mpsc::UnboundedSender<JobControl>,
        notices: Notices,
        on_terminal: bool,
    ) -> Self {
        Job {
            id,
            command,
            started: Instant::now(),
            state: Mutex::new(State {
                ring: Ring::new(ring_bytes),
                read_to: 0,
                attached: Some(attached),
                ended: None,
            }),
            changed: Notify::new(),
            control,
            cancel: CancellationToken::new(),
            notices,
            on_terminal,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The job's number in its session.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The command line it runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Whether it runs on a pseudo-terminal.
    pub fn on_terminal(&self) -> bool {
        self.on_terminal
    }

    /// How long it has run (until it ended, for an ended one).
    pub fn run_time(&self) -> Duration {
        match &self.lock().ended {
            Some((_, at)) => at.duration_since(self.started),
            None => self.started.elapsed(),
        }
    }

    /// How it stands now.
    pub fn state(&self) -> JobState {
        match &self.lock().ended {
            None => JobState::Running,
            Some((Ok(outcome), _)) => JobState::Ended(*outcome),
            Some((Err(why), _)) => JobState::Failed(why.clone()),
        }
    }

    /// The token that ends it (every process it started gets SIGKILL).
    pub(super) fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Ends it: every process it started gets SIGKILL.
    pub fn kill(&self) {
        self.cancel.cancel();
    }

    /// Sends `control` to it; `false` when it has ended or its environment takes no input.
    pub fn send(&self, control: JobControl) -> bool {
        self.control.send(control).is_ok()
    }

    /// The sink its command's output goes to: the ring, and the waiting call while attached.
    pub(super) fn sink(self: &Arc<Self>) -> OutputSink {
        let job = Arc::clone(self);
        Box::new(move |chunk: &[u8]| {
            {
                let mut state = job.lock();
                state.ring.push(chunk);
                if let Some(attached) = state.attached.as_mut() {
                    attached(chunk);
                }
            }
            job.changed.notify_waiters();
        })
    }

    /// The call that started it stops waiting: from now on its output is only kept here and
    /// its end is told in a notice. `false` when it has already ended (the call then
    /// answers with its end as for any command).
    pub fn detach(&self) -> bool {
        let mut state = self.lock();
        state.attached = None;
        // What the call showed counts as read.
        state.read_to = state.ring.total();
        state.ended.is_none()
    }

    /// Records its end, wakes its readers and, once detached, queues the notice.
    pub(super) fn finish(&self, outcome: Result<ExecOutcome, String>) {
        let notice = {
            let mut state = self.lock();
            let detached = state.attached.is_none();
            state.attached = None;
            state.ended = Some((outcome, Instant::now()));
            detached.then(|| self.end_text(&state))
        };
        self.changed.notify_waiters();
        if let Some(text) = notice {
            self.notices.push(Notice {
                subject: self.subject(),
                text,
            });
        }
    }

    /// What its end notice is filed under.
    pub(super) fn subject(&self) -> String {
        format!("job {}", self.id)
    }

    /// Waits until output arrives, it ends, or `deadline` passes.
    pub async fn changed_or(&self, deadline: tokio::time::Instant) {
        let changed = self.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if self.lock().ended.is_some() {
            return;
        }
        tokio::select! {
            () = changed => {}
            () = tokio::time::sleep_until(deadline) => {}
        }
    }

    /// Waits until it ends or `deadline` passes; whether it ended.
    pub async fn ended_by(&self, deadline: tokio::time::Instant) -> bool {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.lock().ended.is_some() {
                return true;
            }
            tokio::select! {
                () = changed => {}
                () = tokio::time::sleep_until(deadline) => return self.lock().ended.is_some(),
            }
        }
    }

    /// Up to `limit` bytes of its output from `offset` (from where the last read ended when
    /// `None`). Nothing counts as read until [`mark_read`](Self::mark_read).
    pub fn peek(&self, offset: Option<u64>, limit: usize) -> JobRead {
        let state = self.lock();
        let from = offset.unwrap_or(state.read_to);
        let Slice {
            bytes,
            start,
            dropped,
        } = state.ring.read(from, limit);
        JobRead {
            bytes,
            start,
            dropped,
            total: state.ring.total(),
        }
    }

    /// The output up to offset `to` was read: the next read starts there. Telling the
    /// model the whole output of an ended job tells it the end: the waiting notice goes.
    pub fn mark_read(&self, to: u64) {
        let mut state = self.lock();
        state.read_to = to.min(state.ring.total());
        if state.ended.is_some() && state.read_to == state.ring.total() {
            self.notices.withdraw(&self.subject());
        }
    }

    /// Bytes written since the last read.
    pub fn unread(&self) -> u64 {
        let state = self.lock();
        state.ring.total().saturating_sub(state.read_to)
    }

    /// The sentence saying how it ended (`None` while it runs), e.g. `exited with code 0
    /// after 2.5s`.
    pub fn end_sentence(&self) -> Option<String> {
        let state = self.lock();
        let (outcome, at) = state.ended.as_ref()?;
        Some(how_it_ended(outcome, at.duration_since(self.started)))
    }

    /// Its last lines of output (at most 5, and 1000 bytes), as its end notice quotes them.
    pub fn last_lines(&self) -> String {
        self.lock().ring.last_lines(NOTICE_LINES, NOTICE_BYTES)
    }

    /// The notice's text: id, command, how it ended, its last lines.
    fn end_text(&self, state: &State) -> String {
        let Some((outcome, at)) = &state.ended else {
            return String::new();
        };
        let how = how_it_ended(outcome, at.duration_since(self.started));
        let last = state.ring.last_lines(NOTICE_LINES, NOTICE_BYTES);
        let unread = state.ring.total().saturating_sub(state.read_to);
        let mut text = format!("[Job {} (`{}`) {how}.", self.id, short(&self.command));
        if last.is_empty() {
            text.push_str(" It printed nothing.]");
        } else {
            text.push_str(&format!(
                " {unread} bytes of its output are unread (read them with job_output); its last lines:]\n{last}"
            ));
        }
        text
    }
}

/// `exited with code 0 after 2.5s`, `was killed by signal 15 (SIGTERM) after 1m 3s`.
fn how_it_ended(outcome: &Result<ExecOutcome, String>, after: Duration) -> String {
    let after = run_time_text(after);
    match outcome {
        Err(why) => format!("could not run: {why}"),
        Ok(o) if o.timed_out => format!("was killed when its timeout passed, after {after}"),
        Ok(o) if o.aborted => format!("was ended with job_kill after {after}"),
        Ok(ExecOutcome {
            signal: Some(signal),
            ..
        }) => {
            let name = signal_name(*signal)
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!("was killed by signal {signal}{name} after {after}")
        }
        Ok(o) => format!(
            "exited with code {} after {after}",
            o.exit_code.unwrap_or_default()
        ),
    }
}

/// The command line as a notice names it: its first line, at most 80 characters.
pub(super) fn short(command: &str) -> String {
    let line = command.lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < command.len() {
        short.push('…');
    }
    short
}

/// A run time as a job's answers give it: `0.3s`, `12.0s`, `3m 05s`, `2h 01m`.
pub fn run_time_text(time: Duration) -> String {
    let secs = time.as_secs();
    match secs {
        0..60 => format!("{:.1}s", time.as_secs_f64()),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_times_read_at_a_glance() {
        assert_eq!(run_time_text(Duration::from_millis(31)), "0.0s");
        assert_eq!(run_time_text(Duration::from_millis(12_340)), "12.3s");
        assert_eq!(run_time_text(Duration::from_secs(185)), "3m 05s");
        assert_eq!(run_time_text(Duration::from_secs(7260)), "2h 01m");
    }

    #[test]
    fn a_notice_names_the_first_line_of_a_long_command() {
        assert_eq!(short("make\nmake test"), "make…");
        assert_eq!(short("true"), "true");
    }
}
