//! Text from agents is data: what an agent names itself (`AGENT_NAME`), notes and prints — and
//! what a crafted replay holds — reaches the terminal only through [`printable`], so that no
//! escape sequence of it clears the screen, writes the clipboard (OSC 52), moves the cursor or
//! forges a line of a summary or a standings table.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` would act on a terminal or on how text around it is laid out rather than show
/// as itself: control characters (C0, DEL, C1: ESC, newline, CR, backspace, BEL…), the
/// bidirectional overrides, embeddings, isolates and marks (which reorder what follows them),
/// and the invisible zero-width characters (space, non-joiner, joiner, word joiner, BOM: a name
/// made to look like another's).
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// `text` as printable terminal text: every control character and bidi control shown escaped
/// (`\n`, `\r`, `\t`, `\x1b`, `\u{202e}`), everything else unchanged. Borrowed when there is
/// nothing to escape (every honest name); applying it twice gives the same text.
///
/// ```
/// use gbely_engine::text::printable;
/// assert_eq!(printable("Mravec 7"), "Mravec 7");
/// assert_eq!(printable("evil\x1b[2J\nforged"), "evil\\x1b[2J\\nforged");
/// assert_eq!(printable(&printable("\u{202e}")), "\\u{202e}");
/// ```
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if acts(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if acts(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Multi-line text (an agent's notes, what it printed) as printable lines: split at its line
/// breaks, each line [`printable`] (so a CR, a lone ESC or a bidi override inside a line is
/// shown escaped, and no line can pretend to be two).
pub fn printable_lines(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.lines().map(printable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_character_is_shown_escaped() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let shown = printable(&c.to_string()).into_owned();
            assert!(shown.starts_with('\\') && !shown.chars().any(|x| x.is_control()), "{c:?} → {shown:?}");
        }
        assert_eq!(printable("a\x08b\x07"), "a\\x08b\\x07");
        assert_eq!(printable("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(printable("x\u{2067}y\u{200f}"), "x\\u{2067}y\\u{200f}");
        // Invisible: a name that looks like another's.
        assert_eq!(printable("ad\u{200b}min\u{feff}"), "ad\\u{200b}min\\u{feff}");
    }

    #[test]
    fn printable_text_is_unchanged() {
        for t in ["", "council", "Mravec 7 (ľščťž) ×", "a\\x1b", "日本語 😀"] {
            assert!(matches!(printable(t), Cow::Borrowed(_)), "{t}");
        }
    }

    #[test]
    fn lines_are_split_then_escaped() {
        let lines: Vec<_> = printable_lines("one\r\ntwo\x1b]52;c;eA==\x07\nthree\rfour").collect();
        assert_eq!(lines, ["one", "two\\x1b]52;c;eA==\\x07", "three\\rfour"]);
    }
}
