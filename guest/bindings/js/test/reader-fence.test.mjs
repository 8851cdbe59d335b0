// A reader never goes back to an older decision (docs/behaviour.md §9.1, "Never back"), over file
// channels: a document with a lower sequence than the newest one acted on is refused while that
// one is fresh, and accepted once it is stale (a store that was reset). The same cases as the
// Python package's test_sequence_fence.py; a value larger than a document is never loaded whole.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BulkFactorReader } from '../index.js';
import { MAX_DOCUMENT } from '../channels.js';
import { T0, documentText } from './servers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'capacity-fence-'));
const cache = join(dir, 'cache.json');
const parameter = join(dir, 'parameter.json');
const quiet = { warn() {}, error() {}, info() {} };
const publish = (path, over) => writeFileSync(path, documentText(over));

function reader(now) {
  return new BulkFactorReader({ cache, parameter: `file:${parameter}`, refresh: 0, parameterRefresh: 0, logger: quiet, clock: () => now.at });
}

test('a late write of an older sequence is refused while the newer is fresh', async () => {
  const now = { at: T0 + 60 };
  publish(cache, { state: 'critical', factors: { bulk: 0 }, sequence: 43 });
  publish(parameter, { state: 'critical', factors: { bulk: 0 }, sequence: 43 });
  const r = reader(now);
  assert.equal((await r.read()).sequence, 43);
  publish(cache, { state: 'normal', factors: { bulk: 1 }, sequence: 42 });
  publish(parameter, { state: 'normal', factors: { bulk: 1 }, sequence: 42 });
  now.at += 30;
  const got = await r.read();
  assert.deepEqual([got.factor, got.state, got.sequence, got.source, got.ageS], [0, 'critical', 43, 'remembered', 90]);
  assert.deepEqual([got.cache, got.parameter], ['superseded', 'superseded']);
  assert.match(got.error, /superseded: sequence 42 is older than sequence 43 already read/);
  assert.equal(r.counters().reads.cache.superseded, 1);
  publish(cache, { factors: { bulk: 0.5 }, sequence: 44 });
  const newer = await r.read();
  assert.deepEqual([newer.factor, newer.cache], [0.5, 'usable']);
  await r.close();
});

test('a sequence that is not a whole number cannot be ordered and is refused', async () => {
  const now = { at: T0 + 60 };
  publish(cache, { state: 'critical', factors: { bulk: 0 }, sequence: 43 });
  publish(parameter, { state: 'critical', factors: { bulk: 0 }, sequence: 43 });
  const r = reader(now);
  assert.equal((await r.read()).factor, 0);
  for (const unordered of [44.5, '44', true, null]) {
    publish(cache, { state: 'normal', factors: { bulk: 1 }, sequence: unordered });
    publish(parameter, { state: 'normal', factors: { bulk: 1 }, sequence: unordered });
    const got = await r.read();
    assert.deepEqual([got.factor, got.state, got.sequence], [0, 'critical', 43], String(unordered));
    assert.deepEqual([got.cache, got.parameter], ['superseded', 'superseded'], String(unordered));
    assert.match(got.error, /sequence is not a whole number/);
  }
  await r.close();
});

test('the parameter is used when only the cache went back', async () => {
  const now = { at: T0 + 60 };
  publish(cache, { factors: { bulk: 0 }, sequence: 43 });
  const r = reader(now);
  assert.equal((await r.read()).sequence, 43);
  publish(cache, { factors: { bulk: 1 }, sequence: 42 });
  publish(parameter, { factors: { bulk: 0.25 }, sequence: 44 });
  const got = await r.read();
  assert.deepEqual([got.factor, got.source, got.sequence, got.cache, got.parameter], [0.25, 'parameter', 44, 'superseded', 'usable']);
  await r.close();
});

test('once the newest is stale a lower sequence is accepted', async () => {
  const now = { at: T0 + 60 };
  publish(cache, { factors: { bulk: 0 }, sequence: 43 });
  const r = reader(now);
  assert.equal((await r.read()).sequence, 43);
  now.at = T0 + 181; // past the 180 s maximum age of the document decided at T0
  publish(cache, { factors: { bulk: 0.75 }, sequence: 1, decided_at: new Date((T0 + 160) * 1000).toISOString().replace('.000Z', 'Z') });
  const got = await r.read();
  assert.deepEqual([got.factor, got.sequence, got.cache], [0.75, 1, 'usable']);
  await r.close();
});

test('a file larger than a document is a failed read; exactly the limit is read', async () => {
  writeFileSync(cache, Buffer.alloc(MAX_DOCUMENT + 1, ' '));
  publish(parameter, { factors: { bulk: 0.25 } });
  const r = reader({ at: T0 + 60 });
  const got = await r.read();
  assert.deepEqual([got.factor, got.source, got.cache], [0.25, 'parameter', 'read-failed']);
  assert.match(got.error, /larger than 64 KiB/);
  const text = documentText({ factors: { bulk: 0.5 } });
  writeFileSync(cache, text + ' '.repeat(MAX_DOCUMENT - text.length));
  assert.equal((await r.read()).factor, 0.5);
  await r.close();
});
