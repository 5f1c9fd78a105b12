//! Line numbers copied into oldText (and maybe newText) in every style the tool reads, with
//! the right first number or a wrong one, in files whose lines repeat.

use super::*;

/// How a line numbered `n` is printed by one tool.
#[derive(Debug, Clone, Copy)]
enum Prefix {
    /// `cat -n` and `nl -ba`: the number in 6 columns, then a tab.
    CatN,
    /// The number then a tab, unpadded.
    Tab,
    /// `    12→`, as other agents' read tools print it.
    Arrow,
    /// `12 | `.
    Bar,
    /// GNU grep: `src/a.rs:12:text`, `-` for context lines.
    GrepPath,
    /// GNU grep on one file: `12:text`.
    Grep,
    /// pi-tools' grep: `src/a.rs:12: text`.
    SpacedGrep,
}

impl Prefix {
    /// Line `line` (its text `text`) printed with number `n`; `matched` picks grep's `:`.
    fn print(self, n: usize, text: &str, matched: bool) -> String {
        let sep = if matched { ':' } else { '-' };
        match self {
            Prefix::CatN => format!("{n:>6}\t{text}"),
            Prefix::Tab => format!("{n}\t{text}"),
            Prefix::Arrow => format!("{n:>6}\u{2192}{text}"),
            Prefix::Bar if text.is_empty() => format!("{n} |"),
            Prefix::Bar => format!("{n} | {text}"),
            Prefix::GrepPath => format!("src/a.rs{sep}{n}{sep}{text}"),
            Prefix::Grep => format!("{n}{sep}{text}"),
            Prefix::SpacedGrep => format!("src/a.rs{sep}{n}{sep} {text}"),
        }
    }
}

const PREFIXES: [Prefix; 7] = [
    Prefix::CatN,
    Prefix::Tab,
    Prefix::Arrow,
    Prefix::Bar,
    Prefix::GrepPath,
    Prefix::Grep,
    Prefix::SpacedGrep,
];

/// Lines that repeat, and lines that do not.
const WORDS: &[&str] = &["x();", "}", "", "Ok(count)", "y = 1;"];

/// Overlapping occurrences of `needle` in `hay`.
fn occurrences(hay: &str, needle: &str) -> usize {
    (0..hay.len())
        .filter(|&i| hay.is_char_boundary(i) && hay[i..].starts_with(needle))
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 4 * cases(256),
        ..ProptestConfig::with_cases(cases(256))
    })]
    /// oldText copied with line numbers applies with exactly the expected bytes or is
    /// refused; it applies whenever the first number names the block's first line and the
    /// block without numbers occurs once in the file; it is refused whenever the first number
    /// is wrong.
    #[test]
    fn numbered_old_text_applies_exactly_or_is_refused(
        raw in prop::collection::vec((0usize..8, 0usize..3), 3..14),
        (a, b) in any::<(prop::sample::Index, prop::sample::Index)>(),
        prefix in prop::sample::select(PREFIXES.to_vec()),
        off in prop::sample::select(vec![0i64, 0, 0, -1, 1, 5]),
        numbered_new in any::<bool>(),
        matched in prop::collection::vec(any::<bool>(), 14),
    ) {
        // Words 5.. are lines found nowhere else.
        let lines: Vec<(usize, String)> = raw.iter().enumerate().map(|(i, &(w, level))| {
            let text = WORDS.get(w).map_or_else(|| format!("unique{i}();"), |t| t.to_string());
            (if text.is_empty() { 0 } else { level }, text)
        }).collect();
        let (x, y) = (a.index(lines.len()), b.index(lines.len()));
        let block = (x.min(y), x.max(y) + 1);
        let block_lines = &lines[block.0..block.1];
        prop_assume!(block_lines.iter().any(|(_, t)| !t.is_empty()));
        let style = Style::Spaces(4);
        let original = file_text(&lines, style, "\n", true, false);
        let rendered: Vec<String> = block_lines.iter().map(|(l, t)| {
            if t.is_empty() { String::new() } else { format!("{}{t}", style.indent(*l)) }
        }).collect();
        let changed: Vec<String> = rendered.iter().map(|l| {
            if l.is_empty() { String::new() } else { format!("{l} // m") }
        }).collect();
        let first = i64::try_from(block.0 + 1).unwrap() + off;
        prop_assume!(first > 0);
        let first = usize::try_from(first).unwrap();
        // grep prints `:` for a matched line: the first line is one.
        let print = |texts: &[String]| texts.iter().enumerate()
            .map(|(k, t)| prefix.print(first + k, t, k == 0 || matched[k]))
            .collect::<Vec<_>>()
            .join("\n");
        let old = print(&rendered);
        let new = if numbered_new { print(&changed) } else { changed.join("\n") };
        let mut expected_lines: Vec<String> = original.lines().map(str::to_string).collect();
        expected_lines.splice(block.0..block.1, changed.iter().cloned());
        let expected = expected_lines.join("\n") + "\n";
        let plain = rendered.join("\n");
        let unique = occurrences(&original, &plain) == 1;
        // oldText that is in the file as it is (a line of digits) is not numbered at all.
        prop_assume!(!original.contains(&old));
        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        match apply_edits(&original, &edits, "f") {
            Ok(edited) => {
                prop_assert_eq!(&edited.content, &expected, "{:?} -> {:?} in {:?}", old, new, original);
                prop_assert_eq!(off, 0, "applied with a wrong first number: {:?}", old);
                prop_assert_eq!(edited.line_numbers.len(), 1);
                prop_assert_eq!(edited.line_numbers[0].new_text_stripped, numbered_new);
            }
            Err(e) => prop_assert!(
                off != 0 || !unique,
                "refused {:?} -> {:?} in {:?}: {}", old, new, original, e.message()
            ),
        }
    }
}
