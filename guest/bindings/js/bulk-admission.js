// `BulkAdmission`: what a service builds once from its configuration and asks before starting
// bulk work (docs/behaviour.md §9); the Node twin of the Python package's BulkAdmission.
//
//   const admission = new BulkAdmission({
//     reader: new BulkFactorReader({ cache: 'redis://cache:6379/0', parameter: 'ssm:/capacity/state' }),
//     clusterBatches: 40, serviceBatches: 12,
//     profiles: new WorkspaceProfiles({ dsn: 'postgresql://svc:...@db:5432/app' }),
//   });
//   const result = await admission.admit('acme', { clusterInFlight: 9, serviceInFlight: 3, workspaceInFlight: 1 });
//
// `admit` reads the factor (the reader's `read()`: undefined when no document is usable, and the
// component then admits at full capacity) and the workspace's share (the profiles' `share()`),
// and asks the admission component's `resolve-budget`; `plan` does the same for a queue with its
// `plan`. No math here: the answers are the component's, unchanged.
import { plan, resolveBudget } from './admission.js';
import { U32_MAX, text, u32 } from './checks.js';

const OPTIONS = ['reader', 'clusterBatches', 'serviceBatches', 'profiles', 'admission'];
const COUNTS = ['clusterInFlight', 'serviceInFlight', 'workspaceInFlight'];

function batches(name, value) {
  if (typeof value !== 'number') throw new TypeError(`${name}: expected an integer from 1 to ${U32_MAX}, got ${typeof value}`);
  if (!Number.isInteger(value) || value < 1 || value > U32_MAX) {
    throw new RangeError(`${name}: expected an integer from 1 to ${U32_MAX}, got ${value}`);
  }
  return value;
}

function hasMethods(value, ...methods) {
  return value !== null && typeof value === 'object' && methods.every((m) => typeof value[m] === 'function');
}

/** The in-flight counts of `admit` or `plan`: known keys only, each a u32 (0 when absent). */
function inFlight(counts, what) {
  if (counts === null || typeof counts !== 'object') throw new TypeError(`${what}: expected an object of in-flight counts`);
  for (const name of Object.keys(counts)) {
    if (!COUNTS.includes(name)) throw new TypeError(`${what}: unknown count ${name} (expected ${COUNTS.join(', ')})`);
  }
  const count = (name) => (counts[name] === undefined ? 0 : u32(name, counts[name]));
  return {
    clusterInFlight: count('clusterInFlight'), serviceInFlight: count('serviceInFlight'), workspaceInFlight: counts.workspaceInFlight,
  };
}

/** `plan`'s workspaceInFlight (an object or a Map, workspace -> count) as a Map of u32s. */
function perWorkspace(value) {
  if (value === undefined) return new Map();
  const entries = value instanceof Map ? [...value] : value !== null && typeof value === 'object' ? Object.entries(value) : undefined;
  if (entries === undefined) throw new TypeError('workspaceInFlight: expected an object or a Map of workspace -> count');
  return new Map(entries.map(([workspace, n]) => [workspace, u32(`workspaceInFlight[${JSON.stringify(workspace)}]`, n)]));
}

/** The factor of a reading: a number, or undefined for a failed read (full capacity). */
function factorOf(reading) {
  if (reading === null || typeof reading !== 'object') {
    throw new TypeError(`reader.read() resolved to ${reading === null ? 'null' : typeof reading}, not a reading with a factor`);
  }
  return reading.factor ?? undefined;
}

/** A service's admission, configured once: its reader, budgets and workspace profiles. */
export class BulkAdmission {
  #reader;
  #profiles;
  #admission;

  constructor(options = {}) {
    if (options === null || typeof options !== 'object') throw new TypeError('BulkAdmission: expected an options object');
    for (const name of Object.keys(options)) {
      if (!OPTIONS.includes(name)) throw new TypeError(`BulkAdmission: unknown option ${name} (expected ${OPTIONS.join(', ')})`);
    }
    const { reader, clusterBatches, serviceBatches, profiles, admission = { resolveBudget, plan } } = options;
    if (!hasMethods(reader, 'read')) throw new TypeError('reader: expected a BulkFactorReader (an object with read())');
    if (!hasMethods(profiles, 'share')) {
      throw new TypeError('profiles: expected a WorkspaceProfiles (an object with share(workspace))');
    }
    if (!hasMethods(admission, 'resolveBudget', 'plan')) {
      throw new TypeError('admission: expected an object with resolveBudget(request) and plan(request)');
    }
    /** The batch budgets at full capacity, as validated. */
    this.clusterBatches = batches('clusterBatches', clusterBatches);
    this.serviceBatches = batches('serviceBatches', serviceBatches);
    this.#reader = reader;
    this.#profiles = profiles;
    this.#admission = admission;
    Object.freeze(this);
  }

  /** How many batches `workspace` may start now. Counts are checked (integers in u32, 0 when
   * absent) before anything is read; a failed factor read is not an error (full capacity). */
  async admit(workspace, counts = {}) {
    text('workspace', workspace);
    const { clusterInFlight, serviceInFlight, workspaceInFlight } = inFlight(counts, 'admit');
    const workspaceCount = workspaceInFlight === undefined ? 0 : u32('workspaceInFlight', workspaceInFlight);
    const [reading, share] = await Promise.all([this.#reader.read(), this.#profiles.share(workspace)]);
    return this.#admission.resolveBudget({
      factor: factorOf(reading), clusterBatches: this.clusterBatches, serviceBatches: this.serviceBatches,
      share: u32(`the share of workspace ${JSON.stringify(workspace)}`, share),
      clusterInFlight, serviceInFlight, workspaceInFlight: workspaceCount,
    });
  }

  /** Admits a queue (`[{id, workspace, enqueuedAt}]`) fairly: every workspace of the queue with its
   * share and its count in `workspaceInFlight` (an object or a Map; 0 when absent). */
  async plan(queue, counts = {}) {
    if (queue === null || typeof queue !== 'object' || typeof queue[Symbol.iterator] !== 'function') {
      throw new TypeError('queue: expected an array of {id, workspace, enqueuedAt}');
    }
    const batchesIn = Array.from(queue, (b, i) => {
      if (b === null || typeof b !== 'object') throw new TypeError(`queue[${i}]: expected {id, workspace, enqueuedAt}`);
      text(`queue[${i}].workspace`, b.workspace);
      return b;
    });
    const { clusterInFlight, serviceInFlight, workspaceInFlight } = inFlight(counts, 'plan');
    const running = perWorkspace(workspaceInFlight);
    const workspaces = [...new Set(batchesIn.map((b) => b.workspace))];
    const [reading, shares] = await Promise.all([
      this.#reader.read(),
      Promise.all(workspaces.map((w) => this.#profiles.share(w))),
    ]);
    return this.#admission.plan({
      factor: factorOf(reading), clusterBatches: this.clusterBatches, serviceBatches: this.serviceBatches,
      clusterInFlight, serviceInFlight,
      workspaces: workspaces.map((workspace, i) => ({
        workspace, share: u32(`the share of workspace ${JSON.stringify(workspace)}`, shares[i]), inFlight: running.get(workspace) ?? 0,
      })),
      queue: batchesIn,
    });
  }

  /** Closes the reader and the profiles (each when it has a `close()`). */
  async close() {
    await Promise.all([this.#reader, this.#profiles].map((o) => (typeof o.close === 'function' ? o.close() : undefined)));
  }
}
