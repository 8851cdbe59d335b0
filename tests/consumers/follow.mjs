// A service following the sentinel: reads the bulk factor with the Node package's
// BulkFactorReader every quarter second and prints each reading as one JSON line (for
// tests/tests/consumers_follow.rs). Arguments: CACHE PARAMETER CACHE_KEY MAX_AGE REFRESH.
import { setTimeout as sleep } from 'node:timers/promises';
import { BulkFactorReader } from '../../guest/bindings/js/index.js';

const [cache, parameter, cacheKey, maxAge, refresh] = process.argv.slice(2);
const reader = new BulkFactorReader({
  cache,
  parameter,
  cacheKey,
  maxAge: Number(maxAge),
  refresh: Number(refresh),
  timeout: 1,
  logger: { info() {}, warn() {}, error() {} },
});
for (;;) {
  const r = await reader.read();
  const line = {
    factor: r.factor ?? null,
    source: r.source ?? null,
    state: r.state ?? null,
    sequence: r.sequence ?? null,
    decided_at: r.decidedAt ?? null,
    error: r.error ?? null,
    at: Date.now() / 1000,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  await sleep(250);
}
