// WorkspaceProfiles without a database server: its settings (refused in the constructor, naming
// the setting), both DSN forms and their redaction, and reads that fail before any SQL (nothing
// listens; a server that accepts and never answers), which give the default, logged once and
// retried once per refresh. test/profiles.test.mjs does the rest against a real PostgreSQL.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { DEFAULT_PROFILES_TABLE, WorkspaceProfiles } from '../index.js';
import { parseDsn, redactSecrets } from '../dsn.js';
import { capturingLogger, freePort } from './servers.mjs';

const DSN = 'postgresql://svc:s3cret-pw@127.0.0.1:5432/app';
const quiet = { warn() {}, error() {}, info() {} };

test('settings are checked in the constructor, and the errors name the setting', () => {
  for (const [options, error, says] of [
    [{}, TypeError, 'dsn: expected a postgresql:// URL or key=value pairs'],
    [{ dsn: '' }, TypeError, 'dsn:'],
    [{ dsn: 42 }, TypeError, 'dsn:'],
    [{ dsn: 'db.example.com:5432' }, TypeError, 'dsn:'],
    [{ dsn: 'postgresql://svc:s3cret-pw@[bad/app' }, TypeError, 'dsn: postgresql://svc:***@[bad/app is not a valid PostgreSQL URL'],
    [{ dsn: 'host=db bogus=1' }, TypeError, 'dsn: unknown keyword bogus'],
    [{ dsn: 'host=db port=five' }, TypeError, 'dsn: port must be a number'],
    [{ dsn: DSN, table: 'x; drop' }, TypeError, 'table: expected name or schema.name'],
    [{ dsn: DSN, table: 'a.b.c' }, TypeError, 'table:'],
    [{ dsn: DSN, table: '1table' }, TypeError, 'table:'],
    [{ dsn: DSN, table: '' }, TypeError, 'table:'],
    [{ dsn: DSN, table: 'policies"; --' }, TypeError, 'table:'],
    [{ dsn: DSN, workspaceColumn: 'a-b' }, TypeError, 'workspaceColumn: expected a name'],
    [{ dsn: DSN, shareColumn: 's.share' }, TypeError, 'shareColumn:'],
    [{ dsn: DSN, defaultShare: 0 }, RangeError, 'defaultShare'],
    [{ dsn: DSN, defaultShare: 1.5 }, RangeError, 'defaultShare'],
    [{ dsn: DSN, defaultShare: 2 ** 32 }, RangeError, 'defaultShare'],
    [{ dsn: DSN, defaultShare: '1' }, TypeError, 'defaultShare'],
    [{ dsn: DSN, refresh: 0 }, RangeError, 'refresh'],
    [{ dsn: DSN, refresh: NaN }, RangeError, 'refresh'],
    [{ dsn: DSN, maxStale: -1 }, RangeError, 'maxStale'],
    [{ dsn: DSN, maxStale: Infinity }, RangeError, 'maxStale'],
    [{ dsn: DSN, timeout: 0 }, RangeError, 'timeout'],
    [{ dsn: DSN, timeout: 1e9 }, RangeError, 'timeout'],
    [{ dsn: DSN, logger: { warn() {} } }, TypeError, 'logger'],
    [{ dsn: DSN, clock: 5 }, TypeError, 'clock'],
    [{ dsn: DSN, default_share: 2 }, TypeError, 'unknown option default_share'],
  ]) {
    assert.throws(() => new WorkspaceProfiles(options), (e) => e instanceof error && e.message.includes(says)
      && !e.message.includes('s3cret'), `${JSON.stringify(options)} should throw a ${error.name} saying ${says}`);
  }
  const p = new WorkspaceProfiles({ dsn: DSN });
  assert.deepEqual(
    [p.table, p.workspaceColumn, p.shareColumn, p.defaultShare, p.refresh, p.maxStale, p.timeout, p.source],
    [DEFAULT_PROFILES_TABLE, 'workspace_id', 'bulk_share', 1, 60, 600, 5, 'tenant_workload_policies at postgresql://svc:***@127.0.0.1:5432/app'],
  );
  const q = new WorkspaceProfiles({ dsn: DSN, table: 'tenancy.Policies', maxStale: 0, refresh: 0.5, timeout: 0.1, defaultShare: 4294967295 });
  assert.deepEqual([q.table, q.maxStale, q.refresh, q.timeout, q.defaultShare], ['tenancy.Policies', 0, 0.5, 0.1, 4294967295]);
  assert.ok(Object.isFrozen(q));
});

test('both DSN forms become one URL for pg; connection options are kept apart; passwords are found', () => {
  assert.deepEqual(parseDsn('postgresql://svc:p%40ss@db:5432/app?sslmode=disable&options=-c%20search_path%3Dx'), {
    connectionString: 'postgresql://svc:p%40ss@db:5432/app?sslmode=disable', options: '-c search_path=x', secrets: ['p@ss'],
    label: 'postgresql://svc:***@db:5432/app?sslmode=disable&options=-c%20search_path%3Dx',
  });
  assert.deepEqual(parseDsn("host=db port=5433 dbname='my app' user=svc password='a b\\'c' options='-c x=1' application_name=svc1"), {
    connectionString: "postgresql://svc:a%20b'c@db:5433/my%20app?application_name=svc1", options: '-c x=1', secrets: ["a b'c"],
    label: "host=db port=5433 dbname='my app' user=svc password=*** options='-c x=1' application_name=svc1",
  });
  assert.equal(parseDsn('host=/run/postgresql port=5433 user=svc dbname=app').connectionString,
    'postgresql://svc@/app?host=%2Frun%2Fpostgresql&port=5433');
  assert.equal(parseDsn('dbname=app').connectionString, 'postgresql:///app');
  assert.deepEqual(parseDsn('postgres://u@h/db?password=zz').secrets, ['zz']);
  assert.deepEqual(parseDsn('postgres://h/db').secrets, []);
});

test('redaction hides URL passwords, password=... pairs and the known secrets', () => {
  assert.equal(redactSecrets('postgresql://svc:s3cret@db/app and redis://:pw@cache:6379'), 'postgresql://svc:***@db/app and redis://:***@cache:6379');
  assert.equal(redactSecrets("host=db password='a b' user=x, ?password=zz&sslmode=require"), 'host=db password=*** user=x, ?password=***&sslmode=require');
  assert.equal(redactSecrets('PGPASSWORD=hunter2'), 'PGPASSWORD=***');
  assert.equal(redactSecrets('failed: hunter2 echoed', ['hunter2']), 'failed: *** echoed');
  assert.equal(redactSecrets('postgresql://svc@db/app'), 'postgresql://svc@db/app');
});

test('nothing listening: the default at once, logged once, retried once per refresh', async () => {
  let now = 0;
  const logger = capturingLogger();
  const port = await freePort();
  const p = new WorkspaceProfiles({ dsn: `postgresql://svc:s3cret-pw@127.0.0.1:${port}/app`, defaultShare: 3, refresh: 10, logger, clock: () => now });
  for (let i = 0; i < 10; i++) assert.equal(await p.share('acme'), 3);
  assert.deepEqual(p.counters(), { loads: 0, failures: 1, rows: 0, skippedRows: 0, usingDefaults: true, ageS: undefined });
  now = 10;
  assert.equal(await p.share('acme'), 3);
  assert.equal(p.counters().failures, 2);
  assert.deepEqual(logger.levels(), ['warn']);
  assert.equal(logger.lines[0].message, `workspace profiles: reading tenant_workload_policies at postgresql://svc:***@127.0.0.1:${port}/app `
    + `failed (connect ECONNREFUSED 127.0.0.1:${port}): every workspace gets the default share 3 until it can be read`);
  await p.close();
  await assert.rejects(p.share('acme'), /share\(\) after close\(\)/);
});

test('a server that accepts and never answers: the connection times out within the timeout', async () => {
  const sockets = [];
  const silent = createServer((s) => sockets.push(s));
  await new Promise((r) => silent.listen(0, '127.0.0.1', r));
  try {
    const logger = capturingLogger();
    const p = new WorkspaceProfiles({ dsn: `host=127.0.0.1 port=${silent.address().port} user=svc password=s3cret-pw`, timeout: 0.3, logger });
    const started = performance.now();
    const shares = await Promise.all(Array.from({ length: 50 }, () => p.share('acme')));
    assert.ok(shares.every((s) => s === 1));
    assert.ok(performance.now() - started < 1500, `took ${performance.now() - started} ms`);
    assert.equal(sockets.length, 1, 'concurrent callers share one reload');
    assert.deepEqual(logger.levels(), ['warn']);
    assert.match(logger.lines[0].message, /failed \((timeout expired|Connection terminated[^)]*)\)/);
    assert.ok(!logger.lines[0].message.includes('s3cret'));
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});

test('a failing logger never fails a share', async () => {
  const logger = { warn() { throw new Error('log down'); }, error() {}, info() {} };
  const p = new WorkspaceProfiles({ dsn: `postgresql://svc@127.0.0.1:${await freePort()}/app`, logger });
  assert.equal(await p.share('acme'), 1);
  assert.equal(new WorkspaceProfiles({ dsn: DSN, logger: quiet }).counters().usingDefaults, true);
});
