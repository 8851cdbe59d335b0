// The shared conformance vectors through the package (admission/, planner/: the shipped
// capacity-admission-1.0.0.wasm) and through the policy world transpiled from
// target/policies/capacity-policy-1.0.0.wasm (decision/). Every result must equal `expected`
// exactly: the Rust host (tests/tests/conformance_vectors.rs) and the Python package check the
// same files, so the three runtimes agree case by case.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plan, resolveBudget, resolveBudgets } from '../index.js';
import { decision } from '../gen/policy/policy.js';
import { camelKeys, cases, differences, fromJco, schema, serdeAdmission, toJco } from './vectors.mjs';

function check(expected, actual) {
  const diffs = differences(expected, actual);
  assert.equal(diffs.length, 0, diffs.join('\n'));
}

const admission = cases('admission');
const planner = cases('planner');
const decisions = cases('decision');

for (const [id, c] of admission) {
  test(id, () => check(c.expected, serdeAdmission(resolveBudget(camelKeys(c.input)))));
}

test('admission vectors in one resolveBudgets call', () => {
  check(admission.map(([, c]) => c.expected), serdeAdmission(resolveBudgets(admission.map(([, c]) => camelKeys(c.input)))));
});

for (const [id, c] of planner) {
  test(id, () => check(c.expected, serdeAdmission(plan(camelKeys(c.input)))));
}

for (const [id, c] of decisions) {
  test(id, () => check(c.expected, fromJco(schema.decision, decision.decide(toJco(schema.decisionInput, c.input)))));
}

test('the vectors cover every outcome', () => {
  const seen = new Set([
    ...admission.map(([, c]) => c.expected.outcome),
    ...planner.flatMap(([, c]) => c.expected.waiting.map((w) => w.outcome)),
  ]);
  for (const o of ['admit', 'wait-cluster-full', 'wait-service-full', 'wait-workspace-full', 'wait-capacity-zero']) {
    assert.ok(seen.has(o), `no vector expects ${o}`);
  }
});
