//! Properties of edit:
//! - applying random unique, non-overlapping edits and then their inverses restores the file
//!   byte for byte, whatever its line endings, BOM or Unicode;
//! - a fuzzy oldText cut anywhere from the file's normalised form (inside the expansion of a
//!   ligature or an ellipsis too) either replaces exactly a region that reads as oldText, or
//!   is refused;
//! - an oldText whose indentation is shifted or converted between tabs and spaces either
//!   applies with exactly the expected bytes (newText in the file's indentation) or is
//!   refused, and applies whenever the window is unique and has more than one line with
//!   text (a single line is never moved to another depth);
//! - an oldText whose blank lines drift from the file's (left out, or more added, at any
//!   place of the block, its edges too), with or without an indentation mistake, in files with
//!   CRLF, a BOM or no final newline, either applies with exactly the expected bytes (the
//!   file's blank lines kept, newText's own added, nothing outside the window changed) or is
//!   refused; a blank line that drifts between two lines newText changes one for one stays
//!   between the lines that replace them, and the edit applies whenever the window is
//!   unique, oldText has no blank line at its edges, and a single line with text keeps its
//!   depth.
//!
//! - in files of repeated lines (around and inside the window), an oldText sent exactly,
//!   normalised or shifted applies with exactly the expected bytes or is refused, and is
//!   refused only when another place reads the same; overlapping repeats are refused in every
//!   stage, naming each start; in files whose tabs are 2 or 8 columns one line sent in spaces
//!   applies exactly when it is at its depth at the settled width, or, settled by nothing,
//!   at the one width of 2, 4 and 8 that keeps its depth; in tabs-only files a one-line
//!   edit sent in spaces at 2, 4 or 8 columns a tab applies, and one sent in tabs applies
//!   as sent; and an edit
//!   sent again after it was applied (stale) is refused, never applied twice;
//! - an oldText copied with line numbers (`cat -n`, `nl -ba`, arrows, `12 | `, grep with and
//!   without a path, GNU's `12:text` and pi-tools' `12: text`), newText with or without them,
//!   applies with exactly the expected bytes or is refused; it applies whenever the first
//!   number is right and the text without numbers occurs once, and never when it is wrong;
//! - in files that mix CRLF and LF lines, an edit that keeps, changes, deletes or adds lines
//!   leaves every line outside it byte-identical, and its lines take the endings of the
//!   lines they replace or of their neighbours; it is refused only when the replaced lines
//!   mix endings;
//! - a block moved with two edits (one matched through a forgiving stage, its newText's
//!   lines still at their old place) applies with exactly the expected bytes, and the same
//!   call sent again once the block moved is refused as already applied;
//! - an oldText and newText sent in a wrapper (a code fence, diff prefixes, JSON escaping,
//!   HTML entities) apply with exactly the expected bytes once it is removed, and a file that
//!   holds the wrapped text for real is edited as sent.
//!
//! `PROPTEST_CASES` raises the number of cases (the default keeps the suite fast).
#![cfg(feature = "builtins")]

use std::sync::Arc;

use pi_tools::ToolContext;
use pi_tools::builtins::edit::{EditArgs, Replacement, apply_edits, edit};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use proptest::prelude::*;
use tokio_util::sync::CancellationToken;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

mod drift;
mod line_endings;
mod moves;
mod numbers;
mod repeats;
mod tab_widths;
mod wrappers;

/// Cases per property: `PROPTEST_CASES` when set, else a number that keeps CI fast.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

const PIECES: &[&str] = &[
    "a", "b", "fn", " ", "  ", "\t", "\n", "\r\n", "é", "e\u{301}", "\u{201C}", "\u{201D}",
    "\u{2014}", "\u{00A0}", "ｘ", "（", "'", "\"", "-",
];

fn filler() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..12).prop_map(|p| p.concat())
}

#[derive(Debug, Clone)]
struct Case {
    bom: bool,
    /// Text before marker 0, between markers, and after the last.
    segments: Vec<String>,
    /// Replacement filler for each marker.
    replacements: Vec<String>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..6).prop_flat_map(|n| {
        (
            any::<bool>(),
            prop::collection::vec(filler(), n + 1),
            prop::collection::vec(filler(), n),
        )
            .prop_map(|(bom, segments, replacements)| Case {
                bom,
                segments,
                replacements,
            })
    })
}

fn marker(i: usize) -> String {
    format!("⟦{i}⟧")
}

fn replacement(case: &Case, i: usize) -> String {
    format!("{}⟪{i}⟫{}", case.replacements[i], case.replacements[i])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]
    #[test]
    fn edits_then_inverse_edits_restore_the_bytes(case in case()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        let mut original = String::new();
        if case.bom {
            original.push('\u{FEFF}');
        }
        for (i, segment) in case.segments.iter().enumerate() {
            original.push_str(segment);
            if i < case.replacements.len() {
                original.push_str(&marker(i));
            }
        }
        std::fs::write(&path, &original).unwrap();
        let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir.path()).with_fsync(false));
        let ctx = ToolContext::new("p", CancellationToken::new())
            .with_env(env);
        let n = case.replacements.len();
        // Forward edits in a shuffled order (reversed), inverse edits in order.
        let forward: Vec<Replacement> = (0..n).rev()
            .map(|i| Replacement { old_text: marker(i), new_text: replacement(&case, i), replace_all: false })
            .collect();
        let inverse: Vec<Replacement> = (0..n)
            .map(|i| Replacement { old_text: replacement(&case, i), new_text: marker(i), replace_all: false })
            .collect();
        runtime.block_on(async {
            edit(&ctx, EditArgs { path: "f.txt".into(), edits: forward }).await
                .map_err(|e| TestCaseError::fail(format!("forward: {}", e.message())))?;
            let middle = std::fs::read_to_string(&path).unwrap();
            for i in 0..n {
                prop_assert!(!middle.contains(&marker(i)));
            }
            edit(&ctx, EditArgs { path: "f.txt".into(), edits: inverse }).await
                .map_err(|e| TestCaseError::fail(format!("inverse: {} in {middle:?}", e.message())))?;
            Ok(())
        })?;
        prop_assert_eq!(std::fs::read(&path).unwrap(), original.into_bytes());
    }
}

// --- Fuzzy matches and characters that expand under NFKC ---

const FUZZY_PIECES: &[&str] = &[
    "a",
    "b",
    "i",
    "le",
    " ",
    "  ",
    "\n",
    "\r\n",
    "=",
    ".",
    "\u{FB01}",
    "\u{2026}",
    "\u{2026}\u{2026}",
    "\u{00BD}",
    "\u{201C}",
    "\u{2014}",
    "\u{00A0}",
    "e\u{301}",
    "\u{FF58}",
    "fi",
    "...",
];

/// The reference of the fuzzy form: per line, NFKC of each character with its combining
/// marks, quotes, dashes and odd spaces unified, trailing whitespace dropped.
fn normalise(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut normal = String::new();
        let mut segment = String::new();
        for c in line.chars() {
            if canonical_combining_class(c) == 0 && !segment.is_empty() {
                normal.extend(segment.nfkc().map(unify));
                segment.clear();
            }
            segment.push(c);
        }
        normal.extend(segment.nfkc().map(unify));
        out.push_str(normal.trim_end());
    }
    out
}

fn unify(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]
    #[test]
    fn fuzzy_matches_replace_whole_characters_or_nothing(
        pieces in prop::collection::vec(prop::sample::select(FUZZY_PIECES), 1..24),
        from in any::<prop::sample::Index>(),
        len in 1usize..12,
        trailing_space in any::<bool>(),
    ) {
        let original = pieces.concat();
        let normal: Vec<char> = normalise(&original).chars().collect();
        prop_assume!(!normal.is_empty());
        let start = from.index(normal.len());
        let end = (start + len).min(normal.len());
        let mut old: String = normal[start..end].iter().collect();
        if trailing_space {
            old.push(' ');
        }
        let new = "\u{27EA}new\u{27EB}";
        let edits = [Replacement { old_text: old.clone(), new_text: new.into(), replace_all: false }];
        if let Ok(edited) = apply_edits(&original, &edits, "f") {
            // The blank-line stage may leave out blank lines oldText has at its ends that
            // the file does not: the region then reads as oldText without them.
            let drifted = !edited.blank_lines.is_empty();
            let content = edited.content;
            let at = content.find(new).expect("newText is in the result");
            let (before, after) = (&content[..at], &content[at + new.len()..]);
            prop_assert!(original.starts_with(before), "{content:?}");
            prop_assert!(original.ends_with(after), "{content:?}");
            prop_assert!(before.len() + after.len() <= original.len());
            let removed = &original[before.len()..original.len() - after.len()];
            if drifted {
                let edges = |t: &str| normalise(t).trim_matches('\n').to_string();
                prop_assert_eq!(edges(removed), edges(&old), "replaced {:?} in {:?}", removed, original);
            } else {
                prop_assert_eq!(normalise(removed), normalise(&old), "replaced {:?} in {:?}", removed, original);
            }
        }
    }
}

#[test]
fn the_two_reported_cuts_are_refused() {
    for (original, old) in [
        ("pro\u{FB01}le = 1", "ile = 1 "),
        ("msg = \"Loading\u{2026}\"", "msg = \"Loading. "),
    ] {
        let edits = [Replacement {
            old_text: old.into(),
            new_text: "X".into(),
            replace_all: false,
        }];
        assert!(apply_edits(original, &edits, "f").is_err(), "{original:?}");
    }
}

// --- Indentation ---

/// How the file indents: spaces with a step, or tabs.
#[derive(Debug, Clone, Copy)]
enum Style {
    Spaces(usize),
    Tabs,
}

impl Style {
    fn indent(self, level: usize) -> String {
        match self {
            Style::Spaces(step) => " ".repeat(step * level),
            Style::Tabs => "\t".repeat(level),
        }
    }
}

/// The indentation mistake the model makes.
#[derive(Debug, Clone, Copy)]
enum Mistake {
    /// Every line this many levels deeper (negative: less deep).
    Levels(i64),
    /// Every line this many spaces deeper (spaces files only).
    Spaces(usize),
    /// Tabs for a spaces file, or spaces at this width for a tab file; and a level shift.
    Restyle { width: usize, levels: i64 },
}

impl Mistake {
    /// The model's indentation of a line at `level` of the file, if it has one.
    fn indent(self, style: Style, level: usize) -> Option<String> {
        let shifted = |levels: i64| usize::try_from(level as i64 + levels).ok();
        match (self, style) {
            (Mistake::Levels(k), _) => shifted(k).map(|l| style.indent(l)),
            (Mistake::Spaces(d), _) => Some(format!("{}{}", " ".repeat(d), style.indent(level))),
            (Mistake::Restyle { levels, .. }, Style::Spaces(_)) => {
                shifted(levels).map(|l| "\t".repeat(l))
            }
            (Mistake::Restyle { width, levels }, Style::Tabs) => {
                shifted(levels).map(|l| " ".repeat(width * l))
            }
        }
    }
}

#[derive(Debug, Clone)]
struct IndentCase {
    style: Style,
    /// (level, text) per line; empty text is a blank line.
    lines: Vec<(usize, String)>,
    block: (usize, usize),
    mistake: Mistake,
    crlf: bool,
    bom: bool,
    final_newline: bool,
    /// Whitespace the model leaves on blank lines of oldText.
    blank_ws: &'static str,
}

const WORDS: &[&str] = &["a();", "b = 1;", "if x {", "}", "return y;", "// note", ""];

fn indent_case() -> impl Strategy<Value = IndentCase> {
    let style = prop_oneof![
        Just(Style::Spaces(2)),
        Just(Style::Spaces(4)),
        Just(Style::Spaces(8)),
        Just(Style::Tabs)
    ];
    let line = (
        0usize..4,
        prop::sample::select(WORDS),
        prop::option::weighted(0.4, 0u32..1000),
    );
    (
        style,
        prop::collection::vec(line, 3..24),
        any::<(prop::sample::Index, prop::sample::Index)>(),
        0usize..7,
        prop::sample::select(vec![-2i64, -1, 1, 2]),
        prop::sample::select(vec![2usize, 4, 8]),
        any::<(bool, bool, bool)>(),
        prop::sample::select(vec!["", "  ", "\t"]),
    )
        .prop_map(
            |(style, raw, (a, b), kind, k, width, (crlf, bom, final_newline), blank_ws)| {
                let lines: Vec<(usize, String)> = raw
                    .into_iter()
                    .map(|(level, word, tag)| match (word, tag) {
                        ("", _) => (0, String::new()),
                        (w, Some(tag)) => (level, format!("{w} // {tag}")),
                        (w, None) => (level, w.to_string()),
                    })
                    .collect();
                let (x, y) = (a.index(lines.len()), b.index(lines.len()));
                let block = (x.min(y), x.max(y) + 1);
                let mistake = match (kind, style) {
                    (0 | 1, _) => Mistake::Levels(k),
                    (2, Style::Spaces(_)) => Mistake::Spaces(1 + width / 4),
                    (2, Style::Tabs) => Mistake::Levels(k.abs()),
                    (3 | 4, _) => Mistake::Restyle { width, levels: 0 },
                    _ => Mistake::Restyle { width, levels: k },
                };
                IndentCase {
                    style,
                    lines,
                    block,
                    mistake,
                    crlf,
                    bom,
                    final_newline,
                    blank_ws,
                }
            },
        )
}

/// The lines as text (LF), indented by `indent`; blank lines from `blank`.
fn render(
    lines: &[(usize, String)],
    indent: impl Fn(usize) -> Option<String>,
    blank: &str,
) -> Option<String> {
    let mut out = Vec::new();
    for (level, text) in lines {
        if text.is_empty() {
            out.push(blank.to_string());
        } else {
            out.push(format!("{}{text}", indent(*level)?));
        }
    }
    Some(out.join("\n"))
}

/// The lines as a file in `style`, with `ending` line endings, a final line ending when
/// `final_newline`, and a byte order mark when `bom`.
fn file_text(
    lines: &[(usize, String)],
    style: Style,
    ending: &str,
    final_newline: bool,
    bom: bool,
) -> String {
    let mut text = render(lines, |l| Some(style.indent(l)), "")
        .expect("the file's own style indents every level")
        .replace('\n', ending);
    if final_newline {
        text.push_str(ending);
    }
    if bom {
        text.insert(0, '\u{FEFF}');
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 4 * cases(256),
        ..ProptestConfig::with_cases(cases(256))
    })]
    #[test]
    fn indentation_mistakes_apply_exactly_or_are_refused(case in indent_case()) {
        let IndentCase { style, lines, block, mistake, crlf, bom, final_newline, blank_ws } = case;
        let block_lines = &lines[block.0..block.1];
        let text_lines: Vec<&(usize, String)> = block_lines.iter().filter(|(_, t)| !t.is_empty()).collect();
        let levels: std::collections::BTreeSet<usize> = text_lines.iter().map(|(l, _)| *l).collect();
        prop_assume!(!text_lines.is_empty());

        // newText: every line with text marked, a line one level deeper after the first, and
        // one a level shallower at the end when there is room.
        let first_level = text_lines[0].0;
        let mut new_lines: Vec<(usize, String)> = Vec::new();
        for (level, text) in block_lines {
            if text.is_empty() {
                new_lines.push((0, String::new()));
                continue;
            }
            new_lines.push((*level, format!("{text} \u{27EA}m\u{27EB}")));
            if new_lines.iter().filter(|(_, t)| !t.is_empty()).count() == 1 {
                new_lines.push((first_level + 1, "inserted();".into()));
            }
        }
        if first_level > 0 {
            new_lines.push((first_level - 1, "outdented();".into()));
        }

        // A negative shift the lines have no room for, or of a single line (which the exact
        // stage finds as the tail of the line), becomes a positive one.
        let lowest = new_lines.iter().chain(block_lines).filter(|(_, t)| !t.is_empty()).map(|(l, _)| *l).min().unwrap_or(0) as i64;
        let mistake = match mistake {
            Mistake::Levels(k) if k < 0 && (k + lowest < 0 || text_lines.len() < 2) => Mistake::Levels(-k),
            Mistake::Restyle { width, levels } if levels + lowest < 0 => Mistake::Restyle { width, levels: -levels },
            m => m,
        };
        // A conversion needs lines to go on: more than one, indented, and with a shift two
        // levels to tell the tab width by.
        if let Mistake::Restyle { levels: k, .. } = mistake {
            prop_assume!(text_lines.len() >= 2 && levels.iter().any(|&l| l > 0));
            prop_assume!(k == 0 || levels.len() >= 2);
        }
        let model = |level: usize| mistake.indent(style, level);
        let old = render(block_lines, model, blank_ws).expect("every level has room");
        let new = render(&new_lines, model, "").expect("every level has room");

        let ending = if crlf { "\r\n" } else { "\n" };
        let file_text = |lines: &[(usize, String)]| file_text(lines, style, ending, final_newline, bom);
        let original = file_text(&lines);
        let mut expected_lines = lines[..block.0].to_vec();
        expected_lines.extend(new_lines.iter().cloned());
        expected_lines.extend(lines[block.1..].iter().cloned());
        let expected = file_text(&expected_lines);

        // An oldText that reads as some other place of the file is that place's business
        // (the exact and normalised stages come first).
        prop_assume!(!normalise(&original).contains(&normalise(&old)));
        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        // One line is never moved to another depth, and every mistake left for one line
        // (a shift) changes its depth.
        let one_line = text_lines.len() == 1;
        match apply_edits(&original, &edits, "f") {
            Ok(edited) => {
                prop_assert!(!one_line, "moved one line to another depth: old {:?}", old);
                prop_assert_eq!(edited.content, expected, "old {:?} new {:?}", old, new);
            }
            Err(e) => {
                // Refused: only when another window could be meant, or one line is at
                // another depth.
                let unique = text_lines.iter().any(|(_, t)| {
                    lines.iter().filter(|(_, other)| other == t).count() == 1
                });
                prop_assert!(!unique || one_line, "refused a unique window: {} (old {:?})", e.message(), old);
            }
        }
    }
}
