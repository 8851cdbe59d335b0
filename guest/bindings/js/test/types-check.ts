// Compiled by `npm test` (tsc --noEmit): the declarations in index.d.ts describe the API a
// TypeScript service uses, and refuse the mistakes below.
import {
  AdmissionOutcome,
  plan,
  readBulkFactor,
  resolveBudget,
  resolveBudgets,
  type AdmissionPlan,
  type AdmissionResult,
  type FactorReading,
} from '../index.js';

export async function admit(): Promise<number> {
  const reading: FactorReading = await readBulkFactor('redis://cache:6379/0', { timeoutMs: 500 });
  const result: AdmissionResult = resolveBudget({
    factor: reading.factor, clusterBatches: 40, serviceBatches: 12, share: 4, workspaceInFlight: 1,
  });
  const outcome: 'admit' | `wait-${string}` = result.outcome;
  const many: AdmissionResult[] = resolveBudgets([{ factor: null, clusterBatches: 1, serviceBatches: 1, share: 1 }]);
  const p: AdmissionPlan = plan({
    factor: 0.5, clusterBatches: 4, serviceBatches: 4,
    queue: [{ id: 'b1', workspace: 'acme', enqueuedAt: 1792506600 }, { id: 'b2', workspace: 'acme', enqueuedAt: 1n }],
  });
  // @ts-expect-error share is required
  resolveBudget({ factor: 1, clusterBatches: 1, serviceBatches: 1 });
  // @ts-expect-error a factor is a number
  resolveBudget({ factor: '1', clusterBatches: 1, serviceBatches: 1, share: 1 });
  // @ts-expect-error outcomes are the WIT names
  const wrong: AdmissionResult['outcome'] = 'WaitClusterFull';
  void wrong;
  return result.outcome === AdmissionOutcome.ADMIT ? result.admit + many.length + p.admitted.length + outcome.length : 0;
}
