import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../domain/errors.ts';
import { RateLimiter } from './rate-limit.ts';

test('a bucket allows the burst, refuses with 429, and refills over time', () => {
  let now = 0;
  const limiter = new RateLimiter(
    { enabled: true, matching: { perSecond: 2, burst: 3 }, nonMatching: { perSecond: 1, burst: 1 } },
    () => now,
  );
  for (let i = 0; i < 3; i++) limiter.take('k', true);
  assert.throws(
    () => limiter.take('k', true),
    (error: unknown) =>
      error instanceof VenueError && error.httpStatus === 429 && error.data?.retryAfterMs === 500,
  );
  // The other bucket and other keys are independent.
  limiter.take('k', false);
  limiter.take('other', true);
  now += 500;
  limiter.take('k', true);
  assert.throws(() => limiter.take('k', true));
  // Per-key overrides.
  limiter.take('vip', true, { matching: { perSecond: 1, burst: 10 } });
});

test('disabled limits never refuse', () => {
  const limiter = new RateLimiter(
    { enabled: false, matching: { perSecond: 1, burst: 1 }, nonMatching: { perSecond: 1, burst: 1 } },
    () => 0,
  );
  for (let i = 0; i < 10; i++) limiter.take('k', true);
});
