// The one masking of connection strings in this package, the rule the sentinel's own
// (crates/core/src/redact.rs) and the Python package's (redaction.py) follow, step for step: every URL
// or DSN a log line or an error shows goes through `redact`, or `redactSecrets` when the caller
// also knows the secrets themselves (a library may quote a password without its URL). The cases
// all three must agree on are one table, tests/vectors/redaction.json.
//
// What is masked, with `***`:
// - a URL's user-info password, up to the URL's last `@` (`redis://:secret@host`); a URL with
//   no `@` before the next space whose host part holds a `:` with no `/` after it (a password
//   holding a space) is masked up to the last `@` of its line;
// - a URL's fragment (`#...`), whole;
// - the value of a parameter whose name (percent-decoded, in any case, `-`, `_` and `.` left
//   out) contains `pass`, `pwd`, `secret`, `token`, `credential`, `signature`, `authorization`
//   or `jwt`, ends in `key` (`apikey`, `access-key`, `accessKey`, `subscription-key`, `key`), or
//   is `auth` or `sig`: in a URL's query up to the next `&`, in libpq's keyword form up to the
//   next unescaped space or the closing quote.
// It may mask more than a secret, never less.

export const MASK = '***';

const CONTAINED = ['pass', 'pwd', 'secret', 'token', 'credential', 'signature', 'authorization', 'jwt'];
const isNameChar = (c) => c !== undefined && /[A-Za-z0-9_.%-]/.test(c);
// What ends a URL or an unquoted value: the same six characters in the three languages.
const isSpace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';
const isHex = (b) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** `%XX` sequences decoded byte by byte (others left as they are), invalid UTF-8 replaced. */
function decode(text) {
  const raw = new TextEncoder().encode(text);
  const out = [];
  for (let i = 0; i < raw.length; i += 1) {
    if (raw[i] === 0x25 && i + 2 < raw.length && isHex(raw[i + 1]) && isHex(raw[i + 2])) {
      out.push(parseInt(String.fromCharCode(raw[i + 1], raw[i + 2]), 16));
      i += 2;
    } else {
      out.push(raw[i]);
    }
  }
  return new TextDecoder('utf-8').decode(new Uint8Array(out));
}

function secretName(name) {
  const n = decode(name).toLowerCase().replace(/[-_.]/g, '');
  return CONTAINED.some((w) => n.includes(w)) || n.endsWith('key') || n === 'auth' || n === 'sig';
}

function userinfoSpans(text) {
  const spans = [];
  let search = 0;
  for (;;) {
    const marker = text.indexOf('://', search);
    if (marker < 0) return spans;
    const after = marker + 3;
    search = after;
    let lineEnd = text.length;
    for (const stop of ['\n', '\r']) {
      const k = text.indexOf(stop, after);
      if (k >= 0 && k < lineEnd) lineEnd = k;
    }
    let tokenEnd = after;
    while (tokenEnd < lineEnd && !isSpace(text[tokenEnd])) tokenEnd += 1;
    // The last `@` of the URL ends its user info. A URL with no `@` before the next space whose
    // host part holds a `:` with no `/` after it may hold a space in its password, so its line
    // is searched on.
    const token = text.slice(after, tokenEnd);
    let at = token.lastIndexOf('@');
    at = at >= 0 ? after + at : -1;
    const colon = token.indexOf(':');
    if (at < 0 && colon >= 0 && !token.slice(colon).includes('/')) {
      const further = text.slice(tokenEnd, lineEnd).lastIndexOf('@');
      at = further >= 0 ? tokenEnd + further : -1;
    }
    if (at >= 0) {
      const colon = text.slice(after, at).indexOf(':');
      if (colon >= 0) spans.push([after + colon + 1, at]);
    }
    const fragmentFrom = Math.min(at >= 0 ? at + 1 : after, tokenEnd);
    const hash = text.slice(fragmentFrom, tokenEnd).indexOf('#');
    if (hash >= 0) spans.push([fragmentFrom + hash + 1, tokenEnd]);
  }
}

function parameterSpans(text, inside) {
  const spans = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isNameChar(text[i]) || (i > 0 && isNameChar(text[i - 1]))) {
      i += 1;
      continue;
    }
    const start = i;
    let end = i;
    while (end < n && isNameChar(text[end])) end += 1;
    i = end;
    let eq = end;
    while (eq < n && text[eq] === ' ') eq += 1;
    if (eq >= n || text[eq] !== '=' || !secretName(text.slice(start, end)) || inside.some(([a, b]) => a <= start && start < b)) {
      continue;
    }
    let value = eq + 1;
    while (value < n && text[value] === ' ') value += 1;
    const inQuery = start > 0 && (text[start - 1] === '?' || text[start - 1] === '&');
    let valueEnd;
    if (text[value] === "'") {
      // libpq quoting: up to the closing quote, a backslash escaping the next character.
      let j = value + 1;
      while (j < n) {
        if (text[j] === '\\') j += 2;
        else if (text[j] === "'") {
          j += 1;
          break;
        } else j += 1;
      }
      valueEnd = Math.min(j, n);
    } else if (inQuery) {
      let j = value;
      while (j < n && text[j] !== '&' && !isSpace(text[j])) j += 1;
      valueEnd = j;
    } else {
      // libpq unquoted: up to a space, a backslash escaping the next character.
      let j = value;
      while (j < n && !isSpace(text[j])) j += text[j] === '\\' ? 2 : 1;
      valueEnd = Math.min(j, n);
    }
    spans.push([value, valueEnd]);
    i = Math.max(valueEnd, i);
  }
  return spans;
}

function secretSpans(text) {
  const userinfo = userinfoSpans(text);
  const spans = [...userinfo, ...parameterSpans(text, userinfo)].filter(([a, b]) => a < b).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const merged = [];
  for (const [a, b] of spans) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged;
}

/** `text` with every secret of a connection string in it replaced by `***`. */
export function redact(text) {
  const s = String(text);
  let out = '';
  let last = 0;
  for (const [a, b] of secretSpans(s)) {
    out += s.slice(last, a) + MASK;
    last = b;
  }
  return out + s.slice(last);
}

/** The secrets `redact` masks in `source`, as written and percent-decoded. */
export function secretsOf(source) {
  const s = String(source);
  const found = new Set();
  for (const [a, b] of secretSpans(s)) {
    const secret = s.slice(a, b).replace(/^'|'$/g, '');
    if (secret && secret !== MASK) {
      found.add(secret);
      found.add(decode(secret));
    }
  }
  return [...found];
}

/** `message` redacted, and each of `secrets` masked wherever it appears. */
export function redactSecrets(message, secrets = []) {
  let out = redact(message);
  for (const secret of [...secrets].sort((x, y) => y.length - x.length)) {
    if (secret) out = out.split(secret).join(MASK);
  }
  return out;
}
