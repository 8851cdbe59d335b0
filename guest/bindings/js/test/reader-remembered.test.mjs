// A reader keeps acting on the newest document it acted on while that one is fresh
// (docs/behaviour.md §9.1, "Remembered"), from the table every reader runs
// (tests/vectors/reader/remembered.json, also run by the Python package), and the parameter's
// pace (`parameterRefresh`, backoff after failures) on a file channel.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BulkFactorReader } from '../index.js';
import { JITTER, ParameterPace } from '../parameter-pace.js';
import { capturingLogger, iso } from './servers.mjs';
import { repo } from './vectors.mjs';

const TABLE = JSON.parse(readFileSync(join(repo, 'tests', 'vectors', 'reader', 'remembered.json'), 'utf8'));
const quiet = { warn() {}, error() {}, info() {} };
// The Python reading's field names, as the table spells them, and the Node reading's.
const FIELDS = { factor: 'factor', source: 'source', state: 'state', sequence: 'sequence', age_s: 'ageS', cache: 'cache', parameter: 'parameter' };
const COUNTERS = { remembered: 'remembered', full_capacity: 'fullCapacity' };

function write(path, channel) {
  if (channel === 'absent') rmSync(path, { force: true });
  else if ('text' in channel) writeFileSync(path, channel.text);
  else {
    const { bulk, state, sequence, decided } = channel;
    writeFileSync(path, JSON.stringify({ state, factors: { bulk }, decided_at: iso(TABLE.start + decided), sequence }));
  }
}

for (const c of TABLE.cases) {
  test(`the shared table: ${c.name}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capacity-remembered-'));
    const cache = join(dir, 'cache.json');
    const parameter = join(dir, 'parameter.json');
    const now = { at: TABLE.start };
    const r = new BulkFactorReader({
      cache, parameter: `file:${parameter}`, refresh: 0, parameterRefresh: 0, maxAge: TABLE.max_age, maxSkew: TABLE.max_skew,
      logger: quiet, clock: () => now.at,
    });
    try {
      for (const [i, step] of c.steps.entries()) {
        write(cache, step.cache);
        write(parameter, step.parameter);
        now.at = TABLE.start + step.at;
        const got = await r.read();
        const actual = Object.fromEntries(Object.keys(step.expect).map((k) => [k, got[FIELDS[k]] ?? null]));
        assert.deepEqual(actual, step.expect, `step ${i} (at ${step.at} s)`);
      }
      const counters = r.counters();
      assert.deepEqual(Object.fromEntries(Object.keys(c.counters).map((k) => [k, counters[COUNTERS[k]]])), c.counters);
    } finally {
      await r.close();
    }
  });
}

test('remembering is logged when it starts and when it ends', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'capacity-remembered-'));
  const cache = join(dir, 'cache.json');
  const now = { at: TABLE.start };
  const logger = capturingLogger();
  const r = new BulkFactorReader({ cache, refresh: 0, logger, clock: () => now.at });
  write(cache, { bulk: 0, state: 'critical', sequence: 43, decided: 0 });
  await r.read();
  write(cache, 'absent');
  for (const at of [10, 20, 180]) {
    now.at = TABLE.start + at;
    assert.equal((await r.read()).source, 'remembered');
  }
  now.at += 1;
  assert.equal((await r.read()).factor, undefined);
  const lines = logger.lines.filter((l) => !l.message.startsWith('capacity cache'));
  assert.deepEqual(lines.map((l) => l.level), ['warn', 'error']);
  assert.match(lines[0].message, /acting on the remembered one \(sequence 43, critical, bulk 0, decided_at 2026-10-20T14:30:00Z\) until it is stale at 2026-10-20T14:33:00Z/);
  assert.match(lines[1].message, /admitting bulk work at full capacity/);
});

test('the parameter is called once per parameterRefresh', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'capacity-remembered-'));
  const parameter = join(dir, 'parameter.json');
  write(parameter, { bulk: 0.25, state: 'constrained', sequence: 5, decided: 0 });
  const r = new BulkFactorReader({ parameter, refresh: 0, parameterRefresh: 60, logger: quiet, clock: () => TABLE.start });
  for (let i = 0; i < 20; i++) assert.equal((await r.read()).factor, 0.25);
  assert.deepEqual([r.counters().fetches, r.counters().parameterCalls], [20, 1]);
});

for (const draw of [0, 0.5, 0.999]) {
  test(`failures back off exponentially up to a third of maxAge, jittered (draw ${draw})`, async () => {
    let calls = 0;
    const failing = { fetch: async () => { calls++; return { tag: 'failed', val: 'ThrottlingException: Rate exceeded' }; } };
    const pace = new ParameterPace(10, 180, () => draw);
    const spread = 1 - JITTER + 2 * JITTER * draw;
    const at = [];
    for (let nowMs = 0; at.length < 6; nowMs += 500) {
      const [fetched, called] = await pace.fetch(failing, nowMs);
      if (called) at.push(nowMs / 1000);
      else assert.match(fetched.val, /next call to the parameter in/);
    }
    const waits = at.slice(1).map((t, k) => t - at[k]);
    const expected = [1, 2, 3, 4, 5].map((k) => Math.min(60, 10 * 2 ** k) * spread);
    waits.forEach((w, k) => assert.ok(Math.abs(w - expected[k]) <= 1, `${waits} against ${expected}`));
    assert.equal(calls, 6);
  });
}

test('a parameterRefresh longer than a third of maxAge is refused', () => {
  for (const value of [61, 100]) {
    assert.throws(() => new BulkFactorReader({ cache: 'x', parameterRefresh: value }),
      (e) => e instanceof RangeError && e.message.includes('parameterRefresh: expected at most a third of maxAge (60 s)'));
  }
});

test('the first call after the cache fails is spread while a remembered document is fresh', async () => {
  let calls = 0;
  const answering = { fetch: async () => { calls++; return { tag: 'document', val: '{}' }; } };
  const pace = new ParameterPace(30, 180, () => 0.5);
  // Half of min(interval, half the remaining freshness): 0.5 × min(30, 50) = 15 s.
  assert.deepEqual(await pace.fetch(answering, 0, 100), [undefined, false]);
  assert.deepEqual(await pace.fetch(answering, 14_900, 85), [undefined, false]);
  assert.deepEqual(await pace.fetch(answering, 15_000, 85), [{ tag: 'document', val: '{}' }, true]);
  assert.deepEqual(await pace.fetch(answering, 30_000, 70), [{ tag: 'document', val: '{}' }, false]);
  assert.equal((await pace.fetch(answering, 45_000, 55))[1], true);
  // Without a remembered document there is nothing to wait on: the call is made at once.
  assert.equal((await new ParameterPace(30, 180, () => 0.5).fetch(answering, 0, undefined))[1], true);
  assert.equal(calls, 3);
});

test('retries after failures come before the remembered document goes stale', async () => {
  const failing = { fetch: async () => ({ tag: 'failed', val: 'ThrottlingException: Rate exceeded' }) };
  const pace = new ParameterPace(30, 180, () => 0.5);
  const staleAt = 100;
  const calls = [];
  for (let now = 0; now < staleAt; now += 0.25) {
    if ((await pace.fetch(failing, now * 1000, staleAt - now))[1]) calls.push(now);
  }
  // Without the bound, the second call would come 60 s after the first (at 75 s) and the third
  // past the document's staleness; with it, each waits half the time left.
  assert.ok(calls.length >= 5, `${calls}`);
  calls.slice(1).forEach((b, k) => assert.ok(b - calls[k] <= Math.max(1, (staleAt - calls[k]) / 2) + 0.25, `${calls}`));
});
