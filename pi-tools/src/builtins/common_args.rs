//! What the built-ins' arguments have in common: the default directory a model may leave
//! out, and a `limit` argument read as a count.

/// `path` when the model leaves it out: the working directory (the schema shows it as the
/// default).
pub(crate) fn current_dir() -> Option<String> {
    Some(".".to_owned())
}

/// A `limit` argument as a count: `default` when the model left it out, never below 1, and
/// `usize::MAX` for a number this machine cannot count to.
pub(crate) fn limit(given: Option<u64>, default: usize) -> usize {
    given
        .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        .max(1)
}
