/**
 * Job admission for Node services (docs/behaviour.md §9), computed by the capacity sentinel's own
 * WebAssembly component (`capacity-admission-3.2.0.wasm`, transpiled with jco). Plain numbers
 * throughout: no BigInt reaches or leaves this API.
 */

/** The version of the admission rules and of the component inside. */
export declare const VERSION: '3.2.0';

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

/** What the factor choice made of one channel's read (docs/behaviour.md §9.1). */
export type ChannelVerdict =
  /** Not configured, or not read (the cache was already usable). */
  | 'not-read'
  /** Parsed, in range and fresh. */
  | 'usable'
  /** The read itself failed (no answer, refused, the key or parameter absent). */
  | 'read-failed'
  /** Not a JSON object with a numeric `factors.bulk` and an RFC 3339 `decided_at`. */
  | 'unreadable'
  /** `factors.bulk` is outside [0, 1]. */
  | 'out-of-range'
  /** `decided_at` is older than the maximum age. */
  | 'stale'
  /** `decided_at` is further ahead of the clock than the skew allowance. */
  | 'from-the-future'
  /** BulkFactorReader only: the document's `sequence` is lower than that of a fresh document
   * the reader already acted on (a late write of a sentinel that lost its lease). */
  | 'superseded';

export declare const ChannelVerdict: Readonly<{
  NOT_READ: 'not-read';
  USABLE: 'usable';
  READ_FAILED: 'read-failed';
  UNREADABLE: 'unreadable';
  OUT_OF_RANGE: 'out-of-range';
  STALE: 'stale';
  FROM_THE_FUTURE: 'from-the-future';
}>;

/** The sentinel's two channels: the Redis cache and the SSM parameter. */
export type Channel = 'cache' | 'parameter';

/** What one channel gave: its document, why the read failed, or nothing (undefined, null or
 * `{tag: 'not-read'}`: not configured or not read). jco's form of the WIT `channel-read`. */
export type ChannelRead =
  | { tag: 'document'; val: string }
  | { tag: 'failed'; val: string }
  | { tag: 'not-read' }
  | null
  | undefined;

/** Which published document a service acts on: the component's `choose-factor` answer for one
 * read of the channels. Plain numbers; undefined for what is absent. */
export interface FactorReading {
  /** The bulk factor to admit with; undefined when no document was usable (pass it on: the
   * component then uses full capacity and reports `factorReadFailed`). */
  factor: number | undefined;
  /** The channel the factor came from; from a `BulkFactorReader` also `'remembered'` (neither
   * channel gave a usable document, and the newest one it acted on is still fresh: that one,
   * re-aged); undefined without a factor. */
  source: Channel | 'remembered' | undefined;
  /** The chosen document's `state` and `sequence`. */
  state: string | undefined;
  sequence: number | undefined;
  /** The chosen document's `decided_at`, in unix seconds. */
  decidedAt: number | undefined;
  /** The same instant as a `Date` (an invalid `Date` beyond the range a `Date` holds). */
  decidedAtDate: Date | undefined;
  /** Its age when read, in seconds (negative when the sentinel's clock is ahead, within the
   * allowance). */
  ageS: number | undefined;
  /** Why a read channel was not used (`cache: ...; parameter: ...`); undefined when all is well. */
  error: string | undefined;
  /** What each channel's read was worth. */
  cache: ChannelVerdict;
  parameter: ChannelVerdict;
}

/**
 * The document to act on, from what each channel returned: the cache's when usable, else the
 * parameter's when usable, else none (full capacity). Pure: the caller reads the channels and
 * passes the time. `now` is unix seconds (a safe integer or a BigInt); `maxAge` and `maxSkew`
 * whole seconds in u32 (RangeError/TypeError otherwise, before the call).
 */
export declare function chooseFactor(
  cache: ChannelRead,
  parameter: ChannelRead,
  options: { now: number | bigint; maxAge: number; maxSkew: number },
): FactorReading;

export {
  BulkFactorReader, DEFAULT_CACHE_KEY, DEFAULT_MAX_AGE, DEFAULT_MAX_SKEW, DEFAULT_PARAMETER_REFRESH,
} from './reader.js';
export type { BulkFactorReaderOptions, ReaderCounters, ReaderLogger } from './reader.js';
import type { ReaderLogger } from './reader.js';

/** The table `WorkspaceProfiles` reads unless configured otherwise. */
export declare const DEFAULT_PROFILES_TABLE: 'tenant_workload_policies';

export interface WorkspaceProfilesOptions {
  /** The database: a `postgresql://` (or `postgres://`) URL, or libpq key=value pairs (`host=db
   * port=5432 dbname=app user=svc password='...'`). Required. Logs show it with the password as
   * `***`. */
  dsn: string;
  /** `name` or `schema.name` (letters, digits and _, not starting with a digit; quoted as an
   * identifier, so case matters); default `tenant_workload_policies`. */
  table?: string;
  /** The column of the workspace id (read as text); default `workspace_id`. */
  workspaceColumn?: string;
  /** The column of the share (a whole number from 0 to 2^32-1); default `bulk_share`. */
  shareColumn?: string;
  /** The share of a workspace without a usable row, and of every workspace while the profiles
   * cannot be read: an integer from 1 to 2^32-1; default 1. */
  defaultShare?: number;
  /** How long loaded profiles are used before the table is read again, and how long after a
   * failed read it is tried again, seconds (> 0); default 60. */
  refresh?: number;
  /** How long the last good profiles are kept while reads fail, seconds from their load (>= 0;
   * 0: not at all); default 600. */
  maxStale?: number;
  /** The bound of the connection and of the statement, seconds (> 0); default 5. */
  timeout?: number;
  /** Where trouble is logged, once per episode; default `console`. */
  logger?: ReaderLogger;
  /** The clock refresh and maxStale are measured by, seconds; default `performance.now() / 1000`. */
  clock?: () => number;
}

/** What a profiles source has done, for a service to export as metrics. */
export interface ProfilesCounters {
  /** Successful loads of the table, and failed ones. */
  loads: number;
  failures: number;
  /** Rows the last successful load read, and how many of them were skipped as unusable. */
  rows: number;
  skippedRows: number;
  /** Every workspace gets the default share now (nothing loaded yet, or failing beyond maxStale). */
  usingDefaults: boolean;
  /** Seconds since the last successful load; undefined before one. */
  ageS: number | undefined;
}

/** Anything that gives a workspace's share (a WorkspaceProfiles, or a service's own). */
export interface ShareSource {
  share(workspace: string): number | PromiseLike<number>;
}

/**
 * Each workspace's bulk share from a PostgreSQL table (`SELECT <workspaceColumn>::text,
 * <shareColumn> FROM <table>`, the whole table at once, in a read-only session opened for each
 * load and closed after it), cached for `refresh` seconds; concurrent callers share one load. A
 * workspace without a usable row gets `defaultShare`; bad rows (null, negative, fractional, above
 * 2^32-1, a null workspace) are skipped and logged once per workspace and value. A load that fails
 * keeps the last good profiles while they are younger than `maxStale`, then every workspace gets
 * `defaultShare`; logged when it starts, when the default takes over and when it ends. Bad
 * settings throw a RangeError or TypeError naming the setting.
 */
export declare class WorkspaceProfiles implements ShareSource {
  constructor(options: WorkspaceProfilesOptions);
  readonly table: string;
  readonly workspaceColumn: string;
  readonly shareColumn: string;
  readonly defaultShare: number;
  readonly refresh: number;
  readonly maxStale: number;
  readonly timeout: number;
  /** How logs name the table and the database (no password). */
  readonly source: string;
  /** The workspace's share. Never rejects for a database that cannot be read; rejects after
   * `close()` and for a workspace that is not a string. */
  share(workspace: string): Promise<number>;
  /** A snapshot of the counters. */
  counters(): ProfilesCounters;
  /** Waits for a load in flight; later `share()` calls reject. */
  close(): Promise<void>;
}

/** Anything that gives the published bulk factor (a BulkFactorReader, or a service's own):
 * `factor` undefined or null when it could not be read. */
export interface FactorSource {
  read(): PromiseLike<{ readonly factor: number | null | undefined }>;
}

export interface BulkAdmissionOptions {
  /** Where the factor comes from: usually a BulkFactorReader. */
  reader: FactorSource;
  /** The batch budgets at full capacity: integers from 1 to 2^32-1. */
  clusterBatches: number;
  serviceBatches: number;
  /** Where each workspace's share comes from: usually a WorkspaceProfiles. */
  profiles: ShareSource;
  /** The component's functions; default the package's `resolveBudget` and `plan`. */
  admission?: { resolveBudget(request: AdmissionRequest): AdmissionResult; plan(request: PlanRequest): AdmissionPlan };
}

/** The batches running now; each an integer in u32, 0 when absent. */
export interface AdmitCounts {
  clusterInFlight?: number;
  serviceInFlight?: number;
  workspaceInFlight?: number;
}

export interface PlanCounts {
  clusterInFlight?: number;
  serviceInFlight?: number;
  /** Each workspace's batches running now (0 for a workspace not in it). */
  workspaceInFlight?: Record<string, number> | ReadonlyMap<string, number>;
}

/**
 * A service's admission, configured once: its factor reader, its batch budgets and its workspace
 * profiles. `admit` and `plan` read the factor and the shares and ask the admission component;
 * the answers are the component's, unchanged. Bad settings throw a RangeError or TypeError naming
 * the setting; bad counts reject naming the field, before anything is read.
 */
export declare class BulkAdmission {
  constructor(options: BulkAdmissionOptions);
  readonly clusterBatches: number;
  readonly serviceBatches: number;
  /** How many batches `workspace` may start now. */
  admit(workspace: string, counts?: AdmitCounts): Promise<AdmissionResult>;
  /** Admits a queue fairly, each queued workspace with its share and its count in flight. */
  plan(queue: Iterable<QueuedBatch>, counts?: PlanCounts): Promise<AdmissionPlan>;
  /** Closes the reader and the profiles (each that has a `close()`). */
  close(): Promise<void>;
}

/** A channel as logs may show it: a URL's password replaced by `***`. */
export declare function redact(spec: string): string;

/** The transpiled component itself, in jco's conventions (BigInt instants, undefined options). */
export declare const raw: typeof import('./gen/admission/interfaces/capacity-sentinel-admission.js');
