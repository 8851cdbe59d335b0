// A share of a fleet of services, for the fleet load test (tests/tests/fleet_readers.rs): READERS
// independent BulkFactorReaders in this one Node process (each with its own Redis client and SSM
// client, as separate services would have), each read once a second on its own schedule, with the
// package's defaults (refresh 10 s, parameterRefresh 30 s, maxAge 180 s). Once a second it prints
// one JSON line: how many readers' latest reading came from each source, the parameter calls
// made so far, and the process's memory and CPU. Arguments: CACHE PARAMETER CACHE_KEY READERS.
import { setTimeout as sleep } from 'node:timers/promises';
import { BulkFactorReader } from '../../guest/bindings/js/index.js';

const [cache, parameter, cacheKey, count] = process.argv.slice(2);
const readers = Number(count);
const quiet = { info() {}, warn() {}, error() {} };
const baseline = process.memoryUsage().rss;
const fleet = Array.from({ length: readers }, () => ({
  reader: new BulkFactorReader({ cache, parameter, cacheKey, logger: quiet }),
  source: 'none',
}));

async function follow(member) {
  await sleep(Math.random() * 1000); // services do not start in step
  for (;;) {
    const r = await member.reader.read();
    member.source = r.factor === undefined ? 'full' : r.source;
    await sleep(1000);
  }
}
fleet.forEach((member) => { follow(member); });

const started = process.cpuUsage();
for (;;) {
  await sleep(1000 - (Date.now() % 1000));
  const sources = { cache: 0, parameter: 0, remembered: 0, full: 0, none: 0 };
  for (const m of fleet) sources[m.source]++;
  const cpu = process.cpuUsage(started);
  const line = {
    t: Math.round(Date.now() / 1000),
    ...sources,
    parameter_calls: fleet.reduce((n, m) => n + m.reader.counters().parameterCalls, 0),
    rss: process.memoryUsage().rss,
    baseline_rss: baseline,
    cpu_s: (cpu.user + cpu.system) / 1e6,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
