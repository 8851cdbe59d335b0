// BulkAdmission's own behaviour, without servers: its settings (refused in the constructor,
// naming the setting), the counts (refused before anything is read), and what it hands the
// component: the reader's factor, each workspace's share once, the in-flight counts. Its sources
// here are plain objects with read() and share() (the API takes any such object);
// test/bulk-admission-vectors.test.mjs runs it over a real Redis, SSM and PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BulkAdmission, plan, resolveBudget } from '../index.js';

/** A reader answering `factor`, and profiles answering `shares` (else 1), recording their calls. */
function sources(factor, shares = {}) {
  const calls = { read: 0, share: [] };
  return {
    calls,
    reader: { read: async () => { calls.read++; return Object.freeze({ factor, source: 'cache' }); } },
    profiles: { share: async (w) => { calls.share.push(w); return shares[w] ?? 1; } },
  };
}
const build = (s, over = {}) => new BulkAdmission({ reader: s.reader, profiles: s.profiles, clusterBatches: 10, serviceBatches: 6, ...over });

test('settings are checked in the constructor, and the errors name the setting', () => {
  const s = sources(1);
  for (const [over, error, says] of [
    [{ clusterBatches: 0 }, RangeError, 'clusterBatches'],
    [{ serviceBatches: 0 }, RangeError, 'serviceBatches'],
    [{ clusterBatches: 1.5 }, RangeError, 'clusterBatches'],
    [{ serviceBatches: 2 ** 32 }, RangeError, 'serviceBatches'],
    [{ clusterBatches: '40' }, TypeError, 'clusterBatches'],
    [{ serviceBatches: undefined }, TypeError, 'serviceBatches'],
    [{ reader: undefined }, TypeError, 'reader: expected a BulkFactorReader'],
    [{ reader: { fetch() {} } }, TypeError, 'reader:'],
    [{ profiles: { acme: 3 } }, TypeError, 'profiles: expected a WorkspaceProfiles'],
    [{ profiles: new Map([['acme', 3]]) }, TypeError, 'profiles:'],
    [{ admission: { resolveBudget } }, TypeError, 'admission:'],
    [{ cluster_batches: 40 }, TypeError, 'unknown option cluster_batches'],
  ]) {
    assert.throws(() => build(s, over), (e) => e instanceof error && e.message.includes(says), JSON.stringify(over));
  }
  assert.throws(() => new BulkAdmission(null), TypeError);
  const a = build(s, { clusterBatches: 40, serviceBatches: 12 });
  assert.deepEqual([a.clusterBatches, a.serviceBatches, Object.isFrozen(a)], [40, 12, true]);
});

test('admit: the reader\'s factor, the workspace\'s share and the counts, through the component', async () => {
  const s = sources(0.5, { acme: 3 });
  const a = build(s);
  const request = { factor: 0.5, clusterBatches: 10, serviceBatches: 6, share: 3, clusterInFlight: 1, serviceInFlight: 1, workspaceInFlight: 0 };
  assert.deepEqual(await a.admit('acme', { clusterInFlight: 1, serviceInFlight: 1 }), resolveBudget(request));
  assert.deepEqual(await a.admit('acme', { workspaceInFlight: 2 }), resolveBudget({ ...request, clusterInFlight: 0, serviceInFlight: 0, workspaceInFlight: 2 }));
  assert.deepEqual((await a.admit('acme', { workspaceInFlight: 2 })).outcome, 'wait-workspace-full');
  assert.deepEqual(await a.admit('other'), resolveBudget({ ...request, share: 1, clusterInFlight: 0, serviceInFlight: 0 }));
  assert.deepEqual([s.calls.read, s.calls.share], [4, ['acme', 'acme', 'acme', 'other']]);
});

test('admit: a failed factor read is full capacity, a zero factor a wait; the share 0 admits nothing', async () => {
  const failed = await build(sources(undefined)).admit('acme');
  assert.deepEqual([failed.factorReadFailed, failed.factorUsed, failed.admit], [true, 1, 1]);
  assert.equal((await build(sources(null, { acme: 3 })).admit('acme')).admit, 3);
  assert.equal((await build(sources(0, { acme: 3 })).admit('acme')).outcome, 'wait-capacity-zero');
  const zero = await build(sources(1, { acme: 0 })).admit('acme');
  assert.deepEqual([zero.admit, zero.outcome, zero.workspaceCeiling], [0, 'wait-workspace-full', 0]);
});

test('admit: bad counts, workspaces and readings are refused naming the field, before anything is read', async () => {
  const s = sources(1);
  const a = build(s);
  for (const [workspace, counts, error, says] of [
    ['acme', { clusterInFlight: -1 }, RangeError, 'clusterInFlight'],
    ['acme', { serviceInFlight: 1.5 }, RangeError, 'serviceInFlight'],
    ['acme', { workspaceInFlight: '2' }, RangeError, 'workspaceInFlight'],
    ['acme', { workspaceInFlight: 2 ** 32 }, RangeError, 'workspaceInFlight'],
    ['acme', { workspaceInflight: 2 }, TypeError, 'unknown count workspaceInflight'],
    ['acme', 3, TypeError, 'in-flight counts'],
    [42, {}, TypeError, 'workspace'],
  ]) {
    await assert.rejects(a.admit(workspace, counts), (e) => e instanceof error && e.message.includes(says), JSON.stringify(counts));
  }
  assert.deepEqual([s.calls.read, s.calls.share], [0, []]);
  const odd = new BulkAdmission({ reader: { read: async () => undefined }, profiles: s.profiles, clusterBatches: 1, serviceBatches: 1 });
  await assert.rejects(odd.admit('acme'), /reader\.read\(\) resolved to undefined/);
  const badShare = new BulkAdmission({ reader: s.reader, profiles: { share: () => -1 }, clusterBatches: 1, serviceBatches: 1 });
  await assert.rejects(badShare.admit('acme'), /the share of workspace "acme"/);
});

test('plan: every workspace of the queue once, with its share and its count in flight (object or Map)', async () => {
  const queue = [
    { id: 'a1', workspace: 'acme', enqueuedAt: 100 }, { id: 'b1', workspace: 'beta', enqueuedAt: 105 },
    { id: 'a2', workspace: 'acme', enqueuedAt: 101n }, { id: 'a3', workspace: 'acme', enqueuedAt: 102 },
    { id: 'c1', workspace: 'corp', enqueuedAt: 90 },
  ];
  const s = sources(1, { acme: 3, beta: 2, corp: 0 });
  const a = build(s, { clusterBatches: 20, serviceBatches: 10 });
  const expected = plan({
    factor: 1, clusterBatches: 20, serviceBatches: 10, clusterInFlight: 2, serviceInFlight: 1,
    workspaces: [{ workspace: 'acme', share: 3, inFlight: 1 }, { workspace: 'beta', share: 2, inFlight: 0 }, { workspace: 'corp', share: 0, inFlight: 0 }],
    queue,
  });
  assert.deepEqual(expected.admitted, ['a1', 'b1', 'a2']);
  for (const workspaceInFlight of [{ acme: 1, unrelated: 7 }, new Map([['acme', 1]])]) {
    assert.deepEqual(await a.plan(queue, { clusterInFlight: 2, serviceInFlight: 1, workspaceInFlight }), expected);
  }
  assert.deepEqual(s.calls.share, ['acme', 'beta', 'corp', 'acme', 'beta', 'corp']);
  const empty = await a.plan([]);
  assert.deepEqual([empty.admitted, empty.waiting, empty.serviceBudget], [[], [], 10]);
});

test('plan: bad queues and counts are refused naming the field', async () => {
  const s = sources(1);
  const a = build(s);
  for (const [queue, counts, says] of [
    [undefined, {}, 'queue: expected an array'],
    [[null], {}, 'queue[0]'],
    [[{ id: 'x', workspace: 7, enqueuedAt: 1 }], {}, 'queue[0].workspace'],
    [[{ id: 'x', workspace: 'w', enqueuedAt: 1 }], { workspaceInFlight: { w: -1 } }, 'workspaceInFlight["w"]'],
    [[{ id: 'x', workspace: 'w', enqueuedAt: 1 }], { workspaceInFlight: 3 }, 'workspaceInFlight: expected an object or a Map'],
    [[{ id: 'x', workspace: 'w', enqueuedAt: 1 }], { serviceInflight: 3 }, 'unknown count serviceInflight'],
  ]) {
    await assert.rejects(a.plan(queue, counts), (e) => e.message.includes(says), says);
  }
  assert.deepEqual([s.calls.read, s.calls.share], [0, []]);
  await assert.rejects(a.plan([{ id: 'x', workspace: 'w', enqueuedAt: 1.5 }]), /queue\[0\]\.enqueuedAt/);
});

test('close() closes the reader and the profiles when they can be closed', async () => {
  const closed = [];
  const s = sources(1);
  const a = build(s, { reader: { read: s.reader.read, close: async () => { closed.push('reader'); } } });
  await a.close();
  assert.deepEqual(closed, ['reader']);
});
