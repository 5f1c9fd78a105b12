//! The trigram query a pattern implies: what any file holding a match must contain, derived
//! from the pattern's syntax tree (regex-syntax's HIR, as the matcher itself parses it), in
//! the manner of Russ Cox's codesearch.
//!
//! Each part of the pattern is described either by the exact set of (folded) strings it can
//! match, while that set stays small, or by a query it implies; a concatenation multiplies
//! exact sets, an alternation joins them, and a set that grows too large (or a part that
//! matches arbitrary text) turns into a query: every string of the set needs all of its
//! trigrams. Anything the analysis does not understand gives `All`, a full scan.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::trigrams::{Query, fold};

/// The most strings an exact set may hold before it turns into a query.
const MAX_EXACT: usize = 64;

/// The most characters a class may hold to be enumerated into an exact set.
const MAX_CLASS: usize = 16;

/// The query for grep's pattern and flags: `All` when nothing can narrow the search.
pub(crate) fn query_for(pattern: &str, literal: bool, ignore_case: bool) -> Query {
    let text = if literal {
        regex_syntax::escape(pattern)
    } else {
        pattern.to_string()
    };
    let parsed = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .utf8(false)
        .multi_line(true)
        .build()
        .parse(&text);
    match parsed {
        Ok(hir) => info(&hir).into_query(),
        Err(_) => Query::All,
    }
}

/// What a part of a pattern is known to match.
struct Info {
    /// The strings it matches exactly (folded), when few enough to list.
    exact: Option<BTreeSet<Vec<u8>>>,
    /// What a file must hold besides.
    query: Query,
}

impl Info {
    fn exact(strings: BTreeSet<Vec<u8>>) -> Info {
        Info {
            exact: Some(strings),
            query: Query::All,
        }
    }

    fn empty() -> Info {
        Info::exact(BTreeSet::from([Vec::new()]))
    }

    fn anything() -> Info {
        Info {
            exact: None,
            query: Query::All,
        }
    }

    fn into_query(self) -> Query {
        match self.exact {
            None => self.query,
            Some(strings) => self.query.and(any_of(&strings)),
        }
    }
}

/// A file holding any one of `strings`.
fn any_of(strings: &BTreeSet<Vec<u8>>) -> Query {
    strings
        .iter()
        .map(|s| Query::contains(s))
        .fold(Query::Nothing, Query::or)
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty(),
        HirKind::Literal(lit) => {
            Info::exact(BTreeSet::from([lit.0.iter().map(|&b| fold(b)).collect()]))
        }
        HirKind::Class(class) => class_strings(class).map_or_else(Info::anything, Info::exact),
        HirKind::Capture(capture) => info(&capture.sub),
        HirKind::Repetition(rep) => {
            let sub = info(&rep.sub);
            match (rep.min, rep.max) {
                (1, Some(1)) => sub,
                (0, Some(1)) => match sub.exact {
                    Some(mut strings) if matches!(sub.query, Query::All) => {
                        strings.insert(Vec::new());
                        Info::exact(strings)
                    }
                    _ => Info::anything(),
                },
                (0, _) => Info::anything(),
                _ => Info {
                    exact: None,
                    query: sub.into_query(),
                },
            }
        }
        HirKind::Concat(parts) => {
            let mut acc = Info::empty();
            for part in parts {
                acc = concat(acc, info(part));
            }
            acc
        }
        HirKind::Alternation(branches) => {
            let infos: Vec<Info> = branches.iter().map(info).collect();
            let all_exact = infos
                .iter()
                .all(|i| i.exact.is_some() && matches!(i.query, Query::All));
            let total: usize = infos
                .iter()
                .map(|i| i.exact.as_ref().map_or(0, BTreeSet::len))
                .sum();
            if all_exact && total <= MAX_EXACT {
                Info::exact(
                    infos
                        .into_iter()
                        .flat_map(|i| i.exact.unwrap_or_default())
                        .collect(),
                )
            } else {
                Info {
                    exact: None,
                    query: infos
                        .into_iter()
                        .map(Info::into_query)
                        .fold(Query::Nothing, Query::or),
                }
            }
        }
    }
}

/// `a` followed by `b`.
fn concat(a: Info, b: Info) -> Info {
    match (a.exact, b.exact) {
        (Some(x), Some(y)) if x.len() * y.len() <= MAX_EXACT => {
            let mut strings = BTreeSet::new();
            for s in &x {
                for t in &y {
                    let mut joined = s.clone();
                    joined.extend_from_slice(t);
                    strings.insert(joined);
                }
            }
            Info {
                exact: Some(strings),
                query: a.query.and(b.query),
            }
        }
        (x, y) => {
            // The exact strings so far become a query, and the exact description starts
            // over with `b` (trigrams across the seam are given up).
            let before = Info {
                exact: x,
                query: a.query,
            }
            .into_query();
            match y {
                Some(strings) => Info {
                    exact: Some(strings),
                    query: before.and(b.query),
                },
                None => Info {
                    exact: None,
                    query: before.and(b.query),
                },
            }
        }
    }
}

/// The folded strings a class matches, when it holds few characters.
fn class_strings(class: &Class) -> Option<BTreeSet<Vec<u8>>> {
    let mut strings = BTreeSet::new();
    match class {
        Class::Unicode(c) => {
            let count: u32 = c
                .ranges()
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum();
            if count as usize > MAX_CLASS {
                return None;
            }
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    let mut buf = [0u8; 4];
                    let bytes = ch.encode_utf8(&mut buf).as_bytes();
                    strings.insert(bytes.iter().map(|&b| fold(b)).collect());
                }
            }
        }
        Class::Bytes(c) => {
            let count: usize = c
                .ranges()
                .iter()
                .map(|r| usize::from(r.end()) - usize::from(r.start()) + 1)
                .sum();
            if count > MAX_CLASS {
                return None;
            }
            for r in c.ranges() {
                for b in r.start()..=r.end() {
                    strings.insert(vec![fold(b)]);
                }
            }
        }
    }
    Some(strings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::index::trigrams::{Extractor, key};

    fn admits(pattern: &str, ignore_case: bool, text: &str) -> bool {
        query_for(pattern, false, ignore_case)
            .admits(&Extractor::default().trigrams(text.as_bytes()))
    }

    #[test]
    fn literals_and_simple_regexes_narrow() {
        assert_eq!(
            query_for("abcd", false, false),
            Query::And(vec![
                Query::Has(key(b'a', b'b', b'c')),
                Query::Has(key(b'b', b'c', b'd'))
            ])
        );
        assert!(admits(
            "fn\\s+parse_[a-z]+",
            false,
            "pub fn parse_args() {}"
        ));
        assert!(!admits(
            "fn\\s+parse_[a-z]+",
            false,
            "pub fn prase_args() {}"
        ));
        assert!(admits("(foo|bar)baz", false, "xbarbazx"));
        assert!(!admits("(foo|bar)baz", false, "xbarbax foo"));
        assert!(admits("colou?r", false, "color"));
        assert!(admits("ab(cd)*ef", false, "abef"));
    }

    #[test]
    fn case_insensitive_patterns_match_any_case() {
        assert!(admits("needle", true, "NeEdLe"));
        assert!(admits("(?i)STRASSE", false, "strasse"));
        // The Kelvin sign folds to k under Unicode case folding.
        assert!(admits("kelvin", true, "\u{212A}elvin"));
        assert!(query_for("Kelvin", true, false) != Query::All);
    }

    #[test]
    fn patterns_without_trigrams_scan_everything() {
        for p in [".", "ab", "a.c", "[a-z]+", "x*", "(", "\\w{3}"] {
            assert_eq!(query_for(p, false, false), Query::All, "{p}");
        }
        // As literal text, `a.c` is a trigram of its own; one byte is not.
        assert_eq!(
            query_for("a.c", true, false),
            Query::Has(key(b'a', b'.', b'c'))
        );
        assert_eq!(query_for("(", true, false), Query::All);
    }
}
