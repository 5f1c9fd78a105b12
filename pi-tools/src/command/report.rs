//! What a finished command tells the model: the output's tail, a notice naming what was
//! cut and where the whole output is, and a sentence when the command failed; and the
//! details a user interface gets.

use crate::core::{ResourceLink, ToolError};
use crate::tool::ToolOutput;
use crate::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, Truncation, format_size};

use super::capture::OutputBuffer;
use super::stream::Finished;
use super::{CommandDetails, seconds_text, signal_name};

/// The tool's answer for a finished command: its text and details, an error when the
/// command failed (a timeout, a cancellation, a signal or a non-zero exit).
pub(crate) fn answer(
    finished: Finished,
    timeout: Option<std::time::Duration>,
    success_codes: &[i32],
) -> Result<ToolOutput<CommandDetails>, ToolError> {
    let Finished {
        outcome,
        mut output,
    } = finished;
    output.finish();
    let shown = output.truncated_tail();
    let mut text = shown_output(&shown);
    if shown.truncated {
        text.push_str(&format!("\n\n[{}]", truncation_notice(&output, &shown)));
    }
    let details = CommandDetails {
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        timed_out: outcome.timed_out,
        aborted: outcome.aborted,
        total_lines: output.total_lines(),
        total_bytes: output.total_bytes(),
        truncated_by: shown.truncated_by.filter(|_| shown.truncated),
        full_output_path: output.spill_path().map(|p| p.display().to_string()),
        spill_dropped_bytes: output.spill_dropped_bytes(),
        job: None,
    };
    let link = spill_link(&output);
    match failure(&details, timeout, success_codes) {
        Some(failure) => {
            text.push_str(&format!("\n\n{failure}"));
            let details = serde_json::to_value(&details).unwrap_or_default();
            let error = ToolError::new(text).with_details(details);
            Err(match link {
                Some(link) => error.with_link(link),
                None => error,
            })
        }
        None => {
            let out = ToolOutput::text(text).with_details(details);
            Ok(match link {
                Some(link) => out.with_link(link),
                None => out,
            })
        }
    }
}

/// The link to the file holding the whole output, when some of it was spilled there.
pub(crate) fn spill_link(output: &OutputBuffer) -> Option<ResourceLink> {
    let path = output.spill_path()?;
    let size = std::fs::metadata(path).map(|m| m.len()).ok();
    let link = ResourceLink::file(path)
        .with_mime_type("text/plain")
        .with_description(format!(
            "The command's whole output ({} lines, {}).",
            output.total_lines(),
            format_size(output.total_bytes())
        ));
    Some(match size {
        Some(size) => link.with_size(size),
        None => link,
    })
}

/// The shown output without its final newline (which ends the last line and is not part of
/// what the model needs to see), or `(no output)`.
pub(crate) fn shown_output(shown: &Truncation) -> String {
    let body = shown.content.strip_suffix('\n').unwrap_or(&shown.content);
    if body.is_empty() {
        "(no output)".to_owned()
    } else {
        body.to_owned()
    }
}

/// What part of the output is shown, and where the rest is.
pub(crate) fn truncation_notice(output: &OutputBuffer, shown: &Truncation) -> String {
    let full = full_output_note(output);
    let total = output.total_lines();
    let start = (total + 1).saturating_sub(shown.output_lines as u64);
    if shown.last_line_partial {
        format!(
            "Showing the last {} of line {total} (the line is {}). {full}",
            format_size(shown.output_bytes as u64),
            format_size(output.last_line_bytes())
        )
    } else if shown.truncated_by == Some(TruncatedBy::Lines) {
        format!("Showing lines {start}-{total} of {total}. {full}")
    } else {
        format!(
            "Showing lines {start}-{total} of {total} ({} limit). {full}",
            format_size(DEFAULT_MAX_BYTES as u64)
        )
    }
}

/// Where the whole output is: the spill file (and what it dropped at its cap), or why it
/// could not be kept.
fn full_output_note(output: &OutputBuffer) -> String {
    match (output.spill_path(), output.spill_error()) {
        (Some(path), _) if output.spill_dropped_bytes() > 0 => format!(
            "Output's last {} (the first {} were dropped at the {} spill limit): {}",
            format_size(output.total_bytes() - output.spill_dropped_bytes()),
            format_size(output.spill_dropped_bytes()),
            format_size(output.max_spill_bytes()),
            path.display()
        ),
        (Some(path), _) => format!("Full output: {}", path.display()),
        (None, Some(err)) => format!("The full output could not be saved: {err}"),
        (None, None) => "The full output was not saved".to_owned(),
    }
}

/// The sentence that says how the command failed, if it did.
fn failure(
    details: &CommandDetails,
    timeout: Option<std::time::Duration>,
    success_codes: &[i32],
) -> Option<String> {
    if details.timed_out {
        let after = timeout.unwrap_or_default().as_secs_f64();
        return Some(format!("Command timed out after {}", seconds_text(after)));
    }
    if details.aborted {
        return Some("Command aborted".to_owned());
    }
    if let Some(signal) = details.signal {
        let name = signal_name(signal)
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        return Some(format!("Command was killed by signal {signal}{name}"));
    }
    match details.exit_code {
        None => None,
        Some(code) if success_codes.contains(&code) => None,
        Some(code) => Some(format!("Command exited with code {code}")),
    }
}
