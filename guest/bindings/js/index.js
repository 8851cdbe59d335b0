// Job admission for Node services, computed by the capacity sentinel's own component.
//
// The math of docs/behaviour.md §9 lives once, in the Rust guest; `npm run build` transpiles its
// build (capacity-admission-1.0.0.wasm, the admission-only world, no imports) with `jco transpile`
// into gen/admission/, which this module wraps:
// - plain numbers everywhere: the one s64 of the admission API (`enqueuedAt`, unix seconds) is
//   accepted as a number (a safe integer) or a BigInt and converted here, so callers never see
//   a BigInt;
// - a factor of `null` means "could not be read" like `undefined` (jco's `option<f64>`), and the
//   component then uses full capacity and reports `factorReadFailed`;
// - counts are checked (integers in u32) before the call; jco's `--strict` checks them again.
// Types and documentation: index.d.ts.
import { admission } from './gen/admission/admission.js';

export { readBulkFactor, parseDocument, DEFAULT_REDIS_KEY } from './state.js';

/** The version of the admission rules and of the component inside. */
export const VERSION = '1.0.0';

/** The outcomes, as the WIT names them. */
export const AdmissionOutcome = Object.freeze({
  ADMIT: 'admit',
  WAIT_CLUSTER_FULL: 'wait-cluster-full',
  WAIT_SERVICE_FULL: 'wait-service-full',
  WAIT_WORKSPACE_FULL: 'wait-workspace-full',
  WAIT_CAPACITY_ZERO: 'wait-capacity-zero',
});

const U32_MAX = 2 ** 32 - 1;
const S64_MIN = -(2n ** 63n);
const S64_MAX = 2n ** 63n - 1n;

function u32(name, value) {
  if (!Number.isInteger(value) || value < 0 || value > U32_MAX) {
    throw new RangeError(`${name}: expected an integer from 0 to ${U32_MAX}, got ${String(value)}`);
  }
  return value;
}

function count(name, value) {
  return value === undefined ? 0 : u32(name, value);
}

function factor(value) {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'number') {
    throw new TypeError(`factor: expected a number, null or undefined, got ${typeof value}`);
  }
  return value; // NaN or out of [0, 1]: the component falls back and reports it
}

function text(name, value) {
  if (typeof value !== 'string') throw new TypeError(`${name}: expected a string, got ${typeof value}`);
  return value;
}

function instant(name, value) {
  let big;
  if (typeof value === 'bigint') big = value;
  else if (Number.isSafeInteger(value)) big = BigInt(value);
  else throw new RangeError(`${name}: expected unix seconds as a safe integer or a BigInt, got ${String(value)}`);
  if (big < S64_MIN || big > S64_MAX) throw new RangeError(`${name}: ${big} is outside s64`);
  return big;
}

function requestIn(r, at = 'request') {
  if (r === null || typeof r !== 'object') throw new TypeError(`${at}: expected an object`);
  return {
    factor: factor(r.factor),
    clusterBatches: u32(`${at}.clusterBatches`, r.clusterBatches),
    serviceBatches: u32(`${at}.serviceBatches`, r.serviceBatches),
    share: u32(`${at}.share`, r.share),
    clusterInFlight: count(`${at}.clusterInFlight`, r.clusterInFlight),
    serviceInFlight: count(`${at}.serviceInFlight`, r.serviceInFlight),
    workspaceInFlight: count(`${at}.workspaceInFlight`, r.workspaceInFlight),
  };
}

function planIn(r) {
  if (r === null || typeof r !== 'object') throw new TypeError('request: expected an object');
  return {
    factor: factor(r.factor),
    clusterBatches: u32('clusterBatches', r.clusterBatches),
    serviceBatches: u32('serviceBatches', r.serviceBatches),
    clusterInFlight: count('clusterInFlight', r.clusterInFlight),
    serviceInFlight: count('serviceInFlight', r.serviceInFlight),
    workspaces: (r.workspaces ?? []).map((w, i) => ({
      workspace: text(`workspaces[${i}].workspace`, w.workspace),
      share: u32(`workspaces[${i}].share`, w.share),
      inFlight: count(`workspaces[${i}].inFlight`, w.inFlight),
    })),
    queue: (r.queue ?? []).map((b, i) => ({
      id: text(`queue[${i}].id`, b.id),
      workspace: text(`queue[${i}].workspace`, b.workspace),
      enqueuedAt: instant(`queue[${i}].enqueuedAt`, b.enqueuedAt),
    })),
  };
}

/** How many batches one workspace may start now (docs/behaviour.md §9). */
export function resolveBudget(request) {
  return admission.resolveBudget(requestIn(request));
}

/** `resolveBudget` for each request, in order, in one call into the component. */
export function resolveBudgets(requests) {
  return admission.resolveBudgets(Array.from(requests, (r, i) => requestIn(r, `requests[${i}]`)));
}

/** Admits a queue fairly: round robin across workspaces ordered by their oldest waiting batch,
 * each within its ceiling, all within the service and cluster room. */
export function plan(request) {
  return admission.plan(planIn(request));
}

/** The transpiled component itself (jco's conventions: BigInt instants, `undefined` options);
 * for benchmarks and tests. */
export const raw = admission;
