import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BatchWriter, GroupCommitter } from './group-commit.ts';
import { type JournalEntry, JournalWriteError } from './journal.ts';
import type { StoredFrame } from './record-format.ts';

function entry(seq: number): JournalEntry<unknown> {
  return { seq, ts: 1000 + seq, command: { n: seq } };
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: Error): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A writer that stores each frame it is given and succeeds at once, except write number
 * `failAt`: that one throws (`throws`) or is held until the test rejects it (`rejects`).
 */
class FailingWriter implements BatchWriter {
  readonly frames: Array<StoredFrame | null> = [];
  readonly held = deferred();
  private arrived = deferred();

  constructor(
    private readonly failAt: number,
    private readonly how: 'throws' | 'rejects',
    private readonly error: Error,
  ) {}

  write(frame: StoredFrame | null): void | Promise<void> {
    this.frames.push(frame);
    if (this.frames.length !== this.failAt) return;
    if (this.how === 'throws') throw this.error;
    this.arrived.resolve();
    return this.held.promise;
  }

  /** Resolves once the failing write is in flight. */
  get failingWriteStarted(): Promise<void> {
    return this.arrived.promise;
  }
}

/** Settles an append's promise into what became of it (without leaving a rejection unhandled). */
function outcome(promise: Promise<void>): Promise<string> {
  return promise.then(
    () => 'ack',
    (error: unknown) => (error instanceof JournalWriteError ? 'rejected' : `other: ${String(error)}`),
  );
}

describe('group commit: a failed batch write', () => {
  for (const how of ['rejects', 'throws'] as const) {
    test(`(writer ${how}) rejects that batch, everything queued behind it and every later append; nothing after it reaches the writer`, async () => {
      const disk = new Error('SQLITE_FULL: database or disk is full');
      const writer = new FailingWriter(2, how, disk);
      const committer = new GroupCommitter(writer, { maxEntries: 1 }, { seq: 0, ts: 0 });

      // Batch 1 is durable.
      assert.equal(await outcome(committer.append(entry(1))), 'ack');
      assert.deepEqual(committer.lastDurable, { seq: 1, ts: 1001 });

      // Three appends in one tick: one record each (maxEntries 1); the write of record 2 fails.
      const queued = [2, 3, 4].map((seq) => outcome(committer.append(entry(seq))));
      if (how === 'rejects') {
        await writer.failingWriteStarted;
        // Appended while the failing write is in flight: queued behind it too.
        queued.push(outcome(committer.append(entry(5))));
        writer.held.reject(disk);
      }
      assert.deepEqual(
        await Promise.all(queued),
        queued.map(() => 'rejected'),
      );
      await committer.flush();

      assert.ok(committer.failed instanceof JournalWriteError);
      assert.equal(committer.failed.cause, disk);
      // Later appends are refused, whatever their seq.
      const next = how === 'rejects' ? 6 : 5;
      assert.equal(await outcome(committer.append(entry(next))), 'rejected');
      assert.equal(await outcome(committer.append(entry(2))), 'rejected');
      await committer.flush();
      await new Promise<void>((resolve) => setImmediate(resolve));

      assert.deepEqual(
        writer.frames.map((frame) => frame?.firstSeq),
        [1, 2],
        'nothing after the failed batch reached the writer',
      );
      assert.deepEqual(committer.lastDurable, { seq: 1, ts: 1001 }, 'nothing past the hole is durable');
    });
  }
});

describe('group commit: flush', () => {
  test('flush resolves only once the batch being written is durable, not while it is in flight', async () => {
    const held = deferred();
    const arrived = deferred();
    const writer: BatchWriter = {
      write: () => {
        arrived.resolve();
        return held.promise;
      },
    };
    const committer = new GroupCommitter(writer, { maxEntries: 10 }, { seq: 0, ts: 0 });
    const acked = outcome(committer.append(entry(1)));
    await arrived.promise;
    let flushed = false;
    const flushing = committer.flush().then(() => {
      flushed = true;
    });
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(flushed, false, 'flush resolved while the batch was still being written');
    held.resolve();
    await flushing;
    assert.equal(await acked, 'ack');
    assert.deepEqual(committer.lastDurable, { seq: 1, ts: 1001 });
  });
});

describe('group commit: batch listeners', () => {
  test('a listener that throws neither holds back the durable batch nor the other listeners; its error is reported', async () => {
    const reported: unknown[] = [];
    const committer = new GroupCommitter(
      { write: () => undefined },
      { maxEntries: 10 },
      { seq: 0, ts: 0 },
      (error) => reported.push(error),
    );
    const seen: number[] = [];
    committer.observeBatches(() => {
      throw new Error('listener bug');
    });
    committer.observeBatches((entries) => seen.push(entries));
    assert.equal(await outcome(committer.append(entry(1))), 'ack');
    assert.equal(await outcome(committer.append(entry(2))), 'ack', 'the next batch is written too');
    assert.deepEqual(seen, [1, 1], 'the other listener saw both batches');
    assert.equal(reported.length, 2);
    assert.match(String(reported[0]), /listener bug/);
    assert.deepEqual(committer.lastDurable, { seq: 2, ts: 1002 });
  });
});

describe('group commit: wake', () => {
  test('wake with nothing queued hands the writer one empty batch; after a failed one flush still resolves', async () => {
    const writes: Array<[StoredFrame | null, number]> = [];
    let fail = false;
    const committer = new GroupCommitter(
      {
        write(frame, checkpoints) {
          writes.push([frame, checkpoints.length]);
          if (fail) throw new Error('the writer failed');
        },
      },
      { maxEntries: 10 },
      { seq: 0, ts: 0 },
    );
    committer.wake();
    await committer.flush();
    assert.deepEqual(writes, [[null, 0]]);
    // A batch that fails with a wake-up pending: flush resolves all the same.
    const appended = committer.append(entry(1));
    committer.wake();
    fail = true;
    await assert.rejects(appended);
    await committer.flush();
    assert.ok(committer.failed instanceof JournalWriteError);
    committer.wake();
    await committer.flush();
    assert.equal(writes.length, 2, 'a failed committer is not woken');
  });
});
