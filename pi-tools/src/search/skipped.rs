//! What a search could not read, for the sentence at the end of its result.

/// What a search could not read: how many, and the first few relative paths (with why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    /// How many could not be read.
    pub count: usize,
    /// The first five of them, as `path (reason)`.
    pub first: Vec<String>,
}

impl Skipped {
    /// How many skipped paths a result names.
    pub(crate) const SHOWN: usize = 5;

    /// Notes one more.
    pub fn note(&mut self, rel: &str, reason: &str) {
        self.count += 1;
        if self.first.len() < Self::SHOWN {
            let rel = if rel.is_empty() { "." } else { rel };
            self.first.push(format!("{rel} ({reason})"));
        }
    }

    /// A sentence (without its full stop) for the end of a result, naming the skipped
    /// things as `one` or `many`; `None` when nothing was skipped.
    pub fn notice(&self, one: &str, many: &str) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let more = self.count - self.first.len();
        Some(format!(
            "{} {} could not be read and {} skipped: {}{}",
            self.count,
            if self.count == 1 { one } else { many },
            if self.count == 1 { "was" } else { "were" },
            self.first.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }
}
