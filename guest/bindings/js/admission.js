// The admission component's functions (docs/behaviour.md §9) for Node: jco's transpiled export
// (gen/admission/) wrapped so that
// - plain numbers go in and out: the one s64 of the admission API (`enqueuedAt`, unix seconds) is
//   accepted as a number (a safe integer) or a BigInt and converted here, so callers never see
//   a BigInt;
// - a factor of `null` means "could not be read" like `undefined` (jco's `option<f64>`), and the
//   component then uses full capacity and reports `factorReadFailed`;
// - counts are checked (integers in u32) before the call; jco's `--strict` checks them again.
// index.js exports these; bulk-admission.js calls them for `BulkAdmission`.
import { admission } from './gen/admission/admission.js';
import { instant, text, u32 } from './checks.js';

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
