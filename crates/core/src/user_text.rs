//! Text people type that the sentinel stores, logs and publishes: a pin's reason and actor, an
//! API token's name (the actor of its pins). Such text may not hold control characters
//! (Unicode category Cc: C0, DEL, C1, so no newline, carriage return or tab) nor bidirectional
//! formatting characters: a newline would start a forged line in a text log, and a right-to-left
//! override would make a log or a terminal show something else than what is stored. The pin
//! service refuses them for the CLI and the API alike, and the config refuses them in a token
//! name; [`escape`] shows text stored before this check (or from elsewhere) on one line.

use std::borrow::Cow;

/// A control character or a bidirectional formatting character (the embeddings and overrides
/// U+202A..U+202E, the isolates U+2066..U+2069, the marks U+200E, U+200F and U+061C).
pub(crate) fn is_refused(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// `Ok` when `text` holds no refused character; else what is wrong, naming the first one by
/// its code point and position (never echoing the text).
pub fn check(text: &str) -> Result<(), String> {
    match text.chars().enumerate().find(|(_, c)| is_refused(*c)) {
        None => Ok(()),
        Some((i, c)) => Err(format!(
            "must not contain control characters (such as a line break or a tab) or bidirectional formatting \
             characters (found U+{:04X} at character {})",
            c as u32,
            i + 1
        )),
    }
}

/// `text` with every refused character escaped as Rust writes it (`\n`, `\u{202e}`), so that
/// it stays on one line and reads as stored; other text (quotes included) is unchanged.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_refused) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_refused(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_refused_naming_the_first() {
        for ok in ["incident 4411", "ops@example.com", "émoji ✓ 日本語", "quotes \" and ' stay", "\u{200B}zero width space"] {
            assert_eq!(check(ok), Ok(()), "{ok:?}");
        }
        let refused = [
            ("ok\n2026-01-01T00:00:00Z  INFO fake line", "U+000A at character 3"),
            ("a\rb", "U+000D at character 2"),
            ("\ttab", "U+0009 at character 1"),
            ("nul\0", "U+0000 at character 4"),
            ("del\u{7f}", "U+007F at character 4"),
            ("c1\u{85}next line", "U+0085 at character 3"),
            ("c1\u{9b}csi", "U+009B at character 3"),
            ("abc\u{202E}fed", "U+202E at character 4"),
            ("\u{202A}", "U+202A"),
            ("\u{2066}isolate\u{2069}", "U+2066 at character 1"),
            ("mark\u{200E}", "U+200E"),
            ("mark\u{200F}", "U+200F"),
            ("arabic mark\u{061C}", "U+061C"),
        ];
        for (text, says) in refused {
            let message = check(text).unwrap_err();
            assert!(message.contains(says), "{text:?}: {message}");
            assert!(!message.contains(text), "the text is not echoed: {message}");
        }
    }

    #[test]
    fn escaping_keeps_text_on_one_line_and_leaves_the_rest_alone() {
        assert!(matches!(escape("pinned by ops@example.com \"x\""), Cow::Borrowed("pinned by ops@example.com \"x\"")));
        assert_eq!(escape("ok\n2026-01-01T00:00:00Z  INFO fake"), "ok\\n2026-01-01T00:00:00Z  INFO fake");
        assert_eq!(escape("a\r\tb\u{202E}c\u{85}"), "a\\r\\tb\\u{202e}c\\u{85}");
        assert!(!escape("x\u{2066}y\u{7f}").chars().any(is_refused));
    }
}
