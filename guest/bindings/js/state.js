// Reading the bulk factor from the sentinel's published state document (docs/behaviour.md §7): the
// same rules as the Python package's `read_bulk_factor`. Never throws for a failed read: it
// resolves to `{factor: undefined, error}`, and passing that factor on makes the component use
// full capacity and report `factorReadFailed` (docs/behaviour.md §9). Only the component decides
// what a factor means: a number outside [0, 1] is passed on as read.
//
// Sources: `redis://` / `rediss://` URLs (key `capacity:state` unless given; needs the `redis`
// package), `ssm:NAME` (an AWS SSM parameter, endpoint/region/credentials from the standard AWS
// chain including AWS_ENDPOINT_URL_SSM; needs `@aws-sdk/client-ssm`), anything else (optionally
// `file:PATH`) a file path.
import { readFile } from 'node:fs/promises';

export const DEFAULT_REDIS_KEY = 'capacity:state';

class ReadFailure extends Error {}

/** `factors.bulk` of one state document (a string or a Buffer). */
export function parseDocument(text, source = '<document>') {
  let doc;
  try {
    doc = JSON.parse(typeof text === 'string' ? text : String(text));
  } catch (e) {
    return failed(source, `${source}: not a JSON state document: ${e.message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    return failed(source, `${source}: the state document is not a JSON object`);
  }
  const bulk = doc.factors !== null && typeof doc.factors === 'object' ? doc.factors.bulk : undefined;
  if (typeof bulk !== 'number') {
    return failed(source, `${source}: the state document has no numeric factors.bulk`);
  }
  return {
    factor: bulk,
    error: undefined,
    source,
    state: typeof doc.state === 'string' ? doc.state : undefined,
    sequence: Number.isSafeInteger(doc.sequence) ? doc.sequence : undefined,
    decidedAt: typeof doc.decided_at === 'string' ? doc.decided_at : undefined,
  };
}

/** Reads `factors.bulk` from the published state document at `source`. */
export async function readBulkFactor(source, { key = DEFAULT_REDIS_KEY, timeoutMs = 2000 } = {}) {
  let text;
  try {
    text = await fetchDocument(String(source), key, timeoutMs);
  } catch (e) {
    const message = e instanceof ReadFailure ? e.message : `reading ${source}: ${e?.name ?? 'Error'}: ${e?.message ?? e}`;
    return failed(source, message);
  }
  return parseDocument(text, source);
}

function failed(source, error) {
  return { factor: undefined, error, source, state: undefined, sequence: undefined, decidedAt: undefined };
}

async function fetchDocument(source, key, timeoutMs) {
  if (/^(rediss?|unix):\/\//.test(source)) return fetchRedis(source, key, timeoutMs);
  if (source.startsWith('ssm:')) return fetchSsm(source.slice('ssm:'.length), timeoutMs);
  const path = source.startsWith('file:') ? source.slice('file:'.length) : source;
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new ReadFailure(`reading ${path}: ${e.code ?? e.message}`);
  }
}

async function optional(name, what) {
  try {
    return await import(name);
  } catch {
    throw new ReadFailure(`reading ${what}: the \`${name}\` package is not installed (npm install ${name})`);
  }
}

function withTimeout(promise, timeoutMs, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new ReadFailure(`reading ${what}: timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function fetchRedis(url, key, timeoutMs) {
  const { createClient } = await optional('redis', url);
  const client = createClient({
    url,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: false },
    disableOfflineQueue: true,
  });
  client.on('error', () => {}); // reported through the rejected connect or command
  try {
    await withTimeout(client.connect(), timeoutMs, url);
    const value = await withTimeout(client.get(key), timeoutMs, url);
    if (value === null) throw new ReadFailure(`reading ${url}: no key ${key} (absent or expired)`);
    return value;
  } finally {
    try {
      if (client.isOpen) client.destroy();
    } catch {
      // already closed
    }
  }
}

async function fetchSsm(name, timeoutMs) {
  if (!name) throw new ReadFailure('ssm: needs a parameter name, e.g. ssm:/capacity/state');
  const { SSMClient, GetParameterCommand } = await optional('@aws-sdk/client-ssm', `SSM parameter ${name}`);
  const client = new SSMClient({ maxAttempts: 1, requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs } });
  try {
    const out = await withTimeout(client.send(new GetParameterCommand({ Name: name })), timeoutMs, `SSM parameter ${name}`);
    return out.Parameter?.Value ?? '';
  } catch (e) {
    if (e?.name === 'ParameterNotFound') throw new ReadFailure(`reading SSM parameter ${name}: not found`);
    throw e;
  } finally {
    client.destroy();
  }
}
