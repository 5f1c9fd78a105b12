//! Why a subcommand stopped, and the exit code that says so.

use std::process::ExitCode;

/// A subcommand that could not do its work: a message for standard error and an exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The exit code: [`Failure::USAGE`] for unusable input, [`Failure::GENERAL`] otherwise.
    pub code: u8,
    /// What went wrong and how to fix it; one line per problem.
    pub message: String,
}

impl Failure {
    /// The exit code for anything but unusable input (configuration, schema, I/O problems).
    pub const GENERAL: u8 = 1;
    /// The exit code for input the command cannot use (as for command-line usage errors).
    pub const USAGE: u8 = 2;

    /// A failure with exit code 1.
    pub fn general(message: impl Into<String>) -> Self {
        Failure {
            code: Self::GENERAL,
            message: message.into(),
        }
    }

    /// A failure with exit code 2: the input (batch, flags) is unusable.
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: Self::USAGE,
            message: message.into(),
        }
    }

    /// Prints the message to standard error, each line as its own `error: ` line (a
    /// configuration with several problems has one line per problem), and returns the exit
    /// code.
    pub fn report(&self) -> ExitCode {
        for line in self.message.lines() {
            eprintln!("error: {line}");
        }
        ExitCode::from(self.code)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}
