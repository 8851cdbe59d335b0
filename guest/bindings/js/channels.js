// The two channels the sentinel publishes its state document to (docs/behaviour.md §7), as a
// reader sees them: one long-lived client per channel, a fetch that never rejects. The Node twin
// of the Python package's channels.py.
//
// A channel is named by its form:
// - `redis://...`, `rediss://...` or `unix://...`: a Redis URL; the document is the value of a key
//   (the sentinel's default `capacity:state`). Needs the `redis` package (node-redis 5 or later).
// - `ssm:NAME` (e.g. `ssm:/capacity/state`): an AWS SSM parameter; endpoint, region and credentials
//   come from the standard AWS chain (`AWS_ENDPOINT_URL_SSM` included). Needs `@aws-sdk/client-ssm`.
// - anything else (optionally `file:PATH`): a file, as the embedded default writes them.
//
// `fetch()` resolves to `{tag: 'document', val: text}` or `{tag: 'failed', val: why}` (the
// component's `channel-read`); judging the document (parse, range, age) is the component's
// `choose-factor`, not the channel's. Each fetch is bounded by the timeout.
import { open } from 'node:fs/promises';
import { redact as redactText } from './redaction.js';

/** The channel as logs may show it: every secret masked (redaction.js). */
export function redact(spec) {
  return redactText(spec);
}

class ReadFailure extends Error {}

/**
 * The largest document a channel reads (the sentinel's is under 1 KiB; an SSM parameter holds at
 * most 8 KiB): a larger value is a failed read, never loaded whole.
 */
export const MAX_DOCUMENT = 64 * 1024;

const tooLarge = () => new ReadFailure(`the value is larger than ${MAX_DOCUMENT / 1024} KiB, so it is not a state document`);

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(value) {
  if (typeof value === 'string') return value;
  try {
    return utf8.decode(value);
  } catch (e) {
    throw new ReadFailure(`the value is not UTF-8 (${e.message})`);
  }
}

/** A library's error as one line: `Name: message` (the message alone for a plain Error). */
function describe(e) {
  if (e instanceof ReadFailure) return e.message;
  if (e === null || typeof e !== 'object') return String(e);
  let message = e.message || e.code || '';
  if (!message && Array.isArray(e.errors)) message = e.errors.map(describe).join('; '); // AggregateError
  const name = e.name && e.name !== 'Error' ? e.name : '';
  return name && message ? `${name}: ${message}` : message || name || 'unknown error';
}

function withTimeout(promise, ms, onTimeout = () => {}) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => {
      reject(new ReadFailure(`timed out after ${ms} ms`));
      onTimeout(); // after the rejection, so that it wins the race
    }, ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** One configured channel; `fetch` may be called concurrently. */
class Channel {
  constructor(spec) {
    this.spec = spec;
    /** How logs name it (no secret). */
    this.label = redact(spec);
  }

  /** What the channel holds now, as a channel read; never rejects. */
  async fetch() {
    try {
      return { tag: 'document', val: await this.read() };
    } catch (e) {
      return { tag: 'failed', val: describe(e) };
    }
  }

  async close() {}
}

/** Loads an optional client library once; its absence is a failed read, not a crash. */
function loader(name, load) {
  let loading;
  return () => {
    loading ??= load(name).catch(() => {
      throw new ReadFailure(`the ${name} package is not installed (npm install ${name})`);
    });
    return loading;
  };
}

class RedisChannel extends Channel {
  #key;
  #timeoutMs;
  #load;
  #client;
  #closed = false;
  // The latest connection error since the client was last ready, and the fetches waiting for
  // the first connection.
  #lastError;
  #waiters = new Set();

  constructor(spec, key, timeoutMs, load) {
    super(spec);
    this.#key = key;
    this.#timeoutMs = timeoutMs;
    this.#load = loader('redis', load);
    this.#load().catch(() => {}); // loaded ahead of the first read; a failure is that read's
  }

  async read() {
    const client = await this.#open();
    // A ready connection that does not answer in time is dropped, so the next read connects
    // afresh: node-redis stops timing a command once it is written, and a half-open connection
    // would otherwise keep every later command waiting (the sentinel's Redis adapter does the same).
    return withTimeout(this.#get(client), this.#timeoutMs, () => {
      if (client.isReady) this.#drop(client);
    });
  }

  #drop(client) {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#lastError = undefined;
    try {
      client.destroy();
    } catch {
      // already closed
    }
  }

  async #get(client) {
    if (!client.isReady) await this.#ready(client);
    // GETRANGE bounds what comes over the network; a missing key reads as empty (the sentinel
    // never publishes an empty value).
    const value = await client.getRange(this.#key, 0, MAX_DOCUMENT);
    if (value === null || value === undefined || value.length === 0) throw new ReadFailure(`no key ${this.#key} (absent or expired)`);
    if (value.length > MAX_DOCUMENT) throw tooLarge();
    return decode(value);
  }

  // One client for the channel's life, connected on the first read. While Redis is down it keeps
  // reconnecting in the background (the `connect()` promise settles only once it is ready);
  // commands fail at once instead of queueing (`disableOfflineQueue`), so a fetch answers with
  // the latest connection error rather than waiting.
  async #open() {
    if (this.#client === undefined) {
      const { createClient, RESP_TYPES } = await this.#load();
      if (this.#closed) throw new ReadFailure('the reader is closed');
      if (this.#client === undefined) {
        const client = createClient({
          url: this.spec,
          disableOfflineQueue: true,
          socket: {
            connectTimeout: this.#timeoutMs,
            reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1000),
          },
          commandOptions: { timeout: this.#timeoutMs },
        });
        // Values as bytes: the document must be UTF-8, as for a file.
        const mapped = RESP_TYPES ? client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }) : client;
        // A dropped client's late events are not this channel's any more.
        client.on('error', (e) => {
          if (this.#client !== mapped) return;
          this.#lastError = e;
          for (const w of this.#waiters) w.reject(e);
        });
        client.on('ready', () => {
          if (this.#client !== mapped) return;
          this.#lastError = undefined;
          for (const w of this.#waiters) w.resolve();
        });
        this.#client = mapped;
      }
    }
    if (!this.#client.isOpen && !this.#closed) {
      this.#client.connect().catch(() => {}); // failures arrive as 'error' events
    }
    return this.#client;
  }

  #ready(client) {
    if (this.#lastError !== undefined) throw this.#lastError;
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: () => { this.#waiters.delete(waiter); resolve(); },
        reject: (e) => { this.#waiters.delete(waiter); reject(e); },
      };
      this.#waiters.add(waiter);
      // The timeout of the whole fetch stops the wait; drop the waiter with it.
      setTimeout(() => this.#waiters.delete(waiter), this.#timeoutMs).unref();
      if (client.isReady) waiter.resolve();
    });
  }

  async close() {
    this.#closed = true;
    const client = this.#client;
    if (client === undefined) return;
    try {
      client.destroy();
    } catch {
      // already closed
    }
  }
}

class SsmChannel extends Channel {
  #name;
  #timeoutMs;
  #load;
  #client;
  #closed = false;

  constructor(spec, timeoutMs, load) {
    super(spec);
    this.#name = spec.slice('ssm:'.length);
    this.#timeoutMs = timeoutMs;
    this.#load = loader('@aws-sdk/client-ssm', load);
    this.#load().catch(() => {}); // loaded ahead of the first read; a failure is that read's
  }

  async read() {
    const { SSMClient, GetParameterCommand } = await this.#load();
    if (this.#closed) throw new ReadFailure('the reader is closed');
    // One client (and its keep-alive connection pool) for the channel's life; one attempt per
    // fetch, the connection and the request each bounded by the timeout.
    this.#client ??= new SSMClient({
      maxAttempts: 1,
      requestHandler: { connectionTimeout: this.#timeoutMs, requestTimeout: this.#timeoutMs },
    });
    const abort = new AbortController();
    try {
      const out = await withTimeout(
        this.#client.send(new GetParameterCommand({ Name: this.#name }), { abortSignal: abort.signal }),
        this.#timeoutMs,
        () => abort.abort(),
      );
      return out.Parameter?.Value ?? '';
    } catch (e) {
      if (e?.name === 'ParameterNotFound') throw new ReadFailure(`parameter ${this.#name} not found`);
      if (e?.name === 'TimeoutError' || e?.name === 'RequestTimeout') {
        throw new ReadFailure(`timed out after ${this.#timeoutMs} ms`);
      }
      throw e;
    }
  }

  async close() {
    this.#closed = true;
    this.#client?.destroy();
  }
}

class FileChannel extends Channel {
  constructor(spec) {
    super(spec);
    this.path = spec.startsWith('file:') ? spec.slice('file:'.length) : spec;
  }

  async read() {
    let bytes;
    let file;
    try {
      file = await open(this.path, 'r');
      const buffer = Buffer.alloc(MAX_DOCUMENT + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await file.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length === buffer.length) break;
      }
      bytes = buffer.subarray(0, length);
    } catch (e) {
      // `ENOENT: no such file or directory, open '...'`: the code and what it means.
      throw new ReadFailure(`reading ${this.path}: ${e.code ? String(e.message).split(',')[0] : describe(e)}`);
    } finally {
      await file?.close();
    }
    if (bytes.length > MAX_DOCUMENT) throw tooLarge();
    return decode(bytes);
  }
}

const importModule = (name) => import(name);

/**
 * The channel named by `spec` (undefined when not configured). `setting` names it in errors
 * (`cache`, `parameter`); a spec that cannot work throws a TypeError here. `load` imports a
 * client library (`redis`, `@aws-sdk/client-ssm`) on the first fetch.
 */
export function openChannel(spec, { setting = 'channel', key, timeoutMs, load = importModule }) {
  if (spec === undefined || spec === null) return undefined;
  if (typeof spec !== 'string' || spec === '') {
    throw new TypeError(`${setting}: expected a Redis URL, ssm:NAME or a file path, got ${JSON.stringify(spec) ?? String(spec)}`);
  }
  if (/^(rediss?|unix):\/\//.test(spec)) {
    try {
      new URL(spec); // eslint-disable-line no-new
    } catch {
      throw new TypeError(`${setting}: ${redact(spec)} is not a valid Redis URL`);
    }
    return new RedisChannel(spec, key, timeoutMs, load);
  }
  if (spec.startsWith('ssm:')) {
    if (spec === 'ssm:') throw new TypeError(`${setting}: ssm: needs a parameter name, e.g. ssm:/capacity/state`);
    return new SsmChannel(spec, timeoutMs, load);
  }
  if (spec === 'file:') throw new TypeError(`${setting}: file: needs a path`);
  return new FileChannel(spec);
}
