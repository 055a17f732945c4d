import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../domain/errors.ts';
import { VirtualClock } from './clock.ts';
import { type AppendOnlyJournal, type JournalEntry, Sequencer, stampInPlace } from './sequencer.ts';

/** A journal whose appends become durable only when the test says so. */
class ManualJournal implements AppendOnlyJournal<string> {
  readonly pending: Array<{ entry: JournalEntry<string>; resolve: () => void; reject: (e: Error) => void }> =
    [];
  append(entry: JournalEntry<string>): Promise<void> {
    return new Promise((resolve, reject) => this.pending.push({ entry, resolve, reject }));
  }
}

test('stamps increasing seq and non-decreasing ts, and acknowledges only after durability', async () => {
  const clock = new VirtualClock(1_000);
  const journal = new ManualJournal();
  const applied: string[] = [];
  const sequencer = new Sequencer<string, string>(
    (command, stamp) => {
      applied.push(`${command}@${stamp.seq}:${stamp.ts}`);
      return `done ${command}`;
    },
    journal,
    clock,
  );
  const published: string[] = [];
  sequencer.onCommitted((entry, result) => published.push(`${entry.seq} ${result}`));

  let acknowledged = false;
  const first = sequencer.submit('a').then((result) => {
    acknowledged = true;
    return result;
  });
  clock.advance(5);
  const second = sequencer.submit('b');
  assert.deepEqual(applied, ['a@1:1000', 'b@2:1005']);
  await Promise.resolve();
  assert.equal(acknowledged, false, 'not acknowledged before the journal is durable');
  assert.deepEqual(published, []);

  journal.pending[0]!.resolve();
  journal.pending[1]!.resolve();
  assert.equal(await first, 'done a');
  assert.equal(await second, 'done b');
  assert.deepEqual(published, ['1 done a', '2 done b']);
  await sequencer.drain();
});

test('a journal failure is fatal: the write under way has an unknown outcome, later submits were not run', async () => {
  const journal = new ManualJournal();
  const sequencer = new Sequencer<string, string>((c) => c, journal, new VirtualClock(0));
  const first = sequencer.submit('a');
  journal.pending[0]!.reject(new Error('disk full'));
  await assert.rejects(
    first,
    (error: unknown) =>
      error instanceof VenueError &&
      error.errorName === 'unavailable' &&
      error.data?.outcome === 'unknown' &&
      /may or may not have run/.test(error.message),
  );
  await assert.rejects(
    sequencer.submit('b'),
    (error: unknown) =>
      error instanceof VenueError &&
      error.errorName === 'unavailable' &&
      error.data?.outcome === undefined &&
      /not run/.test(error.message),
  );
  assert.equal(sequencer.failed?.message, 'disk full');
});

test('a command the core throws on is fatal: not journaled, and nothing after it is applied', async () => {
  const journal = new ManualJournal();
  const applied: string[] = [];
  const sequencer = new Sequencer<string, string>(
    (command) => {
      if (command === 'bad') throw new Error('reactions did not settle');
      applied.push(command);
      return command;
    },
    journal,
    new VirtualClock(0),
  );
  const fatal: string[] = [];
  sequencer.onFatal((error) => fatal.push(error.message));
  const before = sequencer.submit('a');
  await assert.rejects(
    sequencer.submit('bad'),
    (error: unknown) => error instanceof VenueError && error.errorName === 'internal_error',
  );
  await assert.rejects(
    sequencer.submit('c'),
    (error: unknown) => error instanceof VenueError && error.errorName === 'unavailable',
  );
  assert.deepEqual(applied, ['a']);
  assert.deepEqual(
    journal.pending.map((p) => p.entry.command),
    ['a'],
  );
  assert.equal(sequencer.sequence, 1, 'the failed command took no seq');
  assert.deepEqual(fatal, ['reactions did not settle']);
  journal.pending[0]!.resolve();
  assert.equal(await before, 'a', 'what was applied before the failure is still acknowledged once durable');
});

test('time in stamps never goes backwards even when the clock does', async () => {
  let wall = 2_000;
  const clock = { now: () => wall, schedule: () => () => {} };
  const stamps: number[] = [];
  const journal = { append: () => Promise.resolve() };
  const sequencer = new Sequencer<string, void>((_c, stamp) => void stamps.push(stamp.ts), journal, clock, {
    seq: 10,
    ts: 1_500,
  });
  await sequencer.submit('x');
  wall = 1_000;
  await sequencer.submit('y');
  assert.deepEqual(stamps, [2_000, 2_000]);
  assert.equal(sequencer.sequence, 12);
});

test('stampInPlace gives the keys and key order of a spread copy, whether or not the command has a stamp', () => {
  const fresh = { type: 'place', amount: 10, price: null };
  const copy = { ...fresh, seq: 7, ts: 1000 };
  const stamped = stampInPlace(fresh, { seq: 7, ts: 1000 });
  assert.equal(stamped, fresh, 'the same object');
  assert.deepEqual(Object.entries(stamped), Object.entries(copy));
  // A command decoded from a journal that held its stamp inside it is restamped, keys unmoved.
  const decoded = { type: 'place', amount: 10, price: null, seq: 7, ts: 1000 };
  assert.deepEqual(Object.entries(stampInPlace(decoded, { seq: 7, ts: 1000 })), Object.entries(copy));
});

test('now() never goes back, between commands too: a time handed out stays the floor', async () => {
  let wall = 10_000;
  const clock = { now: () => wall, schedule: () => () => {} };
  const stamps: number[] = [];
  const journal = { append: () => Promise.resolve() };
  const sequencer = new Sequencer<string, void>((_c, stamp) => void stamps.push(stamp.ts), journal, clock, {
    seq: 0,
    ts: 9_000,
  });
  await sequencer.submit('tick');
  wall = 10_800; // no command since the tick: the authenticator is handed 10 800 ...
  assert.equal(sequencer.now(), 10_800);
  wall = 10_800 - 600_000; // ... then the wall clock steps back 10 min
  assert.equal(sequencer.now(), 10_800, 'not back to the last stamp (10 000)');
  await sequencer.submit('order');
  assert.deepEqual(stamps, [10_000, 10_800], 'and the next command is stamped no earlier');
  wall = 10_900;
  assert.equal(sequencer.now(), 10_900);
  await sequencer.submit('later');
  assert.deepEqual(stamps, [10_000, 10_800, 10_900]);
});

/** Whether `promise` has settled after a few microtask turns (no timers, no sleeps). */
async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

test('two writes in flight both fail: onFatal fires once, with the first error', async () => {
  const journal = new ManualJournal();
  const sequencer = new Sequencer<string, string>((command) => command, journal, new VirtualClock(0));
  const fatal: string[] = [];
  sequencer.onFatal((error) => fatal.push(error.message));
  const first = sequencer.submit('a');
  const second = sequencer.submit('b');
  first.catch(() => {});
  second.catch(() => {});
  journal.pending[0]!.reject(new Error('disk full'));
  journal.pending[1]!.reject(new Error('connection closed'));
  await assert.rejects(first);
  await assert.rejects(second);
  assert.deepEqual(fatal, ['disk full'], 'one fatal report, the first failure');
  assert.equal(sequencer.failed?.message, 'disk full');
});

test('drain() settles after a journal write is rejected', async () => {
  const journal = new ManualJournal();
  const sequencer = new Sequencer<string, string>((command) => command, journal, new VirtualClock(0));
  const write = sequencer.submit('a');
  write.catch(() => {});
  journal.pending[0]!.reject(new Error('disk full'));
  await assert.rejects(write);
  assert.equal(await hasSettled(sequencer.drain()), true, 'drain settles once nothing is in flight');
});

test('drain() waits for the last write in flight', async () => {
  const journal = new ManualJournal();
  const sequencer = new Sequencer<string, string>((command) => command, journal, new VirtualClock(0));
  const first = sequencer.submit('a');
  const second = sequencer.submit('b');
  const drained = sequencer.drain();
  journal.pending[0]!.resolve();
  await first;
  assert.equal(await hasSettled(drained), false, 'b is not durable yet');
  journal.pending[1]!.resolve();
  await second;
  assert.equal(await hasSettled(drained), true, 'drained once b is durable');
});

test('drain() waits for a single write in flight', async () => {
  const journal = new ManualJournal();
  const sequencer = new Sequencer<string, string>((command) => command, journal, new VirtualClock(0));
  const only = sequencer.submit('a');
  const drained = sequencer.drain();
  assert.equal(await hasSettled(drained), false, 'a is not durable yet: drain must not settle');
  journal.pending[0]!.resolve();
  assert.equal(await only, 'a', 'a is acknowledged once durable');
  assert.equal(await hasSettled(drained), true, 'drained once a is durable');
});
