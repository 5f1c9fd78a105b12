//! Putting the searched files' results together for grep: in walk order, cut to the limit
//! of matches and the output budget (see [`super::scan`]).

use std::collections::VecDeque;

use super::scan::{FileHits, SearchOutcome, SearchSpec, Searched, reason};

/// Puts file results together in order and decides when enough has been seen.
pub(crate) struct Collector<'a> {
    spec: &'a SearchSpec,
    /// What has been collected.
    pub outcome: SearchOutcome,
    bytes: usize,
    lines: usize,
    /// Enough has been seen: the limit of matches (plus one) or the output budget.
    pub done: bool,
}

impl<'a> Collector<'a> {
    /// Collects for `spec`.
    pub(crate) fn new(spec: &'a SearchSpec) -> Self {
        Collector {
            spec,
            outcome: SearchOutcome::default(),
            bytes: 0,
            lines: 0,
            done: false,
        }
    }

    /// Takes the next file's hits, in walk order.
    pub(crate) fn accept(&mut self, mut hits: FileHits) {
        let found = hits.match_count();
        if found == 0 {
            return;
        }
        let room = self.spec.limit - self.outcome.matches;
        if room == 0 {
            self.outcome.more_matches = true;
            self.done = true;
            return;
        }
        if found > room {
            trim_after_match(&mut hits, room, self.spec.context);
            self.outcome.more_matches = true;
            self.done = true;
        }
        self.outcome.matches += found.min(room);
        let (bytes, lines) = hits.output_size();
        self.bytes += bytes;
        self.lines += lines;
        self.outcome.files.push(hits);
        if self.bytes > self.spec.max_bytes || self.lines > self.spec.max_lines {
            self.outcome.output_full = true;
            self.done = true;
        }
    }
}

/// Keeps the first `keep` matches and the context after the last of them, dropping the rest
/// (including context that only belongs to the dropped matches).
fn trim_after_match(hits: &mut FileHits, keep: usize, context: usize) {
    let mut seen = 0;
    let mut last_kept = 0u64;
    let mut cut = hits.lines.len();
    for (i, line) in hits.lines.iter().enumerate() {
        if line.is_match {
            if seen == keep {
                cut = i;
                break;
            }
            seen += 1;
            last_kept = line.number;
        }
    }
    hits.lines.truncate(cut);
    let last_line = last_kept.saturating_add(context as u64);
    hits.lines.retain(|l| l.number <= last_line);
}

/// Files' results as they arrive, released to the collector in walk order.
#[derive(Default)]
pub(super) struct InOrder {
    /// The number of the next file the collector is owed.
    pub(super) next: u64,
    /// Results of files `next`, `next + 1`, … that arrived early (`None` slots: not yet).
    early: VecDeque<Option<Searched>>,
}

impl InOrder {
    pub(super) fn take(&mut self, (seq, hits): (u64, Searched), collector: &mut Collector<'_>) {
        let Some(slot) = seq.checked_sub(self.next).map(|s| s as usize) else {
            return;
        };
        if self.early.len() <= slot {
            self.early.resize_with(slot + 1, || None);
        }
        self.early[slot] = Some(hits);
        while let Some(Some(hits)) = self.early.front_mut().map(Option::take) {
            self.early.pop_front();
            self.next += 1;
            match hits {
                Ok(Some(hits)) if !collector.done => collector.accept(hits),
                Err((rel, err)) if !collector.done => {
                    collector.outcome.skipped.note(&rel, &reason(&err));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::scan::HitLine;

    fn line(number: u64, is_match: bool) -> HitLine {
        HitLine {
            number,
            text: format!("l{number}"),
            is_match,
            clipped: false,
        }
    }

    #[test]
    fn trimming_keeps_only_the_kept_matches_context() {
        let mut hits = FileHits {
            rel: "a".into(),
            lines: vec![
                line(9, false),
                line(10, true),
                line(11, false),
                line(12, false),
                line(18, false),
                line(19, false),
                line(20, true),
                line(21, false),
            ],
        };
        trim_after_match(&mut hits, 1, 2);
        let kept: Vec<u64> = hits.lines.iter().map(|l| l.number).collect();
        assert_eq!(kept, vec![9, 10, 11, 12]);
    }
}
