//! Property: applying random unique, non-overlapping edits and then their inverses restores
//! the file byte for byte, whatever its line endings, BOM or Unicode.

use std::sync::Arc;

use pi_tools::builtins::edit::{EditArgs, Replacement, edit};
use pi_tools::env::{ExecutionEnv, LocalEnv};
use pi_tools::{Extensions, ToolContext};
use proptest::prelude::*;
use tokio_util::sync::CancellationToken;

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
    #![proptest_config(ProptestConfig::with_cases(128))]
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
            .with_extensions(Extensions::new().with::<Arc<dyn ExecutionEnv>>(env));
        let n = case.replacements.len();
        // Forward edits in a shuffled order (reversed), inverse edits in order.
        let forward: Vec<Replacement> = (0..n).rev()
            .map(|i| Replacement { old_text: marker(i), new_text: replacement(&case, i) })
            .collect();
        let inverse: Vec<Replacement> = (0..n)
            .map(|i| Replacement { old_text: replacement(&case, i), new_text: marker(i) })
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
