"""The one masking of connection strings in this package, the rule the sentinel's own
(host/src/redact.rs) follows: every URL or DSN a log line or an error shows goes through
`redact`, and an error a client library raised about a connection string through `scrub`.

What is masked, with `***`:
- a URL's user-info password, up to the URL's last `@` (`redis://:secret@host`,
  `postgresql://app:pw@db`);
- a URL's fragment (`#...`), whole;
- the value of a parameter whose name holds `pass`, `pwd`, `secret`, `token`, `credential`,
  `apikey`, `api_key`, `signature`, `authorization`, `access_key` or `private_key`, or is `key`,
  `auth` or `sig`, in any case: in a URL's query up to the next `&`, in libpq's keyword form up
  to the next unescaped space or the closing quote.
It may mask more than a secret, never less.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["MASK", "redact", "scrub"]

MASK = "***"

_NAME = (r"(?:[A-Za-z0-9_.%-]*(?:pass|pwd|secret|token|credential|apikey|api_key|api-key|signature|authorization"
         r"|access_key|private_key)[A-Za-z0-9_.%-]*|key|auth|sig)")
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^:@/\s]*):\S*@")  # greedy: to the last @
_FRAGMENT = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s#]*#)\S+")
_QUERY = re.compile(r"([?&]" + _NAME + r"=)[^&\s#]*", re.IGNORECASE)
_KEYWORD = re.compile(r"((?<![?&A-Za-z0-9_.%-])" + _NAME + r"\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|(?:\\.|[^\s\\])*\\?)",
                      re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with every secret of a connection string in it replaced by `***`."""
    text = _USERINFO.sub(r"\1:" + MASK + "@", text)
    text = _FRAGMENT.sub(r"\1" + MASK, text)
    text = _QUERY.sub(r"\1" + MASK, text)
    return _KEYWORD.sub(r"\1" + MASK, text)


def _secrets(source: str) -> list:
    """The secrets `redact` would mask in `source`, as written and percent-decoded."""
    found = []
    for pattern in (_USERINFO, _QUERY, _KEYWORD):
        for m in pattern.finditer(source):
            whole, head = m.group(0), m.group(1)
            secret = whole[len(head):]
            if pattern is _USERINFO:
                secret = secret[1:-1]  # between ':' and '@'
            secret = secret.strip("'")
            if secret and secret != MASK:
                found.extend({secret, unquote(secret)})
    return found


def scrub(message: str, source: str) -> str:
    """`message` redacted, and every secret of `source` masked wherever `message` quotes it:
    for an error a library raised about `source` (it may quote a password without its URL)."""
    out = redact(message)
    for secret in sorted(_secrets(source), key=len, reverse=True):
        if len(secret) >= 3:
            out = out.replace(secret, MASK)
    return out
