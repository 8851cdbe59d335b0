// The shared vectors (tests/vectors/admission and tests/vectors/planner) through BulkAdmission
// over real channels: each case's shares are rows of a real PostgreSQL table read by
// WorkspaceProfiles (as a read-only role), its factor a state document published to a real Redis
// and a real SSM (moto_server) as the sentinel publishes it (a null factor: no cache key and a
// stale parameter, so the reader finds nothing usable), read by a BulkFactorReader. Every field
// of every answer must equal the vector's `expected`. A case BulkAdmission cannot express (a
// budget of 0, which it refuses; a queued workspace without a profile, or one listed twice) is
// skipped and counted, and the counts are checked. With CAPACITY_RESULTS_FILE set, the answers
// are written there (sorted keys, 2-space indent) for tests/cross_language.sh to compare with the
// Python package's byte for byte.
// Skipped without redis-server, moto_server and PostgreSQL, unless CAPACITY_REQUIRE_SERVERS=1.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { BulkAdmission, BulkFactorReader, WorkspaceProfiles } from '../index.js';
import { PostgresServer, requirePostgres, skipUnlessPostgres } from './postgres.mjs';
import { MotoServer, RedisServer, T0, capturingLogger, clockAt, documentText, iso, requireServers, skipUnless } from './servers.mjs';
import { cases, differences, serdeAdmission } from './vectors.mjs';

const PASSWORD = 'svc-vectors-pw';
const admissionCases = cases('admission');
const plannerCases = cases('planner');

/** Why BulkAdmission cannot run a resolve-budget case, or undefined. */
function admissionSkip({ input }) {
  return input.cluster_batches < 1 || input.service_batches < 1 ? 'a budget of 0 cannot be configured' : undefined;
}

/** Why BulkAdmission cannot run a plan case, or undefined: it lists each queued workspace once,
 * with the share its row gives. */
function planSkip({ input }) {
  if (input.cluster_batches < 1 || input.service_batches < 1) return 'a budget of 0 cannot be configured';
  const listed = input.workspaces.map((w) => w.workspace);
  if (new Set(listed).size !== listed.length) return 'a workspace listed twice';
  if (input.queue.some((b) => !listed.includes(b.workspace))) return 'a queued workspace without a profile';
  return undefined;
}

/** The workspace id a case's workspace gets in the table (a prefix keeps the cases apart and
 * the names' order, which breaks the plan's ties). */
const admissionWorkspace = (c) => `admission/${c.name}`;
const planWorkspace = (c, w) => `plan/${c.name}/${w}`;

/** JSON.stringify's replacer that sorts every object's keys. */
function sortedKeysReplacer(_, value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, value[k]]));
}

/** An answer as the results file holds it: snake_case fields, outcomes by their WIT names,
 * factor_used rounded to 6 decimals. */
function written(result) {
  const out = serdeAdmission(result);
  out.factor_used = Math.round(out.factor_used * 1e6) / 1e6;
  return out;
}

const EXPECTED_SKIPS = {
  admission: ['zero_batches_configured_still_one'],
  planner: ['workspace_without_profile_admits_nothing', 'duplicate_profile_counts_first'],
};

describe('the shared vectors through BulkAdmission over real PostgreSQL, Redis and SSM', {
  skip: skipUnlessPostgres() || skipUnless('redis-server', 'moto_server'),
}, () => {
  let db;
  let redis;
  let moto;
  let cache;
  let reader;
  let profiles;
  const logger = capturingLogger();
  const results = [];
  const skipped = { admission: [], planner: [] };

  /** Publishes a document with this bulk factor to both channels; null: nothing usable. */
  const newReader = () => new BulkFactorReader({
    cache: redis.url(), parameter: 'ssm:/capacity/state', refresh: 0, parameterRefresh: 0, timeout: 5, clock: clockAt(60), logger,
  });

  /** The case's factor on both channels. A factor no reader may use is met by a reader that has
   * read nothing yet (one that had would act on the document it remembers,
   * reader-remembered.test.mjs). */
  async function publish(factor) {
    if (factor === null || factor < 0 || factor > 1) {
      await reader.close();
      reader = newReader();
    }
    if (factor === null) {
      await cache.del('capacity:state');
      await moto.put('/capacity/state', documentText({ decided_at: iso(T0 - 3600) }));
      return;
    }
    const text = documentText({ factors: { bulk: factor } });
    await cache.set('capacity:state', text, { EX: 300 });
    await moto.put('/capacity/state', text);
  }

  /** What the reader must make of it: the factor from the cache when within [0, 1]. */
  async function checkReading(factor) {
    const reading = await reader.read();
    if (factor === null) assert.deepEqual([reading.factor, reading.cache, reading.parameter], [undefined, 'read-failed', 'stale']);
    else if (factor < 0 || factor > 1) assert.deepEqual([reading.factor, reading.cache, reading.parameter], [undefined, 'out-of-range', 'out-of-range']);
    else assert.deepEqual([reading.factor, reading.source], [factor, 'cache']);
  }

  before(async () => {
    requirePostgres();
    requireServers('redis-server', 'moto_server');
    [db, redis, moto] = await Promise.all([PostgresServer.start(), RedisServer.start(), MotoServer.start()]);
    cache = await redis.admin();
    await db.sql(`CREATE ROLE svc LOGIN PASSWORD '${PASSWORD}';
      CREATE TABLE tenant_workload_policies (workspace_id text PRIMARY KEY, bulk_share bigint NOT NULL);
      GRANT SELECT ON tenant_workload_policies TO svc`);
    const rows = [
      ...admissionCases.filter(([, c]) => !admissionSkip(c)).map(([, c]) => [admissionWorkspace(c), c.input.share]),
      ...plannerCases.filter(([, c]) => !planSkip(c)).flatMap(([, c]) => c.input.workspaces.map((w) => [planWorkspace(c, w.workspace), w.share])),
    ];
    for (const [workspace, share] of rows) await db.sql('INSERT INTO tenant_workload_policies VALUES ($1, $2)', [workspace, share]);
    reader = newReader();
    profiles = new WorkspaceProfiles({ dsn: db.url('svc', PASSWORD), refresh: 3600, logger });
  });
  after(async () => {
    await reader?.close();
    await profiles?.close();
    await Promise.all([db?.destroy(), redis?.stop(), moto?.stop()]);
  });

  for (const [id, c] of admissionCases) {
    test(id, async (t) => {
      const why = admissionSkip(c);
      if (why !== undefined) {
        skipped.admission.push(c.name);
        t.skip(why);
        return;
      }
      const i = c.input;
      await publish(i.factor);
      await checkReading(i.factor);
      const admission = new BulkAdmission({ reader, profiles, clusterBatches: i.cluster_batches, serviceBatches: i.service_batches });
      const result = await admission.admit(admissionWorkspace(c), {
        clusterInFlight: i.cluster_in_flight, serviceInFlight: i.service_in_flight, workspaceInFlight: i.workspace_in_flight,
      });
      const diffs = differences(c.expected, serdeAdmission(result));
      assert.equal(diffs.length, 0, diffs.join('\n'));
      results.push({ case: c.name, kind: 'admit', result: written(result) });
    });
  }

  for (const [id, c] of plannerCases) {
    test(id, async (t) => {
      const why = planSkip(c);
      if (why !== undefined) {
        skipped.planner.push(c.name);
        t.skip(why);
        return;
      }
      const i = c.input;
      await publish(i.factor);
      await checkReading(i.factor);
      const admission = new BulkAdmission({ reader, profiles, clusterBatches: i.cluster_batches, serviceBatches: i.service_batches });
      const queue = i.queue.map((b) => ({ id: b.id, workspace: planWorkspace(c, b.workspace), enqueuedAt: b.enqueued_at }));
      const result = await admission.plan(queue, {
        clusterInFlight: i.cluster_in_flight, serviceInFlight: i.service_in_flight,
        workspaceInFlight: new Map(i.workspaces.map((w) => [planWorkspace(c, w.workspace), w.in_flight])),
      });
      const diffs = differences(c.expected, serdeAdmission(result));
      assert.equal(diffs.length, 0, diffs.join('\n'));
      results.push({ case: c.name, kind: 'plan', result: written(result) });
    });
  }

  test('the cases skipped are exactly those BulkAdmission cannot express', () => {
    assert.deepEqual(skipped, EXPECTED_SKIPS);
    assert.equal(results.length, admissionCases.length + plannerCases.length - 3);
    assert.deepEqual(results.map((r) => r.case), [
      ...admissionCases.map(([, c]) => c.name).filter((n) => !EXPECTED_SKIPS.admission.includes(n)),
      ...plannerCases.map(([, c]) => c.name).filter((n) => !EXPECTED_SKIPS.planner.includes(n)),
    ]);
  });

  test('the profiles were read once, by the read-only role, with nothing logged about them', () => {
    const counters = profiles.counters();
    assert.deepEqual([counters.loads, counters.failures, counters.skippedRows, counters.usingDefaults], [1, 0, 0, false]);
    assert.ok(logger.lines.every((l) => !l.message.startsWith('workspace profiles') && !l.message.includes(PASSWORD)));
  });

  test('the results, for the cross-language comparison', () => {
    const text = `${JSON.stringify(results, sortedKeysReplacer, 2)}\n`;
    assert.ok(text.includes('"factor_used": 0.01,') && text.includes('"factor_used": 1,') && !text.includes('factorUsed'));
    const file = process.env.CAPACITY_RESULTS_FILE;
    if (file) {
      writeFileSync(file, text);
      assert.equal(readFileSync(file, 'utf8'), text);
    }
  });
});
