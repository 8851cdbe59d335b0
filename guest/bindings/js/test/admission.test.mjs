// The package's own behaviour: docs/behaviour.md §9 through the wrapper, input checks, the batch
// export, and no BigInt at the surface.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AdmissionOutcome, VERSION, plan, raw, resolveBudget, resolveBudgets } from '../index.js';

const request = (over = {}) => ({ factor: 1, clusterBatches: 10, serviceBatches: 6, share: 3, ...over });

test('half factor halves the budgets and keeps a workspace below the service', () => {
  const r = resolveBudget(request({ factor: 0.5, clusterInFlight: 1, serviceInFlight: 1 }));
  assert.deepEqual(r, {
    admit: 2, outcome: AdmissionOutcome.ADMIT, factorUsed: 0.5, factorReadFailed: false,
    clusterBudget: 5, serviceBudget: 3, workspaceCeiling: 2,
  });
  assert.equal(VERSION, '3.2.0');
});

test('an absent factor (null or undefined) uses full capacity and reports the failed read', () => {
  for (const factor of [null, undefined]) {
    const r = resolveBudget(request({ factor }));
    assert.equal(r.factorReadFailed, true);
    assert.equal(r.factorUsed, 1);
    assert.equal(r.admit, 3);
  }
});

test('NaN, infinities and factors outside [0, 1] are failed reads, not errors', () => {
  for (const factor of [NaN, Infinity, -0.1, 1.5]) {
    assert.equal(resolveBudget(request({ factor })).factorReadFailed, true, String(factor));
  }
});

test('a zero factor is a wait, not an error', () => {
  const r = resolveBudget(request({ factor: 0 }));
  assert.equal(r.outcome, 'wait-capacity-zero');
  assert.equal(r.admit, 0);
  assert.equal(r.factorReadFailed, false);
});

test('counts outside u32 and non-number factors are refused before the call', () => {
  for (const [over, error, field] of [
    [{ share: -1 }, RangeError, 'share'],
    [{ share: 2 ** 32 }, RangeError, 'share'],
    [{ clusterBatches: 1.5 }, RangeError, 'clusterBatches'],
    [{ serviceInFlight: '1' }, RangeError, 'serviceInFlight'],
    [{ factor: '0.5' }, TypeError, 'factor'],
  ]) {
    assert.throws(() => resolveBudget(request(over)), (e) => e instanceof error && e.message.includes(field), JSON.stringify(over));
  }
  assert.throws(() => resolveBudgets([request(), request({ share: -2 })]), /requests\[1\]\.share/);
});

test('the batch equals one call per request, in order', () => {
  const requests = [];
  for (let f = 0; f <= 10; f++) for (let w = 0; w < 4; w++) requests.push(request({ factor: f / 10, workspaceInFlight: w }));
  assert.deepEqual(resolveBudgets(requests), requests.map(resolveBudget));
  assert.deepEqual(resolveBudgets([]), []);
  assert.deepEqual(resolveBudgets(new Set(requests.slice(0, 3))), requests.slice(0, 3).map(resolveBudget));
});

test('plan admits round robin, says why the rest wait, and takes numbers or BigInts as instants', () => {
  const queue = [
    { id: 'a1', workspace: 'acme', enqueuedAt: 100 }, { id: 'a2', workspace: 'acme', enqueuedAt: 101n },
    { id: 'a3', workspace: 'acme', enqueuedAt: 102 }, { id: 'b1', workspace: 'beta', enqueuedAt: 105 },
    { id: 'x1', workspace: 'nobody', enqueuedAt: 50 },
  ];
  const p = plan({
    factor: 1, clusterBatches: 20, serviceBatches: 3,
    workspaces: [{ workspace: 'acme', share: 5 }, { workspace: 'beta', share: 5 }], queue,
  });
  assert.deepEqual(p.admitted, ['a1', 'b1', 'a2']);
  assert.deepEqual(p.waiting, [{ id: 'a3', outcome: 'wait-service-full' }, { id: 'x1', outcome: 'wait-service-full' }]);
  assert.doesNotThrow(() => JSON.stringify(p));
});

test('plan refuses an instant that is not a safe integer', () => {
  const base = { factor: 1, clusterBatches: 2, serviceBatches: 2 };
  assert.throws(() => plan({ ...base, queue: [{ id: 'a', workspace: 'w', enqueuedAt: 1.5 }] }), /queue\[0\]\.enqueuedAt/);
  assert.throws(() => plan({ ...base, queue: [{ id: 'a', workspace: 'w', enqueuedAt: 2 ** 60 }] }), /safe integer/);
  assert.throws(() => plan({ ...base, queue: [{ id: 'a', workspace: 'w', enqueuedAt: 2n ** 63n }] }), /outside s64/);
});

test('no BigInt crosses the wrapper: results are plain JSON', () => {
  const r = resolveBudget(request());
  assert.doesNotThrow(() => JSON.stringify(r));
  assert.equal(typeof raw.resolveBudget, 'function');
});
