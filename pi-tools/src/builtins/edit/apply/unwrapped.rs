//! Placing an edit whose texts came in a wrapper (`wrappers.rs` reads them): tried only when
//! the text as sent is found nowhere; a wrapper is removed when its unwrapped oldText matches
//! the file exactly once, and the wrappers that match must all write the same bytes.

use super::{Locator, Placed, Stage};
use crate::builtins::edit::matching::Located;
use crate::builtins::edit::refusal;
use crate::builtins::edit::wrappers::{Wrapper, WrapperRemoved};
use crate::core::ToolError;

impl Locator<'_> {
    /// Edit `i` (its texts LF-only) without the wrapper it came in, when exactly one reading
    /// places it; `None` when no wrapper's reading matches.
    pub(super) fn place_unwrapped(
        &mut self,
        i: usize,
        old: &str,
        new_text: &str,
    ) -> Option<Result<Placed, ToolError>> {
        let mut readings: Vec<(Wrapper, Located, String)> = Vec::new();
        for wrapper in Wrapper::ALL {
            let Some((old, new)) = wrapper.unwrap(old, new_text) else {
                continue;
            };
            if old.is_empty() {
                continue;
            }
            // Exactly, and once: a wrapper removed is a guess, and forgiving more on top of
            // it would be a second one (and the normalised search would read the whole file
            // again for each wrapper).
            if let Some(at) = exactly_once(self.text, &old) {
                readings.push((wrapper, at, new));
            }
        }
        let (wrapper, at, new) = readings.first().cloned()?;
        if readings
            .iter()
            .any(|(_, other_at, other_new)| *other_at != at || *other_new != new)
        {
            let wrappers: Vec<&str> = readings.iter().map(|(w, ..)| w.words()).collect();
            return Some(Err(ToolError::new(refusal::wrappers_disagree(
                &self.labels.old_text(i),
                &wrappers,
                self.shown,
            ))));
        }
        self.wrappers.push(WrapperRemoved::new(i, wrapper));
        Some(Ok(Placed {
            edit: i,
            at: Located { fuzzy: true, ..at },
            new_text: new,
            stage: Stage::Exact,
        }))
    }
}

/// Where `old` occurs in `text`, when it occurs exactly once (overlapping occurrences
/// counted).
fn exactly_once(text: &str, old: &str) -> Option<Located> {
    let start = text.find(old)?;
    let step = old.chars().next().map_or(1, char::len_utf8);
    if text[start + step..].contains(old) {
        return None;
    }
    Some(Located {
        start,
        end: start + old.len(),
        fuzzy: false,
    })
}
