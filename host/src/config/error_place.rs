//! What a config error says, for a person: what to do about a file that cannot be read, and where
//! in the text an error is. TOML places a table's unknown key at
//! the table (`[store]`): the line of the misspelt key itself is found and shown instead. A
//! value that is not a duration gets examples.

/// The error's text as shown: TOML's own, except that an unknown key's caret points at the key
/// and a duration error gives examples.
pub fn shown(text: &str, e: &toml::de::Error) -> String {
    let message = e.message();
    if let (Some(field), Some(span)) = (unknown_field(message), e.span())
        && let Some(at) = key_position(text, span, field)
    {
        return snippet(text, at, field.chars().count(), message);
    }
    let mut shown = e.to_string();
    if message.contains("expected a duration") {
        shown = format!("{}: write it as text with a unit, such as \"20s\", \"500ms\", \"5m\" or \"1h 30m\"", shown.trim_end());
    }
    shown
}

/// What to do about a config that cannot be read.
pub fn read_advice(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            " (check the path; `sentinel init --signed DIR` writes a config to start from, and without --config the \
             sentinel runs the embedded default)"
        }
        std::io::ErrorKind::PermissionDenied => " (the file must be readable by the user the sentinel runs as)",
        _ => "",
    }
}

/// `unknown field `x`, expected ...` → `x`.
fn unknown_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    // An empty key (`"" = 1`) has no place to point at (and would match everywhere).
    rest.split_once('`').map(|(field, _)| field).filter(|field| !field.is_empty())
}

/// The byte offset of the key `field` (`field = ...`, `field.x = ...`, `"field" = ...`) in the
/// table TOML placed the error at: a `[header]` span reaches to the next header, an inline
/// table's span is searched as it is.
fn key_position(text: &str, span: std::ops::Range<usize>, field: &str) -> Option<usize> {
    let start = span.start.min(text.len());
    let end = if text[start..].starts_with('[') {
        let after_header = text[start..].find('\n').map_or(text.len(), |i| start + i + 1);
        let mut end = after_header;
        for line in text[after_header..].split_inclusive('\n') {
            if line.trim_start().starts_with('[') {
                break;
            }
            end += line.len();
        }
        end
    } else {
        span.end.min(text.len())
    };
    let region = text.get(start..end)?;
    let bytes = region.as_bytes();
    let mut from = 0;
    while let Some(found) = region[from..].find(field) {
        let at = from + found;
        let before = if at == 0 { b'\n' } else { bytes[at - 1] };
        let quoted = before == b'"';
        let after = &region[at + field.len()..];
        let after = if quoted { after.strip_prefix('"') } else { Some(after) };
        let follows = after.is_some_and(|a| a.trim_start_matches([' ', '\t']).starts_with(['=', '.']));
        let opens = if quoted { at == 1 || (at >= 2 && b" \t\n{,".contains(&bytes[at - 2])) } else { b" \t\n{,".contains(&before) };
        if follows && opens && !line_of(region, at).trim_start().starts_with('[') {
            return Some(start + at);
        }
        from = at + field.len();
    }
    None
}

/// The line of `text` that holds byte `at`.
fn line_of(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    &text[line_start..line_end]
}

/// TOML's own layout (`TOML parse error at line L, column C`, the line, a caret under the key).
/// The line is shown up to its `=`: a misspelt key's value may be a secret (`pasword = "..."`),
/// which no masking rule would know by that name.
fn snippet(text: &str, at: usize, width: usize, message: &str) -> String {
    let line = line_of(text, at);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let number = text[..at].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    let gutter = " ".repeat(number.to_string().len());
    let shown = match line[at - line_start..].find('=') {
        Some(eq) => format!("{}= ...", &line[..at - line_start + eq]),
        None => line.to_string(),
    };
    format!(
        "TOML parse error at line {number}, column {column}\n{gutter} |\n{number} | {shown}\n{gutter} | {}{}\n{message}\n",
        " ".repeat(column - 1),
        "^".repeat(width.max(1))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caret_points_at_the_misspelt_key_not_its_table() {
        let text = "[metrics]\nkind = \"synthetic\"\n\n[store]\nkind = \"sqlite\"\n  pth = \"x.db\"\n";
        let store = text.find("[store]").unwrap();
        let at = key_position(text, store..text.len(), "pth").unwrap();
        let shown = snippet(text, at, 3, "unknown field `pth`, expected `kind` or `path`");
        assert_eq!(
            shown,
            "TOML parse error at line 6, column 3\n  |\n6 |   pth = ...\n  |   ^^^\nunknown field `pth`, expected `kind` or `path`\n"
        );
        // An empty key points nowhere (it matched everywhere, and the search never ended).
        assert_eq!(unknown_field("unknown field ``, expected `path`"), None);
        assert_eq!(key_position(text, store..store + 7, "pth"), Some(at), "a header's span reaches its keys");
        assert_eq!(key_position("[a]\n\"pth\" = 1\n", 0..3, "pth"), Some(5));
        assert_eq!(
            key_position("[a]\npthx = 1\n[b]\npth = 1\n", 0..3, "pth"),
            None,
            "a longer key is another key, the next table another table"
        );
        assert_eq!(key_position("c = { kind = \"x\", pth = 1 }\n", 4..27, "pth"), Some(18), "inside an inline table");
        assert_eq!(unknown_field("unknown field `tick_dedline`, expected one of"), Some("tick_dedline"));
    }
}
