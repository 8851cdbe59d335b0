"""The one masking of connection strings in this package, the rule the sentinel's own
(crates/core/src/redact.rs) follows, step for step: every URL or DSN a log line or an error shows goes
through `redact`, and an error a client library raised about a connection string through
`scrub`. The cases all three must agree on are one table, tests/vectors/redaction.json.

What is masked, with `***`:
- a URL's user-info password, up to the URL's last `@` (`redis://:secret@host`,
  `postgresql://app:pw@db`); a URL with no `@` before the next space whose host part holds a
  `:` with no `/` after it (a password holding a space) is masked up to the last `@` of its line;
- a URL's fragment (`#...`), whole;
- the value of a parameter whose name (percent-decoded, in any case, `-`, `_` and `.` left out)
  contains `pass`, `pwd`, `secret`, `token`, `credential`, `signature`, `authorization` or
  `jwt`, ends in `key` (`apikey`, `access-key`, `accessKey`, `subscription-key`, `key`), or is
  `auth` or `sig`: in a URL's query up to the next `&`, in libpq's keyword form up to the next
  unescaped space or the closing quote.
It may mask more than a secret, never less.
"""

from __future__ import annotations

import re
from typing import List, Tuple

__all__ = ["MASK", "redact", "scrub"]

MASK = "***"

_NAME_CHARS = re.compile(r"[A-Za-z0-9_.%-]")
_CONTAINED = ("pass", "pwd", "secret", "token", "credential", "signature", "authorization", "jwt")

Span = Tuple[int, int]


def _secret_name(name: str) -> bool:
    name = "".join(c for c in _percent_decode(name).lower() if c not in "-_.")
    return any(word in name for word in _CONTAINED) or name.endswith("key") or name in ("auth", "sig")


#: What ends a URL or an unquoted value: the same six characters in the three languages.
_SPACE = " \t\n\x0b\x0c\r"
_HEX = frozenset(b"0123456789abcdefABCDEF")


def _percent_decode(text: str) -> str:
    """`%XX` sequences decoded byte by byte (others left as they are), invalid UTF-8 replaced."""
    raw = text.encode("utf-8", "surrogatepass")
    out, i = bytearray(), 0
    while i < len(raw):
        if raw[i] == 0x25 and i + 2 < len(raw) and raw[i + 1] in _HEX and raw[i + 2] in _HEX:
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode("utf-8", "replace")


def _userinfo_spans(text: str) -> List[Span]:
    spans: List[Span] = []
    search = 0
    while True:
        marker = text.find("://", search)
        if marker < 0:
            return spans
        after = marker + 3
        search = after
        line_end = len(text)
        for stop in ("\n", "\r"):
            k = text.find(stop, after)
            if 0 <= k < line_end:
                line_end = k
        token_end = after
        while token_end < line_end and text[token_end] not in _SPACE:
            token_end += 1
        # The last `@` of the URL ends its user info. A URL with no `@` before the next space
        # whose host part holds a `:` with no `/` after it may hold a space in its password, so
        # its line is searched on.
        at = text.rfind("@", after, token_end)
        token = text[after:token_end]
        if at < 0 and ":" in token and "/" not in token[token.index(":"):]:
            at = text.rfind("@", token_end, line_end)
        if at >= 0:
            colon = text.find(":", after, at)
            if colon >= 0:
                spans.append((colon + 1, at))
        fragment_from = min(at + 1 if at >= 0 else after, token_end)
        hash_at = text.find("#", fragment_from, token_end)
        if hash_at >= 0:
            spans.append((hash_at + 1, token_end))


def _parameter_spans(text: str, inside: List[Span]) -> List[Span]:
    spans: List[Span] = []
    i, n = 0, len(text)
    while i < n:
        if not _NAME_CHARS.match(text[i]) or (i > 0 and _NAME_CHARS.match(text[i - 1])):
            i += 1
            continue
        start = end = i
        while end < n and _NAME_CHARS.match(text[end]):
            end += 1
        i = end
        eq = end
        while eq < n and text[eq] == " ":
            eq += 1
        if eq >= n or text[eq] != "=" or not _secret_name(text[start:end]) or any(a <= start < b for a, b in inside):
            continue
        value = eq + 1
        while value < n and text[value] == " ":
            value += 1
        in_query = start > 0 and text[start - 1] in "?&"
        if value < n and text[value] == "'":
            # libpq quoting: up to the closing quote, a backslash escaping the next character.
            j = value + 1
            while j < n:
                if text[j] == "\\":
                    j += 2
                elif text[j] == "'":
                    j += 1
                    break
                else:
                    j += 1
            value_end = min(j, n)
        elif in_query:
            j = value
            while j < n and text[j] != "&" and text[j] not in _SPACE:
                j += 1
            value_end = j
        else:
            # libpq unquoted: up to a space, a backslash escaping the next character.
            j = value
            while j < n and text[j] not in _SPACE:
                j += 2 if text[j] == "\\" else 1
            value_end = min(j, n)
        spans.append((value, value_end))
        i = max(value_end, i)
    return spans


def _secret_spans(text: str) -> List[Span]:
    spans = _userinfo_spans(text)
    spans += _parameter_spans(text, list(spans))
    merged: List[List[int]] = []
    for a, b in sorted(s for s in spans if s[0] < s[1]):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def redact(text: str) -> str:
    """`text` with every secret of a connection string in it replaced by `***`."""
    text = str(text)
    out, last = [], 0
    for a, b in _secret_spans(text):
        out.append(text[last:a])
        out.append(MASK)
        last = b
    out.append(text[last:])
    return "".join(out)


def scrub(message: str, source: str) -> str:
    """`message` redacted, and every secret of `source` masked wherever `message` quotes it, as
    written or percent-decoded: for an error a library raised about `source` (it may quote a
    password without its URL)."""
    out = redact(message)
    secrets = set()
    for a, b in _secret_spans(source):
        secret = source[a:b].strip("'")
        if secret and secret != MASK:
            secrets.update((secret, _percent_decode(secret)))
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 3:
            out = out.replace(secret, MASK)
    return out
