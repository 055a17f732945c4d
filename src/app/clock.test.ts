import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VirtualClock } from './clock.ts';

test('virtual clock fires due timers in time order, each at its own time', () => {
  const clock = new VirtualClock(1_000);
  const fired: Array<[string, number]> = [];
  clock.schedule(1_500, () => fired.push(['b', clock.now()]));
  clock.schedule(1_200, () => fired.push(['a', clock.now()]));
  const cancel = clock.schedule(1_300, () => fired.push(['cancelled', clock.now()]));
  clock.schedule(5_000, () => fired.push(['late', clock.now()]));
  cancel();
  clock.advance(1_000);
  assert.deepEqual(fired, [
    ['a', 1_200],
    ['b', 1_500],
  ]);
  assert.equal(clock.now(), 2_000);
  assert.equal(clock.pendingTimers(), 1);
});

test('timers scheduled by a firing timer run in the same advance when due', () => {
  const clock = new VirtualClock(0);
  const fired: number[] = [];
  clock.schedule(10, () => {
    fired.push(clock.now());
    clock.schedule(20, () => fired.push(clock.now()));
  });
  clock.advance(30);
  assert.deepEqual(fired, [10, 20]);
  assert.throws(() => clock.set(5));
});
