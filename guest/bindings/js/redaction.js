// The one masking of connection strings in this package, the rule the sentinel's own
// (host/src/redact.rs) and the Python package's (redaction.py) follow: every URL or DSN a log
// line or an error shows goes through `redact`, or `redactSecrets` when the caller also knows
// the secrets themselves (a library may quote a password without its URL).
//
// What is masked, with `***`:
// - a URL's user-info password, up to the URL's last `@` (`redis://:secret@host`);
// - a URL's fragment (`#...`), whole;
// - the value of a parameter whose name holds `pass`, `pwd`, `secret`, `token`, `credential`,
//   `apikey`, `api_key`, `signature`, `authorization`, `access_key` or `private_key`, or is `key`,
//   `auth` or `sig`, in any case: in a URL's query up to the next `&`, in libpq's keyword form up
//   to the next unescaped space or the closing quote.
// It may mask more than a secret, never less.

export const MASK = '***';

const NAME = '(?:[A-Za-z0-9_.%-]*(?:pass|pwd|secret|token|credential|apikey|api_key|api-key|signature|authorization'
  + '|access_key|private_key)[A-Za-z0-9_.%-]*|key|auth|sig)';
const USERINFO = /([A-Za-z][A-Za-z0-9+.-]*:\/\/[^:@/\s]*):\S*@/g; // greedy: to the last @
const FRAGMENT = /([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s#]*#)\S+/g;
const QUERY = new RegExp(`([?&]${NAME}=)[^&\\s#]*`, 'gi');
const KEYWORD = new RegExp(`((?<![?&A-Za-z0-9_.%-])${NAME}\\s*=\\s*)(?:'(?:[^'\\\\]|\\\\.)*'?|(?:\\\\.|[^\\s\\\\])*\\\\?)`, 'gi');

/** `text` with every secret of a connection string in it replaced by `***`. */
export function redact(text) {
  return String(text)
    .replace(USERINFO, `$1:${MASK}@`)
    .replace(FRAGMENT, `$1${MASK}`)
    .replace(QUERY, `$1${MASK}`)
    .replace(KEYWORD, `$1${MASK}`);
}

/** `message` redacted, and each of `secrets` masked wherever it appears. */
export function redactSecrets(message, secrets = []) {
  let out = redact(message);
  for (const secret of secrets) {
    if (secret) out = out.split(secret).join(MASK);
  }
  return out;
}
