//! V4A patches made from random edits of real files (this repository's sources, with LF and
//! with CRLF line endings), parsed and applied by `apply_patch`'s code, checked against a
//! reference application that replaces the edited lines by their numbers: the patch either
//! gives exactly the reference's bytes or is refused, never anything else, and it applies
//! whenever each hunk's lines are found once in the file (and it changes something).
//!
//! `PROPTEST_CASES` raises the number of cases.

use pi_tools::builtins::edit::FileHints;
use pi_tools::builtins::patch::{FileOp, apply_hunks, parse_patch};
use proptest::prelude::*;

const FILES: [&str; 4] = [
    include_str!("../../pi-tools/src/builtins/edit/apply.rs"),
    include_str!("../../pi-tools/src/provider/responses.rs"),
    include_str!("../../pi-tools/src/config/default-config.toml"),
    include_str!("../../README.md"),
];

/// One random edit: where (a fraction of the file), how many lines it replaces, what it puts
/// there, and how many context lines surround it.
#[derive(Debug, Clone)]
struct Change {
    at: f64,
    removed: usize,
    added: Vec<String>,
    context: usize,
}

fn change() -> impl Strategy<Value = Change> {
    (
        0.0..1.0f64,
        0usize..4,
        prop::collection::vec("[a-z ]{0,12}(\\(\\);)?", 0..4),
        0usize..4,
    )
        .prop_map(|(at, removed, added, context)| Change {
            at,
            removed,
            added,
            context,
        })
}

/// The hunks (as V4A text) and the reference result of applying `changes` to `lines`.
fn patch_of(lines: &[&str], changes: &[Change], crlf: bool) -> Option<(String, String, bool)> {
    let mut spans: Vec<(usize, &Change)> = changes
        .iter()
        .map(|c| (((lines.len() as f64) * c.at) as usize, c))
        .collect();
    spans.sort_by_key(|(start, _)| *start);
    let mut patch = String::from("*** Begin Patch\n*** Update File: f\n");
    let mut reference: Vec<String> = Vec::new();
    let mut next = 0;
    let mut last_end = 0;
    let mut all_unique = true;
    let joined = lines.join(if crlf { "\r\n" } else { "\n" });
    for (start, change) in spans {
        let start = start.min(lines.len());
        let end = (start + change.removed).min(lines.len());
        let before = start.saturating_sub(change.context).max(last_end);
        let after = (end + change.context).min(lines.len());
        if start < last_end || (change.added.is_empty() && start == end) {
            return None;
        }
        patch.push_str("@@\n");
        let mut old: Vec<&str> = Vec::new();
        for line in &lines[before..start] {
            patch.push_str(&format!(" {line}\n"));
            old.push(line);
        }
        for line in &lines[start..end] {
            patch.push_str(&format!("-{line}\n"));
            old.push(line);
        }
        for line in &change.added {
            patch.push_str(&format!("+{line}\n"));
        }
        for line in &lines[end..after] {
            patch.push_str(&format!(" {line}\n"));
            old.push(line);
        }
        let old_text = old.join(if crlf { "\r\n" } else { "\n" });
        // A hunk that changes nothing may be refused as edit refuses a change to the same
        // content.
        let same = lines[start..end]
            .iter()
            .map(|l| l.to_string())
            .eq(change.added.iter().cloned());
        if old.is_empty() || same || occurrences(&joined, &old_text) != 1 {
            all_unique = false;
        }
        reference.extend(lines[next..start].iter().map(|l| l.to_string()));
        reference.extend(change.added.iter().cloned());
        next = end;
        last_end = after;
    }
    reference.extend(lines[next..].iter().map(|l| l.to_string()));
    patch.push_str("*** End Patch\n");
    let ending = if crlf { "\r\n" } else { "\n" };
    let mut expected = reference.join(ending);
    if !reference.is_empty() {
        expected.push_str(ending);
    }
    Some((patch, expected, all_unique))
}

/// How many times `needle` occurs in `text`, overlapping occurrences counted (as edit
/// counts them).
fn occurrences(text: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return usize::MAX;
    }
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find(needle) {
        count += 1;
        from += at + text[from + at..].chars().next().map_or(1, char::len_utf8);
    }
    count
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn v4a_patches_of_random_edits_apply_as_the_reference_or_are_refused(
        file in 0..FILES.len(),
        changes in prop::collection::vec(change(), 1..5),
        crlf in any::<bool>(),
    ) {
        let lines: Vec<&str> = FILES[file].lines().collect();
        let Some((patch, expected, unique)) = patch_of(&lines, &changes, crlf) else {
            return Ok(());
        };
        let ending = if crlf { "\r\n" } else { "\n" };
        let original = format!("{}{ending}", lines.join(ending));
        let parsed = parse_patch(&patch).expect("a generated patch reads");
        let FileOp::Update { hunks, .. } = &parsed.files[0] else {
            panic!("an update");
        };
        match apply_hunks(&original, hunks, "f", FileHints::default()) {
            Ok(edited) => prop_assert_eq!(edited.content, expected, "patch:\n{}", patch),
            Err(refusal) => prop_assert!(
                !unique,
                "every hunk is found once, yet it was refused: {:?}\npatch:\n{}",
                refusal,
                patch
            ),
        }
    }
}
