//! Reading a job's new output for the model: at most 2000 lines or 50KB from where the
//! last read ended (or an offset the model names), decoded as UTF-8 (a character split at
//! the end waits for the next read), cleaned of terminal control sequences for a job on a
//! pseudo-terminal, with a closing line saying where the read ended and how the job stands.

use std::time::Duration;

use crate::env::jobs::{Job, JobState, ring::DEFAULT_RING_BYTES, run_time_text};
use crate::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size};

use super::terminal_text;

/// How long output must pause before a read that waited for it returns early.
pub(super) const QUIET: Duration = Duration::from_millis(50);

/// The same after input was written: the program's answer (an echo, then the result a
/// moment later) should arrive whole.
pub(super) const QUIET_AFTER_INPUT: Duration = Duration::from_millis(250);

/// Waits up to `wait` for output: until some arrived and then paused for `quiet`, the job
/// ended, or the time passed. Returns at once when output is already unread.
pub(super) async fn settle(job: &Job, wait: Duration, quiet: Duration) {
    let deadline = tokio::time::Instant::now() + wait;
    if job.unread() == 0 && job.state() == JobState::Running {
        job.changed_or(deadline).await;
    }
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline || job.state() != JobState::Running {
            return;
        }
        let before = job.peek(None, 0).total;
        job.changed_or((now + quiet).min(deadline)).await;
        if job.peek(None, 0).total == before {
            return;
        }
    }
}

/// The job's output from `offset` (from where the last read ended when `None`) as the
/// model reads it, with the closing line; what was shown counts as read.
pub(super) fn new_output(job: &Job, offset: Option<u64>) -> String {
    let read = job.peek(offset, DEFAULT_MAX_BYTES);
    let end_of_output = read.start + read.bytes.len() as u64 == read.total;
    let cut = cut_point(
        &read.bytes,
        !end_of_output || job.state() == JobState::Running,
    );
    let raw = String::from_utf8_lossy(&read.bytes[..cut]);
    let text = if job.on_terminal() {
        terminal_text::clean(&raw)
    } else {
        raw.into_owned()
    };
    let end = read.start + cut as u64;
    job.mark_read(end);
    let mut answer = String::new();
    if read.dropped > 0 {
        answer.push_str(&format!(
            "[{} of output before byte {} were dropped: a job keeps only the last {} of its output.]\n",
            format_size(read.dropped),
            read.start,
            format_size(DEFAULT_RING_BYTES as u64)
        ));
    }
    let body = text.strip_suffix('\n').unwrap_or(&text);
    answer.push_str(if body.is_empty() {
        "(no new output)"
    } else {
        body
    });
    let id = job.id();
    let shown = if cut == 0 {
        format!("No new output; the output is {} bytes.", read.total)
    } else {
        format!(
            "Showed output bytes {}-{end} of {}.",
            read.start, read.total
        )
    };
    let more = read.total - end;
    let rest = if more > 0 {
        format!(" {more} more bytes are unread: call job_output again for them.")
    } else {
        String::new()
    };
    let status = match job.end_sentence() {
        Some(how) => format!("Job {id} {how}."),
        None => format!(
            "Job {id} is still running after {}.",
            run_time_text(job.run_time())
        ),
    };
    answer.push_str(&format!("\n\n[{status} {shown}{rest}]"));
    answer
}

/// Where to end a read of `bytes`: after at most [`DEFAULT_MAX_LINES`] lines and, when
/// more may follow (`open`), before a UTF-8 character split at the end.
fn cut_point(bytes: &[u8], open: bool) -> usize {
    let mut end = bytes.len();
    if let Some((at, _)) = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(DEFAULT_MAX_LINES - 1)
    {
        end = at + 1;
    }
    if open && end == bytes.len() {
        // An incomplete character at the end: leave it for the next read.
        if let Err(e) = std::str::from_utf8(&bytes[..end])
            && e.error_len().is_none()
        {
            end = e.valid_up_to();
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::cut_point;

    #[test]
    fn a_split_character_waits_and_lines_are_bounded() {
        let euro = "€".as_bytes();
        assert_eq!(cut_point(&euro[..2], true), 0);
        assert_eq!(cut_point(&euro[..2], false), 2);
        let many = "x\n".repeat(2500);
        assert_eq!(cut_point(many.as_bytes(), true), 4000);
    }
}
