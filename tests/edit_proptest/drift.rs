//! Blank-line drift: oldText whose blank lines differ from the file's, with or without an
//! indentation mistake.

use super::*;

// --- Blank-line drift ---

/// What oldText does at one place of the block (before its first line with text, between
/// two, after its last): the file's blank lines kept, left out, or more added.
#[derive(Debug, Clone, Copy)]
enum Drift {
    Keep,
    LeaveOut,
    Add(usize),
}

#[derive(Debug, Clone)]
struct DriftCase {
    indent: IndentCase,
    /// One per place of the block, cycled.
    drifts: Vec<Drift>,
    /// Which lines with text newText changes, cycled.
    changed: Vec<bool>,
    /// A place between two unchanged lines where newText adds a blank line of its own.
    added_blank: Option<prop::sample::Index>,
}

fn drift_case() -> impl Strategy<Value = DriftCase> {
    let drift = prop_oneof![
        Just(Drift::Keep),
        Just(Drift::LeaveOut),
        (1usize..3).prop_map(Drift::Add)
    ];
    (
        indent_case(),
        prop::collection::vec(drift, 1..6),
        prop::collection::vec(any::<bool>(), 1..6),
        prop::option::of(any::<prop::sample::Index>()),
        any::<bool>(),
    )
        .prop_map(|(mut indent, drifts, changed, added_blank, exact)| {
            if exact {
                // Without an indentation mistake too: the blank lines alone drift.
                indent.mistake = Mistake::Levels(0);
            }
            DriftCase {
                indent,
                drifts,
                changed,
                added_blank,
            }
        })
}

/// The block's lines grouped as places of blank lines around its lines with text: the
/// blank lines before the first line with text, then each line with the blank lines after it.
/// A line of a case: its level and its text.
type CaseLine = (usize, String);

fn places(block: &[CaseLine]) -> (usize, Vec<(CaseLine, usize)>) {
    let mut lead = 0;
    let mut texts: Vec<(CaseLine, usize)> = Vec::new();
    for line in block {
        match (line.1.is_empty(), texts.last_mut()) {
            (true, None) => lead += 1,
            (true, Some((_, blanks))) => *blanks += 1,
            (false, _) => texts.push((line.clone(), 0)),
        }
    }
    (lead, texts)
}

fn blank_lines(n: usize) -> impl Iterator<Item = (usize, String)> {
    std::iter::repeat_n((0, String::new()), n)
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 8 * cases(256),
        ..ProptestConfig::with_cases(cases(256))
    })]
    #[test]
    fn blank_line_drift_applies_exactly_or_is_refused(case in drift_case()) {
        let DriftCase { indent, drifts, changed, added_blank } = case;
        let IndentCase { style, lines, block, mistake, crlf, bom, final_newline, .. } = indent;
        let (lead, texts) = places(&lines[block.0..block.1]);
        prop_assume!(!texts.is_empty());
        let n = texts.len();
        // The blank lines per place: the file's, oldText's, and newText's.
        let file_gaps: Vec<usize> = std::iter::once(lead).chain(texts.iter().map(|t| t.1)).collect();
        let old_gaps: Vec<usize> = file_gaps.iter().enumerate().map(|(g, &f)| match drifts[g % drifts.len()] {
            Drift::Keep => f,
            Drift::LeaveOut => 0,
            Drift::Add(k) => f + k,
        }).collect();
        let is_changed = |k: usize| changed[k % changed.len()];
        // A place between two unchanged lines gets a blank line of newText's own.
        let inner_unchanged: Vec<usize> = (1..n).filter(|&g| !is_changed(g - 1) && !is_changed(g)).collect();
        let added = added_blank
            .filter(|_| !inner_unchanged.is_empty())
            .map(|i| inner_unchanged[i.index(inner_unchanged.len())]);
        let mut new_gaps = old_gaps.clone();
        if let Some(g) = added {
            new_gaps[g] += 1;
        }
        let text_of = |k: usize| {
            let (level, text) = &texts[k].0;
            if is_changed(k) { (*level, format!("{text} \u{27EA}m\u{27EB}")) } else { (*level, text.clone()) }
        };
        let assemble = |gaps: &[usize], text: &dyn Fn(usize) -> (usize, String)| {
            let mut out: Vec<(usize, String)> = blank_lines(gaps[0]).collect();
            for k in 0..n {
                out.push(text(k));
                out.extend(blank_lines(gaps[k + 1]));
            }
            out
        };
        let old_lines = assemble(&old_gaps, &|k| texts[k].0.clone());
        let new_lines = assemble(&new_gaps, &text_of);
        let mut expected_gaps = file_gaps.clone();
        if let Some(g) = added {
            expected_gaps[g] += 1;
        }
        let expected_block = assemble(&expected_gaps, &text_of);

        // The indentation mistake, kept to what the indentation stage can tell (see above).
        let levels: std::collections::BTreeSet<usize> = texts.iter().map(|t| t.0.0).collect();
        let lowest = *levels.iter().next().unwrap_or(&0) as i64;
        let mistake = match mistake {
            Mistake::Levels(k) if k < 0 && (k + lowest < 0 || n < 2) => Mistake::Levels(-k),
            Mistake::Restyle { width, levels } if levels + lowest < 0 => Mistake::Restyle { width, levels: -levels },
            m => m,
        };
        // One line is never moved to another depth, and is converted between tabs and
        // spaces only at a tab width the file settles: a file in spaces settles it by its
        // step, a file in tabs (with nothing else to tell) does not. A file's step is read
        // from how its lines' indentation grows, which a few lines may show otherwise than
        // the case's: a single line converted to spaces may then apply (at that step, where
        // its depth is the file line's) or be refused.
        let level = texts[0].0.0;
        // A line converted between tabs and spaces stays at its depth at the width it was
        // sent at, the only one of 2, 4 and 8 that keeps it there (a shifted conversion is
        // read at another width, and left to `two_and_eight_column_tabs`).
        prop_assume!(!(n == 1 && matches!((mistake, style), (Mistake::Restyle { levels, .. }, Style::Tabs) if levels != 0)));
        let one_line_moves = n == 1
            && mistake.indent(style, level) != Some(style.indent(level))
            && !matches!(mistake, Mistake::Restyle { .. });
        let one_line_converted = n == 1 && matches!((mistake, style), (Mistake::Restyle { .. }, Style::Spaces(_)));
        if let Mistake::Restyle { levels: k, .. } = mistake {
            prop_assume!(n == 1 || levels.iter().any(|&l| l > 0));
            prop_assume!(k == 0 || levels.len() >= 2 || n == 1);
        }
        let model = |level: usize| mistake.indent(style, level);
        let old = render(&old_lines, model, "").expect("every level has room");
        let new = render(&new_lines, model, "").expect("every level has room");
        prop_assume!(new != old);

        let ending = if crlf { "\r\n" } else { "\n" };
        let file_text = |lines: &[(usize, String)]| file_text(lines, style, ending, final_newline, bom);
        let original = file_text(&lines);
        let mut expected_lines = lines[..block.0].to_vec();
        expected_lines.extend(expected_block);
        expected_lines.extend(lines[block.1..].iter().cloned());
        let expected = file_text(&expected_lines);

        // The block's lines with text must be the only such run of the file (blank lines set
        // aside), or another place may be meant.
        let file_texts: Vec<&String> = lines.iter().map(|(_, t)| t).filter(|t| !t.is_empty()).collect();
        let block_texts: Vec<&String> = texts.iter().map(|t| &t.0.1).collect();
        let runs = file_texts.windows(n).filter(|w| *w == block_texts.as_slice()).count();
        prop_assume!(runs == 1);
        prop_assume!(!normalise(&original).contains(&normalise(&old)));
        // newText has as many lines with text as oldText: a blank line that drifts between
        // two lines it changes stays between the lines that replace them.
        let edge_blanks = old_gaps[0] > 0 || old_gaps[n] > 0;

        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        match apply_edits(&original, &edits, "f") {
            Ok(edited) => {
                prop_assert!(!one_line_moves, "moved one line to another depth: old {:?}", old);
                prop_assert_eq!(edited.content, expected, "old {:?} new {:?}", old, new);
            }
            Err(e) => prop_assert!(
                edge_blanks || one_line_moves || one_line_converted,
                "refused a well-defined edit of a unique window: {} (old {:?} new {:?})", e.message(), old, new
            ),
        }
    }
}
