// Per-call cost of resolveBudget through the component (jco-transpiled), next to plain
// JavaScript doing the same math (docs/behaviour.md §9), as a ratio; and what a service pays to
// get the factor: a cached BulkFactorReader.read() and one chooseFactor call.
//
//   node guest/bindings/js/bench.mjs [calls]      (after `npm run build`)
//
// Paths (each the best of 5 rounds; a "call" of the batch is one request):
//   plain JS          the reimplementation below
//   package           resolveBudget: argument checks + the transpiled component
//   raw jco export    the transpiled export alone (jco's --strict checks only)
//   batch of 100      resolveBudgets over 100 requests, cost per request
//   reader.read()     await BulkFactorReader.read() answered from memory (file channel, refresh 60)
//   chooseFactor      one choose-factor call on a fresh document (what each fetch costs on top
//                     of the channel reads)
// The plain version is checked against the component on tests/vectors/admission first.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BulkFactorReader, chooseFactor, raw, resolveBudget, resolveBudgets } from './index.js';
import { camelKeys, cases } from './test/vectors.mjs';

/** docs/behaviour.md §9 in plain JavaScript (for comparison only: services use the component). */
function plainResolveBudget(r) {
  let f = r.factor;
  let failed = false;
  if (typeof f !== 'number' || !Number.isFinite(f) || f < 0 || f > 1) {
    f = 1;
    failed = true;
  }
  let cluster = 0;
  let service = 0;
  let ceiling = 0;
  if (f > 0) {
    cluster = Math.max(1, Math.floor(r.clusterBatches * f));
    service = Math.min(cluster, Math.max(1, Math.floor(r.serviceBatches * f)));
    ceiling = service === 1 ? Math.min(r.share, 1) : Math.min(r.share, service - 1);
  }
  const result = (admit, outcome) => ({
    admit, outcome, factorUsed: f, factorReadFailed: failed, clusterBudget: cluster, serviceBudget: service, workspaceCeiling: ceiling,
  });
  if (f <= 0) return result(0, 'wait-capacity-zero');
  const rooms = [
    Math.max(0, cluster - (r.clusterInFlight ?? 0)),
    Math.max(0, service - (r.serviceInFlight ?? 0)),
    Math.max(0, ceiling - (r.workspaceInFlight ?? 0)),
  ];
  const admit = Math.min(...rooms);
  if (admit > 0) return result(admit, 'admit');
  const outcome = rooms[0] === 0 ? 'wait-cluster-full' : rooms[1] === 0 ? 'wait-service-full' : 'wait-workspace-full';
  return result(0, outcome);
}

function bestPerCallUs(fn, calls, per = 1) {
  for (let i = 0; i < Math.min(calls, 1000); i++) fn();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - started));
  }
  return best / (calls * per) / 1000;
}

async function bestPerCallUsAsync(fn, calls) {
  for (let i = 0; i < Math.min(calls, 1000); i++) await fn();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn();
    best = Math.min(best, Number(process.hrtime.bigint() - started));
  }
  return best / calls / 1000;
}

const calls = Number(process.argv[2] ?? 100000);
const vectors = cases('admission').map(([, c]) => camelKeys(c.input));
for (const r of vectors) assert.deepEqual(plainResolveBudget(r), resolveBudget(r));
console.log(`plain JS agrees with the component on ${vectors.length} admission vectors`);

const request = { factor: 0.5, clusterBatches: 40, serviceBatches: 12, share: 4, clusterInFlight: 9, serviceInFlight: 3, workspaceInFlight: 1 };
const batch = Array.from({ length: 100 }, (_, i) => ({ factor: i / 100, clusterBatches: 40, serviceBatches: 12, share: 4 }));
let sink = 0;
const plain = bestPerCallUs(() => { sink += plainResolveBudget(request).admit; }, calls * 4);
const rows = [
  ['plain JS', plain],
  ['package', bestPerCallUs(() => { sink += resolveBudget(request).admit; }, calls)],
  ['raw jco export', bestPerCallUs(() => { sink += raw.resolveBudget(request).admit; }, calls)],
  ['batch of 100', bestPerCallUs(() => { sink += resolveBudgets(batch).length; }, Math.max(1, calls / 100), 100)],
];
const dir = mkdtempSync(join(tmpdir(), 'capacity-bench-'));
const path = join(dir, 'state.json');
const text = JSON.stringify({
  state: 'constrained', factors: { bulk: 0.5, heavy: 0.5, write: 1, read: 1 }, decided_at: new Date().toISOString(), sequence: 1,
});
writeFileSync(path, text);
const reader = new BulkFactorReader({ cache: path, refresh: 60 });
assert.equal((await reader.read()).factor, 0.5);
rows.push(['reader.read()', await bestPerCallUsAsync(async () => { sink += (await reader.read()).factor; }, calls)]);
assert.equal(reader.counters().fetches, 1);
await reader.close();
rmSync(dir, { recursive: true, force: true });
const now = Math.trunc(Date.now() / 1000);
const document = { tag: 'document', val: text };
rows.push(['chooseFactor', bestPerCallUs(() => { sink += chooseFactor(document, undefined, { now, maxAge: 180, maxSkew: 30 }).factor; }, calls / 10)]);

console.log(`per call, Node ${process.version} (jco transpile --strict); x: against plain JS resolveBudget:`);
for (const [name, us] of rows) {
  console.log(`  ${name.padEnd(16)} ${us.toFixed(3).padStart(9)} µs   ${(us / plain).toFixed(1).padStart(7)}x plain`);
}
if (sink === -1) console.log(sink);
