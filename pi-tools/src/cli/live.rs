//! `pi-tools run` for a person: a progress line per running call while the batch runs, and
//! each finished call through its tool's renderers.
//!
//! Progress goes to standard error. On a terminal it is a block of lines, one per running
//! call (a spinner, the tool's name, the elapsed time and the first line of its last update),
//! redrawn in place; otherwise (or with `TERM=dumb`) each new update line is printed once,
//! without control codes. Finished calls go to standard output in completion order:
//! `render_call`, then `render_result` indented, in colour as `--color` decides.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::task::JoinHandle;

use crate::core::{BatchOutcome, EventSink, ToolEvent, ToolResult};
use crate::tool::ToolDefinition;
use crate::tool::render::{Color, Style, Styled};

use super::color::Terminal;

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const TICK: Duration = Duration::from_millis(100);

/// The human view of one batch; an [`EventSink`] for the runner.
pub(super) struct LiveView {
    definitions: Vec<Arc<dyn ToolDefinition>>,
    ansi: bool,
    terminal_progress: bool,
    /// Results and the summary go to standard error (`run --dialect`) instead of output.
    on_stderr: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: Vec<Running>,
    /// Lines of the progress block currently on screen.
    drawn: usize,
    frame: usize,
}

struct Running {
    id: String,
    name: String,
    args: Value,
    started: Instant,
    last_update: Option<String>,
}

impl LiveView {
    /// A view writing to this process's standard output and error (only error when
    /// `on_stderr`), with a ticker that keeps the spinners turning while calls run (only when
    /// `terminal` allows cursor movement).
    pub(super) fn start(
        definitions: Vec<Arc<dyn ToolDefinition>>,
        terminal: Terminal,
        on_stderr: bool,
    ) -> (Arc<Self>, Ticker) {
        let view = Arc::new(LiveView {
            definitions,
            ansi: terminal.colour,
            terminal_progress: terminal.cursor,
            on_stderr,
            state: Mutex::new(State::default()),
        });
        let ticker = view.terminal_progress.then(|| {
            let view = view.clone();
            tokio::spawn(async move {
                let mut interval = tokio::time::interval(TICK);
                loop {
                    interval.tick().await;
                    let mut state = view.lock();
                    if !state.running.is_empty() {
                        state.frame = state.frame.wrapping_add(1);
                        view.redraw(&mut state);
                    }
                }
            })
        });
        (view, Ticker(ticker))
    }

    /// Clears the progress block and prints the batch's summary line.
    pub(super) fn finish(&self, outcome: &BatchOutcome, interrupted: bool) {
        let mut state = self.lock();
        self.clear(&mut state);
        let failed = outcome.messages.iter().filter(|m| m.is_error).count();
        let total = outcome.messages.len();
        let mut summary = match total {
            0 => "The batch has no tool calls.".to_owned(),
            1 => format!("1 call: {} succeeded, {failed} failed.", 1 - failed),
            n => format!("{n} calls: {} succeeded, {failed} failed.", n - failed),
        };
        if interrupted {
            summary.push_str(" The batch was interrupted.");
        }
        if outcome.terminate {
            summary.push_str(" Every result asks the agent to stop after this batch.");
        }
        let style = if failed > 0 || interrupted {
            Style::fg(Color::Yellow)
        } else {
            Style::fg(Color::Green)
        };
        self.print(&Styled::new().push(summary, style));
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn definition(&self, name: &str) -> Option<&Arc<dyn ToolDefinition>> {
        self.definitions.iter().find(|d| d.spec().name == name)
    }

    fn started(&self, id: String, name: String, args: Value) {
        let mut state = self.lock();
        state.running.push(Running {
            id,
            name,
            args,
            started: Instant::now(),
            last_update: None,
        });
        if self.terminal_progress {
            self.redraw(&mut state);
        }
    }

    fn updated(&self, id: &str, partial: &ToolResult) {
        let mut state = self.lock();
        let Some(call) = state.running.iter_mut().find(|r| r.id == id) else {
            return;
        };
        let text = partial.text_content();
        let line = first_line(&text);
        if line.is_empty() || call.last_update.as_deref() == Some(line) {
            return;
        }
        call.last_update = Some(line.to_owned());
        if self.terminal_progress {
            self.redraw(&mut state);
        } else {
            eprintln!("[{}] {}: {line}", call.id, call.name);
        }
    }

    fn ended(&self, id: &str, name: &str, result: &ToolResult, is_error: bool) {
        let mut state = self.lock();
        let args = match state.running.iter().position(|r| r.id == id) {
            Some(index) => state.running.remove(index).args,
            None => Value::Object(Default::default()),
        };
        self.clear(&mut state);
        let (call, rendered) = match self.definition(name) {
            Some(def) => (def.render_call(&args), def.render_result(result, is_error)),
            None => (
                fallback_call(name, &args),
                fallback_result(result, is_error),
            ),
        };
        let mark = if is_error {
            Styled::new().push("✗ ", Style::fg(Color::Red).bold())
        } else {
            Styled::new().push("✓ ", Style::fg(Color::Green).bold())
        };
        let mut text = mark;
        text.append(call);
        let mut out = self.styled(&text);
        for line in self.styled(&rendered).lines() {
            out.push('\n');
            if !line.is_empty() {
                out.push_str("  ");
                out.push_str(line);
            }
        }
        self.print_text(&out);
        if self.terminal_progress {
            self.redraw(&mut state);
        }
    }

    /// Draws the progress block in place of the previous one.
    fn redraw(&self, state: &mut State) {
        let width = terminal_width();
        let mut block = erase(state.drawn);
        let spinner = SPINNER[state.frame % SPINNER.len()];
        for call in &state.running {
            let mut line = format!(
                "{spinner} {} {:.1}s",
                call.name,
                call.started.elapsed().as_secs_f64()
            );
            if let Some(update) = &call.last_update {
                line.push_str("  ");
                line.push_str(update);
            }
            block.push_str(&truncate(&line, width.saturating_sub(1)));
            block.push('\n');
        }
        state.drawn = state.running.len();
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(block.as_bytes()).and_then(|()| err.flush());
    }

    /// Removes the progress block from the screen.
    fn clear(&self, state: &mut State) {
        if state.drawn > 0 {
            let mut err = std::io::stderr().lock();
            let _ = err
                .write_all(erase(state.drawn).as_bytes())
                .and_then(|()| err.flush());
            state.drawn = 0;
        }
    }

    fn styled(&self, text: &Styled) -> String {
        if self.ansi {
            text.to_ansi()
        } else {
            text.to_plain()
        }
    }

    fn print(&self, text: &Styled) {
        self.print_text(&self.styled(text));
    }

    fn print_text(&self, text: &str) {
        // A reader that went away stops seeing output; the batch still runs to its end.
        if self.on_stderr {
            let mut out = std::io::stderr().lock();
            let _ = writeln!(out, "{text}").and_then(|()| out.flush());
        } else {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{text}").and_then(|()| out.flush());
        }
    }
}

impl EventSink for LiveView {
    async fn emit(&self, event: ToolEvent) {
        match event {
            ToolEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => self.started(tool_call_id, tool_name, args),
            ToolEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => self.updated(&tool_call_id, &partial_result),
            ToolEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => self.ended(&tool_call_id, &tool_name, &result, is_error),
            // A nested call shows in what its caller makes of it; `--json` has its events.
            ToolEvent::ToolExecutionLog { .. }
            | ToolEvent::Notice { .. }
            | ToolEvent::ToolExecutionNested { .. }
            | ToolEvent::MessageStart { .. }
            | ToolEvent::MessageEnd { .. } => {}
        }
    }
}

/// Keeps the spinners turning; stops when dropped.
pub(super) struct Ticker(Option<JoinHandle<()>>);

impl Drop for Ticker {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// A call to a tool this binary does not have: its name and arguments.
fn fallback_call(name: &str, args: &Value) -> Styled {
    Styled::new()
        .push(name, Style::fg(Color::Cyan).bold())
        .push(format!(" {args}"), Style::fg(Color::Gray))
}

/// The result of a call to a tool this binary does not have: its text.
fn fallback_result(result: &ToolResult, is_error: bool) -> Styled {
    let style = if is_error {
        Style::fg(Color::Red)
    } else {
        Style::PLAIN
    };
    Styled::new().push(result.text_content(), style)
}

/// Moves the cursor up `lines` lines to the first column and erases to the end of the screen.
fn erase(lines: usize) -> String {
    if lines == 0 {
        String::new()
    } else {
        format!("\x1b[{lines}F\x1b[J")
    }
}

/// The first non-blank line of `text`, trimmed.
fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// At most `width` characters of `line` (one line must stay one row for the redraw).
fn truncate(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        line.to_owned()
    } else {
        let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The terminal's width from `COLUMNS`, else 80.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c: &usize| c > 10)
        .unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_fit_one_row() {
        assert_eq!(truncate("sleep_ms 1.0s", 20), "sleep_ms 1.0s");
        assert_eq!(truncate("abcdefghij", 5), "abcd…");
        assert_eq!(first_line("\n  second line\nthird"), "second line");
        assert_eq!(erase(0), "");
        assert_eq!(erase(3), "\x1b[3F\x1b[J");
    }
}
