// `WorkspaceProfiles`: each workspace's bulk share, read from PostgreSQL for `BulkAdmission`; the
// Node twin of the Python package's WorkspaceProfiles, the same behaviour in camelCase.
//
//   const profiles = new WorkspaceProfiles({ dsn: 'postgresql://svc:...@db:5432/app' });
//   const share = await profiles.share('acme');   // never rejects for a database that cannot be read
//
// The whole table is loaded at once (`SELECT <workspaceColumn>::text, <shareColumn> FROM <table>`,
// names checked and quoted as identifiers) and kept for `refresh` seconds; concurrent callers
// share one reload. Each reload opens one connection, read-only (`default_transaction_read_only=on`
// sent as a connection option; connect and statement bounded by `timeout`), and closes it: nothing
// to keep alive or reconnect between reloads, and a database restart between two reloads costs
// nothing. A workspace without a usable row gets `defaultShare`. A reload that fails keeps the
// last good profiles while they are younger than `maxStale`, then gives every workspace
// `defaultShare`: logged once when the failures start, once when the default takes over and once
// when a reload succeeds again; a bad row is logged once per workspace and value. Passwords never
// reach a log line (dsn.js).
import pg from 'pg';
import { U32_MAX } from './checks.js';
import { parseDsn, redactSecrets } from './dsn.js';

/** The table read unless configured otherwise. */
export const DEFAULT_PROFILES_TABLE = 'tenant_workload_policies';

const OPTIONS = ['dsn', 'table', 'workspaceColumn', 'shareColumn', 'defaultShare', 'refresh', 'maxStale', 'timeout', 'logger', 'clock'];
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
// setTimeout's longest delay.
const MAX_TIMEOUT_S = (2 ** 31 - 1) / 1000;
// pg gives int8 (20) and numeric (1700) as text, parsed here; other text is no number.
const NUMBERS_AS_TEXT = new Set([20, 1700]);
const NONE = new Map();

function identifier(name, value, qualified) {
  const parts = typeof value === 'string' ? value.split('.') : [];
  if (parts.length === 0 || parts.length > (qualified ? 2 : 1) || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new TypeError(`${name}: expected ${qualified ? 'name or schema.name' : 'a name'} of letters, digits and _ `
      + `(not starting with a digit), got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}

function seconds(name, value, positive, max = Infinity) {
  if (typeof value !== 'number') throw new TypeError(`${name}: expected a number of seconds, got ${typeof value}`);
  if (!Number.isFinite(value) || value < 0 || (positive && value === 0) || value > max) {
    const range = `${positive ? 'a positive' : 'a non-negative'} number of seconds${max < Infinity ? ` up to ${max}` : ''}`;
    throw new RangeError(`${name}: expected ${range}, got ${value}`);
  }
  return value;
}

function wholeShare(name, value) {
  if (typeof value !== 'number') throw new TypeError(`${name}: expected an integer from 1 to ${U32_MAX}, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 1 || value > U32_MAX) {
    throw new RangeError(`${name}: expected an integer from 1 to ${U32_MAX}, got ${value}`);
  }
  return value;
}

/** A row's share as a u32, or undefined when the value is none (null, negative, fractional,
 * too large, not a number). */
function rowShare(value, type) {
  let n = value;
  if (typeof value === 'string') {
    if (!NUMBERS_AS_TEXT.has(type) || !/^-?\d+(\.0+)?$/.test(value)) return undefined;
    n = Number(value);
  }
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > U32_MAX) return undefined;
  return n + 0; // -0 as 0
}

const show = (value) => (typeof value === 'string' ? value : value === null ? 'null' : JSON.stringify(value) ?? String(value));

/** An error as one line; a PostgreSQL error with its SQLSTATE. */
function describe(e) {
  if (e === null || typeof e !== 'object') return String(e);
  let message = e.message || '';
  if (!message && Array.isArray(e.errors)) message = e.errors.map(describe).join('; '); // AggregateError
  if (!message) message = e.code || e.name || 'unknown error';
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && e.severity) message += ` (SQLSTATE ${e.code})`;
  return message;
}

/** Ends a client, waiting at most `ms`; then drops its socket. */
async function end(client, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(true), ms);
  });
  try {
    if (await Promise.race([client.end().then(() => false, () => false), late])) client.connection?.stream?.destroy();
  } finally {
    clearTimeout(timer);
  }
}

/** Each workspace's share from a PostgreSQL table, cached; the default for the rest. */
export class WorkspaceProfiles {
  #connection;
  #secrets;
  #sql;
  #timeoutMs;
  #logger;
  #clock;
  // The last good load (workspace -> share), and when (clock seconds) it was made.
  #profiles;
  #loadedAt;
  // When the last load, good or failed, ended; when the current run of failed loads began
  // (undefined while loads succeed), and whether that run's fallback to the default is logged.
  #triedAt;
  #failingSince;
  #defaultsLogged = false;
  // The reload in flight, shared by every caller that arrives meanwhile.
  #pending;
  #closed = false;
  // workspace (null for a row without one) -> the values already warned about.
  #warned = new Map();
  #counts = { loads: 0, failures: 0, rows: 0, skippedRows: 0 };

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('WorkspaceProfiles: expected an options object');
    for (const name of Object.keys(options)) {
      if (!OPTIONS.includes(name)) throw new TypeError(`WorkspaceProfiles: unknown option ${name} (expected ${OPTIONS.join(', ')})`);
    }
    const {
      dsn, table = DEFAULT_PROFILES_TABLE, workspaceColumn = 'workspace_id', shareColumn = 'bulk_share', defaultShare = 1,
      refresh = 60, maxStale = 600, timeout = 5, logger = console, clock = () => performance.now() / 1000,
    } = options;
    const parsed = parseDsn(dsn);
    try {
      new pg.Client({ connectionString: parsed.connectionString }); // eslint-disable-line no-new
    } catch (e) {
      throw new TypeError(`dsn: ${parsed.label} is not a valid PostgreSQL URL (${redactSecrets(describe(e), parsed.secrets)})`);
    }
    /** The settings, as validated. */
    this.table = identifier('table', table, true);
    this.workspaceColumn = identifier('workspaceColumn', workspaceColumn, false);
    this.shareColumn = identifier('shareColumn', shareColumn, false);
    this.defaultShare = wholeShare('defaultShare', defaultShare);
    this.refresh = seconds('refresh', refresh, true);
    this.maxStale = seconds('maxStale', maxStale, false);
    this.timeout = seconds('timeout', timeout, true, MAX_TIMEOUT_S);
    if (logger === null || typeof logger !== 'object' || !['warn', 'error', 'info'].every((m) => typeof logger[m] === 'function')) {
      throw new TypeError('logger: expected an object with warn, error and info methods');
    }
    if (typeof clock !== 'function') throw new TypeError('clock: expected a function returning seconds');
    /** How logs name the table and the database (no password). */
    this.source = `${table} at ${parsed.label}`;
    this.#logger = logger;
    this.#clock = clock;
    this.#secrets = parsed.secrets;
    this.#timeoutMs = Math.max(1, Math.round(this.timeout * 1000));
    const q = pg.escapeIdentifier;
    this.#sql = `SELECT ${q(workspaceColumn)}::text, ${q(shareColumn)} FROM ${table.split('.').map(q).join('.')}`;
    this.#connection = {
      connectionString: parsed.connectionString,
      // Last, so that they win over any the DSN carries.
      options: `${parsed.options} -c default_transaction_read_only=on -c statement_timeout=${this.#timeoutMs}`.trim(),
      connectionTimeoutMillis: this.#timeoutMs,
      query_timeout: this.#timeoutMs,
      fallback_application_name: 'capacity-admission workspace profiles',
    };
    Object.freeze(this);
  }

  /** The workspace's share: its row's, or `defaultShare`. Never rejects for a database that
   * cannot be read (rejects after `close()`, and for a workspace that is not a string). */
  async share(workspace) {
    if (typeof workspace !== 'string') throw new TypeError(`workspace: expected a string, got ${typeof workspace}`);
    if (this.#closed) throw new Error('WorkspaceProfiles: share() after close()');
    await this.#fresh();
    return this.#inForce().get(workspace) ?? this.defaultShare;
  }

  /** A snapshot of the counters. */
  counters() {
    const now = this.#clock();
    return {
      ...this.#counts,
      usingDefaults: this.#profiles === undefined || this.#stale(now),
      ageS: this.#loadedAt === undefined ? undefined : now - this.#loadedAt,
    };
  }

  /** Waits for a reload in flight; later calls to `share()` reject. */
  async close() {
    this.#closed = true;
    await this.#pending;
  }

  #fresh() {
    if (this.#pending !== undefined) return this.#pending;
    if (this.#triedAt !== undefined && this.#clock() - this.#triedAt < this.refresh) return undefined;
    const pending = this.#reload().finally(() => {
      this.#pending = undefined;
    });
    this.#pending = pending;
    return pending;
  }

  async #reload() {
    try {
      const loaded = await this.#query();
      this.#triedAt = this.#clock();
      this.#loaded(loaded);
    } catch (e) {
      this.#triedAt = this.#clock();
      this.#failed(e);
    }
  }

  async #query() {
    const client = new pg.Client(this.#connection);
    client.on('error', () => {}); // a connection dropped after the query is no concern of this load
    try {
      await client.connect();
      const result = await client.query({ text: this.#sql, rowMode: 'array' });
      return { rows: result.rows, type: result.fields[1]?.dataTypeID };
    } finally {
      await end(client, this.#timeoutMs);
    }
  }

  #loaded({ rows, type }) {
    const found = new Map();
    let skipped = 0;
    for (const [workspace, value] of rows) {
      const share = workspace === null ? undefined : rowShare(value, type);
      if (share === undefined) {
        skipped++;
        this.#warnOnce(workspace, `value ${show(value)}`, workspace === null
          ? `a row of ${this.table} with a null ${this.workspaceColumn} (${this.shareColumn} ${show(value)}) is skipped`
          : `the row of workspace ${JSON.stringify(workspace)} in ${this.table} is skipped: ${this.shareColumn} ${show(value)} `
            + `is not a whole number from 0 to ${U32_MAX}`);
      } else if (found.has(workspace)) found.get(workspace).push(share);
      else found.set(workspace, [share]);
    }
    const profiles = new Map();
    for (const [workspace, shares] of found) {
      const least = Math.min(...shares);
      if (shares.length > 1) {
        this.#warnOnce(workspace, `rows ${[...shares].sort((a, b) => a - b).join(',')}`,
          `workspace ${JSON.stringify(workspace)} has ${shares.length} rows in ${this.table} (${this.shareColumn} `
          + `${shares.join(', ')}): the smallest, ${least}, is used`);
      }
      profiles.set(workspace, least);
    }
    const now = this.#clock();
    const since = this.#failingSince;
    this.#profiles = profiles;
    this.#loadedAt = now;
    this.#failingSince = undefined;
    this.#defaultsLogged = false;
    Object.assign(this.#counts, { loads: this.#counts.loads + 1, rows: rows.length, skippedRows: skipped });
    if (since !== undefined) {
      this.#log('info', `workspace profiles: ${this.source} read again after ${(now - since).toFixed(0)} s of failed reads `
        + `(${profiles.size} workspaces)`);
    }
  }

  #failed(e) {
    this.#counts.failures++;
    if (this.#failingSince !== undefined) return;
    const now = this.#clock();
    this.#failingSince = now;
    const head = `workspace profiles: reading ${this.source} failed (${redactSecrets(describe(e), this.#secrets)})`;
    const fallback = `every workspace gets the default share ${this.defaultShare} until it can be read`;
    if (this.#profiles === undefined) {
      this.#defaultsLogged = true;
      this.#log('warn', `${head}: ${fallback}`);
    } else if (this.#stale(now)) {
      this.#defaultsLogged = true;
      this.#log('warn', `${head}, and the profiles loaded ${this.#age(now)} s ago are as old as maxStale `
        + `(${this.maxStale} s): ${fallback}`);
    } else {
      this.#log('warn', `${head}: keeping the profiles loaded ${this.#age(now)} s ago until they are ${this.maxStale} s `
        + `old, then the default share ${this.defaultShare}`);
    }
  }

  /** The profiles to answer with now: the last good ones, or none (everyone the default). */
  #inForce() {
    if (this.#profiles === undefined) return NONE;
    const now = this.#clock();
    if (!this.#stale(now)) return this.#profiles;
    if (!this.#defaultsLogged) {
      this.#defaultsLogged = true;
      this.#log('warn', `workspace profiles: ${this.source} not read for ${this.#age(now)} s, as long as maxStale `
        + `(${this.maxStale} s): every workspace gets the default share ${this.defaultShare} until it can be read`);
    }
    return NONE;
  }

  /** Failing, and the last good profiles are no longer younger than maxStale. */
  #stale(now) {
    return this.#failingSince !== undefined && this.#loadedAt !== undefined && now - this.#loadedAt >= this.maxStale;
  }

  #age(now) {
    return (now - this.#loadedAt).toFixed(0);
  }

  #warnOnce(workspace, key, message) {
    const seen = this.#warned.get(workspace) ?? new Set();
    this.#warned.set(workspace, seen);
    if (seen.has(key)) return;
    seen.add(key);
    this.#log('warn', `workspace profiles: ${message}`);
  }

  #log(level, message) {
    try {
      this.#logger[level](redactSecrets(message, this.#secrets));
    } catch {
      // a failing logger must not fail the caller
    }
  }
}
