import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../domain/errors.ts';
import { RateLimiter } from './rate-limit.ts';

test('retryAfterMs rounds up, so a retry at that time is never refused', () => {
  let now = 0;
  const limiter = new RateLimiter(
    { enabled: true, matching: { perSecond: 3, burst: 1 }, nonMatching: { perSecond: 3, burst: 1 } },
    () => now,
  );
  limiter.take('k', false);
  let retry = -1;
  assert.throws(
    () => limiter.take('k', false),
    (error: unknown) => {
      retry = Number((error as VenueError).data?.retryAfterMs);
      return error instanceof VenueError && error.httpStatus === 429;
    },
  );
  assert.equal(retry, 334);
  now += retry;
  limiter.take('k', false);
});

test('a clock that steps back does not drain the bucket', () => {
  let now = 10_000;
  const limiter = new RateLimiter(
    { enabled: true, matching: { perSecond: 1, burst: 1 }, nonMatching: { perSecond: 1, burst: 1 } },
    () => now,
  );
  limiter.take('k', false);
  now = 9_000;
  assert.throws(() => limiter.take('k', false));
  now = 10_000;
  limiter.take('k', false);
});
