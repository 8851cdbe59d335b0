// One masking rule for every connection string the package shows (the second security review,
// finding 5), the same as the Python package's and the sentinel's: each secret-bearing form
// through `redact`, and the reader's log fed a failing channel with a secret in each form.
// Before, a Redis URL's `?password=`, a `unix://...&password=` and a fragment reached the logs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { BulkFactorReader, redact } from '../index.js';
import { redactSecrets } from '../dsn.js';
import { capturingLogger, freePort } from './servers.mjs';

test('every case of the shared table is masked as it says', () => {
  // The table the sentinel and the Python package run too.
  const table = JSON.parse(readFileSync(new URL('../../../../tests/vectors/redaction.json', import.meta.url), 'utf8'));
  assert.ok(table.cases.length >= 40, `${table.cases.length} cases`);
  for (const { text, shown } of table.cases) {
    assert.equal(redact(text), shown, text);
    assert.equal(redact(shown), shown, `masking twice changes nothing: ${shown}`);
    assert.equal(redactSecrets(text), shown, 'the DSN masking is the same rule');
  }
});

test('a failing channel is logged without its secret, in every form', async () => {
  const port = await freePort();
  for (const cache of [
    `redis://127.0.0.1:${port}/0?password=SECRETPW`,
    `redis://user:SECRETPW@127.0.0.1:${port}/0`,
    `redis://user:pa ssSECRETPW@127.0.0.1:${port}/0`,
    `redis://127.0.0.1:${port}/0?access-key=SECRETPW`,
    `redis://127.0.0.1:${port}/0?p%61ssword=SECRETPW`,
    'unix:///nonexistent/redis.sock?db=0&password=SECRETPW',
    `redis://127.0.0.1:${port}/0#SECRETPW`,
  ]) {
    const logger = capturingLogger();
    const r = new BulkFactorReader({ cache, logger, timeout: 0.5 });
    try {
      assert.equal((await r.read()).cache, 'read-failed', cache);
      assert.ok(logger.lines.length > 0, `${cache}: the failure was logged`);
      assert.ok(logger.lines.every((l) => !l.message.includes('SECRETPW')), JSON.stringify(logger.lines));
    } finally {
      await r.close();
    }
  }
});
