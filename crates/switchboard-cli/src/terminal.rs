//! What reaches the terminal: text from models, agents and servers is hostile, so
//! control characters (ANSI colour and cursor sequences, OSC clipboard writes and
//! title changes, bidirectional overrides) are shown escaped, never obeyed.

use std::borrow::Cow;

/// Whether `character` would steer the terminal rather than print.
fn steers(character: char) -> bool {
    (character.is_control() && character != '\n' && character != '\t')
        || matches!(character, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every steering character written as a visible escape (`\u{1b}`).
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(steers) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(
                |character| {
                    if steers(character) {
                        character.escape_unicode().to_string()
                    } else {
                        character.to_string()
                    }
                },
            )
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_sequences_are_shown_not_obeyed() {
        let cases = [
            ("plain text\nwith lines\tand tabs", "plain text\nwith lines\tand tabs"),
            ("\u{1b}[31mred\u{1b}[0m", "\\u{1b}[31mred\\u{1b}[0m"),
            ("\u{1b}]52;c;SGVsbG8=\u{7}", "\\u{1b}]52;c;SGVsbG8=\\u{7}"),
            ("over\rwrite", "over\\u{d}write"),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
            ("émile ✓ 漢字", "émile ✓ 漢字"),
        ];
        for (input, expected) in cases {
            assert_eq!(printable(input), expected, "{input:?}");
        }
    }
}
