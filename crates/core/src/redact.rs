//! The one redaction of connection strings, for every message, log line and report that may
//! show one (`sentinel check`, configuration errors, adapter errors): PostgreSQL (`store.url`
//! or `SENTINEL_POSTGRES_URL`), Prometheus (`metrics.url` or `SENTINEL_PROMETHEUS_URL`) and
//! Redis (`publish.cache.url`, `publish.parameter.url` or `SENTINEL_REDIS_URL`).
//!
//! What is masked, with `***`, anywhere in the text:
//!
//! - the password of a URL's user info: `scheme://user:secret@host` becomes
//!   `scheme://user:***@host`, and `redis://:secret@host` becomes `redis://:***@host`. The user
//!   name stays (it says who connects, and `postgres://sentinel@db` holds no secret). The user
//!   info runs to the last `@` of the URL, so a password holding `@`, `/`, `?` or `#` is masked
//!   whole; a URL with no `@` before the next space whose host part holds a `:` with no `/`
//!   after it (`redis://u:pa ss@host`, a password holding a space) is masked up to the last `@`
//!   of its line. This may mask more than the password, never less.
//! - the value of a parameter whose name (percent-decoded, in any case, `-`, `_` and `.` left
//!   out) contains `pass`, `pwd`, `secret`, `token`, `credential`, `signature`, `authorization`
//!   or `jwt`, ends in `key` (`apikey`, `access-key`, `accessKey`, `private_key`,
//!   `subscription-key`, `key`), or is `auth` or `sig`: a URL's query (`?password=...`, Redis's
//!   `?pass=...`, `?apikey=...`) up to the next `&`, and libpq's `key=value` form
//!   (`password=...`, `password = '...'` quoted, `sslpassword=...`, `password=a\ b` escaped) up
//!   to the next unescaped space or the closing quote.
//! - a URL's fragment (`#...` after its host), whole.
//!
//! [`redact`] never panics, whatever the text. [`scrub`] also masks a URL's secrets where a
//! library quotes them outside the URL (percent-decoded too). The cases every language's
//! masking must agree on are one table, `tests/vectors/redaction.json`, which the sentinel's,
//! the Python package's and the Node package's tests each run.

use std::ops::Range;

/// What a secret is replaced with.
pub(crate) const MASK: &str = "***";

/// `text` with every secret of a connection string in it replaced by `***`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for span in secret_spans(text) {
        out.push_str(&text[from..span.start]);
        out.push_str(MASK);
        from = span.end;
    }
    out.push_str(&text[from..]);
    out
}

/// `message` redacted, and every secret of `url` masked wherever `message` quotes it (as
/// written or percent-decoded): for errors of a library that was handed `url`.
pub fn scrub(message: &str, url: &str) -> String {
    let mut out = redact(message);
    for span in secret_spans(url) {
        let secret = &url[span];
        let decoded = percent_decode(secret);
        for s in [secret, decoded.as_str()] {
            if !s.is_empty() && s != MASK {
                out = out.replace(s, MASK);
            }
        }
    }
    out
}

/// The byte ranges of `text` that hold secrets, in order and not overlapping.
fn secret_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = userinfo_spans(text);
    let parameters = parameter_spans(text, &spans);
    spans.extend(parameters);
    spans.retain(|s| s.start < s.end);
    spans.sort_by_key(|s| s.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for s in spans {
        match merged.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}

/// The password of each `scheme://user:password@` in `text`. Every index found is that of an
/// ASCII character or of the text's end, so each is a character boundary.
fn userinfo_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let marker = search + found;
        let after = marker + 3;
        search = after;
        let line_end = text[after..].find(['\n', '\r']).map_or(text.len(), |i| after + i);
        let token_end = text[after..line_end].find(is_space).map_or(line_end, |i| after + i);
        // The last `@` of the URL ends its user info, whichever `@` a library takes. A URL with
        // no `@` before the next space whose host part holds a `:` with no `/` after it
        // (`redis://u:pa ss@...`, `redis://:2024 secret@...`) may hold a space in its password,
        // so its line is searched on (a `host:port` followed by text with an `@` is masked
        // too: more than a secret, never less).
        let at = text[after..token_end].rfind('@').map(|i| after + i).or_else(|| {
            let token = &text[after..token_end];
            let cut_by_a_space = token.find(':').is_some_and(|colon| !token[colon..].contains('/'));
            if cut_by_a_space { text[token_end..line_end].rfind('@').map(|i| token_end + i) } else { None }
        });
        if let Some(at) = at
            && let Some(colon) = text[after..at].find(':')
        {
            spans.push(after + colon + 1..at);
        }
        // A fragment (`#...`) after the host may carry a token: masked whole.
        let fragment_from = at.map_or(after, |a| a + 1).min(token_end);
        if let Some(hash) = text[fragment_from..token_end].find('#') {
            spans.push(fragment_from + hash + 1..token_end);
        }
    }
    spans
}

/// Whether a parameter of this name holds a secret. The name is compared percent-decoded, in
/// lower case and without `-`, `_` and `.` (`access-key`, `accessKey`, `p%61ssword`): it holds
/// a secret when it contains `pass`, `pwd`, `secret`, `token`, `credential`, `signature`,
/// `authorization` or `jwt`, ends in `key` (`apikey`, `accesskey`, `privatekey`,
/// `subscriptionkey`, `key` itself), or is `auth` or `sig`.
fn secret_name(name: &str) -> bool {
    let name: String = percent_decode(name).to_lowercase().chars().filter(|c| !matches!(c, '-' | '_' | '.')).collect();
    // Short words only whole (`signal=` or `author=` hold no secret).
    ["pass", "pwd", "secret", "token", "credential", "signature", "authorization", "jwt"].iter().any(|s| name.contains(s))
        || name.ends_with("key")
        || ["auth", "sig"].contains(&name.as_str())
}

/// What ends a URL or an unquoted value: ASCII space, tab, line feed, vertical tab, form feed
/// and carriage return, the same six in the three languages (a no-break space does not end one).
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'%')
}

/// The value of each `name=value` whose name is a secret's: in a URL query (after `?` or `&`)
/// up to the next `&` or space, elsewhere (libpq) up to the next space or the closing quote.
/// A name inside a password already masked (`inside`) is part of that password.
fn parameter_spans(text: &str, inside: &[Range<usize>]) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !name_byte(bytes[i]) || (i > 0 && name_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        while end < bytes.len() && name_byte(bytes[end]) {
            end += 1;
        }
        i = end;
        let mut eq = end;
        while eq < bytes.len() && bytes[eq] == b' ' {
            eq += 1;
        }
        if eq >= bytes.len() || bytes[eq] != b'=' || !secret_name(&text[start..end]) || inside.iter().any(|s| s.contains(&start)) {
            continue;
        }
        let mut value = eq + 1;
        while value < bytes.len() && bytes[value] == b' ' {
            value += 1;
        }
        let in_query = start > 0 && matches!(bytes[start - 1], b'?' | b'&');
        let value_end = if bytes.get(value) == Some(&b'\'') {
            // libpq quoting: up to the closing quote, a backslash escaping the next character.
            let mut j = value + 1;
            loop {
                match bytes.get(j) {
                    None => break j,
                    Some(b'\\') => j += 2,
                    Some(b'\'') => break j + 1,
                    Some(_) => j += 1,
                }
            }
            .min(bytes.len())
        } else if in_query {
            text[value..].find(|c: char| c == '&' || is_space(c)).map_or(text.len(), |k| value + k)
        } else {
            // libpq unquoted: up to a space, a backslash escaping the next character (`a\ b`).
            let mut j = value;
            while j < bytes.len() && !is_space(char::from(bytes[j])) {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            j.min(bytes.len())
        };
        // A backslash may have stepped into a multibyte character: end on a boundary.
        let mut value_end = value_end;
        while !text.is_char_boundary(value_end) {
            value_end += 1;
        }
        spans.push(value..value_end);
        i = value_end.max(i);
    }
    spans
}

/// `%XX` sequences decoded (others left as they are), invalid UTF-8 replaced.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b)))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_case_of_the_shared_table_is_masked_as_it_says() {
        // The same table the Python and Node packages run (tests/vectors/redaction.json).
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/redaction.json");
        let table: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let cases = table["cases"].as_array().unwrap();
        assert!(cases.len() >= 40, "{} cases", cases.len());
        for case in cases {
            let (text, shown) = (case["text"].as_str().unwrap(), case["shown"].as_str().unwrap());
            assert_eq!(redact(text), shown, "{text}");
            assert_eq!(redact(shown), shown, "redacting twice changes nothing: {shown}");
        }
    }

    #[test]
    fn scrub_masks_a_quoted_secret_as_written_and_decoded() {
        let url = "redis://:p%40ss-word@cache:6379/0";
        assert_eq!(scrub("auth failed for p@ss-word and p%40ss-word", url), "auth failed for *** and ***");
        assert_eq!(scrub("no secret here", "redis://cache/0"), "no secret here");
    }

    #[test]
    fn odd_text_never_panics() {
        for text in
            ["://", "@", ":@", "a://:@", "://@:", "\u{202E}://x:y@z", "é://ü:ö@ä?pässword='é\\", "password=", "x=' \\", "?&=&", "pass\\"]
        {
            let shown = redact(text);
            let _ = scrub(text, text);
            assert!(!shown.contains("ö@") && !shown.contains(":y@"), "{text:?} -> {shown:?}");
        }
    }

    proptest! {
        #[test]
        fn any_password_in_a_url_is_masked(
            scheme in "(postgres|postgresql|redis|rediss|http|https)",
            user in "[a-z]{0,8}",
            password in "[!-~]{1,24}",
            host in "[a-z]{1,8}(:[0-9]{1,5})?",
            rest in "(/[a-z]{0,6})?",
        ) {
            let url = format!("{scheme}://{user}:{password}@{host}{rest}");
            prop_assert_eq!(redact(&url), format!("{scheme}://{user}:***@{host}{rest}"));
            let quoted = format!("host=db password='{}' user=x", password.replace('\\', "\\\\").replace('\'', "\\'"));
            prop_assert_eq!(redact(&quoted), "host=db password=*** user=x");
        }

        #[test]
        fn any_text_is_redacted_without_panicking(text in "\\PC{0,60}") {
            let _ = redact(&text);
            let _ = scrub(&text, &text);
        }
    }
}
