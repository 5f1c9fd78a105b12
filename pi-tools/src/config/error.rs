//! Configuration problems, each located at `file:line:column` of the text it came from.

/// One problem in a configuration file, with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The file (or [`DEFAULT_ORIGIN`](super::DEFAULT_ORIGIN)).
    pub origin: String,
    /// 1-based line (0 when the problem has no position, e.g. an unreadable file).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.origin, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.origin, self.line, self.column, self.message
            )
        }
    }
}

/// Every problem found in a configuration, in file order.
///
/// Its `Debug` is its `Display` (the sentences), so `fn main() -> Result<(), ConfigError>`
/// and `?` print what is wrong rather than a struct dump.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ConfigError {
    /// The problems, at least one.
    pub problems: Vec<ConfigProblem>,
}

impl std::fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// 1-based line and character column of a byte offset.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
