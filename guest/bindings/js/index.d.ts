/**
 * Job admission for Node services (docs/behaviour.md §9), computed by the capacity sentinel's own
 * WebAssembly component (`capacity-admission-1.0.0.wasm`, transpiled with jco). Plain numbers
 * throughout: no BigInt reaches or leaves this API.
 */

/** The version of the admission rules and of the component inside. */
export declare const VERSION: '1.0.0';

/** Admit, or the first limit that is full (cluster, service, workspace), or no capacity. */
export type AdmissionOutcome =
  | 'admit'
  | 'wait-cluster-full'
  | 'wait-service-full'
  | 'wait-workspace-full'
  /** The bulk factor is 0: admit nothing (a wait, not an error). */
  | 'wait-capacity-zero';

export declare const AdmissionOutcome: Readonly<{
  ADMIT: 'admit';
  WAIT_CLUSTER_FULL: 'wait-cluster-full';
  WAIT_SERVICE_FULL: 'wait-service-full';
  WAIT_WORKSPACE_FULL: 'wait-workspace-full';
  WAIT_CAPACITY_ZERO: 'wait-capacity-zero';
}>;

/** What one service asks before admitting bulk work. Counts are integers in u32 (a RangeError
 * otherwise); the in-flight counts default to 0. */
export interface AdmissionRequest {
  /** The published bulk factor; null or undefined when it could not be read (the component then
   * uses full capacity and reports `factorReadFailed`; NaN or outside [0, 1] likewise). */
  factor?: number | null;
  clusterBatches: number;
  serviceBatches: number;
  /** The workspace profile's share. */
  share: number;
  clusterInFlight?: number;
  serviceInFlight?: number;
  workspaceInFlight?: number;
}

export interface AdmissionResult {
  /** Batches that may start now (0 when waiting). */
  admit: number;
  outcome: AdmissionOutcome;
  /** The factor the budgets were computed with. */
  factorUsed: number;
  /** The factor was absent or invalid and full capacity was used. */
  factorReadFailed: boolean;
  clusterBudget: number;
  serviceBudget: number;
  workspaceCeiling: number;
}

/** One waiting batch. */
export interface QueuedBatch {
  id: string;
  workspace: string;
  /** Unix seconds: a safe integer (or a BigInt for the full s64 range). */
  enqueuedAt: number | bigint;
}

/** One workspace's profile and load. A queued workspace without one admits nothing. */
export interface WorkspaceLoad {
  workspace: string;
  share: number;
  inFlight?: number;
}

export interface PlanRequest {
  factor?: number | null;
  clusterBatches: number;
  serviceBatches: number;
  clusterInFlight?: number;
  serviceInFlight?: number;
  workspaces?: WorkspaceLoad[];
  queue?: QueuedBatch[];
}

/** A batch left waiting and the limit that holds it. */
export interface WaitingBatch {
  id: string;
  outcome: AdmissionOutcome;
}

export interface AdmissionPlan {
  /** Batch ids to start, in admission order. */
  admitted: string[];
  /** Every other queued batch, in queue order. */
  waiting: WaitingBatch[];
  factorUsed: number;
  factorReadFailed: boolean;
  clusterBudget: number;
  serviceBudget: number;
}

/** How many batches one workspace may start now. */
export declare function resolveBudget(request: AdmissionRequest): AdmissionResult;

/** `resolveBudget` for each request, in order, in one call into the component. */
export declare function resolveBudgets(requests: Iterable<AdmissionRequest>): AdmissionResult[];

/** Admits a queue fairly: round robin across workspaces ordered by their oldest waiting batch,
 * each within its ceiling, all within the service and cluster room. Deterministic. */
export declare function plan(request: PlanRequest): AdmissionPlan;

/** The outcome of one read of the published state document. */
export interface FactorReading {
  /** `factors.bulk` as published; undefined when it could not be read. */
  factor: number | undefined;
  /** Why the read failed (diagnostic only); undefined when it succeeded. */
  error: string | undefined;
  source: string;
  state: string | undefined;
  sequence: number | undefined;
  decidedAt: string | undefined;
}

/** The Redis key the sentinel publishes to unless configured otherwise. */
export declare const DEFAULT_REDIS_KEY: 'capacity:state';

/**
 * Reads `factors.bulk` from the sentinel's published state document. `source` is a
 * `redis://`/`rediss://` URL (needs the `redis` package), `ssm:NAME` for an AWS SSM parameter
 * (needs `@aws-sdk/client-ssm`), or a file path (optionally `file:PATH`). Never rejects for a
 * failed read: `factor` is then undefined and `error` says why.
 */
export declare function readBulkFactor(
  source: string,
  options?: { key?: string; timeoutMs?: number },
): Promise<FactorReading>;

/** `factors.bulk` of one state document. */
export declare function parseDocument(text: string | Uint8Array, source?: string): FactorReading;

/** The transpiled component itself, in jco's conventions (BigInt instants, undefined options). */
export declare const raw: typeof import('./gen/admission/interfaces/capacity-sentinel-admission.js');
