//! Moves against stale resends: an edit whose newText brings lines that another edit of the
//! same call takes away from their old place is a move, and applies; when that other edit's
//! oldText no longer matches, the lines were moved already, and the edit is refused as
//! already applied.

use super::*;

/// A guide whose table is moved above its intro; the intro line ends with two spaces (a
/// Markdown line break), which the model leaves out, so that edit is matched only through
/// the normalisation of trailing blanks.
const GUIDE: &str = "# Guide\nIntro text.  \n| a | b |\n|---|---|\n| 1 | 2 |\nOutro.\n";

/// The two edits of the move: the table where the intro was, the intro where the table was.
const MOVE: [(&str, &str); 2] = [
    ("Intro text.\n", "| a | b |\n|---|---|\n| 1 | 2 |\n"),
    (
        "| a | b |\n|---|---|\n| 1 | 2 |\nOutro.",
        "Intro text.\nOutro.",
    ),
];

#[tokio::test]
async fn a_table_moved_up_applies() {
    let (result, after) = run_ok(GUIDE, &MOVE).await;
    assert_eq!(
        after,
        "# Guide\n| a | b |\n|---|---|\n| 1 | 2 |\nIntro text.\nOutro.\n"
    );
    assert_eq!(
        result.text_content(),
        "Successfully replaced 2 blocks in f.txt."
    );
}

#[tokio::test]
async fn the_same_move_sent_again_is_refused_as_already_applied() {
    // The table is above the intro already (the intro kept its line break): the second
    // edit's oldText no longer matches, so nothing takes the table away from where newText
    // would put it again.
    let moved = "# Guide\n| a | b |\n|---|---|\n| 1 | 2 |\nIntro text.  \nOutro.\n";
    assert_eq!(
        run_err(moved, &MOVE).await,
        "edits[0].oldText matches f.txt only once its quotes, dashes, spaces or Unicode forms are normalised (line 5), and edits[0].newText as you sent it is already in the file (lines 2-4): the edit looks already applied there, and the match is most likely another place. Read the file again to see its current state before editing it."
    );
    // Alone, the first edit of the move is refused as before.
    let message = run_err(GUIDE, &MOVE[..1]).await;
    assert!(
        message.contains("the edit looks already applied"),
        "{message}"
    );
}
