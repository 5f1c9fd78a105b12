//! Files indented with tabs only, whose tab width nothing states: a one-line edit sent in
//! tabs, or in spaces at 2, 4 or 8 columns a tab, applies with newText at the file line's
//! depth.

use super::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]
    /// One line of a tabs-only file, sent in tabs or in spaces at 2, 4 or 8 columns a tab,
    /// with a changed text and perhaps a line one level deeper after it: it applies, and
    /// newText lands in tabs at the line's depth, the deeper line one tab further.
    #[test]
    fn one_line_edits_in_tabs_only_files_apply_at_any_width(
        levels in prop::collection::vec(0usize..5, 2..12),
        at in any::<prop::sample::Index>(),
        width in prop::sample::select(vec![0usize, 2, 4, 8]),
        deeper in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let target = at.index(levels.len());
        // A line at the margin is found exactly, as the end of the file's line.
        let mut levels = levels;
        levels[target] = levels[target].max(1);
        let lines: Vec<String> = levels
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{}step{i}();", "\t".repeat(*l)))
            .collect();
        let mut original = lines.join("\n");
        if final_newline {
            original.push('\n');
        }
        // Width 0: sent in tabs, as the file has it.
        let indent = |level: usize| match width {
            0 => "\t".repeat(level),
            w => " ".repeat(w * level),
        };
        let level = levels[target];
        let old = format!("{}step{target}();", indent(level));
        let mut new = format!("{}step{target}(changed);", indent(level));
        if deeper {
            new.push_str(&format!("\n{}inner();", indent(level + 1)));
        }
        let mut expected_lines = lines.clone();
        expected_lines[target] = format!("{}step{target}(changed);", "\t".repeat(level));
        if deeper {
            expected_lines.insert(target + 1, format!("{}inner();", "\t".repeat(level + 1)));
        }
        let mut expected = expected_lines.join("\n");
        if final_newline {
            expected.push('\n');
        }
        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        let edited = apply_edits(&original, &edits, "f")
            .map_err(|e| TestCaseError::fail(format!("{} (old {old:?} in {original:?})", e.message())))?;
        prop_assert_eq!(edited.content, expected, "old {:?} new {:?}", old, new);
    }
}
