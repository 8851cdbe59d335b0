// BulkFactorReader against a real redis-server (started here on a free 127.0.0.1 port), the
// parameter a file: the cache's document, an absent or expired key, malformed documents, one
// connection for the reader's life, one fetch for a thousand concurrent reads (counted by the
// server), logging once per episode, a password that is used and never logged.
// Skipped without redis-server, unless CAPACITY_REQUIRE_SERVERS=1.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BulkFactorReader } from '../index.js';
import { RedisServer, T0, capturingLogger, clockAt, documentText, iso, requireServers, serversTest, skipUnless, sleep } from './servers.mjs';

const quiet = { warn() {}, error() {}, info() {} };

serversTest(test, 'redis-server');
const dir = mkdtempSync(join(tmpdir(), 'capacity-reader-redis-'));
const parameter = join(dir, 'parameter.json');
writeFileSync(parameter, documentText({ state: 'critical', factors: { bulk: 0.25 }, sequence: 41 }));

describe('BulkFactorReader with a real Redis cache', { skip: skipUnless('redis-server') }, () => {
  let redis;
  let admin;
  const readers = [];
  /** A reader of this suite's Redis (closed after the suite). */
  const reader = (options = {}) => {
    const r = new BulkFactorReader({ cache: redis.url(), parameter, logger: quiet, clock: clockAt(60), timeout: 1, parameterRefresh: 0, ...options });
    readers.push(r);
    return r;
  };

  before(async () => {
    requireServers('redis-server');
    redis = await RedisServer.start();
    admin = await redis.admin();
  });
  after(async () => {
    await Promise.all(readers.map((r) => r.close()));
    await redis?.stop();
  });

  test('a fresh cache gives the factor; the parameter is not read', async () => {
    await admin.set('capacity:state', documentText(), { EX: 300 });
    const r = reader();
    assert.deepEqual({ ...(await r.read()) }, {
      factor: 0.5, source: 'cache', state: 'constrained', sequence: 42, decidedAt: T0, decidedAtDate: new Date(T0 * 1000), ageS: 60,
      error: undefined, cache: 'usable', parameter: 'not-read',
    });
    await admin.set('other:key', documentText({ factors: { bulk: 0.75 } }));
    assert.equal((await reader({ cacheKey: 'other:key' }).read()).factor, 0.75);
  });

  test('a connection that stops answering is dropped and the next read connects afresh', async () => {
    await admin.set('capacity:state', documentText(), { EX: 300 });
    const r = reader({ refresh: 0, timeout: 0.3 });
    assert.equal((await r.read()).source, 'cache');
    const before = await redis.connectionsReceived();
    // The server stops answering every client for 1 s (the reader's connection stays open).
    await admin.sendCommand(['CLIENT', 'PAUSE', '1000', 'ALL']);
    const stuck = await r.read();
    assert.equal(stuck.cache, 'read-failed');
    assert.match(stuck.error, /timed out after 300 ms/);
    await sleep(1100);
    assert.equal((await r.read()).source, 'cache');
    // The answer came on a new connection (before the fix the old one was kept: no new connection).
    assert.equal(await redis.connectionsReceived(), before + 1);
  });

  test('one connection serves every fetch', async () => {
    await admin.set('capacity:state', documentText(), { EX: 300 });
    const before = await redis.connectionsReceived();
    const r = reader({ refresh: 0 });
    for (let i = 0; i < 20; i++) assert.equal((await r.read()).source, 'cache');
    assert.equal(await redis.connectionsReceived(), before + 1);
    assert.equal(r.counters().fetches, 20);
  });

  test('an absent key, and a key that expired, fall to the parameter', async () => {
    await admin.del('capacity:state');
    const absent = await reader().read();
    assert.deepEqual([absent.factor, absent.source, absent.cache, absent.parameter], [0.25, 'parameter', 'read-failed', 'usable']);
    assert.equal(absent.error, 'cache: no key capacity:state (absent or expired)');

    // The same decision in both channels, as the sentinel publishes it (an older one in the
    // parameter would be refused as superseded: reader-fence.test.mjs).
    await admin.set('capacity:state', documentText({ sequence: 41 }), { EX: 1 });
    const r = reader({ refresh: 0 });
    assert.equal((await r.read()).source, 'cache');
    await sleep(1200);
    const expired = await r.read();
    assert.deepEqual([expired.source, expired.error], ['parameter', 'cache: no key capacity:state (absent or expired)']);
  });

  test('a value larger than a document is a failed read, never loaded whole', async () => {
    await admin.set('capacity:state', 'x'.repeat(50 * 1024 * 1024));
    const got = await reader({ refresh: 0 }).read();
    assert.deepEqual([got.factor, got.source, got.cache], [0.25, 'parameter', 'read-failed']);
    assert.match(got.error, /larger than 64 KiB/);
  });

  test('malformed documents, out-of-range factors, stale documents and documents from the future', async () => {
    for (const [text, verdict, says, clock = clockAt(60)] of [
      ['{not json', 'unreadable', 'not a JSON document'],
      ['"a string"', 'unreadable', 'not a JSON object'],
      [documentText({ factors: { write: 1 } }), 'unreadable', 'no numeric factors.bulk'],
      [documentText({ decided_at: undefined }), 'unreadable', 'no decided_at'],
      [documentText({ factors: { bulk: 1.5 } }), 'out-of-range', 'factors.bulk 1.5 is outside [0, 1]'],
      [documentText({ decided_at: iso(T0 - 121) }), 'stale', 'is 181 s old (maximum 180 s)'],
      [documentText({ decided_at: iso(T0 + 91) }), 'from-the-future', 'is 31 s ahead of this clock (allowance 30 s)'],
      [Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), 'read-failed', 'the value is not UTF-8'],
    ]) {
      await admin.set('capacity:state', text);
      const reading = await reader({ clock }).read();
      assert.deepEqual([reading.factor, reading.source, reading.cache, reading.parameter], [0.25, 'parameter', verdict, 'usable'], says);
      assert.ok(reading.error.startsWith('cache: ') && reading.error.includes(says), `${reading.error} should say ${says}`);
      const alone = await reader({ parameter: undefined, clock }).read();
      assert.deepEqual([alone.factor, alone.cache, alone.parameter], [undefined, verdict, 'not-read']);
    }
  });

  test('1,000 concurrent reads within one refresh interval fetch once (the server counts one read)', async () => {
    for (const [cached, parameterReads] of [[true, {}], [false, { usable: 1 }]]) {
      if (cached) await admin.set('capacity:state', documentText(), { EX: 300 });
      else await admin.del('capacity:state');
      const r = reader({ refresh: 60 });
      await admin.sendCommand(['CONFIG', 'RESETSTAT']);
      const readings = await Promise.all(Array.from({ length: 1000 }, () => r.read()));
      assert.ok(readings.every((x) => x === readings[0]));
      assert.equal(readings[0].source, cached ? 'cache' : 'parameter');
      const c = r.counters();
      assert.deepEqual([c.calls, c.fetches, c.reads.cache, c.reads.parameter],
        [1000, 1, { [cached ? 'usable' : 'read-failed']: 1 }, parameterReads]);
      assert.equal(await redis.reads(), 1);
      // and the next thousand, still within the interval, none
      await Promise.all(Array.from({ length: 1000 }, () => r.read()));
      assert.deepEqual([r.counters().fetches, await redis.reads()], [1, 1]);
    }
  });

  test('a missing key is logged once when it starts and once when it ends, not per read', async () => {
    await admin.del('capacity:state');
    const logger = capturingLogger();
    const r = reader({ parameter: undefined, logger, refresh: 0 });
    for (let i = 0; i < 50; i++) assert.equal((await r.read()).factor, undefined);
    assert.deepEqual(logger.levels(), ['warn', 'error']);
    assert.equal(logger.lines[0].message,
      `capacity cache ${redis.url()} is not usable (read-failed): no key capacity:state (absent or expired)`);
    assert.match(logger.lines[1].message, /full capacity until one is readable again \(cache: no key capacity:state \(absent or expired\); parameter: not read\)$/);
    await admin.set('capacity:state', documentText(), { EX: 300 });
    for (let i = 0; i < 50; i++) assert.equal((await r.read()).factor, 0.5);
    assert.deepEqual(logger.levels(), ['warn', 'error', 'info', 'info']);
    assert.deepEqual([r.counters().fullCapacity, r.counters().reads.cache], [50, { 'read-failed': 50, usable: 50 }]);
  });
});

describe('BulkFactorReader with a password-protected Redis', { skip: skipUnless('redis-server') }, () => {
  let redis;
  before(async () => {
    requireServers('redis-server');
    redis = await RedisServer.start(['--requirepass', 's3cret']);
    await (await redis.admin()).set('capacity:state', documentText());
  });
  after(() => redis?.stop());

  test('the password in the URL is used, and logs show it redacted', async () => {
    const good = new BulkFactorReader({ cache: redis.url(), logger: quiet, clock: clockAt(60) });
    assert.equal((await good.read()).factor, 0.5);
    await good.close();

    const logger = capturingLogger();
    const wrong = new BulkFactorReader({ cache: redis.url(':wrong-s3cret@'), logger, clock: clockAt(60), timeout: 1 });
    const reading = await wrong.read();
    await wrong.close();
    assert.equal(reading.cache, 'read-failed');
    assert.match(reading.error, /WRONGPASS|invalid password/);
    assert.ok(logger.lines.length === 2 && logger.lines.every((l) => !l.message.includes('s3cret')), JSON.stringify(logger.lines));
    assert.ok(logger.lines[0].message.includes(`redis://:***@127.0.0.1:${redis.port}/0`));
  });
});
