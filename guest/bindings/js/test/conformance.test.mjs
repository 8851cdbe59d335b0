// The shared conformance vectors through the package (admission/, planner/, factor-choice/: the
// shipped capacity-admission-3.2.0.wasm) and through the policy world transpiled from
// target/policies/capacity-policy-1.0.0.wasm (decision/). Every result must equal `expected`
// exactly: the Rust host (tests/tests/conformance_vectors.rs) and the Python package check the
// same files, so the three runtimes agree case by case.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseFactor, plan, resolveBudget, resolveBudgets } from '../index.js';
import { factorChoice } from '../gen/admission/admission.js';
import { decision } from '../gen/policy/policy.js';
import { camelKeys, cases, differences, fromJco, schema, serdeAdmission, toJco } from './vectors.mjs';

function check(expected, actual) {
  const diffs = differences(expected, actual);
  assert.equal(diffs.length, 0, diffs.join('\n'));
}

const admission = cases('admission');
const planner = cases('planner');
const decisions = cases('decision');
const choices = cases('factor-choice');

/** The package's chooseFactor on a vector's input, its answer in the vector's serde form. */
function chooseThroughPackage(input) {
  const { cache, parameter, now, maxAgeS, maxSkewS } = toJco(schema.factorChoiceRequest, input);
  const r = chooseFactor(cache, parameter, { now, maxAge: maxAgeS, maxSkew: maxSkewS });
  assert.ok(Object.values(r).every((v) => typeof v !== 'bigint'), 'no BigInt leaves chooseFactor');
  return {
    factor: r.factor ?? null, source: r.source ?? null, state: r.state ?? null, sequence: r.sequence ?? null,
    decided_at: r.decidedAt ?? null, age_s: r.ageS ?? null, cache: r.cache, parameter: r.parameter, reason: r.error ?? null,
  };
}

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

for (const [id, c] of choices) {
  test(id, () => {
    check(c.expected, chooseThroughPackage(c.input));
    check(c.expected, fromJco(schema.factorChoice, factorChoice.chooseFactor(toJco(schema.factorChoiceRequest, c.input))));
  });
}

test('the factor-choice vectors cover every verdict and both sources', () => {
  const seen = new Set(choices.flatMap(([, c]) => [c.expected.cache, c.expected.parameter]));
  for (const v of ['not-read', 'usable', 'read-failed', 'unreadable', 'out-of-range', 'stale', 'from-the-future']) {
    assert.ok(seen.has(v), `no vector expects the verdict ${v}`);
  }
  const sources = new Set(choices.map(([, c]) => c.expected.source));
  assert.deepEqual([...sources].sort(), ['cache', 'parameter', null].sort());
});

test('the vectors cover every outcome', () => {
  const seen = new Set([
    ...admission.map(([, c]) => c.expected.outcome),
    ...planner.flatMap(([, c]) => c.expected.waiting.map((w) => w.outcome)),
  ]);
  for (const o of ['admit', 'wait-cluster-full', 'wait-service-full', 'wait-workspace-full', 'wait-capacity-zero']) {
    assert.ok(seen.has(o), `no vector expects ${o}`);
  }
});
