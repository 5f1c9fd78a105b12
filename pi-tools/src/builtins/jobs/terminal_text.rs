//! What a program on a pseudo-terminal printed, as text for the model: the terminal's
//! control sequences are removed (colours, cursor movement, screen clearing, titles), and
//! carriage returns are interpreted as a terminal shows them: a line rewritten in place (a
//! progress bar) keeps only its last state. Backspaces erase the character before them.
//! Nothing else is emulated (no screen: a full-screen program's text comes in the order
//! it was drawn).

/// `raw` without control sequences, with `\r` and backspace applied per line.
pub(crate) fn clean(raw: &str) -> String {
    let stripped = strip_sequences(raw);
    let mut out = String::with_capacity(stripped.len());
    for (i, line) in stripped.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&overwrite(line));
    }
    out
}

/// Removes CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC \`), other two-character
/// escapes, and the C0 controls a terminal does not print (but tab, newline, carriage
/// return and backspace, which [`overwrite`] handles).
fn strip_sequences(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // Parameters and intermediates, then one final byte in @..~.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']' | 'P' | '_' | '^') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                Some('(' | ')' | '*' | '+' | '#' | '%') => {
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            '\t' | '\n' | '\r' | '\u{8}' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// One line as a terminal leaves it: `\r` moves back to its start (later characters
/// overwrite earlier ones), a backspace moves back one; `\r` at the line's end (before
/// `\n`) changes nothing.
fn overwrite(line: &str) -> String {
    if !line.contains(['\r', '\u{8}']) {
        return line.to_owned();
    }
    let mut cells: Vec<char> = Vec::with_capacity(line.len());
    let mut at: usize = 0;
    for c in line.chars() {
        match c {
            '\r' => at = 0,
            '\u{8}' => at = at.saturating_sub(1),
            c => {
                if at < cells.len() {
                    cells[at] = c;
                } else {
                    cells.push(c);
                }
                at += 1;
            }
        }
    }
    cells.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn colours_and_cursor_movement_go() {
        assert_eq!(clean("\u{1b}[1;32mok\u{1b}[0m\r\n"), "ok\n");
        assert_eq!(clean("\u{1b}]0;title\u{7}>>> "), ">>> ");
        assert_eq!(clean("\u{1b}[?2004h>>> \u{1b}[K"), ">>> ");
    }

    #[test]
    fn a_line_rewritten_in_place_keeps_its_last_state() {
        assert_eq!(clean("10%\r50%\r100%\ndone\n"), "100%\ndone\n");
        assert_eq!(clean("abc\u{8}\u{8}XY\n"), "aXY\n");
    }
}
