//! Moves against stale resends: a block of lines moved in place of another line (two edits,
//! one matched only through the normalisation of trailing blanks) applies with exactly the
//! expected bytes; the same call sent again, once the block is where it was moved to, is
//! refused as already applied.

use super::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]
    #[test]
    fn moves_apply_and_resends_are_refused(
        n in 5usize..14,
        len in 2usize..4,
        (at, anchor) in any::<(prop::sample::Index, prop::sample::Index)>(),
    ) {
        let line = |i: usize| format!("entry {i:02}");
        // The block a..b is followed by a line of its own, b; the anchor t is outside a..=b.
        let a = at.index(n - len);
        let b = a + len;
        let outside = anchor.index(n - len - 1);
        let t = if outside < a { outside } else { outside + len + 1 };
        // The anchor ends with two spaces, which the model leaves out.
        let file_line = |i: usize| if i == t { format!("{}  ", line(i)) } else { line(i) };
        let original: String = (0..n).map(|i| file_line(i) + "\n").collect();
        let block: String = (a..b).map(|i| line(i) + "\n").collect();
        let edits = [
            Replacement { old_text: format!("{}\n", line(t)), new_text: block.clone(), replace_all: false },
            Replacement {
                old_text: format!("{block}{}", line(b)),
                new_text: format!("{}\n{}", line(t), line(b)),
                replace_all: false,
            },
        ];
        // The order after the move: the block where the anchor was, the anchor where the
        // block was.
        let mut order: Vec<usize> = Vec::new();
        for i in 0..n {
            if i == t {
                order.extend(a..b);
            } else if i == a {
                order.push(t);
            } else if !(a..b).contains(&i) {
                order.push(i);
            }
        }
        let expected: String = order.iter().map(|&i| line(i) + "\n").collect();
        let moved = apply_edits(&original, &edits, "f")
            .map_err(|e| TestCaseError::fail(format!("move refused: {}", e.message())))?;
        prop_assert_eq!(&moved.content, &expected);
        // Sent again where the anchor kept its trailing spaces: the block is already in its
        // new place, and the edit that took it away no longer matches.
        let resent_file: String = order.iter().map(|&i| file_line(i) + "\n").collect();
        match apply_edits(&resent_file, &edits, "f") {
            Ok(edited) => prop_assert!(false, "applied again: {:?}", edited.content),
            Err(e) => prop_assert!(e.message().contains("the edit looks already applied"), "{}", e.message()),
        }
    }
}
