// Job admission for Node services, computed by the capacity sentinel's own component.
//
// The math of docs/behaviour.md §9 lives once, in the Rust guest; `npm run build` transpiles its
// build (capacity-admission-3.2.0.wasm, the admission-only world, no imports) with `jco transpile`
// into gen/admission/, which admission.js wraps (`resolveBudget`, `resolveBudgets`, `plan`: plain
// numbers in and out, counts checked before the call, `null` or `undefined` for a factor that
// could not be read).
// Which published document to act on (docs/behaviour.md §9.1) is the component's too:
// `chooseFactor` (factor-choice.js) wraps its `choose-factor`, and `BulkFactorReader` (reader.js,
// over the channels of channels.js) reads the sentinel's cache and parameter and asks it.
// `WorkspaceProfiles` (profiles.js, over dsn.js) reads each workspace's share from PostgreSQL,
// and `BulkAdmission` (bulk-admission.js) puts the three together: configured once per service,
// then `admit(workspace, counts)` or `plan(queue, counts)`.
// Types and documentation: index.d.ts.
export { plan, raw, resolveBudget, resolveBudgets } from './admission.js';
export { BulkAdmission } from './bulk-admission.js';
export { chooseFactor, ChannelVerdict } from './factor-choice.js';
export { BulkFactorReader, DEFAULT_CACHE_KEY, DEFAULT_MAX_AGE, DEFAULT_MAX_SKEW, DEFAULT_PARAMETER_REFRESH } from './reader.js';
export { DEFAULT_PROFILES_TABLE, WorkspaceProfiles } from './profiles.js';
export { redact } from './channels.js';

/** The version of the admission rules and of the component inside. */
export const VERSION = '3.2.0';

/** The outcomes, as the WIT names them. */
export const AdmissionOutcome = Object.freeze({
  ADMIT: 'admit',
  WAIT_CLUSTER_FULL: 'wait-cluster-full',
  WAIT_SERVICE_FULL: 'wait-service-full',
  WAIT_WORKSPACE_FULL: 'wait-workspace-full',
  WAIT_CAPACITY_ZERO: 'wait-capacity-zero',
});
