import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VirtualClock } from './clock.ts';
import { JournalWaits } from './journal-waits.ts';

test('JournalWaits: how long the oldest batch not yet durable has waited, on the service clock', async () => {
  const clock = new VirtualClock(1_000);
  const pending: Array<() => void> = [];
  const waits = new JournalWaits<string>(
    { append: () => new Promise<void>((resolve) => pending.push(resolve)) },
    clock,
    10,
  );
  assert.equal(waits.waitedMs(), 0, 'nothing waits');
  void waits.append({ seq: 11, ts: 1_000, command: 'a' });
  clock.advance(3_000);
  void waits.append({ seq: 12, ts: 4_000, command: 'b' });
  clock.advance(3_000);
  assert.equal(waits.waitedMs(), 6_000, 'from the first append');
  waits.committed(11);
  clock.advance(1_000);
  assert.equal(waits.waitedMs(), 1_000, 'from the last commit that left more waiting');
  waits.committed(12);
  assert.equal(waits.waitedMs(), 0, 'all durable');
});

test('JournalWaits: once the last appended command is durable nothing waits, however long it stays idle', () => {
  const clock = new VirtualClock(1_000);
  const waits = new JournalWaits<string>({ append: async () => undefined }, clock, 10);
  void waits.append({ seq: 11, ts: 1_000, command: 'a' });
  waits.committed(11);
  clock.advance(60_000);
  assert.equal(waits.waitedMs(), 0, 'an idle journal with everything durable is not stalled');
});
