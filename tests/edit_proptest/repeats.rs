//! Repeated lines around and inside the window, overlapping repeats, files whose tabs are 2
//! or 8 columns, and stale resends (the target already changed, a copy of it elsewhere).

use pi_tools::builtins::edit::{FileHints, apply_edits_with};

use super::*;

/// Lines from a tiny vocabulary, so that they repeat inside and around any window.
const REPEATED: &[&str] = &["x();", "}", "Ok(count)", "", "x();"];

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 4 * cases(256),
        ..ProptestConfig::with_cases(cases(256))
    })]
    /// An oldText cut from a file of repeated lines, sent exactly, with curly quotes for
    /// straight ones, or shifted: it applies with exactly the expected bytes, and only when
    /// its lines occur once (overlapping runs counted); otherwise it is refused.
    #[test]
    fn repeated_lines_apply_only_where_unique(
        raw in prop::collection::vec((prop::sample::select(REPEATED), 0usize..3), 2..16),
        (a, b) in any::<(prop::sample::Index, prop::sample::Index)>(),
        form in 0usize..3,
    ) {
        let lines: Vec<(usize, String)> = raw.iter().map(|(t, level)| {
            let text = t.replace("count", "\u{201C}count\u{201D}");
            (if t.is_empty() { 0 } else { *level }, text)
        }).collect();
        let (x, y) = (a.index(lines.len()), b.index(lines.len()));
        let block = (x.min(y), x.max(y) + 1);
        let block_lines = &lines[block.0..block.1];
        prop_assume!(block_lines.iter().any(|(_, t)| !t.is_empty()));
        let style = Style::Spaces(4);
        let original = file_text(&lines, style, "\n", true, false);
        // The model's oldText: as it is, with straight quotes, or every line 2 spaces deeper
        // (a single line with text is then another depth, and refused).
        let model_indent = |level: usize| match form {
            2 => format!("  {}", style.indent(level)),
            _ => style.indent(level),
        };
        let model_text = |t: &str| if form == 0 { t.to_string() } else { t.replace(['\u{201C}', '\u{201D}'], "\"") };
        let render_model = |block: &[(usize, String)], mark: bool| -> String {
            block.iter().map(|(level, t)| match (t.is_empty(), mark) {
                (true, _) => String::new(),
                (false, false) => format!("{}{}", model_indent(*level), model_text(t)),
                (false, true) => format!("{}{} \u{27EA}m\u{27EB}", model_indent(*level), model_text(t)),
            }).collect::<Vec<_>>().join("\n")
        };
        let old = render_model(block_lines, false);
        let new = render_model(block_lines, true);
        let mut expected_lines = lines[..block.0].to_vec();
        expected_lines.extend(block_lines.iter().map(|(level, t)| {
            if t.is_empty() { (0, String::new()) } else { (*level, format!("{} \u{27EA}m\u{27EB}", model_text(t))) }
        }));
        expected_lines.extend(lines[block.1..].iter().cloned());
        let expected = file_text(&expected_lines, style, "\n", true, false);
        // A shifted oldText that reads as some other place of the file exactly is that
        // place's business (the exact stage finds the end of a deeper line).
        prop_assume!(form != 2 || !normalise(&original).contains(&normalise(&old)));
        // How often the block's lines occur as a run, overlapping runs counted, their
        // indentation and quotes set aside.
        let key = |t: &String| t.replace(['\u{201C}', '\u{201D}'], "\"");
        // Blank lines at the block's ends are only line ends in oldText: any line has them.
        let wanted: Vec<String> = block_lines.iter().map(|(_, t)| key(t)).collect();
        let first = wanted.iter().position(|t| !t.is_empty()).unwrap_or(0);
        let last = wanted.iter().rposition(|t| !t.is_empty()).unwrap_or(0);
        let wanted = wanted[first..=last].to_vec();
        let keys: Vec<String> = lines.iter().map(|(_, t)| key(t)).collect();
        let runs = keys.windows(wanted.len()).filter(|w| *w == wanted.as_slice()).count();
        let text_lines = block_lines.iter().filter(|(_, t)| !t.is_empty()).count();
        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        match apply_edits(&original, &edits, "f") {
            Ok(edited) => {
                prop_assert_eq!(&edited.content, &expected, "old {:?} in {:?}", old, original);
                prop_assert!(!(form == 2 && text_lines == 1), "moved one line: {:?}", old);
            }
            Err(e) => {
                // Refused only when another place reads the same, or one line would move.
                prop_assert!(
                    runs > 1 || (form == 2 && text_lines == 1),
                    "refused a unique oldText {:?} in {:?}: {}", old, original, e.message()
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]
    /// `k` copies of a line in a run of `r > k`: the copies overlap, and every stage refuses
    /// them, naming each start.
    #[test]
    fn overlapping_repeats_are_refused(
        (r, k) in (2usize..7).prop_flat_map(|r| (Just(r), 1..r)),
        form in 0usize..3,
    ) {
        // One line shifted is another depth: the shift is only tried on two lines or more.
        let form = if k == 1 && form == 2 { 0 } else { form };
        let file = format!("top\n{}bottom\n", "    say(\u{201C}x\u{201D});\n".repeat(r));
        let line = match form {
            0 => "    say(\u{201C}x\u{201D});\n",
            1 => "    say(\"x\");\n",
            _ => "      say(\u{201C}x\u{201D});\n",
        };
        let old = line.repeat(k);
        let edits = [Replacement { old_text: old, new_text: "gone\n".into(), replace_all: false }];
        let message = apply_edits(&file, &edits, "f").expect_err("overlapping copies are refused").message().to_string();
        let starts: Vec<String> = (2..2 + r - k + 1).map(|l| l.to_string()).collect();
        let named = format!("(starting at lines {}", starts.join(", "));
        prop_assert!(message.contains(&named), "{}", message);
        if form < 2 {
            let counted = format!("matches {} places", r - k + 1);
            prop_assert!(message.contains(&counted), "{}", message);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 4 * cases(128),
        ..ProptestConfig::with_cases(cases(128))
    })]
    /// A file whose tabs are 2 or 8 columns, settled by a modeline or its .editorconfig (or
    /// by nothing): one line sent in spaces applies, newText converted at that width, exactly
    /// when it is at the file line's depth at the settled width; settled by nothing, it
    /// applies at the one width of 2, 4 and 8 that puts it at the line's depth, and is refused
    /// when none does.
    #[test]
    fn two_and_eight_column_tabs(
        width in prop::sample::select(vec![2usize, 8]),
        levels in prop::collection::vec(0usize..4, 3..10),
        at in any::<prop::sample::Index>(),
        off in prop::sample::select(vec![0i64, 0, -2, 2, 4]),
        source in 0usize..3,
    ) {
        let target = at.index(levels.len());
        let mut levels = levels;
        levels[target] = levels[target].max(1);
        let mut text: Vec<String> = levels.iter().enumerate()
            .map(|(i, l)| format!("{}line{i}();", "\t".repeat(*l)))
            .collect();
        if source == 0 {
            text.push(format!("// vim: set ts={width}:"));
        }
        let original = text.join("\n") + "\n";
        let hints = FileHints { tab_width: (source == 1).then_some(width) };
        let depth = width * levels[target];
        let spaces = usize::try_from(depth as i64 + off).unwrap_or(0);
        // Without indentation the line is found exactly, as the end of the file's line.
        prop_assume!(spaces > 0);
        let old = format!("{}line{target}();", " ".repeat(spaces));
        let new = format!("{old}\n{}added();", " ".repeat(spaces + width));
        let edits = [Replacement { old_text: old.clone(), new_text: new, replace_all: false }];
        let result = apply_edits_with(&original, &edits, "f", hints);
        // The width the line is read at: the settled one when it keeps the depth, else the
        // only one of 2, 4 and 8 that does.
        let read_at = if source < 2 {
            (off == 0).then_some(width)
        } else {
            [2usize, 4, 8].into_iter().find(|w| w * levels[target] == spaces)
        };
        match (result, read_at) {
            (Ok(edited), Some(w)) => {
                let columns = spaces + width;
                let added = format!("{}{}added();", "\t".repeat(columns / w), " ".repeat(columns % w));
                let mut expected = text.clone();
                expected.insert(target + 1, added);
                prop_assert_eq!(edited.content, expected.join("\n") + "\n");
            }
            (Ok(_), None) => prop_assert!(false, "applied {:?} (source {})", old, source),
            (Err(e), Some(_)) => prop_assert!(false, "refused {:?}: {}", old, e.message()),
            (Err(_), None) => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 4 * cases(128),
        ..ProptestConfig::with_cases(cases(128))
    })]
    /// An edit applied once (a block wrapped in a call, or a line inserted after it), then
    /// sent again with its indentation as the model remembers it: the second time it is
    /// refused as already applied, never applied twice.
    #[test]
    fn stale_resends_are_refused(
        levels in prop::collection::vec(0usize..3, 4..12),
        (a, b) in any::<(prop::sample::Index, prop::sample::Index)>(),
        wrap in any::<bool>(),
        tabs in any::<bool>(),
    ) {
        let style = if tabs { Style::Tabs } else { Style::Spaces(4) };
        let lines: Vec<(usize, String)> = levels.iter().enumerate().map(|(i, l)| (*l, format!("step{i}();"))).collect();
        let (x, y) = (a.index(lines.len()), b.index(lines.len()));
        let block = (x.min(y), x.max(y) + 1);
        prop_assume!(block.1 - block.0 >= 2);
        let block_lines = &lines[block.0..block.1];
        let base = block_lines.iter().map(|(l, _)| *l).min().unwrap_or(0);
        let old = render(block_lines, |l| Some(style.indent(l)), "").expect("indented");
        let changed: Vec<(usize, String)> = if wrap {
            std::iter::once((base, "wrap(|| {".to_string()))
                .chain(block_lines.iter().map(|(l, t)| (l + 1, t.clone())))
                .chain(std::iter::once((base, "});".to_string())))
                .collect()
        } else {
            block_lines.iter().cloned().chain(std::iter::once((base, "inserted();".to_string()))).collect()
        };
        let new = render(&changed, |l| Some(style.indent(l)), "").expect("indented");
        let original = file_text(&lines, style, "\n", true, false);
        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        let once = apply_edits(&original, &edits, "f").expect("the first edit applies").content;
        // Sent again: as it was (the wrapped block is now one level deeper), or, for an
        // insertion, with one space too many (as models misremember it).
        let (resent, new) = if wrap {
            (old, new)
        } else {
            let misremembered = |lines: &[(usize, String)]| {
                render(lines, |l| Some(format!(" {}", style.indent(l))), "").expect("indented")
            };
            (misremembered(block_lines), misremembered(&changed))
        };
        let again = [Replacement { old_text: resent.clone(), new_text: new, replace_all: false }];
        match apply_edits(&once, &again, "f") {
            Ok(edited) => prop_assert!(false, "applied twice: {:?} gave {:?}", resent, edited.content),
            Err(e) => prop_assert!(e.message().contains("the edit looks already applied"), "{}", e.message()),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]
    /// An edit applied once, then sent again as it was, in a file that has a copy of the old
    /// block at another depth (a test module): the resend is refused, as already applied
    /// unless the wrapped block is found as well, and never applied to the copy.
    #[test]
    fn stale_resends_never_land_on_a_copy_at_another_depth(
        len in 2usize..5,
        depth in 1usize..3,
        copy_shift in prop::sample::select(vec![-1i64, 1, 2]),
        change in 0usize..3,
        tabs in any::<bool>(),
        copy_first in any::<bool>(),
    ) {
        let style = if tabs { Style::Tabs } else { Style::Spaces(4) };
        let block: Vec<(usize, String)> = (0..len).map(|i| (depth, format!("step{i}();"))).collect();
        let changed: Vec<(usize, String)> = match change {
            // The last line changed.
            0 => block[..len - 1].iter().cloned().chain(std::iter::once((depth, "other();".to_string()))).collect(),
            // The first line changed (a line inserted leaves the old block in place, found
            // exactly, and an exact match is taken as meant).
            1 => std::iter::once((depth, "other();".to_string())).chain(block[1..].iter().cloned()).collect(),
            // Wrapped in a call.
            _ => std::iter::once((depth, "wrap(|| {".to_string()))
                .chain(block.iter().map(|(l, t)| (l + 1, t.clone())))
                .chain(std::iter::once((depth, "});".to_string())))
                .collect(),
        };
        let copy_depth = usize::try_from(depth as i64 + copy_shift).expect("depth 1 or more");
        let copy: Vec<(usize, String)> = block.iter().map(|(_, t)| (copy_depth, t.clone())).collect();
        let function = |body: &[(usize, String)]| -> Vec<(usize, String)> {
            std::iter::once((depth - 1, "fn f() {".to_string()))
                .chain(body.iter().cloned())
                .chain(std::iter::once((depth - 1, "}".to_string())))
                .collect()
        };
        let module: Vec<(usize, String)> = std::iter::once((0, "mod tests {".to_string()))
            .chain(copy.iter().cloned())
            .chain(std::iter::once((0, "}".to_string())))
            .collect();
        let parts = |body: &[(usize, String)]| -> Vec<(usize, String)> {
            let (f, m) = (function(body), module.clone());
            if copy_first { m.into_iter().chain(f).collect() } else { f.into_iter().chain(m).collect() }
        };
        let original = file_text(&parts(&block), style, "\n", true, false);
        let old = render(&block, |l| Some(style.indent(l)), "").expect("indented");
        let new = render(&changed, |l| Some(style.indent(l)), "").expect("indented");
        let edits = [Replacement { old_text: old.clone(), new_text: new.clone(), replace_all: false }];
        let once = apply_edits(&original, &edits, "f").expect("the first edit applies").content;
        prop_assert_eq!(&once, &file_text(&parts(&changed), style, "\n", true, false));
        // Refused as already applied, or (the wrapped block and the copy both a shift away)
        // as matching several places.
        match apply_edits(&once, &edits, "f") {
            Ok(edited) => prop_assert!(false, "applied again: {:?} gave {:?}", old, edited.content),
            Err(e) => prop_assert!(
                e.message().contains("the edit looks already applied")
                    || (change == 2 && e.message().contains("matches several places")),
                "{}", e.message()
            ),
        }
    }
}
