//! `--color auto|always|never`, `NO_COLOR` and `TERM=dumb`: whether output carries colour
//! codes and whether progress may move the cursor.

use std::ffi::OsStr;

use clap::ValueEnum;

/// The `--color` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum ColorChoice {
    /// Colour a terminal, unless `NO_COLOR` is set (not empty) or `TERM` is `dumb`.
    Auto,
    /// Always colour, even into a pipe or a file.
    Always,
    /// Never colour.
    Never,
}

/// What the output may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Terminal {
    /// Colour codes on standard output.
    pub colour: bool,
    /// A progress block redrawn in place on standard error (cursor movement).
    pub cursor: bool,
}

impl Terminal {
    /// Decides from the flag, the `NO_COLOR` and `TERM` variables and whether standard
    /// output and standard error are terminals. A dumb terminal cannot move the cursor, so
    /// it gets the line-by-line progress whatever the flag says.
    pub(super) fn decide(
        choice: ColorChoice,
        no_color: Option<&OsStr>,
        term: Option<&OsStr>,
        stdout_is_terminal: bool,
        stderr_is_terminal: bool,
    ) -> Terminal {
        let dumb = term.is_some_and(|t| t == "dumb");
        let no_color = no_color.is_some_and(|v| !v.is_empty());
        let colour = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_is_terminal && !no_color && !dumb,
        };
        Terminal {
            colour,
            cursor: stderr_is_terminal && !dumb,
        }
    }

    /// [`Terminal::decide`] for this process.
    pub(super) fn of_process(choice: ColorChoice) -> Terminal {
        use std::io::IsTerminal;
        Terminal::decide(
            choice,
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var_os("TERM").as_deref(),
            std::io::stdout().is_terminal(),
            std::io::stderr().is_terminal(),
        )
    }

    /// As [`Terminal::of_process`], for a view that writes only to standard error.
    pub(super) fn of_stderr(choice: ColorChoice) -> Terminal {
        use std::io::IsTerminal;
        let stderr = std::io::stderr().is_terminal();
        Terminal::decide(
            choice,
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var_os("TERM").as_deref(),
            stderr,
            stderr,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(choice: ColorChoice, no_color: Option<&str>, term: Option<&str>) -> Terminal {
        Terminal::decide(
            choice,
            no_color.map(OsStr::new),
            term.map(OsStr::new),
            true,
            true,
        )
    }

    #[test]
    fn auto_colours_a_terminal_unless_no_color_or_a_dumb_terminal() {
        let full = Terminal {
            colour: true,
            cursor: true,
        };
        assert_eq!(
            decide(ColorChoice::Auto, None, Some("xterm-256color")),
            full
        );
        assert_eq!(
            decide(ColorChoice::Auto, Some("1"), Some("xterm")),
            Terminal {
                colour: false,
                cursor: true
            }
        );
        // An empty NO_COLOR does not count, as the convention says.
        assert_eq!(decide(ColorChoice::Auto, Some(""), None), full);
        assert_eq!(
            decide(ColorChoice::Auto, None, Some("dumb")),
            Terminal {
                colour: false,
                cursor: false
            }
        );
        let piped = Terminal::decide(ColorChoice::Auto, None, None, false, false);
        assert_eq!(
            piped,
            Terminal {
                colour: false,
                cursor: false
            }
        );
    }

    #[test]
    fn always_and_never_decide_colour_but_a_dumb_terminal_never_moves_the_cursor() {
        assert_eq!(
            decide(ColorChoice::Always, Some("1"), Some("dumb")),
            Terminal {
                colour: true,
                cursor: false
            }
        );
        let piped = Terminal::decide(ColorChoice::Always, None, None, false, false);
        assert!(piped.colour && !piped.cursor);
        assert_eq!(
            decide(ColorChoice::Never, None, Some("xterm")),
            Terminal {
                colour: false,
                cursor: true
            }
        );
    }
}
