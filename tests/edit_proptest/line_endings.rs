//! Files that mix CRLF and LF lines: whatever an edit does to a run of them (keeps, changes,
//! deletes or adds lines), the lines outside it keep their bytes, and the written lines take
//! the endings of the lines they replace or of their neighbours.

use super::*;

/// What newText does with one line of the block.
#[derive(Debug, Clone, Copy)]
enum LineOp {
    Keep,
    Change,
    Delete,
}

#[derive(Debug, Clone)]
struct EndingsCase {
    /// Whether each line of the file ends with CRLF (`true`) or LF.
    crlf: Vec<bool>,
    /// Whether the file's last line has an ending.
    final_newline: bool,
    block: (usize, usize),
    /// Whether oldText ends with the newline of its last line.
    whole_lines: bool,
    /// One per line of the block.
    ops: Vec<LineOp>,
    /// How many lines newText adds before each line of the block and after the last.
    added: Vec<usize>,
}

fn endings_case() -> impl Strategy<Value = EndingsCase> {
    let op = prop_oneof![
        Just(LineOp::Keep),
        Just(LineOp::Change),
        Just(LineOp::Delete)
    ];
    (
        prop::collection::vec(any::<bool>(), 2..14),
        any::<bool>(),
        any::<(prop::sample::Index, prop::sample::Index)>(),
        any::<bool>(),
        prop::collection::vec(op, 14),
        prop::collection::vec(prop_oneof![3 => Just(0usize), 1 => 1usize..3], 15),
    )
        .prop_map(|(crlf, final_newline, (a, b), whole_lines, ops, added)| {
            let n = crlf.len();
            let (x, y) = (a.index(n), b.index(n));
            let block = (x.min(y), x.max(y) + 1);
            let len = block.1 - block.0;
            EndingsCase {
                crlf,
                final_newline,
                block,
                whole_lines,
                ops: ops[..len].to_vec(),
                added: added[..=len].to_vec(),
            }
        })
}

/// The ending of line `i` of the case's file ("" for a last line without one).
fn ending_of(case: &EndingsCase, i: usize) -> &'static str {
    match (
        i + 1 == case.crlf.len() && !case.final_newline,
        case.crlf[i],
    ) {
        (true, _) => "",
        (false, true) => "\r\n",
        (false, false) => "\n",
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: cases(512),
        ..ProptestConfig::with_cases(cases(512))
    })]
    /// An edit of a run of lines in a file of mixed endings applies (always, when the
    /// replaced lines share one ending) or is refused; applied, the lines before and after
    /// the run keep their bytes, newText's lines are written in order, kept lines keep their
    /// endings, and every other written line ends as a replaced line does (added lines: as
    /// a line next to them).
    #[test]
    fn mixed_endings_are_kept_and_taken_from_neighbours(case in endings_case()) {
        let n = case.crlf.len();
        let line = |i: usize| format!("line {i:02}");
        let original: String = (0..n).map(|i| format!("{}{}", line(i), ending_of(&case, i))).collect();
        let (a, b) = case.block;
        // oldText ends with its last line's newline only when the line has one.
        let whole = case.whole_lines && !ending_of(&case, b - 1).is_empty();
        let mut old = (a..b).map(line).collect::<Vec<_>>().join("\n");
        let mut new_lines: Vec<String> = Vec::new();
        let mut added = 0;
        for (k, i) in (a..b).enumerate() {
            for _ in 0..case.added[k] {
                new_lines.push(format!("added {added}"));
                added += 1;
            }
            match case.ops[k] {
                LineOp::Keep => new_lines.push(line(i)),
                LineOp::Change => new_lines.push(format!("{} \u{27EA}m\u{27EB}", line(i))),
                LineOp::Delete => {}
            }
        }
        for _ in 0..case.added[b - a] {
            new_lines.push(format!("added {added}"));
            added += 1;
        }
        let mut new = new_lines.join("\n");
        if whole {
            old.push('\n');
            if !new_lines.is_empty() {
                new.push('\n');
            }
        }
        prop_assume!(old != new);
        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        // The bytes before the run, and after the ending of its last line.
        let prefix: String = (0..a).map(|i| format!("{}{}", line(i), ending_of(&case, i))).collect();
        let suffix: String = (b..n).map(|i| format!("{}{}", line(i), ending_of(&case, i))).collect();
        let replaced: Vec<&str> = (a..b).map(|i| ending_of(&case, i)).filter(|e| !e.is_empty()).collect();
        // Only the last line of a file without a final newline is replaced: the line before
        // it tells.
        let before = if a == 0 { "\n" } else { ending_of(&case, a - 1) };
        let shared = match replaced.first() {
            None => Some(&before),
            Some(first) => Some(first).filter(|first| replaced.iter().all(|e| e == *first)),
        };
        match apply_edits(&original, &edits, "f") {
            Ok(edited) => {
                let content = edited.content;
                prop_assert!(content.starts_with(&prefix), "{content:?}");
                prop_assert!(content.ends_with(&suffix), "{content:?}");
                prop_assert!(content.len() >= prefix.len() + suffix.len(), "{content:?}");
                let written = &content[prefix.len()..content.len() - suffix.len()];
                let written_lines: Vec<&str> = written.split_inclusive('\n').collect();
                let texts: Vec<&str> = written_lines
                    .iter()
                    .map(|l| l.trim_end_matches('\n').trim_end_matches('\r'))
                    .collect();
                // Without its last newline, an oldText whose lines all go leaves an empty line.
                let empty_line = new_lines.is_empty() && !whole && !ending_of(&case, b - 1).is_empty();
                let expected_texts: Vec<&str> = if empty_line {
                    vec![""]
                } else {
                    new_lines.iter().map(String::as_str).collect()
                };
                prop_assert_eq!(&texts, &expected_texts, "old {:?} new {:?} in {:?}", old, new, original);
                for (k, written_line) in written_lines.iter().enumerate() {
                    let ending = if written_line.ends_with("\r\n") {
                        "\r\n"
                    } else if written_line.ends_with('\n') {
                        "\n"
                    } else {
                        continue;
                    };
                    let text = texts[k];
                    let kept = (a..b).find(|&i| line(i) == text && !ending_of(&case, i).is_empty());
                    if let Some(i) = kept {
                        prop_assert_eq!(ending, ending_of(&case, i), "kept line {} in {:?}", text, content);
                    } else if let Some(shared) = shared {
                        prop_assert_eq!(ending, *shared, "line {} in {:?}", text, content);
                    } else {
                        prop_assert!(replaced.contains(&ending), "line {} in {:?}", text, content);
                    }
                }
            }
            Err(e) => {
                prop_assert!(shared.is_none(), "refused with one ending: {} (old {:?} new {:?} in {:?})", e.message(), old, new, original);
                prop_assert!(e.message().contains("line endings mix CRLF and LF"), "{}", e.message());
            }
        }
    }
}

/// The reported corruption: a multi-line edit among LF lines of a file whose first line
/// ends with CRLF wrote CRLF, and the reverse.
#[test]
fn edited_lines_take_the_endings_around_them_not_the_first_lines() {
    let edit = |file: &str, old: &str, new: &str| {
        let edits = [Replacement {
            old_text: old.into(),
            new_text: new.into(),
            replace_all: false,
        }];
        apply_edits(file, &edits, "f").map(|e| e.content)
    };
    let file = "head\r\na\nb\nc\ntail\r\n";
    assert_eq!(
        edit(file, "a\nb\n", "a\nB\nb2\n").unwrap(),
        "head\r\na\nB\nb2\nc\ntail\r\n"
    );
    let file = "head\na\r\nb\r\nc\r\ntail\n";
    assert_eq!(
        edit(file, "a\nb", "A\nx\nB").unwrap(),
        "head\nA\r\nx\r\nB\r\nc\r\ntail\n"
    );
}
