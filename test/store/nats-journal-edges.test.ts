/**
 * NATS journal behaviours the contract and nats-journal.test.ts leave unpinned: finding the
 * last frame behind several checkpoints, the stream checks at open, checkpoint publish failures,
 * checkpoints published once, the latest checkpoint for a seq winning, a torn tail taking its
 * checkpoints with it, a writer that does not answer, an in-flight duplicate ack, a server
 * that stays away, and a split batch whose publish fails part way. Skips when nats-server is not
 * installed (never under CI=true: test/support/nats.ts then fails).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { headers } from 'nats';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { JournalWriteError } from '../../src/store/journal.ts';
import {
  journalStreamConfig,
  NatsJournal,
  NatsJournalStream,
  type NatsJournalTarget,
} from '../../src/store/nats/nats-journal.ts';
import { startNats } from '../support/nats.ts';

const server = await startNats({ jetstream: true });
after(() => server?.stop());
const skip = server === null ? 'nats-server is not installed' : false;

let streams = 0;
function freshTarget(): NatsJournalTarget {
  return { servers: server!.url, stream: `A_${process.pid}_${++streams}`, replicas: 1 };
}

type Cmd = { type: string; n?: number; big?: string };
const entry = (seq: number, command: Cmd = { type: 'noop', n: seq }) => ({
  seq,
  ts: 1_700_000_000_000 + seq,
  command,
});

async function seqsFrom(journal: NatsJournal<Cmd>, from: number): Promise<number[]> {
  const seqs: number[] = [];
  for await (const e of journal.readFrom(from)) seqs.push(e.seq);
  return seqs;
}

async function subjectCount(target: NatsJournalTarget, subject: string): Promise<number> {
  const conn = await NatsJournalStream.connect(target, 'test count');
  try {
    const info = await conn.jsm.streams.info(target.stream, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  } finally {
    await conn.close();
  }
}

test('reopening finds the last frame behind several checkpoints published after it', { skip }, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>({ ...target, limits: { maxEntries: 3 } });
  for (let seq = 1; seq <= 9; seq++) await journal.append(entry(seq));
  // Recorded after their frames were durable: each goes out alone, after the last frame.
  for (const seq of [4, 5, 6, 7, 8, 9]) {
    journal.recordCheckpoint({ seq, stateHash: `h${seq}` });
    await journal.flush();
  }
  await journal.close();
  const reopened = await NatsJournal.open<Cmd>(target);
  try {
    assert.equal(await reopened.lastSeq(), 9);
    // Seq 7 is taken: an append that would duplicate it is refused.
    await assert.rejects(reopened.append(entry(7)));
  } finally {
    await reopened.close();
  }
  const again = await NatsJournal.open<Cmd>(target);
  try {
    assert.equal(await again.lastSeq(), 9);
    await again.append(entry(10));
    assert.deepEqual(await seqsFrom(again, 1), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  } finally {
    await again.close();
  }
});

test('an existing stream with other replicas than JOURNAL_REPLICAS, or a per-subject limit, is refused', {
  skip,
}, async () => {
  const target = freshTarget();
  await (await NatsJournal.open(target)).close();
  await assert.rejects(
    NatsJournal.open({ ...target, replicas: 3 }),
    (error: unknown) =>
      error instanceof StoreOpenError && /1 replicas, JOURNAL_REPLICAS says 3/.test(error.message),
  );
  const limited = freshTarget();
  const conn = await NatsJournalStream.connect(limited, 'test setup');
  await conn.jsm.streams.add({ ...journalStreamConfig(limited), max_msgs_per_subject: 1_000 });
  await conn.close();
  await assert.rejects(
    NatsJournal.open(limited),
    (error: unknown) => error instanceof StoreOpenError && /discarded at a limit/.test(error.message),
  );
});

test('a checkpoint publish that fails leaves its acknowledged batch acknowledged and fails the next write', {
  skip,
}, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>(target);
  try {
    const first = journal.append(entry(1));
    // Larger than the server's max payload: its publish fails, after the frame was acknowledged.
    journal.recordCheckpoint({ seq: 1, stateHash: 'z'.repeat(2 * 1024 * 1024) });
    await first;
    await journal.flush();
    await assert.rejects(journal.append(entry(2)), JournalWriteError);
    await assert.rejects(journal.append(entry(3)), JournalWriteError);
    assert.equal(await journal.lastSeq(), 1);
  } finally {
    await journal.close();
  }
  const reopened = await NatsJournal.open<Cmd>(target);
  try {
    assert.deepEqual(await seqsFrom(reopened, 1), [1]);
  } finally {
    await reopened.close();
  }
});

test('each checkpoint is published once, however many batches follow it', { skip }, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>({ ...target, limits: { maxEntries: 2 } });
  try {
    for (let seq = 1; seq <= 20; seq++) {
      await journal.append(entry(seq));
      if (seq % 5 === 0) journal.recordCheckpoint({ seq, stateHash: `h${seq}` });
    }
    await journal.flush();
    assert.equal(await subjectCount(target, `${target.stream}.checkpoints`), 4);
    assert.deepEqual(
      (await journal.checkpoints(1, 20)).map((c) => c.seq),
      [5, 10, 15, 20],
    );
  } finally {
    await journal.close();
  }
});

test("a checkpoint for a seq of a batch still queued is published only after that batch's frame", {
  skip,
}, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>({ ...target, limits: { maxEntries: 1 } });
  try {
    // Two frames queued at once (one entry each); the checkpoint for seq 2 goes with the first write.
    const acks = [journal.append(entry(1)), journal.append(entry(2))];
    journal.recordCheckpoint({ seq: 2, stateHash: 'h2' });
    await Promise.all(acks);
    await journal.flush();
  } finally {
    await journal.close();
  }
  const conn = await NatsJournalStream.connect(target, 'test order');
  try {
    const subjects: string[] = [];
    const { lastSeq } = await conn.state();
    for (let seq = 1; seq <= lastSeq; seq++) {
      const message = await conn.jsm.streams.getMessage(target.stream, { seq });
      const at = message.header?.get('Journal-First-Seq') || message.header?.get('Journal-Seq');
      subjects.push(`${message.subject}:${at}`);
    }
    assert.deepEqual(subjects, [
      `${target.stream}.frames:1`,
      `${target.stream}.frames:2`,
      `${target.stream}.checkpoints:2`,
    ]);
  } finally {
    await conn.close();
  }
});

test('a later checkpoint for the same seq wins, as an upsert would', { skip }, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>(target);
  try {
    await journal.append(entry(1));
    journal.recordCheckpoint({ seq: 1, stateHash: 'old' });
    await journal.flush();
    journal.recordCheckpoint({ seq: 1, stateHash: 'new' });
    await journal.flush();
    assert.deepEqual(await journal.checkpoints(1, 1), [{ seq: 1, stateHash: 'new' }]);
  } finally {
    await journal.close();
  }
});

test("a torn last frame is dropped with the checkpoints for its seqs, its first seq's included", {
  skip,
}, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>(target);
  await journal.append(entry(1));
  journal.recordCheckpoint({ seq: 1, stateHash: 'h1' });
  await journal.flush();
  const second = journal.append(entry(2));
  journal.recordCheckpoint({ seq: 2, stateHash: 'h2' });
  await second;
  await journal.flush();
  await journal.close();
  // Rewrite the stream with the last frame's payload flipped (as nats-journal.test.ts does).
  const conn = await NatsJournalStream.connect(target, 'test rewrite');
  try {
    const info = await conn.jsm.streams.info(target.stream);
    const messages: { subject: string; data: Uint8Array; header: Map<string, string> }[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await conn.nextOn(`${target.stream}.*`, seq);
      if (message === null) break;
      const map = new Map<string, string>();
      for (const key of message.header.keys()) map.set(key, message.header.get(key));
      messages.push({ subject: message.subject, data: message.data, header: map });
      seq = message.seq;
    }
    const lastFrame = messages.findLastIndex((m) => m.subject.endsWith('.frames'));
    const data = Buffer.from(messages[lastFrame]!.data);
    data[0] = data[0]! ^ 0xff;
    messages[lastFrame] = { ...messages[lastFrame]!, data };
    await conn.jsm.streams.delete(target.stream);
    await conn.jsm.streams.add(info.config);
    for (const m of messages) {
      const h = headers();
      for (const [key, value] of m.header) h.set(key, value);
      await conn.js.publish(m.subject, m.data, { headers: h });
    }
  } finally {
    await conn.close();
  }
  const reopened = await NatsJournal.open<Cmd>(target);
  try {
    assert.deepEqual(reopened.openReport, { droppedTailRecords: 1, droppedTailEntries: 1 });
    assert.equal(await reopened.lastSeq(), 1);
    assert.deepEqual(await reopened.checkpoints(1, 10), [{ seq: 1, stateHash: 'h1' }]);
  } finally {
    await reopened.close();
  }
});

test('a writer that subscribes but does not answer still keeps a second open out', { skip }, async () => {
  const target = freshTarget();
  const conn = await NatsJournalStream.connect(target, 'stuck writer');
  try {
    conn.nc.subscribe(`${target.stream}.writer`, { callback: () => undefined });
    await conn.nc.flush();
    await assert.rejects(
      NatsJournal.open(target),
      (error: unknown) =>
        error instanceof StoreOpenError && /in use by another running service/.test(error.message),
    );
  } finally {
    await conn.close();
  }
});

test('a try answered as an in-flight duplicate (seq 0) is sent again, and the writer goes on', {
  skip,
}, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>(target);
  try {
    const js = (journal as unknown as { conn: NatsJournalStream }).conn.js;
    const real = js.publish.bind(js);
    let calls = 0;
    // The first try reaches the stream, but its answer is the one a clustered stream gives a
    // repeat of a message not yet stored: duplicate, seq 0.
    js.publish = (async (...args: Parameters<typeof real>) => {
      calls++;
      const ack = await real(...args);
      if (calls === 1) return { ...ack, duplicate: true, seq: 0 };
      return ack;
    }) as typeof js.publish;
    await journal.append(entry(1));
    assert.equal(calls, 2, 'sent again with the same message id');
    await journal.append(entry(2));
    await journal.append(entry(3));
    assert.deepEqual(await seqsFrom(journal, 1), [1, 2, 3]);
    assert.equal(await subjectCount(target, `${target.stream}.frames`), 3, 'each stored once');
  } finally {
    await journal.close();
  }
});

test('an append fails the journal once the server stays away past the publish deadline', {
  skip,
}, async () => {
  const own = await startNats({ jetstream: true });
  assert.ok(own !== null, 'nats-server started');
  const target = { servers: own.url, stream: 'GONE', replicas: 1 };
  const journal = await NatsJournal.open<Cmd>({ ...target, ackTimeoutMs: 2_000, reconnectWaitMs: 100 });
  try {
    await journal.append(entry(1));
    await own.stop();
    const outcome = await Promise.race([
      journal.append(entry(2)).then(
        () => 'resolved',
        (error: unknown) => (error instanceof JournalWriteError ? 'failed' : `other: ${String(error)}`),
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 30_000).unref()),
    ]);
    // A generous bound: the deadline (2 s of retries) ends it; without one it waits for ever.
    assert.equal(outcome, 'failed');
  } finally {
    await journal.close();
  }
});

/**
 * A batch of 2,000 entries of 600 distinct bytes each (1.2 MB; the codec interns repeated strings
 * within a batch): two frames against the default 1 MB max payload.
 */
function appendSplitBatch(journal: NatsJournal<Cmd>, from: number): Promise<PromiseSettledResult<void>[]> {
  const pending: Promise<void>[] = [];
  for (let seq = from; seq < from + 2_000; seq++) {
    const big = String(seq).padStart(8, '0').repeat(75);
    pending.push(journal.append(entry(seq, { type: 'big', big })));
  }
  return Promise.allSettled(pending);
}

test('a split batch whose later part fails is refused whole and never replayed', { skip }, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>({ ...target, limits: { maxEntries: 2_000 } });
  try {
    await journal.append(entry(1));
    const js = (journal as unknown as { conn: NatsJournalStream }).conn.js;
    const real = js.publish.bind(js);
    let frames = 0;
    js.publish = (async (...args: Parameters<typeof real>) => {
      if (args[0] === `${target.stream}.frames` && ++frames === 2) throw new Error('the second part is lost');
      return real(...args);
    }) as typeof js.publish;
    const outcomes = await appendSplitBatch(journal, 2);
    assert.equal(frames, 2, 'the batch went out as two parts');
    assert.ok(
      outcomes.every((o) => o.status === 'rejected' && o.reason instanceof JournalWriteError),
      'every append of the batch is refused',
    );
    assert.equal(await subjectCount(target, `${target.stream}.frames`), 2, 'the first part is stored');
    // A reader meanwhile does not see the part: the batch never completed.
    assert.deepEqual(await seqsFrom(journal, 1), [1]);
  } finally {
    await journal.close();
  }
  const reopened = await NatsJournal.open<Cmd>(target);
  try {
    assert.deepEqual(reopened.openReport, { droppedTailRecords: 1, droppedTailEntries: 1_000 });
    assert.equal(await subjectCount(target, `${target.stream}.frames`), 1);
    assert.equal(await reopened.lastSeq(), 1);
    await reopened.append(entry(2));
    assert.deepEqual(await seqsFrom(reopened, 1), [1, 2]);
  } finally {
    await reopened.close();
  }
});

test('a split batch stored whole reads back as one batch, from its first seq or its second part', {
  skip,
}, async () => {
  const target = freshTarget();
  const journal = await NatsJournal.open<Cmd>({ ...target, limits: { maxEntries: 2_000 } });
  try {
    const outcomes = await appendSplitBatch(journal, 1);
    assert.ok(
      outcomes.every((o) => o.status === 'fulfilled'),
      'the batch is stored',
    );
    assert.equal(await subjectCount(target, `${target.stream}.frames`), 2, 'as two parts');
    const batches: number[][] = [];
    for await (const batch of journal.readBatches(1)) batches.push(batch.map((e) => e.seq));
    assert.deepEqual(
      batches.map((b) => [b[0], b.length]),
      [[1, 2_000]],
    );
    const tail: number[] = [];
    for await (const batch of journal.readBatches(1_999)) for (const e of batch) tail.push(e.seq);
    assert.deepEqual(tail, [1_999, 2_000]);
  } finally {
    await journal.close();
  }
  const reopened = await NatsJournal.open<Cmd>(target);
  try {
    assert.deepEqual(reopened.openReport, { droppedTailRecords: 0, droppedTailEntries: 0 });
    assert.equal(await reopened.lastSeq(), 2_000);
  } finally {
    await reopened.close();
  }
});
