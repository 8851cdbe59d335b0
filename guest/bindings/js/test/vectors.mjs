// The shared conformance vectors (tests/vectors) and conversions between their serde form and
// jco's: serde has snake_case fields, enum cases by their WIT names ("wait-cluster-full"),
// externally tagged variants ({"reading": {...}}), null options and instants as JSON integers;
// jco has camelCase fields, the same case names, {tag, val} variants, undefined options and BigInt s64.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = process.env.CAPACITY_REPO ?? resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** JSON.parse that keeps integers beyond 2^53 exact, as {"$bigint": "digits"} (Node 20's
 * JSON.parse has no access to the source text). */
export function parseExact(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9eE+\-.]/.test(text[j])) j++;
      const literal = text.slice(i, j);
      const unsafe = /^-?\d+$/.test(literal) && !Number.isSafeInteger(Number(literal));
      out += unsafe ? `{"$bigint":"${literal}"}` : literal;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return JSON.parse(out);
}

/** Every case of every file under tests/vectors/<kind>, as [id, case]. */
export function cases(kind) {
  const dir = join(repo, 'tests', 'vectors', kind);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  if (files.length === 0) throw new Error(`no vectors under ${dir}`);
  return files.flatMap((file) =>
    parseExact(readFileSync(join(dir, file), 'utf8')).map((c) => {
      if (c.expected === null || c.expected === undefined) throw new Error(`${file} case ${c.name}: not blessed`);
      return [`${kind}/${file}::${c.name}`, c];
    }));
}

export const camel = (snake) => snake.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
export const snake = (camelName) => camelName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

// The WIT types the policy world's vectors need, as a schema (names in serde form).
const recentEntry = { record: { at: 'instant', level: 'enum' } };
const memory = {
  record: {
    state: 'enum', state_since: 'instant', last_auto_change: { option: 'instant' },
    recent: { list: recentEntry }, failed_reads: 'u32', throttles_engaged: 'bool',
    restore_held_since: { option: 'instant' },
  },
};
const reading = {
  record: {
    cpu_pct: { option: 'f64' }, connections_pct: { option: 'f64' }, scaling: { option: 'bool' },
    latency: { list: { record: { api: 'string', p95_ms: { option: 'f64' }, baseline_ms: { option: 'f64' } } } },
  },
};
const channelRead = { variant: { 'not-read': null, document: 'string', failed: 'string' } };
export const schema = {
  decisionInput: {
    record: {
      now: 'instant',
      signal: { variant: { reading, failed: 'string' } },
      memory: { option: memory },
      pin: { option: { record: { state: 'enum', reason: 'string', expires_at: 'instant', actor: 'string' } } },
      throttles_enabled: 'bool',
      stages_throttled: 'bool',
    },
  },
  decision: {
    record: {
      state: 'enum', factors: { record: { bulk: 'f64', heavy: 'f64', write: 'f64', read: 'f64' } },
      changed: 'bool', previous: 'enum', cause: 'enum', level: { option: 'enum' }, pending: { option: 'enum' },
      throttles: 'enum', supporting: { list: recentEntry }, memory, explanation: 'string',
    },
  },
  // wit/factor-choice.wit (a unit case's payload type is null: serde writes it as the bare name).
  factorChoiceRequest: {
    record: {
      cache: channelRead, parameter: channelRead, now: 'instant', max_age_s: 'u32', max_skew_s: 'u32',
    },
  },
  factorChoice: {
    record: {
      factor: { option: 'f64' }, source: { option: 'enum' }, state: { option: 'string' }, sequence: { option: 'u64' },
      decided_at: { option: 'instant' }, age_s: { option: 's64' }, cache: 'enum', parameter: 'enum',
      reason: { option: 'string' },
    },
  },
};

const wide = new Set(['instant', 's64', 'u64']);

/** A serde value to jco's form. */
export function toJco(ty, v) {
  if (wide.has(ty)) return typeof v === 'object' ? BigInt(v.$bigint) : BigInt(v);
  if (ty === 'enum') return v;
  // A field the vector leaves out has serde's default (false, none).
  if (ty === 'bool') return v ?? false;
  if (typeof ty === 'string') return v;
  if (ty.option) return v === null || v === undefined ? undefined : toJco(ty.option, v);
  if (ty.list) return v.map((x) => toJco(ty.list, x));
  if (ty.variant) {
    if (typeof v === 'string') return { tag: v };
    const [[tag, payload]] = Object.entries(v);
    return { tag, val: toJco(ty.variant[tag], payload) };
  }
  return Object.fromEntries(Object.entries(ty.record).map(([k, t]) => [camel(k), toJco(t, v[k])]));
}

/** A jco value back to the serde form (s64/u64 beyond 2^53 as {"$bigint": ...}). */
export function fromJco(ty, v) {
  if (wide.has(ty)) return Number.isSafeInteger(Number(v)) ? Number(v) : { $bigint: String(v) };
  if (ty === 'enum') return v;
  if (typeof ty === 'string') return v;
  if (ty.option) return v === undefined || v === null ? null : fromJco(ty.option, v);
  if (ty.list) return v.map((x) => fromJco(ty.list, x));
  if (ty.variant) {
    return ty.variant[v.tag] === null ? v.tag : { [v.tag]: fromJco(ty.variant[v.tag], v.val) };
  }
  return Object.fromEntries(Object.entries(ty.record).map(([k, t]) => [k, fromJco(t, v[camel(k)])]));
}

/** The admission API's serde form <-> the wrapper's (camelCase keys). */
export function camelKeys(v) {
  if (Array.isArray(v)) return v.map(camelKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), camelKeys(x)]));
}

export function serdeAdmission(v) {
  if (Array.isArray(v)) return v.map(serdeAdmission);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), serdeAdmission(x)]));
}

/** Each differing field as `path: expected X, got Y`. */
export function differences(expected, actual, at = '') {
  const show = (x) => JSON.stringify(x, (_, y) => (typeof y === 'bigint' ? `${y}n` : y));
  if (expected && actual && typeof expected === 'object' && typeof actual === 'object') {
    if (Array.isArray(expected) !== Array.isArray(actual) || (Array.isArray(expected) && expected.length !== actual.length)) {
      return [`${at || '.'}: expected ${show(expected)}, got ${show(actual)}`];
    }
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort();
    return keys.flatMap((k) => differences(expected[k], actual[k], Array.isArray(expected) ? `${at}[${k}]` : at ? `${at}.${k}` : k));
  }
  // A field the vector leaves out is serde's default: none.
  const same = Object.is(expected, actual) || expected === actual || (expected === undefined && actual === null);
  return same ? [] : [`${at || '.'}: expected ${show(expected)}, got ${show(actual)}`];
}
