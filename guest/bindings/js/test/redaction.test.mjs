// One masking rule for every connection string the package shows (the second security review,
// finding 5), the same as the Python package's and the sentinel's: each secret-bearing form
// through `redact`, and the reader's log fed a failing channel with a secret in each form.
// Before, a Redis URL's `?password=`, a `unix://...&password=` and a fragment reached the logs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BulkFactorReader, redact } from '../index.js';
import { redactSecrets } from '../dsn.js';
import { capturingLogger, freePort } from './servers.mjs';

test('every secret form is masked, and nothing else', () => {
  const cases = [
    ['postgresql://svc:s3cret@db:5432/app', 'postgresql://svc:***@db:5432/app'],
    ['redis://cache:6379/0?password=S1', 'redis://cache:6379/0?password=***'],
    ['unix:///tmp/r.sock?db=0&password=S1', 'unix:///tmp/r.sock?db=0&password=***'],
    ['postgresql://svc@db/app?password=S1&sslmode=require', 'postgresql://svc@db/app?password=***&sslmode=require'],
    ['host=db password=ap\\ SECRETTAIL dbname=x', 'host=db password=*** dbname=x'],
    ["host=db password = 'it\\'s \\\\ secret' dbname=app", 'host=db password = *** dbname=app'],
    ['http://p/api?apikey=S1&key=S2&auth=S3&sig=S4&x=1', 'http://p/api?apikey=***&key=***&auth=***&sig=***&x=1'],
    ['http://p/api#S1', 'http://p/api#***'],
    ['signal=cpu author=alice keys=2 redis://cache/0', 'signal=cpu author=alice keys=2 redis://cache/0'],
  ];
  for (const [text, shown] of cases) {
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
