// readBulkFactor: the published state document from a file, Redis and SSM (real servers when
// redis-server and moto_server are installed), and every failed read falling back to full
// capacity through the component (docs/behaviour.md §7 and §9).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseDocument, readBulkFactor, resolveBudget } from '../index.js';

const DOCUMENT = {
  state: 'constrained', factors: { bulk: 0.5, heavy: 0.7, write: 1, read: 1 }, decided_at: '2026-10-20T14:30:00Z',
  policy: { name: 'capacity-policy', version: '1.0.0', digest: 'ab'.repeat(32) }, pinned: false, cause: 'escalate', sequence: 42,
};
const dir = mkdtempSync(join(tmpdir(), 'capacity-state-'));
const admitWith = (reading) => resolveBudget({ factor: reading.factor, clusterBatches: 10, serviceBatches: 6, share: 3 });

test('a file gives the bulk factor and the document identity', async () => {
  const path = join(dir, 'state.json');
  writeFileSync(path, JSON.stringify(DOCUMENT));
  for (const source of [path, `file:${path}`]) {
    const r = await readBulkFactor(source);
    assert.deepEqual([r.factor, r.error, r.state, r.sequence, r.decidedAt], [0.5, undefined, 'constrained', 42, '2026-10-20T14:30:00Z']);
    assert.equal(admitWith(r).serviceBudget, 3);
  }
});

test('an unreadable document is a failed read and full capacity', async () => {
  for (const [content, why] of [
    [undefined, 'ENOENT'], ['{not json', 'not a JSON state document'], ['[1, 2]', 'not a JSON object'],
    [JSON.stringify({ ...DOCUMENT, factors: { heavy: 0.5 } }), 'no numeric factors.bulk'],
    [JSON.stringify({ ...DOCUMENT, factors: { bulk: '0.5' } }), 'no numeric factors.bulk'],
    [JSON.stringify({ ...DOCUMENT, factors: null }), 'no numeric factors.bulk'],
  ]) {
    const path = join(dir, `bad-${Math.random()}.json`);
    if (content !== undefined) writeFileSync(path, content);
    const r = await readBulkFactor(path);
    assert.equal(r.factor, undefined);
    assert.ok(r.error.includes(why), `${r.error} should say ${why}`);
    const result = admitWith(r);
    assert.deepEqual([result.factorReadFailed, result.factorUsed, result.admit], [true, 1, 3]);
  }
});

test('an out-of-range factor is passed on and the component rejects it', () => {
  const r = parseDocument(JSON.stringify({ ...DOCUMENT, factors: { bulk: 1.5 } }));
  assert.equal(r.factor, 1.5);
  assert.equal(admitWith(r).factorReadFailed, true);
});

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, proc) {
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error('the server exited');
    const ok = await new Promise((resolve) => {
      const c = connect(port, '127.0.0.1', () => { c.end(); resolve(true); }).on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

describe('redis', { skip: !has('redis-server') && 'redis-server is not installed' }, () => {
  let proc;
  let url;
  before(async () => {
    const port = await freePort();
    proc = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    await waitForPort(port, proc);
    url = `redis://127.0.0.1:${port}/0`;
    const { createClient } = await import('redis');
    const client = createClient({ url });
    await client.connect();
    await client.set('capacity:state', JSON.stringify(DOCUMENT), { EX: 300 });
    await client.set('other:key', JSON.stringify({ ...DOCUMENT, factors: { bulk: 0.25 } }));
    client.destroy();
  });
  after(() => proc?.kill());

  test('gives the factor under the sentinel key or another', async () => {
    assert.equal((await readBulkFactor(url)).factor, 0.5);
    assert.equal((await readBulkFactor(url, { key: 'other:key' })).factor, 0.25);
  });

  test('an absent key is a failed read', async () => {
    const r = await readBulkFactor(url, { key: 'capacity:absent' });
    assert.equal(r.factor, undefined);
    assert.match(r.error, /no key capacity:absent/);
  });
});

test('an unreachable redis is a failed read within the timeout', async () => {
  const started = Date.now();
  const r = await readBulkFactor(`redis://127.0.0.1:${await freePort()}/0`, { timeoutMs: 500 });
  assert.equal(r.factor, undefined);
  assert.match(r.error, /ECONNREFUSED|timed out/);
  assert.ok(Date.now() - started < 5000);
});

describe('ssm', { skip: !has('moto_server') && 'moto_server is not installed' }, () => {
  let proc;
  const saved = { ...process.env };
  before(async () => {
    const port = await freePort();
    proc = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    await waitForPort(port, proc);
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SSM: `http://127.0.0.1:${port}`, AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing', AWS_REGION: 'eu-west-1',
    });
    const { SSMClient, PutParameterCommand } = await import('@aws-sdk/client-ssm');
    const client = new SSMClient({});
    await client.send(new PutParameterCommand({ Name: '/capacity/state', Value: JSON.stringify(DOCUMENT), Type: 'String', Overwrite: true }));
    client.destroy();
  });
  after(() => {
    proc?.kill();
    process.env = saved;
  });

  test('a parameter gives the factor', async () => {
    const r = await readBulkFactor('ssm:/capacity/state', { timeoutMs: 5000 });
    assert.deepEqual([r.factor, r.sequence, r.error], [0.5, 42, undefined]);
  });

  test('a missing parameter is a failed read', async () => {
    const r = await readBulkFactor('ssm:/capacity/none', { timeoutMs: 5000 });
    assert.equal(r.factor, undefined);
    assert.match(r.error, /not found/);
    assert.match((await readBulkFactor('ssm:')).error, /needs a parameter name/);
  });
});
