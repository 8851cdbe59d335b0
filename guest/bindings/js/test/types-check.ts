// Compiled by `npm test` (tsc --noEmit): the declarations in index.d.ts describe the API a
// TypeScript service uses, and refuse the mistakes below.
import {
  AdmissionOutcome,
  BulkAdmission,
  BulkFactorReader,
  ChannelVerdict,
  DEFAULT_CACHE_KEY,
  DEFAULT_PROFILES_TABLE,
  WorkspaceProfiles,
  chooseFactor,
  plan,
  redact,
  resolveBudget,
  resolveBudgets,
  type AdmissionPlan,
  type AdmissionResult,
  type Channel,
  type FactorReading,
  type ProfilesCounters,
  type ReaderCounters,
  type ShareSource,
} from '../index.js';

const reader = new BulkFactorReader({
  cache: 'redis://cache:6379/0', parameter: 'ssm:/capacity/state', cacheKey: DEFAULT_CACHE_KEY,
  maxAge: 180, maxSkew: 30, refresh: 10, timeout: 2, logger: console, clock: () => Date.now() / 1000,
});

export async function admit(): Promise<number> {
  const reading: Readonly<FactorReading> = await reader.read();
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

export async function observe(): Promise<string> {
  const reading = await reader.read();
  const source: Channel | 'remembered' | undefined = reading.source;
  const remembered: number = reader.counters().remembered + reader.counters().parameterCalls;
  const age: number | undefined = reading.ageS;
  const sequence: number | undefined = reading.sequence;
  const unusable = reading.cache !== ChannelVerdict.USABLE && reading.parameter !== 'usable';
  const counters: ReaderCounters = reader.counters();
  const stale: number = (counters.reads.cache.stale ?? 0) + (counters.reads.parameter['read-failed'] ?? 0);
  // @ts-expect-error readings are read-only
  reading.factor = 1;
  // @ts-expect-error verdicts are the WIT names
  const verdict: FactorReading['cache'] = 'Stale';
  void verdict;
  // @ts-expect-error no BigInt leaves the reader
  const big: bigint | undefined = reading.decidedAt;
  void big;
  // @ts-expect-error settings are checked: maxAge is a number
  new BulkFactorReader({ cache: 'redis://cache:6379/0', maxAge: '180' });
  // @ts-expect-error unknown options are refused
  new BulkFactorReader({ cache: 'redis://cache:6379/0', maxage: 180 });
  // @ts-expect-error a logger has warn, error and info
  new BulkFactorReader({ parameter: 'ssm:/capacity/state', logger: { warn() {} } });

  const chosen: FactorReading = chooseFactor({ tag: 'document', val: '{}' }, { tag: 'failed', val: 'timed out' }, {
    now: 1792506600n, maxAge: 180, maxSkew: 30,
  });
  chooseFactor(undefined, { tag: 'not-read' }, { now: 1792506600, maxAge: 0, maxSkew: 0 });
  // @ts-expect-error a document carries its text
  chooseFactor({ tag: 'document' }, undefined, { now: 0, maxAge: 1, maxSkew: 0 });
  // @ts-expect-error now is required
  chooseFactor(undefined, undefined, { maxAge: 1, maxSkew: 0 });
  await reader.close();
  return `${source}${age}${sequence}${unusable}${stale}${remembered}${chosen.error}${redact('redis://:pw@cache')}`;
}

const profiles = new WorkspaceProfiles({
  dsn: 'postgresql://svc:secret@db:5432/app', table: DEFAULT_PROFILES_TABLE, workspaceColumn: 'workspace_id',
  shareColumn: 'bulk_share', defaultShare: 1, refresh: 60, maxStale: 600, timeout: 5, logger: console, clock: () => performance.now() / 1000,
});
const admission = new BulkAdmission({ reader, clusterBatches: 40, serviceBatches: 12, profiles });

export async function configured(): Promise<number> {
  const result: AdmissionResult = await admission.admit('acme', { clusterInFlight: 9, serviceInFlight: 3, workspaceInFlight: 1 });
  const p: AdmissionPlan = await admission.plan([{ id: 'b1', workspace: 'acme', enqueuedAt: 1792506600 }], {
    clusterInFlight: 1, workspaceInFlight: new Map([['acme', 1]]),
  });
  await admission.plan([], { workspaceInFlight: { acme: 2 } });
  const share: number = await profiles.share('acme');
  const counters: ProfilesCounters = profiles.counters();
  const age: number | undefined = counters.ageS;
  // any object with share() and read() will do
  const fixed: ShareSource = { share: () => 3 };
  const own = new BulkAdmission({ reader: { read: async () => ({ factor: null }) }, clusterBatches: 1, serviceBatches: 1, profiles: fixed });
  // @ts-expect-error dsn is required
  new WorkspaceProfiles({ table: 'policies' });
  // @ts-expect-error unknown options are refused
  new WorkspaceProfiles({ dsn: 'postgresql://db/app', default_share: 2 });
  // @ts-expect-error budgets are required
  new BulkAdmission({ reader, profiles });
  // @ts-expect-error a mapping of shares is not a profiles source
  new BulkAdmission({ reader, clusterBatches: 1, serviceBatches: 1, profiles: { acme: 3 } });
  // @ts-expect-error counts are camelCase
  await admission.admit('acme', { cluster_in_flight: 1 });
  // @ts-expect-error a workspace is a string
  await admission.admit(7);
  // @ts-expect-error admit's workspaceInFlight is one count
  await admission.admit('acme', { workspaceInFlight: { acme: 1 } });
  // @ts-expect-error settings are read-only
  profiles.defaultShare = 2;
  await own.close();
  await profiles.close();
  return result.admit + p.admitted.length + share + counters.loads + (age ?? 0);
}
