// BulkFactorReader over file channels (no server needed): the choice between cache and parameter,
// the settings, the memory and the single flight, logging once per episode, redaction, failed
// reads that are not crashes. test/reader-redis.test.mjs and test/reader-ssm.test.mjs do the same
// against real servers.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BulkFactorReader, chooseFactor, redact, resolveBudget } from '../index.js';
import { openChannel } from '../channels.js';
import { T0, capturingLogger, clockAt, documentText, freePort, iso, sleep } from './servers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'capacity-reader-'));
let files = 0;
/** A file holding `text` (undefined: a path where nothing is). */
function file(text) {
  const path = join(dir, `state-${files++}.json`);
  if (text !== undefined) writeFileSync(path, text);
  return path;
}
const quiet = { warn() {}, error() {}, info() {} };
const reader = (options) => new BulkFactorReader({ logger: quiet, clock: clockAt(60), parameterRefresh: 0, ...options });
const admitWith = (reading) => resolveBudget({ factor: reading.factor, clusterBatches: 10, serviceBatches: 6, share: 3 });

test('settings are checked in the constructor, and the errors name the setting', () => {
  const cache = file(documentText());
  for (const [options, error, says] of [
    [{}, TypeError, 'needs a cache, a parameter or both'],
    [{ cache: '' }, TypeError, 'cache:'],
    [{ parameter: 42 }, TypeError, 'parameter:'],
    [{ parameter: 'ssm:' }, TypeError, 'needs a parameter name'],
    [{ cache: 'redis://[bad' }, TypeError, 'not a valid Redis URL'],
    [{ cache, cacheKey: '' }, TypeError, 'cacheKey'],
    [{ cache, maxAge: 0 }, RangeError, 'maxAge'],
    [{ cache, maxAge: 1.5 }, RangeError, 'maxAge'],
    [{ cache, maxAge: 2 ** 32 }, RangeError, 'maxAge'],
    [{ cache, maxAge: '180' }, TypeError, 'maxAge'],
    [{ cache, maxSkew: -1 }, RangeError, 'maxSkew'],
    [{ cache, refresh: -0.5 }, RangeError, 'refresh'],
    [{ cache, refresh: NaN }, RangeError, 'refresh'],
    [{ cache, timeout: 0 }, RangeError, 'timeout'],
    [{ cache, timeout: Infinity }, RangeError, 'timeout'],
    [{ cache, logger: { warn() {} } }, TypeError, 'logger'],
    [{ cache, clock: 5 }, TypeError, 'clock'],
    [{ cache, maxage: 10 }, TypeError, 'unknown option maxage'],
  ]) {
    assert.throws(() => new BulkFactorReader(options), (e) => e instanceof error && e.message.includes(says), JSON.stringify(options));
  }
  const r = new BulkFactorReader({ cache });
  assert.deepEqual([r.cacheKey, r.maxAge, r.maxSkew, r.refresh, r.timeout], ['capacity:state', 180, 30, 10, 2]);
  const ok = new BulkFactorReader({ parameter: `file:${cache}`, maxAge: 1, maxSkew: 0, refresh: 0, timeout: 0.05 });
  assert.deepEqual([ok.maxAge, ok.maxSkew, ok.refresh, ok.timeout], [1, 0, 0, 0.05]);
});

test('a fresh cache gives the factor; the parameter is not read', async () => {
  const r = reader({ cache: file(documentText()), parameter: file(documentText({ factors: { bulk: 0.25 } })) });
  const reading = await r.read();
  assert.deepEqual({ ...reading }, {
    factor: 0.5, source: 'cache', state: 'constrained', sequence: 42, decidedAt: T0, decidedAtDate: new Date(T0 * 1000), ageS: 60,
    error: undefined, cache: 'usable', parameter: 'not-read',
  });
  assert.ok(Object.isFrozen(reading));
  assert.deepEqual(r.counters(), { calls: 1, fetches: 1, fullCapacity: 0, remembered: 0, parameterCalls: 0, reads: { cache: { usable: 1 }, parameter: {} } });
  assert.equal(admitWith(reading).serviceBudget, 3);
  await r.close();
});

test('the parameter is read when the cache is absent, stale, from the future, unreadable or out of range', async () => {
  const parameter = file(documentText({ state: 'critical', factors: { bulk: 0 }, sequence: 41 }));
  for (const [cache, verdict, says] of [
    [file(undefined), 'read-failed', 'ENOENT: no such file or directory'],
    [file(documentText({ decided_at: iso(T0 - 121) })), 'stale', 'is 181 s old (maximum 180 s)'],
    [file(documentText({ decided_at: iso(T0 + 91) })), 'from-the-future', 'is 31 s ahead of this clock (allowance 30 s)'],
    [file('{not json'), 'unreadable', 'not a JSON document'],
    [file(documentText({ factors: { bulk: 1.5 } })), 'out-of-range', 'factors.bulk 1.5 is outside [0, 1]'],
    [file(Buffer.from([0x7b, 0xff, 0x7d])), 'read-failed', 'not UTF-8'],
  ]) {
    const r = reader({ cache, parameter });
    const reading = await r.read();
    assert.deepEqual([reading.factor, reading.source, reading.state, reading.cache, reading.parameter],
      [0, 'parameter', 'critical', verdict, 'usable'], says);
    assert.ok(reading.error.startsWith('cache: ') && reading.error.includes(says), `${reading.error} should say ${says}`);
    assert.deepEqual(r.counters().reads, { cache: { [verdict]: 1 }, parameter: { usable: 1 } });
  }
});

test('malformed documents and out-of-range factors without a parameter: full capacity, with the reason', async () => {
  for (const [text, verdict, says] of [
    ['', 'unreadable', 'not a JSON document'],
    ['[1, 2]', 'unreadable', 'not a JSON object'],
    [documentText({ factors: { heavy: 0.5 } }), 'unreadable', 'no numeric factors.bulk'],
    [documentText({ factors: { bulk: '0.5' } }), 'unreadable', 'no numeric factors.bulk'],
    [documentText({ factors: null }), 'unreadable', 'no numeric factors.bulk'],
    [documentText({ decided_at: 'yesterday' }), 'unreadable', 'not an RFC 3339 time'],
    [documentText({ factors: { bulk: -0.1 } }), 'out-of-range', 'outside [0, 1]'],
    [documentText({ factors: { bulk: 1.0000001 } }), 'out-of-range', 'outside [0, 1]'],
  ]) {
    const r = reader({ cache: file(text) });
    const reading = await r.read();
    assert.deepEqual([reading.factor, reading.source, reading.cache, reading.parameter], [undefined, undefined, verdict, 'not-read']);
    assert.ok(reading.error.includes(says) && reading.error.endsWith('; parameter: not read'), reading.error);
    const result = admitWith(reading);
    assert.deepEqual([result.factorReadFailed, result.factorUsed, result.admit], [true, 1, 3]);
    assert.equal(r.counters().fullCapacity, 1);
  }
});

test('one clock reading judges both channels: a cache refused at the fetch\'s `now` is not trusted on a second look', async () => {
  const cache = file(documentText({ decided_at: iso(T0 + 31), factors: { bulk: 0 } }));
  const parameter = file(documentText({ decided_at: iso(T0) }));
  const ticks = [T0, T0 + 5, T0 + 10];
  const got = await reader({ cache, parameter, clock: () => ticks.shift() }).read();
  assert.deepEqual([got.source, got.cache, got.factor], ['parameter', 'from-the-future', 0.5]);
});

test('a document from the future: within the skew it is used with a negative age, beyond it is not', async () => {
  const cache = file(documentText({ decided_at: iso(T0 + 30) }));
  const within = await reader({ cache, clock: clockAt(0) }).read();
  assert.deepEqual([within.factor, within.ageS, within.cache], [0.5, -30, 'usable']);
  const beyond = await reader({ cache, clock: clockAt(-1) }).read();
  assert.deepEqual([beyond.factor, beyond.cache], [undefined, 'from-the-future']);
  const noSkew = await reader({ cache, clock: clockAt(29), maxSkew: 0 }).read();
  assert.equal(noSkew.cache, 'from-the-future');
});

test('an answer is reused for `refresh` seconds, then fetched again; refresh 0 fetches every call', async () => {
  const cache = file(documentText());
  const r = reader({ cache, refresh: 1.5 });
  assert.equal((await r.read()).factor, 0.5);
  writeFileSync(cache, documentText({ factors: { bulk: 0.75 } }));
  assert.equal((await r.read()).factor, 0.5);
  await sleep(1500 * 1.25 + 100); // the longest the answer is reused: refresh, +25 % jitter
  assert.equal((await r.read()).factor, 0.75);
  assert.deepEqual([r.counters().calls, r.counters().fetches], [3, 2]);
  const every = reader({ cache, refresh: 0 });
  for (let i = 0; i < 5; i++) await every.read();
  assert.equal(every.counters().fetches, 5);
});

test('concurrent reads share one fetch, and every caller gets the same answer', async () => {
  const r = reader({ cache: file(undefined), parameter: file(documentText()), refresh: 60 });
  const readings = await Promise.all(Array.from({ length: 1000 }, () => r.read()));
  assert.ok(readings.every((x) => x === readings[0]));
  assert.deepEqual(r.counters(), {
    calls: 1000, fetches: 1, fullCapacity: 0, remembered: 0, parameterCalls: 1, reads: { cache: { 'read-failed': 1 }, parameter: { usable: 1 } },
  });
});

test('a troubled channel and full capacity are logged once when they start and once when they end', async () => {
  const cache = file(undefined);
  const logger = capturingLogger();
  const r = new BulkFactorReader({ cache, logger, clock: clockAt(60), refresh: 0 });
  for (let i = 0; i < 50; i++) assert.equal((await r.read()).factor, undefined);
  assert.deepEqual(logger.levels(), ['warn', 'error']);
  assert.match(logger.lines[0].message, new RegExp(`^capacity cache ${cache} is not usable \\(read-failed\\): reading ${cache}: ENOENT`));
  assert.match(logger.lines[1].message, /^no usable capacity document: admitting bulk work at full capacity .*\(cache: reading .*; parameter: not read\)$/);
  writeFileSync(cache, documentText());
  for (let i = 0; i < 50; i++) assert.equal((await r.read()).factor, 0.5);
  assert.deepEqual(logger.levels(), ['warn', 'error', 'info', 'info']);
  assert.match(logger.lines[2].message, new RegExp(`^capacity cache ${cache} is usable again after \\d+ s$`));
  assert.match(logger.lines[3].message, /^bulk factor read again from the cache after \d+ s at full capacity: constrained is 0.5$/);
  // a second episode is a second pair of lines; the document read meanwhile is still fresh, so
  // the reader acts on it (reader-remembered.test.mjs has the rest)
  writeFileSync(cache, documentText({ factors: { bulk: 7 } }));
  for (let i = 0; i < 50; i++) assert.equal((await r.read()).source, 'remembered');
  assert.deepEqual(logger.levels().slice(4), ['warn', 'warn']);
  assert.match(logger.lines[4].message, /is not usable \(out-of-range\): factors.bulk 7 is outside \[0, 1\]$/);
  assert.match(logger.lines[5].message, /^no usable capacity document: acting on the remembered one \(sequence 42, constrained, bulk 0.5/);
  assert.deepEqual(r.counters().reads.cache, { 'read-failed': 50, usable: 50, 'out-of-range': 50 });
});

test('a failing parameter is logged once while the cache serves, and a throwing logger fails nothing', async () => {
  const cache = file(documentText({ factors: { bulk: 2 } }));
  const logger = capturingLogger();
  const r = new BulkFactorReader({ cache, parameter: file('{}'), logger, clock: clockAt(60), refresh: 0 });
  for (let i = 0; i < 10; i++) await r.read();
  assert.deepEqual(logger.levels(), ['warn', 'warn', 'error']);
  assert.match(logger.lines[1].message, /^capacity parameter .* is not usable \(unreadable\): the document has no numeric factors.bulk$/);
  const throwing = { warn() { throw new Error('no'); }, error() { throw new Error('no'); }, info() {} };
  assert.equal((await new BulkFactorReader({ cache, logger: throwing }).read()).cache, 'out-of-range');
});

test('redact hides a URL password, and logs never show it', async () => {
  assert.equal(redact('redis://user:s3cret@cache:6379/0'), 'redis://user:***@cache:6379/0');
  assert.equal(redact('rediss://:s3cret@cache:6380'), 'rediss://:***@cache:6380');
  assert.equal(redact('redis://:p@ss:w@rd@cache/0'), 'redis://:***@cache/0');
  for (const same of ['redis://cache:6379/0', 'redis://user@cache', 'ssm:/capacity/state', '/var/lib/capacity/state.json']) {
    assert.equal(redact(same), same);
  }
  const logger = capturingLogger();
  const url = `redis://:s3cret@127.0.0.1:${await freePort()}/0`;
  const r = new BulkFactorReader({ cache: url, logger, timeout: 1 });
  const reading = await r.read();
  assert.equal(reading.cache, 'read-failed');
  assert.match(reading.error, /ECONNREFUSED/);
  assert.ok(logger.lines.length > 0 && logger.lines.every((l) => !l.message.includes('s3cret')), JSON.stringify(logger.lines));
  assert.ok(logger.lines[0].message.includes('redis://:***@127.0.0.1'));
  await r.close();
});

test('a Redis that accepts connections and never answers is a failed read after the timeout', async () => {
  const sockets = [];
  const silent = createServer((s) => sockets.push(s)).listen(0, '127.0.0.1');
  await new Promise((r) => silent.once('listening', r));
  const r = new BulkFactorReader({ cache: `redis://127.0.0.1:${silent.address().port}/0`, logger: quiet, timeout: 0.3, refresh: 0 });
  try {
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      const reading = await r.read();
      assert.equal(reading.error, 'cache: timed out after 300 ms; parameter: not read');
      assert.ok(performance.now() - started < 1500, `${performance.now() - started} ms`);
    }
  } finally {
    await r.close();
    for (const s of sockets) s.destroy();
    silent.close();
  }
});

test('an SSM endpoint that accepts connections and never answers is a failed read after the timeout', async () => {
  const sockets = [];
  const silent = createServer((s) => sockets.push(s)).listen(0, '127.0.0.1');
  await new Promise((r) => silent.once('listening', r));
  const saved = { ...process.env };
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SSM: `http://127.0.0.1:${silent.address().port}`, AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing', AWS_REGION: 'eu-west-1',
  });
  const r = new BulkFactorReader({ parameter: 'ssm:/capacity/state', logger: quiet, timeout: 0.3, refresh: 0, parameterRefresh: 0 });
  try {
    await r.read(); // the first read also waits for the SDK to load
    const started = performance.now();
    assert.equal((await r.read()).error, 'cache: not read; parameter: timed out after 300 ms');
    assert.ok(performance.now() - started < 1500, `${performance.now() - started} ms`);
  } finally {
    await r.close();
    process.env = saved;
    for (const s of sockets) s.destroy();
    silent.close();
  }
});

test('a missing client library is a failed read, not a crash', async () => {
  const load = (name) => import(`capacity-admission-test-absent-${name.replace(/\W/g, '-')}`);
  for (const [spec, says] of [
    ['redis://127.0.0.1:6379/0', 'the redis package is not installed (npm install redis)'],
    ['ssm:/capacity/state', 'the @aws-sdk/client-ssm package is not installed (npm install @aws-sdk/client-ssm)'],
  ]) {
    const channel = openChannel(spec, { key: 'capacity:state', timeoutMs: 500, load });
    assert.deepEqual(await channel.fetch(), { tag: 'failed', val: says });
    assert.deepEqual(await channel.fetch(), { tag: 'failed', val: says });
    await channel.close();
  }
});

test('read() after close() rejects; close() is idempotent and waits for the fetch in flight', async () => {
  const r = reader({ cache: file(documentText()) });
  const inFlight = r.read();
  await r.close();
  assert.equal((await inFlight).factor, 0.5);
  await r.close();
  await assert.rejects(r.read(), /after close/);
});

test('chooseFactor checks its arguments and answers plain numbers', () => {
  const doc = { tag: 'document', val: documentText() };
  const base = { now: T0, maxAge: 180, maxSkew: 30 };
  assert.deepEqual(chooseFactor(doc, undefined, base), {
    factor: 0.5, source: 'cache', state: 'constrained', sequence: 42, decidedAt: T0, decidedAtDate: new Date(T0 * 1000), ageS: 0,
    error: undefined, cache: 'usable', parameter: 'not-read',
  });
  assert.equal(chooseFactor(null, { tag: 'not-read' }, { ...base, now: BigInt(T0) }).error, 'cache: not read; parameter: not read');
  for (const [args, error, says] of [
    [[{ tag: 'documents', val: '' }, undefined, base], TypeError, 'cache: the tag'],
    [[doc, { tag: 'failed' }, base], TypeError, 'parameter.val'],
    [[doc, 'text', base], TypeError, 'parameter:'],
    [[doc, undefined, { ...base, now: 1.5 }], RangeError, 'now'],
    [[doc, undefined, { ...base, now: 2n ** 63n }], RangeError, 'outside s64'],
    [[doc, undefined, { ...base, maxAge: -1 }], RangeError, 'maxAge'],
    [[doc, undefined, { ...base, maxSkew: undefined }], RangeError, 'maxSkew'],
  ]) {
    assert.throws(() => chooseFactor(...args), (e) => e instanceof error && e.message.includes(says), says);
  }
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
