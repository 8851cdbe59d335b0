// BulkFactorReader against a real SSM (moto_server) and, with both channels real, a Redis cache in
// front of it: the parameter when the cache is absent or down, full capacity when the parameter is
// stale too, and the one Redis client reconnecting when the cache comes back.
// Skipped without moto_server (and redis-server), unless CAPACITY_REQUIRE_SERVERS=1.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BulkFactorReader } from '../index.js';
import { MotoServer, RedisServer, T0, capturingLogger, clockAt, documentText, iso, requireServers, serversTest, skipUnless, sleep } from './servers.mjs';

const quiet = { warn() {}, error() {}, info() {} };

serversTest(test, 'redis-server', 'moto_server');
const PARAMETER = 'ssm:/capacity/state';

describe('BulkFactorReader with a real SSM parameter', { skip: skipUnless('moto_server') }, () => {
  let moto;
  before(async () => {
    requireServers('moto_server');
    moto = await MotoServer.start();
    await moto.put('/capacity/state', documentText({ state: 'critical', factors: { bulk: 0 }, sequence: 41 }));
  });
  after(() => moto?.stop());

  test('a parameter alone gives the factor, over one client', async () => {
    const r = new BulkFactorReader({ parameter: PARAMETER, logger: quiet, clock: clockAt(60), timeout: 5, refresh: 0, parameterRefresh: 0 });
    for (let i = 0; i < 3; i++) {
      assert.deepEqual({ ...(await r.read()) }, {
        factor: 0, source: 'parameter', state: 'critical', sequence: 41, decidedAt: T0, decidedAtDate: new Date(T0 * 1000), ageS: 60,
        error: undefined, cache: 'not-read', parameter: 'usable',
      });
    }
    assert.deepEqual(r.counters().reads, { cache: {}, parameter: { usable: 3 } });
    await r.close();
  });

  test('a missing parameter is a failed read, and a stale one is not used', async () => {
    const missing = new BulkFactorReader({ parameter: 'ssm:/capacity/none', logger: quiet, timeout: 5 });
    assert.equal((await missing.read()).error, 'cache: not read; parameter: parameter /capacity/none not found');
    await missing.close();
    const stale = new BulkFactorReader({ parameter: PARAMETER, logger: quiet, clock: clockAt(181), timeout: 5 });
    const reading = await stale.read();
    assert.deepEqual([reading.factor, reading.parameter], [undefined, 'stale']);
    assert.match(reading.error, /parameter: stale: decided_at 2026-10-20T14:30:00Z is 181 s old \(maximum 180 s\)$/);
    await stale.close();
  });
});

describe('BulkFactorReader with a real Redis cache and a real SSM parameter', { skip: skipUnless('redis-server', 'moto_server') }, () => {
  let redis;
  let moto;
  let admin;
  const readers = [];
  const reader = (options = {}) => {
    const r = new BulkFactorReader({ cache: redis.url(), parameter: PARAMETER, logger: quiet, clock: clockAt(60), timeout: 5, parameterRefresh: 0, ...options });
    readers.push(r);
    return r;
  };

  before(async () => {
    requireServers('redis-server', 'moto_server');
    [redis, moto] = await Promise.all([RedisServer.start(), MotoServer.start()]);
    admin = await redis.admin();
    await moto.put('/capacity/state', documentText({ state: 'critical', factors: { bulk: 0 }, sequence: 41 }));
  });
  after(async () => {
    await Promise.all(readers.map((r) => r.close()));
    await Promise.all([redis?.stop(), moto?.stop()]);
  });

  test('a fresh cache is used and the parameter is not read', async () => {
    await admin.set('capacity:state', documentText(), { EX: 300 });
    const reading = await reader().read();
    assert.deepEqual([reading.factor, reading.source, reading.cache, reading.parameter], [0.5, 'cache', 'usable', 'not-read']);
  });

  test('the cache key absent: the parameter, when fresh', async () => {
    await admin.del('capacity:state');
    const r = reader({ refresh: 60 });
    const readings = await Promise.all(Array.from({ length: 1000 }, () => r.read()));
    assert.ok(readings.every((x) => x === readings[0]));
    assert.deepEqual({ ...readings[0] }, {
      factor: 0, source: 'parameter', state: 'critical', sequence: 41, decidedAt: T0, decidedAtDate: new Date(T0 * 1000), ageS: 60,
      error: 'cache: no key capacity:state (absent or expired)', cache: 'read-failed', parameter: 'usable',
    });
    assert.deepEqual(r.counters().reads, { cache: { 'read-failed': 1 }, parameter: { usable: 1 } });
  });

  test('the cache key absent and the parameter stale: full capacity, the reason names both channels', async () => {
    await admin.del('capacity:state');
    const logger = capturingLogger();
    const r = reader({ clock: clockAt(600), logger, refresh: 0 });
    for (let i = 0; i < 5; i++) {
      const reading = await r.read();
      assert.deepEqual([reading.factor, reading.source, reading.cache, reading.parameter], [undefined, undefined, 'read-failed', 'stale']);
      assert.equal(reading.error, 'cache: no key capacity:state (absent or expired); '
        + `parameter: stale: decided_at ${iso(T0)} is 600 s old (maximum 180 s)`);
    }
    assert.deepEqual(logger.levels(), ['warn', 'warn', 'error']);
    assert.equal(logger.lines[1].message,
      `capacity parameter ${PARAMETER} is not usable (stale): stale: decided_at ${iso(T0)} is 600 s old (maximum 180 s)`);
    assert.equal(r.counters().fullCapacity, 5);
  });

  test('Redis stopped: the parameter; Redis back on the same port: the cache again, over the same client', async () => {
    await Promise.all(readers.splice(0).map((r) => r.close())); // only this test's reader connects
    // The parameter's decision (sequence 41) in the cache too, as the sentinel publishes it.
    await admin.set('capacity:state', documentText({ sequence: 41 }), { EX: 300 });
    const logger = capturingLogger();
    const r = reader({ logger, refresh: 0, timeout: 1 });
    assert.equal((await r.read()).source, 'cache');

    await redis.stop();
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      const reading = await r.read();
      assert.deepEqual([reading.factor, reading.source, reading.cache], [0, 'parameter', 'read-failed']);
      assert.match(reading.error, /^cache: .*(ECONNREFUSED|ECONNRESET|closed|offline)/i);
      assert.ok(performance.now() - started < 1500);
    }
    assert.deepEqual(logger.levels(), ['warn']);

    await redis.restart();
    admin = await redis.admin();
    await admin.set('capacity:state', documentText({ factors: { bulk: 0.75 } }), { EX: 300 });
    let reading;
    for (let waited = 0; waited < 10000; waited += 100) {
      reading = await r.read();
      if (reading.source === 'cache') break;
      await sleep(100);
    }
    assert.deepEqual([reading.factor, reading.source, reading.cache, reading.error], [0.75, 'cache', 'usable', undefined]);
    assert.deepEqual(logger.levels(), ['warn', 'info']);
    assert.match(logger.lines[1].message, /^capacity cache redis:\/\/127\.0\.0\.1:\d+\/0 is usable again after \d+ s$/);
    // the reader's one client reconnected: one connection besides the test's own, kept
    const received = await redis.connectionsReceived();
    for (let i = 0; i < 10; i++) assert.equal((await r.read()).source, 'cache');
    assert.equal(await redis.connectionsReceived(), received);
    assert.equal((await redis.info('clients')).connected_clients, '2');
  });
});
