// The PostgreSQL connection string of `WorkspaceProfiles` (profiles.js), in either form libpq
// and psycopg accept, so that a Python and a Node service can share one setting:
// - a URL: `postgresql://user:password@host:5432/dbname?sslmode=require` (or `postgres://`);
// - key=value pairs: `host=db port=5432 dbname=app user=svc password='a b'` (values with spaces
//   in single quotes, `\'` and `\\` escaped).
// Both become one URL for `pg`. A connection option (`options=...`) is taken out of it and kept
// apart, so that profiles.js can append its own `-c default_transaction_read_only=on` last (a
// URL's `options` would otherwise replace it). And every message that may carry the string is
// redacted first: `user:password@` becomes `user:***@`, `password=...` becomes `password=***`.

import { redactSecrets } from './redaction.js';

/** The keywords of the key=value form (libpq's names). */
export const DSN_KEYWORDS = Object.freeze([
  'host', 'hostaddr', 'port', 'dbname', 'user', 'password', 'options', 'application_name', 'sslmode', 'connect_timeout',
]);

/** `message` with every secret hidden (redaction.js), and each of `secrets` as `***`. */
export { redactSecrets };

function decode(text) {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A URL, with its `options` parameters taken out. */
function fromUrl(dsn) {
  const auth = /^postgres(?:ql)?:\/\/([^/?#]*)@/i.exec(dsn)?.[1];
  const secrets = auth !== undefined && auth.includes(':') ? [decode(auth.slice(auth.indexOf(':') + 1))] : [];
  const q = dsn.indexOf('?');
  if (q < 0) return { connectionString: dsn, options: '', secrets };
  const [query, fragment = ''] = dsn.slice(q + 1).split(/#(.*)/s);
  const kept = [];
  const options = [];
  for (const param of query.split('&')) {
    const name = decode(param.split('=')[0]);
    const value = decode(param.slice(param.indexOf('=') + 1));
    if (name === 'options') options.push(value);
    else kept.push(param);
    if (name === 'password') secrets.push(value);
  }
  const rest = kept.filter((p) => p !== '').join('&');
  return {
    connectionString: `${dsn.slice(0, q)}${rest ? `?${rest}` : ''}${fragment ? `#${fragment}` : ''}`,
    options: options.join(' '),
    secrets,
  };
}

const PAIR = /([A-Za-z_]+)[ \t\r\n]*=[ \t\r\n]*(?:'((?:[^'\\]|\\.)*)'|((?:[^\s'\\]|\\.)+))/y;

/** key=value pairs, as one URL for `pg`. */
function fromKeywords(dsn) {
  const params = {};
  let i = 0;
  for (;;) {
    while (i < dsn.length && /\s/.test(dsn[i])) i++;
    if (i >= dsn.length) break;
    PAIR.lastIndex = i;
    const m = PAIR.exec(dsn);
    if (m === null) {
      throw new TypeError('dsn: expected key=value pairs (values with spaces in single quotes), '
        + `cannot read it from character ${i + 1}`);
    }
    const [, key, quoted, plain] = m;
    if (!DSN_KEYWORDS.includes(key)) throw new TypeError(`dsn: unknown keyword ${key} (expected ${DSN_KEYWORDS.join(', ')})`);
    params[key] = (quoted ?? plain).replace(/\\(.)/gs, '$1');
    i = PAIR.lastIndex;
  }
  if (params.port !== undefined && !/^\d{1,5}$/.test(params.port)) {
    throw new TypeError(`dsn: port must be a number, got ${JSON.stringify(params.port)}`);
  }
  const enc = encodeURIComponent;
  const host = params.hostaddr ?? params.host ?? '';
  const socket = host.startsWith('/');
  const user = params.user ?? '';
  const password = params.password ?? '';
  const auth = user || password ? `${enc(user)}${password ? `:${enc(password)}` : ''}@` : '';
  const authority = socket ? '' : host.includes(':') ? `[${host}]` : enc(host);
  const query = new URLSearchParams();
  if (socket) query.set('host', host);
  if (socket && params.port) query.set('port', params.port);
  for (const key of ['application_name', 'sslmode', 'connect_timeout']) {
    if (params[key] !== undefined) query.set(key, params[key]);
  }
  const q = query.toString();
  const port = !socket && params.port ? `:${params.port}` : '';
  const path = params.dbname ? `/${enc(params.dbname)}` : '/';
  return {
    connectionString: `postgresql://${auth}${authority}${port}${path}${q ? `?${q}` : ''}`,
    options: params.options ?? '',
    secrets: [password],
  };
}

/**
 * `{connectionString, options, secrets, label}` from a DSN in either form: the URL `pg` connects
 * with (without `options`), the connection options it carried (to be sent apart), its passwords
 * (to redact from any message) and how logs show it. Throws a TypeError naming `dsn` (never
 * showing its password).
 */
export function parseDsn(dsn) {
  if (typeof dsn !== 'string' || dsn.trim() === '') {
    const got = typeof dsn === 'string' ? 'an empty string' : typeof dsn;
    throw new TypeError(`dsn: expected a postgresql:// URL or key=value pairs, got ${got}`);
  }
  let parsed;
  if (/^postgres(?:ql)?:\/\//i.test(dsn)) parsed = fromUrl(dsn);
  else if (/^\s*[A-Za-z_]+\s*=/.test(dsn)) parsed = fromKeywords(dsn);
  else throw new TypeError(`dsn: expected a postgresql:// URL or key=value pairs, got ${JSON.stringify(redactSecrets(dsn))}`);
  parsed.secrets = parsed.secrets.filter((s) => s !== '');
  return { ...parsed, label: redactSecrets(dsn, parsed.secrets) };
}
