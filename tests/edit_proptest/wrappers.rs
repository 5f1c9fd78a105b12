//! Wrappers around both texts (a code fence, diff prefixes, JSON escaping, HTML entities):
//! removed when the text as sent is nowhere in the file, and left alone when the file holds
//! the wrapped text for real (a decoy), which is then edited as sent.

use super::*;

const TEXTS: &[&str] = &[
    "if a < b {",
    "x && y;",
    "say(\"hi\");",
    "    indented();",
    "\tpath = \"C:\\\\dir\";",
    "plain words",
    "",
];

/// `text` wrapped as `wrapper` puts it around oldText (`old`) or newText.
fn wrap(wrapper: usize, text: &str, old: bool) -> String {
    match wrapper {
        0 => format!("```\n{text}\n```"),
        1 => {
            let mark = if old { '-' } else { '+' };
            let (body, end) = match text.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (text, ""),
            };
            let lines: Vec<String> = body.split('\n').map(|l| format!("{mark}{l}")).collect();
            lines.join("\n") + end
        }
        2 => {
            let quoted = serde_json::to_string(text).expect("a string serialises");
            quoted[1..quoted.len() - 1].to_string()
        }
        _ => text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_global_rejects: 4 * cases(256),
        ..ProptestConfig::with_cases(cases(256))
    })]
    /// A block of a file sent in a wrapper applies with exactly the expected bytes; with the
    /// wrapped block also in the file (a decoy), that one is edited as sent.
    #[test]
    fn wrappers_are_removed_unless_the_file_holds_them(
        raw in prop::collection::vec(prop::sample::select(TEXTS), 2..10),
        (a, b) in any::<(prop::sample::Index, prop::sample::Index)>(),
        wrapper in 0usize..4,
        decoy in any::<bool>(),
    ) {
        // Unique lines: each line with text gets its number.
        let lines: Vec<String> = raw
            .iter()
            .enumerate()
            .map(|(i, t)| if t.is_empty() { String::new() } else { format!("{t} // {i}") })
            .collect();
        let (x, y) = (a.index(lines.len()), b.index(lines.len()));
        let block = (x.min(y), x.max(y) + 1);
        let old = lines[block.0..block.1].join("\n");
        prop_assume!(!old.trim().is_empty());
        let new_lines: Vec<String> = lines[block.0..block.1]
            .iter()
            .map(|l| if l.is_empty() { String::new() } else { format!("{l} <m>") })
            .collect();
        let new = new_lines.join("\n");
        let (wrapped_old, wrapped_new) = (wrap(wrapper, &old, true), wrap(wrapper, &new, false));
        prop_assume!(wrapped_old != old);
        let original = lines.join("\n") + "\n";
        let edits = [Replacement { old_text: wrapped_old.clone(), new_text: wrapped_new.clone(), replace_all: false }];
        if decoy {
            // The file holds the wrapped block for real, after its own lines.
            let file = format!("{original}{wrapped_old}\n");
            let edited = apply_edits(&file, &edits, "f")
                .map_err(|e| TestCaseError::fail(format!("decoy refused: {} ({wrapped_old:?})", e.message())))?;
            prop_assert_eq!(edited.content, format!("{original}{wrapped_new}\n"));
            prop_assert!(edited.wrappers.is_empty());
        } else {
            let mut expected = lines.clone();
            expected.splice(block.0..block.1, new_lines.iter().cloned());
            let expected = expected.join("\n") + "\n";
            let edited = apply_edits(&original, &edits, "f")
                .map_err(|e| TestCaseError::fail(format!("refused: {} ({wrapped_old:?} in {original:?})", e.message())))?;
            prop_assert_eq!(&edited.content, &expected, "{:?} -> {:?}", wrapped_old, wrapped_new);
        }
    }
}
