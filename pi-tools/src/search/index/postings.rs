//! Posting lists: for every trigram, the ids of the files that hold it, ascending, stored as
//! varint-encoded gaps (most gaps fit one byte), all lists back to back in one buffer.

use std::collections::HashMap;

use super::trigrams::{Query, Trigram};

/// The most trigrams of a conjunction whose lists are read (the rarest).
const MAX_AND_TRIGRAMS: usize = 6;

/// Posting lists being built, for files added in ascending id order.
#[derive(Default)]
pub(crate) struct Builder {
    lists: HashMap<Trigram, Growing>,
}

struct Growing {
    bytes: Vec<u8>,
    last: u32,
}

impl Builder {
    /// Adds file `id` (greater than every id added before) holding `trigrams`.
    pub(crate) fn add(&mut self, id: u32, trigrams: &[Trigram]) {
        for &t in trigrams {
            let list = self.lists.entry(t).or_insert(Growing {
                bytes: Vec::new(),
                last: 0,
            });
            // The first id of a list is its gap from 0.
            let gap = if list.bytes.is_empty() {
                id
            } else {
                id - list.last
            };
            push_varint(&mut list.bytes, gap);
            list.last = id;
        }
    }

    /// Appends `later`, whose ids are all greater than this builder's.
    pub(crate) fn append(&mut self, later: Builder) {
        for (t, list) in later.lists {
            match self.lists.get_mut(&t) {
                None => {
                    self.lists.insert(t, list);
                }
                Some(mine) => {
                    // Re-encode the first id of the later list as a gap from this one's last.
                    let (first, used) = read_varint(&list.bytes, 0);
                    push_varint(&mut mine.bytes, first - mine.last);
                    mine.bytes.extend_from_slice(&list.bytes[used..]);
                    mine.last = list.last;
                }
            }
        }
    }

    /// The finished, compact lists.
    pub(crate) fn freeze(self) -> Postings {
        let mut keys: Vec<Trigram> = self.lists.keys().copied().collect();
        keys.sort_unstable();
        let total = self.lists.values().map(|l| l.bytes.len()).sum();
        let mut data = Vec::with_capacity(total);
        let mut ends = Vec::with_capacity(keys.len());
        let mut lists = self.lists;
        for t in &keys {
            if let Some(list) = lists.remove(t) {
                data.extend_from_slice(&list.bytes);
            }
            ends.push(data.len() as u64);
        }
        Postings { keys, ends, data }
    }
}

/// Frozen posting lists.
#[derive(Default)]
pub(crate) struct Postings {
    /// The trigrams that occur, ascending.
    keys: Vec<Trigram>,
    /// Where each trigram's list ends in `data`.
    ends: Vec<u64>,
    data: Vec<u8>,
}

impl Postings {
    /// Bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.keys.capacity() * 4 + self.ends.capacity() * 8 + self.data.capacity()
    }

    /// At most how many files hold `t` (its list's length in bytes: each id takes one or
    /// more), without decoding the list.
    fn estimate(&self, t: Trigram) -> usize {
        match self.keys.binary_search(&t) {
            Ok(at) => {
                let start = if at == 0 { 0 } else { self.ends[at - 1] };
                (self.ends[at] - start) as usize
            }
            Err(_) => 0,
        }
    }

    /// At most how many files may satisfy `query` (`count`: all of them), cheaply.
    pub(crate) fn bound(&self, query: &Query, count: usize) -> usize {
        match query {
            Query::All => count,
            Query::Nothing => 0,
            Query::Has(t) => self.estimate(*t).min(count),
            Query::And(qs) => qs
                .iter()
                .map(|q| self.bound(q, count))
                .min()
                .unwrap_or(count),
            Query::Or(qs) => qs
                .iter()
                .map(|q| self.bound(q, count))
                .sum::<usize>()
                .min(count),
        }
    }

    /// The ids of files holding `t`, ascending.
    fn list(&self, t: Trigram) -> Vec<u32> {
        let Ok(at) = self.keys.binary_search(&t) else {
            return Vec::new();
        };
        let start = if at == 0 {
            0
        } else {
            self.ends[at - 1] as usize
        };
        let bytes = &self.data[start..self.ends[at] as usize];
        let mut ids = Vec::new();
        let (mut pos, mut id) = (0, 0u32);
        while pos < bytes.len() {
            let (gap, used) = read_varint(bytes, pos);
            id += gap;
            pos += used;
            ids.push(id);
        }
        ids
    }

    /// The ids of files (out of `count`) that may satisfy `query`, ascending; `None` when
    /// every file may.
    pub(crate) fn eval(&self, query: &Query, count: u32) -> Option<Vec<u32>> {
        match query {
            Query::All => None,
            Query::Nothing => Some(Vec::new()),
            Query::Has(t) => Some(self.list(*t)),
            Query::And(qs) => {
                // The rarest few trigrams narrow as well as all of them, and decoding the
                // common ones is most of the cost; the rest are left out (a weaker query,
                // still one every matching file satisfies).
                let mut order: Vec<(usize, &Query)> = qs
                    .iter()
                    .map(|q| (self.bound(q, count as usize), q))
                    .collect();
                order.sort_by_key(|(bound, _)| *bound);
                let mut trigrams = 0;
                let mut acc: Option<Vec<u32>> = None;
                for (_, q) in order {
                    if matches!(q, Query::Has(_)) {
                        if trigrams == MAX_AND_TRIGRAMS {
                            continue;
                        }
                        trigrams += 1;
                    }
                    let Some(ids) = self.eval(q, count) else {
                        continue;
                    };
                    acc = Some(match acc {
                        None => ids,
                        Some(a) => intersect(&a, &ids),
                    });
                    if acc.as_ref().is_some_and(Vec::is_empty) {
                        break;
                    }
                }
                acc
            }
            Query::Or(qs) => {
                let mut acc = Vec::new();
                for q in qs {
                    acc = union(&acc, &self.eval(q, count)?);
                }
                Some(acc)
            }
        }
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len() + b.len()));
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => break,
        };
        out.push(next);
    }
    out
}

fn push_varint(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The number at `pos` and how many bytes it took.
fn read_varint(bytes: &[u8], pos: usize) -> (u32, usize) {
    let (mut n, mut shift, mut used) = (0u32, 0, 0);
    while let Some(&b) = bytes.get(pos + used) {
        n |= u32::from(b & 0x7F) << shift;
        used += 1;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
    (n, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_built_in_parts_equal_lists_built_at_once() {
        let files: Vec<Vec<Trigram>> = (0..300u32)
            .map(|i| (0..5).filter(|t| (i * 7 + t) % 3 != 0).collect())
            .collect();
        let mut whole = Builder::default();
        let (mut first, mut second) = (Builder::default(), Builder::default());
        for (id, ts) in files.iter().enumerate() {
            whole.add(id as u32 * 1000, ts);
            let part = if id < 150 { &mut first } else { &mut second };
            part.add(id as u32 * 1000, ts);
        }
        first.append(second);
        let (whole, parts) = (whole.freeze(), first.freeze());
        for t in 0..5 {
            let want: Vec<u32> = (0..300u32)
                .filter(|i| (i * 7 + t) % 3 != 0)
                .map(|i| i * 1000)
                .collect();
            assert_eq!(whole.list(t), want);
            assert_eq!(parts.list(t), want);
        }
        let q = Query::Or(vec![
            Query::And(vec![Query::Has(0), Query::Has(1)]),
            Query::Has(9),
        ]);
        assert_eq!(
            whole.eval(&q, 300),
            Some(intersect(&whole.list(0), &whole.list(1)))
        );
        assert_eq!(
            whole.eval(&Query::Or(vec![Query::All, Query::Has(1)]), 300),
            None
        );
    }
}
