//! Trigrams: the three-byte keys the index stores for every file, and the boolean queries
//! over them that a pattern implies.
//!
//! Bytes are folded to ASCII lower case on both sides (in the files as they are indexed, in
//! the patterns as they are turned into queries), so one index serves case-sensitive and
//! case-insensitive searches: a folded query is weaker than the exact one, never stronger.

/// A trigram as a key: three folded bytes, big-endian in the low 24 bits.
pub(crate) type Trigram = u32;

/// The folded form of one byte.
pub(crate) fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

/// The trigram of three bytes (folded).
pub(crate) fn key(a: u8, b: u8, c: u8) -> Trigram {
    (u32::from(fold(a)) << 16) | (u32::from(fold(b)) << 8) | u32::from(fold(c))
}

/// Collects the distinct trigrams of texts, reusing a 2 MiB bit set (one bit per possible
/// trigram) so a file costs time in its length and memory in its distinct trigrams only.
pub(crate) struct Extractor {
    seen: Vec<u64>,
    found: Vec<Trigram>,
}

impl Default for Extractor {
    fn default() -> Self {
        Extractor {
            seen: vec![0; (1 << 24) / 64],
            found: Vec::new(),
        }
    }
}

impl Extractor {
    /// The distinct trigrams of `text`, sorted.
    pub(crate) fn trigrams(&mut self, text: &[u8]) -> Box<[Trigram]> {
        self.found.clear();
        let mut window = 0u32;
        for (i, &b) in text.iter().enumerate() {
            window = ((window << 8) | u32::from(fold(b))) & 0xFF_FFFF;
            if i < 2 {
                continue;
            }
            let (word, bit) = ((window >> 6) as usize, 1u64 << (window & 63));
            if self.seen[word] & bit == 0 {
                self.seen[word] |= bit;
                self.found.push(window);
            }
        }
        for &t in &self.found {
            self.seen[(t >> 6) as usize] = 0;
        }
        self.found.sort_unstable();
        self.found.as_slice().into()
    }
}

/// What a file must contain for a pattern to match in it: a boolean formula over trigrams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Query {
    /// Every file may match (nothing narrows the search).
    All,
    /// No file can match.
    Nothing,
    /// Files holding this trigram.
    Has(Trigram),
    /// Files satisfying every one.
    And(Vec<Query>),
    /// Files satisfying at least one.
    Or(Vec<Query>),
}

impl Query {
    /// The conjunction of two queries, simplified.
    pub(crate) fn and(self, other: Query) -> Query {
        match (self, other) {
            (Query::All, q) | (q, Query::All) => q,
            (Query::Nothing, _) | (_, Query::Nothing) => Query::Nothing,
            (Query::And(mut a), Query::And(b)) => {
                a.extend(b);
                Query::And(a)
            }
            (Query::And(mut a), q) | (q, Query::And(mut a)) => {
                a.push(q);
                Query::And(a)
            }
            (a, b) => Query::And(vec![a, b]),
        }
    }

    /// The disjunction of two queries, simplified.
    pub(crate) fn or(self, other: Query) -> Query {
        match (self, other) {
            (Query::All, _) | (_, Query::All) => Query::All,
            (Query::Nothing, q) | (q, Query::Nothing) => q,
            (Query::Or(mut a), Query::Or(b)) => {
                a.extend(b);
                Query::Or(a)
            }
            (Query::Or(mut a), q) | (q, Query::Or(mut a)) => {
                a.push(q);
                Query::Or(a)
            }
            (a, b) => Query::Or(vec![a, b]),
        }
    }

    /// What a file must hold to contain `text`: each of its trigrams (`All` when it is
    /// shorter than three bytes).
    pub(crate) fn contains(text: &[u8]) -> Query {
        let mut keys: Vec<Trigram> = text.windows(3).map(|w| key(w[0], w[1], w[2])).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.into_iter()
            .map(Query::Has)
            .fold(Query::All, Query::and)
    }

    /// Whether a file with these (sorted) trigrams satisfies the query.
    pub(crate) fn admits(&self, trigrams: &[Trigram]) -> bool {
        match self {
            Query::All => true,
            Query::Nothing => false,
            Query::Has(t) => trigrams.binary_search(t).is_ok(),
            Query::And(qs) => qs.iter().all(|q| q.admits(trigrams)),
            Query::Or(qs) => qs.iter().any(|q| q.admits(trigrams)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_folds_case_and_keeps_each_trigram_once() {
        let mut x = Extractor::default();
        let got = x.trigrams(b"AbcAbc");
        let want = {
            let mut v = vec![
                key(b'a', b'b', b'c'),
                key(b'b', b'c', b'a'),
                key(b'c', b'a', b'b'),
            ];
            v.sort_unstable();
            v
        };
        assert_eq!(&*got, &want[..]);
        // The bit set is left clean for the next file.
        assert_eq!(&*x.trigrams(b"xy"), &[] as &[Trigram]);
        assert_eq!(&*x.trigrams(b"abc"), &[key(b'a', b'b', b'c')]);
    }

    #[test]
    fn a_text_query_needs_every_trigram() {
        let q = Query::contains(b"Needle");
        let mut x = Extractor::default();
        assert!(q.admits(&x.trigrams(b"a needle here")));
        assert!(q.admits(&x.trigrams(b"NEEDLE")));
        assert!(!q.admits(&x.trigrams(b"need le")));
        assert_eq!(Query::contains(b"ab"), Query::All);
    }
}
