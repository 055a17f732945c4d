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
      error instanceof VenueError &&
      error.httpStatus === 429 &&
      JSON.stringify(error.data) ===
        JSON.stringify({ field: 'method', bucket: 'matching', retryAfterMs: 500 }),
    'the refusal names the field at fault, the method whose bucket is empty (stop 43)',
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

test('full buckets are dropped, so one per address or key ever seen does not stay forever', () => {
  let now = 0;
  const limiter = new RateLimiter(
    { enabled: true, matching: { perSecond: 10, burst: 5 }, nonMatching: { perSecond: 10, burst: 5 } },
    () => now,
  );
  for (let i = 0; i < 4095; i++) limiter.take(`ip:${i}`, false);
  limiter.take('busy', false);
  for (let i = 0; i < 4; i++) limiter.take('busy', false);
  assert.equal(limiter.size, 4096);
  now += 100; // ip:* are full again; busy is not
  limiter.take('new', false);
  assert.equal(limiter.size, 2);
  // busy kept its bucket (one credit refilled, not five): a sweep never hands out credit.
  limiter.take('busy', false);
  assert.throws(() => limiter.take('busy', false));
  for (let i = 0; i < 100_000; i++) {
    now += 1;
    limiter.take(`ip:${i}`, false);
  }
  assert.ok(limiter.size <= 8192, `${limiter.size} buckets`);
});

test('a bucket idle for a minute holds its burst, no more: burst takes, then 429', () => {
  let now = 0;
  const burst = 4;
  const limiter = new RateLimiter(
    { enabled: true, matching: { perSecond: 10, burst }, nonMatching: { perSecond: 10, burst } },
    () => now,
  );
  limiter.take('k', false);
  now += 60_000; // 600 credits' worth of refill, capped at the burst
  for (let i = 0; i < burst; i++) limiter.take('k', false);
  assert.throws(
    () => limiter.take('k', false),
    (error: unknown) => error instanceof VenueError && error.httpStatus === 429,
  );
});

/** A limiter on a settable clock (`clock.now`) whose two buckets both refill `perSecond` up to `burst`. */
function evenLimiter(perSecond: number, burst: number, now = 0) {
  const clock = { now };
  const buckets = { perSecond, burst };
  const limiter = new RateLimiter(
    { enabled: true, matching: buckets, nonMatching: buckets },
    () => clock.now,
  );
  return { clock, limiter };
}

test('retryAfterMs is the time until the next whole credit, counting a partial one', () => {
  const { clock, limiter } = evenLimiter(2, 1);
  limiter.take('k', false);
  clock.now += 250; // half a credit back: the other half takes 250 ms more
  assert.throws(
    () => limiter.take('k', false),
    (error: unknown) => error instanceof VenueError && error.data?.retryAfterMs === 250,
  );
  clock.now += 250;
  limiter.take('k', false);
});

test('retryAfterMs rounds up, so a retry at that time is never refused', () => {
  const { clock, limiter } = evenLimiter(3, 1);
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
  clock.now += retry;
  limiter.take('k', false);
});

test('a clock that steps back does not drain the bucket', () => {
  const { clock, limiter } = evenLimiter(1, 1, 10_000);
  limiter.take('k', false);
  clock.now = 9_000;
  assert.throws(() => limiter.take('k', false));
  clock.now = 10_000;
  limiter.take('k', false);
});
