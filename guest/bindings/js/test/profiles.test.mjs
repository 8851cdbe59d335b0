// WorkspaceProfiles against a real PostgreSQL (started here on a free 127.0.0.1 port), read by a
// role `svc` that may only SELECT and logs in with a password: profiles read and cached, a
// changed row seen after `refresh` and not before, a missing row, bad rows skipped and logged
// once, the database stopped (last good kept within maxStale, then the default, logged once) and
// restarted (logged once), a table or column that does not exist, a session that is read-only, a
// statement that outlasts the timeout, and no password in any log line.
// Skipped without PostgreSQL, unless CAPACITY_REQUIRE_SERVERS=1.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WorkspaceProfiles } from '../index.js';
import { PostgresServer, requirePostgres, skipUnlessPostgres } from './postgres.mjs';
import { capturingLogger } from './servers.mjs';

const PASSWORD = 'svc-Pa55word-xyzzy';
/** Every line any profiles object here logged: none may carry the password. */
const lines = [];
function logger() {
  const l = capturingLogger();
  for (const level of ['warn', 'error', 'info']) {
    const keep = l[level];
    l[level] = (message) => {
      lines.push(message);
      keep(message);
    };
  }
  return l;
}
/** A clock the test moves (seconds). */
function manualClock(start = 1000) {
  let now = start;
  const clock = () => now;
  clock.advance = (s) => {
    now += s;
  };
  return clock;
}

describe('WorkspaceProfiles with a real PostgreSQL', { skip: skipUnlessPostgres() }, () => {
  let db;
  const opened = [];
  const profiles = (options) => {
    const p = new WorkspaceProfiles({ dsn: db.url('svc', PASSWORD), logger: logger(), clock: manualClock(), ...options });
    opened.push(p);
    return p;
  };
  /** A table of (workspace_id text, bulk_share <type>) that svc may read, holding `rows`. */
  async function table(name, rows, type = 'bigint') {
    await db.sql(`DROP TABLE IF EXISTS ${name} CASCADE; CREATE TABLE ${name} (workspace_id text, bulk_share ${type}); GRANT SELECT ON ${name} TO svc`);
    for (const [workspace, share] of rows) await db.sql(`INSERT INTO ${name} VALUES ($1, $2)`, [workspace, share]);
  }

  before(async () => {
    requirePostgres();
    db = await PostgresServer.start();
    await db.sql(`CREATE ROLE svc LOGIN PASSWORD '${PASSWORD}'`);
  });
  after(async () => {
    await Promise.all(opened.map((p) => p.close()));
    await db?.destroy();
  });

  test('profiles are read once and cached: a changed row is seen after refresh, not before', async () => {
    await table('t_cached', [['acme', 4], ['beta', 0]]);
    const clock = manualClock();
    const p = profiles({ table: 't_cached', refresh: 60, defaultShare: 2, clock });
    assert.deepEqual([await p.share('acme'), await p.share('beta'), await p.share('gamma')], [4, 0, 2]);
    assert.deepEqual(p.counters(), { loads: 1, failures: 0, rows: 2, skippedRows: 0, usingDefaults: false, ageS: 0 });
    assert.equal(await db.scans('t_cached', 1), 1);

    await db.sql("UPDATE t_cached SET bulk_share = 7 WHERE workspace_id = 'acme'");
    clock.advance(59);
    assert.equal(await p.share('acme'), 4);
    assert.equal(p.counters().loads, 1);
    clock.advance(1);
    assert.equal(await p.share('acme'), 7);
    assert.deepEqual([p.counters().loads, p.counters().ageS], [2, 0]);
    // Two loads and the UPDATE scanned the table.
    assert.equal(await db.scans('t_cached', 3), 3);

    // A thousand concurrent callers when a reload is due: one query (the server counts it).
    clock.advance(60);
    const shares = await Promise.all(Array.from({ length: 1000 }, (_, i) => p.share(i % 2 ? 'acme' : 'beta')));
    assert.ok(shares.every((s, i) => s === (i % 2 ? 7 : 0)));
    assert.equal(p.counters().loads, 3);
    assert.equal(await db.scans('t_cached', 4), 4);
    assert.equal(p.source, `t_cached at postgresql://svc:***@127.0.0.1:${db.port}/postgres`);
  });

  test('a workspace without a row gets the default share', async () => {
    await table('t_empty', []);
    const log = logger();
    const p = profiles({ table: 't_empty', defaultShare: 3, logger: log });
    assert.equal(await p.share('nobody'), 3);
    assert.equal(await p.share(''), 3);
    assert.deepEqual([p.counters().rows, p.counters().usingDefaults, log.lines], [0, false, []]);
    await assert.rejects(p.share(42), (e) => e instanceof TypeError && /workspace/.test(e.message));
  });

  test('bad rows are skipped, each logged once naming the workspace and the value', async () => {
    await table('t_bad', [
      ['nul', null], ['neg', -1], ['half', 2.5], ['huge', 4294967296], ['max', 4294967295], ['zero', 0], ['ok', 3],
      ['whole', '5.000'], [null, 5], ['dup', 4], ['dup', 2],
    ], 'numeric');
    const clock = manualClock();
    const log = logger();
    const p = profiles({ table: 't_bad', refresh: 10, clock, logger: log });
    const got = {};
    for (const w of ['nul', 'neg', 'half', 'huge', 'max', 'zero', 'ok', 'whole', 'dup']) got[w] = await p.share(w);
    assert.deepEqual(got, { nul: 1, neg: 1, half: 1, huge: 1, max: 4294967295, zero: 0, ok: 3, whole: 5, dup: 2 });
    assert.deepEqual([p.counters().rows, p.counters().skippedRows], [11, 5]);
    const warned = log.lines.map((l) => l.message);
    assert.deepEqual(log.levels(), Array(6).fill('warn'), warned.join('\n'));
    for (const [workspace, value] of [['nul', 'null'], ['neg', '-1'], ['half', '2.5'], ['huge', '4294967296']]) {
      assert.ok(warned.some((m) => m === `workspace profiles: the row of workspace "${workspace}" in t_bad is skipped: `
        + `bulk_share ${value} is not a whole number from 0 to 4294967295`), `${workspace}:\n${warned.join('\n')}`);
    }
    assert.ok(warned.includes('workspace profiles: a row of t_bad with a null workspace_id (bulk_share 5) is skipped'));
    assert.ok(warned.includes('workspace profiles: workspace "dup" has 2 rows in t_bad (bulk_share 4, 2): the smallest, 2, is used'));

    // Reloads log nothing new for the same values; a new bad value of a workspace is logged once.
    for (let i = 0; i < 3; i++) {
      clock.advance(10);
      assert.equal(await p.share('neg'), 1);
    }
    assert.deepEqual([p.counters().loads, log.lines.length], [4, 6]);
    await db.sql("UPDATE t_bad SET bulk_share = -2 WHERE workspace_id = 'neg'");
    for (let i = 0; i < 3; i++) {
      clock.advance(10);
      assert.equal(await p.share('neg'), 1);
    }
    assert.equal(log.lines.length, 7);
    assert.match(log.lines[6].message, /workspace "neg" .* bulk_share -2 is not a whole number/);

    // Floating-point columns: whole values are shares, the rest are skipped.
    await table('t_float', [['f', 2.0], ['g', 2.5], ['h', -0.0]], 'double precision');
    const f = profiles({ table: 't_float', logger: logger() });
    assert.deepEqual([await f.share('f'), await f.share('g'), await f.share('h')], [2, 1, 0]);
  });

  test('database stopped: the last good profiles within maxStale, then the default (logged once); restarted: read again', async (t) => {
    t.after(() => db.ensureRunning()); // for the tests after this one, should it fail half-way
    await table('t_restart', [['acme', 4]]);
    const clock = manualClock();
    const log = logger();
    const p = profiles({ table: 't_restart', refresh: 10, maxStale: 25, defaultShare: 1, clock, logger: log, timeout: 2 });
    assert.equal(await p.share('acme'), 4);

    await db.stop();
    clock.advance(10);
    assert.equal(await p.share('acme'), 4);
    assert.deepEqual(log.levels(), ['warn']);
    assert.match(log.lines[0].message, new RegExp(`^workspace profiles: reading t_restart at postgresql://svc:\\*\\*\\*@127\\.0\\.0\\.1:${db.port}/postgres `
      + 'failed \\(connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\): keeping the profiles loaded 10 s ago until they are 25 s old'));
    // Not retried on every call: once per refresh.
    for (let i = 0; i < 20; i++) assert.equal(await p.share('acme'), 4);
    assert.equal(p.counters().failures, 1);
    clock.advance(10);
    assert.equal(await p.share('acme'), 4);
    assert.deepEqual([p.counters().failures, log.lines.length, p.counters().usingDefaults], [2, 1, false]);

    // 25 s after the last good load (no reload due yet): the default, one warning.
    clock.advance(5);
    assert.equal(await p.share('acme'), 1);
    assert.equal(p.counters().failures, 2);
    assert.deepEqual(log.levels(), ['warn', 'warn']);
    assert.equal(log.lines[1].message, `workspace profiles: t_restart at postgresql://svc:***@127.0.0.1:${db.port}/postgres `
      + 'not read for 25 s, as long as maxStale (25 s): every workspace gets the default share 1 until it can be read');
    for (let i = 0; i < 3; i++) {
      clock.advance(10);
      assert.equal(await p.share('acme'), 1);
    }
    assert.deepEqual([p.counters().failures, p.counters().usingDefaults, log.lines.length], [5, true, 2]);

    await db.restart();
    await db.sql("UPDATE t_restart SET bulk_share = 6 WHERE workspace_id = 'acme'");
    clock.advance(10);
    assert.equal(await p.share('acme'), 6);
    assert.deepEqual(log.levels(), ['warn', 'warn', 'info']);
    assert.match(log.lines[2].message, /^workspace profiles: t_restart at .* read again after 55 s of failed reads \(1 workspaces\)$/);
    assert.deepEqual([p.counters().usingDefaults, p.counters().loads], [false, 2]);
  });

  test('a reload failing when the profiles are already as old as maxStale: the default at once, one warning', async () => {
    await table('t_dropped', [['acme', 4]]);
    const clock = manualClock();
    const log = logger();
    const p = profiles({ table: 't_dropped', refresh: 5, maxStale: 0, defaultShare: 2, clock, logger: log });
    assert.equal(await p.share('acme'), 4);
    await db.sql('DROP TABLE t_dropped');
    for (let i = 0; i < 4; i++) {
      clock.advance(5);
      assert.equal(await p.share('acme'), 2);
    }
    assert.deepEqual(log.levels(), ['warn']);
    assert.match(log.lines[0].message, /failed \(relation "t_dropped" does not exist \(SQLSTATE 42P01\)\), and the profiles loaded 5 s ago are as old as maxStale \(0 s\): every workspace gets the default share 2/);
    await table('t_dropped', [['acme', 3]]);
    clock.advance(5);
    assert.equal(await p.share('acme'), 3);
    assert.deepEqual(log.levels(), ['warn', 'info']);
  });

  test('a table or a column that does not exist, or a table svc may not read: the default, logged once', async () => {
    await table('t_columns', [['acme', 4]]);
    await db.sql('CREATE TABLE t_secret (workspace_id text, bulk_share bigint)');
    for (const [options, says] of [
      [{ table: 'no_such_table' }, 'relation "no_such_table" does not exist (SQLSTATE 42P01)'],
      [{ table: 'no_schema.t_columns' }, 'relation "no_schema.t_columns" does not exist (SQLSTATE 42P01)'],
      [{ table: 't_columns', workspaceColumn: 'tenant' }, 'column "tenant" does not exist (SQLSTATE 42703)'],
      [{ table: 't_columns', shareColumn: 'Bulk_Share' }, 'column "Bulk_Share" does not exist (SQLSTATE 42703)'],
      [{ table: 't_secret' }, 'permission denied for table t_secret (SQLSTATE 42501)'],
    ]) {
      const clock = manualClock();
      const log = logger();
      const p = profiles({ ...options, refresh: 1, defaultShare: 5, clock, logger: log });
      for (let i = 0; i < 5; i++) {
        assert.equal(await p.share('acme'), 5);
        clock.advance(1);
      }
      assert.deepEqual([log.levels(), p.counters().failures, p.counters().usingDefaults], [['warn'], 5, true], JSON.stringify(options));
      assert.ok(log.lines[0].message.includes(`failed (${says}): every workspace gets the default share 5 until it can be read`), log.lines[0].message);
    }
  });

  test('schema-qualified and mixed-case names are quoted as identifiers', async () => {
    await db.sql(`CREATE SCHEMA tenancy; GRANT USAGE ON SCHEMA tenancy TO svc;
      CREATE TABLE tenancy."Policies" ("Workspace" text, "Share" int); GRANT SELECT ON tenancy."Policies" TO svc;
      INSERT INTO tenancy."Policies" VALUES ('acme', 9)`);
    const log = logger();
    const p = profiles({ table: 'tenancy.Policies', workspaceColumn: 'Workspace', shareColumn: 'Share', logger: log });
    assert.equal(await p.share('acme'), 9);
    assert.deepEqual(log.lines, []);
  });

  test('the session is read-only: a write hidden in the table (a view) fails, and the default is used', async () => {
    await table('t_base', [['acme', 4]]);
    await db.sql(`CREATE TABLE t_writes (at timestamptz);
      CREATE FUNCTION note_read() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'INSERT INTO t_writes VALUES (now()) RETURNING 0';
      CREATE VIEW v_writing AS SELECT workspace_id, bulk_share + note_read() AS bulk_share FROM t_base;
      GRANT SELECT ON v_writing TO svc`);
    // The same query in an ordinary session writes: only the read-only session stops it.
    assert.deepEqual(await db.sql('SELECT workspace_id, bulk_share::int AS share FROM v_writing'), [{ workspace_id: 'acme', share: 4 }]);
    const log = logger();
    const p = profiles({ table: 'v_writing', defaultShare: 2, logger: log });
    assert.equal(await p.share('acme'), 2);
    assert.match(log.lines[0].message, /failed \(cannot execute INSERT in a read-only transaction \(SQLSTATE 25006\)\)/);
    assert.deepEqual(await db.sql('SELECT count(*)::int AS n FROM t_writes'), [{ n: 1 }]);
  });

  test('a statement that outlasts the timeout fails in time, and the default is used', async () => {
    await table('t_slow_base', [['acme', 4]]);
    await db.sql(`CREATE VIEW v_slow AS SELECT workspace_id, bulk_share FROM t_slow_base, pg_sleep(5);
      GRANT SELECT ON v_slow TO svc`);
    const log = logger();
    const p = profiles({ table: 'v_slow', timeout: 0.5, logger: log });
    const started = performance.now();
    assert.equal(await p.share('acme'), 1);
    assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
    assert.match(log.lines[0].message, /failed \((canceling statement due to statement timeout \(SQLSTATE 57014\)|Query read timeout)\)/);
  });

  test('the password is used and never logged: a wrong one fails, in either DSN form', async () => {
    await table('t_auth', [['acme', 4]]);
    const keywords = (password) => `host=127.0.0.1 port=${db.port} dbname=postgres user=svc password='${password}'`;
    const good = profiles({ dsn: keywords(PASSWORD), table: 't_auth' });
    assert.equal(await good.share('acme'), 4);
    assert.equal(good.source, `t_auth at host=127.0.0.1 port=${db.port} dbname=postgres user=svc password=***`);

    for (const dsn of [db.url('svc', `wrong-${PASSWORD}`), keywords(`wrong-${PASSWORD}`)]) {
      const log = logger();
      const p = profiles({ dsn, table: 't_auth', logger: log });
      assert.equal(await p.share('acme'), 1);
      assert.equal(log.lines.length, 1);
      assert.match(log.lines[0].message, /failed \(password authentication failed for user "svc" \(SQLSTATE 28P01\)\)/);
      assert.ok(/svc:\*\*\*@|password=\*\*\*/.test(log.lines[0].message), log.lines[0].message);
    }
  });

  test('close() waits for a reload in flight; share() after it rejects', async () => {
    await table('t_close', [['acme', 4]]);
    const p = profiles({ table: 't_close' });
    const pending = p.share('acme');
    await p.close();
    assert.equal(p.counters().loads, 1);
    assert.equal(await pending, 4);
    await assert.rejects(p.share('acme'), /after close/);
  });

  test('no log line of this suite carries the password', () => {
    assert.ok(lines.length >= 15, `only ${lines.length} lines logged`);
    assert.deepEqual(lines.filter((l) => l.includes(PASSWORD) || l.includes(encodeURIComponent(PASSWORD))), []);
  });
});
