import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartBackoff } from './replica-supervisor.ts';

test('restart delays double up to the cap, and start over after a healthy run', () => {
  const backoff = new RestartBackoff({ firstDelayMs: 1_000, maxDelayMs: 5_000, healthyAfterMs: 60_000 });
  const quickFailures = [1, 2, 3, 4, 5].map(() => backoff.afterFailure(10));
  assert.deepEqual(quickFailures, [1_000, 2_000, 4_000, 5_000, 5_000]);
  assert.equal(
    backoff.afterFailure(60_000),
    1_000,
    'a replica that ran long enough starts the doubling over',
  );
  assert.equal(backoff.afterFailure(59_999), 2_000);
});
