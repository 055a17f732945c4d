/**
 * The journal contract on the NATS JetStream backend, against a real throwaway nats-server
 * (test/support/nats.ts; a fresh stream per test, snapshots in SQLite as the service keeps them),
 * then what is the backend's own: the single-writer fence, frames larger than the server's max
 * payload, and streams that would lose messages. Skips, saying why, when nats-server is not
 * installed (never under CI=true: test/support/nats.ts then fails).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { headers, StorageType, type StreamConfig } from 'nats';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import { type BatchLimits, JournalCorruptError, JournalWriteError } from '../../src/store/journal.ts';
import {
  frameHeaders,
  journalStreamConfig,
  NatsJournal,
  NatsJournalStream,
  type NatsJournalTarget,
} from '../../src/store/nats/nats-journal.ts';
import { startNats } from '../support/nats.ts';
import { journalContract, type RawFrame, type StoreHarness, type TestCommand } from './journal-contract.ts';
import {
  flipSqliteSnapshotByte,
  insertRawSqliteSnapshot,
  sqliteSnapshotOpener,
} from './sqlite-raw-snapshot.ts';

const server = await startNats({ jetstream: true });
after(() => server?.stop());

let streams = 0;
function freshTarget(): NatsJournalTarget {
  return { servers: server!.url, stream: `J_${process.pid}_${++streams}`, replicas: 1 };
}

interface RawMessage {
  subject: string;
  data: Uint8Array;
  headers: Map<string, string>;
}

/**
 * Rewrites the stream as it would be stored had its bytes been different: every message read,
 * `edit` applied, the stream deleted, made again with the same config and the messages published
 * in the new order. (A stored JetStream message cannot be changed in place.)
 */
async function rewriteStream(
  target: NatsJournalTarget,
  edit: (messages: RawMessage[]) => RawMessage[],
): Promise<void> {
  const conn = await NatsJournalStream.connect(target, 'test rewrite');
  try {
    const info = await conn.jsm.streams.info(target.stream);
    const messages: RawMessage[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const message = await conn.nextOn(`${target.stream}.*`, seq);
      if (message === null) break;
      const map = new Map<string, string>();
      for (const key of message.header.keys()) map.set(key, message.header.get(key));
      messages.push({ subject: message.subject, data: message.data, headers: map });
      seq = message.seq;
    }
    const config: StreamConfig = info.config;
    await conn.jsm.streams.delete(target.stream);
    await conn.jsm.streams.add(config);
    for (const message of edit(messages)) {
      const h = headers();
      for (const [key, value] of message.headers) h.set(key, value);
      await conn.js.publish(message.subject, message.data, { headers: h });
    }
  } finally {
    await conn.close();
  }
}

function rawFrameMessage(target: NatsJournalTarget, frame: RawFrame): RawMessage {
  const h = frameHeaders(frame);
  const map = new Map<string, string>();
  for (const key of h.keys()) map.set(key, h.get(key));
  return { subject: `${target.stream}.frames`, data: frame.payload, headers: map };
}

const firstSeqOf = (m: RawMessage) => Number(m.headers.get('Journal-First-Seq'));

if (server === null) {
  test('NATS JetStream journal contract', {
    skip: 'nats-server is not installed (run scripts/ensure-system-deps.sh)',
  });
} else {
  journalContract('nats', async (): Promise<StoreHarness> => {
    const target = freshTarget();
    const dir = mkdtempSync(join(tmpdir(), 'nats-journal-test-'));
    const snapshotPath = join(dir, 'snapshots.sqlite');
    const open: Array<{ close(): Promise<void> }> = [];
    const openJournal = async (limits?: BatchLimits) => {
      const journal = await NatsJournal.open<TestCommand>(limits ? { ...target, limits } : target);
      open.push(journal);
      return journal;
    };
    return {
      openJournal,
      openSnapshots: sqliteSnapshotOpener(snapshotPath, open),
      async insertRawFrame(frame) {
        // Opening through the journal makes the stream exactly as a real writer did; the frame
        // then goes where its seqs put it in the stream.
        await (await openJournal()).close();
        await rewriteStream(target, (messages) => {
          const at = messages.findIndex(
            (m) => m.subject.endsWith('.frames') && firstSeqOf(m) > frame.firstSeq,
          );
          const raw = rawFrameMessage(target, frame);
          if (at < 0) return [...messages, raw];
          return [...messages.slice(0, at), raw, ...messages.slice(at)];
        });
      },
      async corruptFrame(firstSeq) {
        await rewriteStream(target, (messages) =>
          messages.map((m) => {
            if (!m.subject.endsWith('.frames') || firstSeqOf(m) !== firstSeq) return m;
            const data = Buffer.from(m.data);
            data[0] = data[0]! ^ 0xff;
            return { ...m, data };
          }),
        );
      },
      async corruptSnapshot(seq) {
        flipSqliteSnapshotByte(snapshotPath, seq);
      },
      async insertRawSnapshot(snapshot) {
        insertRawSqliteSnapshot(snapshotPath, snapshot);
      },
      async frameCount() {
        const conn = await NatsJournalStream.connect(target, 'test count');
        try {
          const info = await conn.jsm.streams.info(target.stream, {
            subjects_filter: `${target.stream}.frames`,
          });
          return info.state.subjects?.[`${target.stream}.frames`] ?? 0;
        } finally {
          await conn.close();
        }
      },
      async dispose() {
        for (const store of open) await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  const entry = (seq: number, command: TestCommand = { type: 'noop', n: seq }) => ({
    seq,
    ts: 1_700_000_000_000 + seq,
    command,
  });

  test('one writer per stream: a second open is refused while the first runs', async () => {
    const target = freshTarget();
    const first = await NatsJournal.open(target);
    await first.append(entry(1));
    await assert.rejects(
      NatsJournal.open(target),
      (error: unknown) =>
        error instanceof StoreOpenError && /in use by another running service/.test(error.message),
    );
    assert.equal(await first.lastSeq(), 1, 'the running writer is unharmed');
    await first.append(entry(2));
    await first.close();
    const second = await NatsJournal.open(target);
    assert.equal(await second.lastSeq(), 2);
    await second.close();
  });

  test('two writers that opened together: the second to publish is fenced off and poisoned', async () => {
    const target = freshTarget();
    const a = await NatsJournal.open(target);
    await a.append(entry(1));
    // B opened at the same moment as A would have (the open-time check cannot see A yet).
    const b = await NatsJournal.open({ ...target, exclusive: false });
    assert.equal(await b.lastSeq(), 1);
    await b.append(entry(2, { type: 'from_b' }));
    await assert.rejects(a.append(entry(2, { type: 'from_a' })), (error: unknown) => {
      assert.ok(error instanceof JournalWriteError);
      assert.match(String((error.cause as Error).message), /another writer appended/);
      return true;
    });
    // Poisoned: every later append is refused, even one that would fit.
    await assert.rejects(a.append(entry(3)), JournalWriteError);
    await a.close();
    // B, the one that published first, goes on; its entries are the journal.
    await b.append(entry(3, { type: 'from_b' }));
    const read: unknown[] = [];
    for await (const e of b.readFrom(1)) read.push(e);
    assert.deepEqual(read, [entry(1), entry(2, { type: 'from_b' }), entry(3, { type: 'from_b' })]);
    await b.close();
  });

  test('a checkpoint published by another writer also fences the running one', async () => {
    const target = freshTarget();
    const a = await NatsJournal.open(target);
    await a.append(entry(1));
    const intruder = await NatsJournalStream.connect(target, 'intruder');
    await intruder.js.publish(`${target.stream}.checkpoints`, Buffer.from('x'));
    await intruder.close();
    await assert.rejects(a.append(entry(2)), /journal write failed/);
    await assert.rejects(a.append(entry(2)), JournalWriteError);
    await a.close();
  });

  test('a batch larger than the max payload is stored as several frames and reads back whole', async () => {
    const target = freshTarget();
    const journal = await NatsJournal.open(target);
    // About 2.4 MB in one batch against nats-server's default 1 MB max payload. Each entry's text
    // is its own: the codec interns a string repeated in a batch (one 600-byte text made 60 KB).
    const pending: Promise<void>[] = [];
    for (let seq = 1; seq <= 4000; seq++) {
      const big = String(seq).padStart(8, '0').repeat(75);
      pending.push(journal.append(entry(seq, { type: 'big', big })));
    }
    await Promise.all(pending);
    await journal.close();
    const conn = await NatsJournalStream.connect(target, 'test count');
    try {
      const frames = `${target.stream}.frames`;
      const info = await conn.jsm.streams.info(target.stream, { subjects_filter: frames });
      assert.ok(
        (info.state.subjects?.[frames] ?? 0) >= 3,
        `split into frames: ${JSON.stringify(info.state.subjects)}`,
      );
    } finally {
      await conn.close();
    }
    const reopened = await NatsJournal.open(target);
    assert.equal(await reopened.lastSeq(), 4000);
    let count = 0;
    for await (const e of reopened.readFrom(1)) {
      count++;
      assert.equal(e.seq, count);
    }
    assert.equal(count, 4000);
    const tail: number[] = [];
    for await (const e of reopened.readFrom(3999)) tail.push(e.seq);
    assert.deepEqual(tail, [3999, 4000]);
    await reopened.close();
  });

  test("a split batch's part that says its batch ends before the part does is corruption, not a short batch", async () => {
    const target = freshTarget();
    const journal = await NatsJournal.open(target);
    const pending: Promise<void>[] = [];
    for (let seq = 1; seq <= 4000; seq++) {
      pending.push(journal.append(entry(seq, { type: 'big', big: String(seq).padStart(8, '0').repeat(75) })));
    }
    await Promise.all(pending);
    await journal.close();
    let damagedFirstSeq = 0;
    await rewriteStream(target, (messages) =>
      messages.map((m) => {
        if (damagedFirstSeq !== 0 || !m.headers.has('Journal-Batch-Last')) return m;
        damagedFirstSeq = firstSeqOf(m);
        const ownLast = damagedFirstSeq + Number(m.headers.get('Journal-Count')) - 1;
        const h = new Map(m.headers);
        h.set('Journal-Batch-Last', String(ownLast - 1));
        return { ...m, headers: h };
      }),
    );
    assert.ok(damagedFirstSeq > 0, 'the batch was split into parts');
    const reading = async () => {
      const reopened = await NatsJournal.open(target);
      try {
        for await (const _ of reopened.readFrom(1)) {
        }
      } finally {
        await reopened.close();
      }
    };
    await assert.rejects(reading, (error: unknown) => {
      assert.ok(error instanceof JournalCorruptError, `not a JournalCorruptError: ${String(error)}`);
      assert.match(error.message, /after its batch's last seq/);
      assert.equal(error.atSeq, damagedFirstSeq);
      return true;
    });
  });

  test('reads from a seq deep in a long journal start at the frame holding it', async () => {
    const target = freshTarget();
    const journal = await NatsJournal.open({ ...target, limits: { maxEntries: 3 } });
    for (let seq = 1; seq <= 100; seq++) {
      await journal.append(entry(seq));
      if (seq % 10 === 0) journal.recordCheckpoint({ seq, stateHash: `h${seq}` });
    }
    await journal.flush();
    for (const from of [1, 2, 37, 38, 99, 100]) {
      const seqs: number[] = [];
      for await (const e of journal.readFrom(from)) seqs.push(e.seq);
      assert.deepEqual(
        seqs,
        Array.from({ length: 101 - from }, (_, i) => from + i),
        `from ${from}`,
      );
    }
    assert.deepEqual(await journal.checkpoints(35, 60), [
      { seq: 40, stateHash: 'h40' },
      { seq: 50, stateHash: 'h50' },
      { seq: 60, stateHash: 'h60' },
    ]);
    await journal.close();
  });

  test("the first seq is the first stored frame's, past messages deleted from the stream", async () => {
    const target = freshTarget();
    const journal = await NatsJournal.open({ ...target, limits: { maxEntries: 10 } });
    const pending: Promise<void>[] = [];
    for (let seq = 1; seq <= 25; seq++) pending.push(journal.append(entry(seq)));
    journal.recordCheckpoint({ seq: 25, stateHash: 'h25' });
    await Promise.all(pending);
    await journal.flush();
    assert.equal(await journal.firstSeq(), 1);
    // The stream denies purges, not deletes: someone deletes the first frame by hand.
    const conn = await NatsJournalStream.connect(target, 'test delete');
    const first = await conn.nextOn(`${target.stream}.frames`, 1);
    await conn.jsm.streams.deleteMessage(target.stream, first!.seq, false);
    await conn.close();
    assert.equal(await journal.firstSeq(), 11);
    assert.deepEqual(await journal.trimThrough(20, 5), { records: 1, entries: 10, done: true });
    assert.equal(await journal.firstSeq(), 21);
    await journal.close();
  });

  test("a trim deletes the stream's first messages: the stream shrinks, and still denies purges", async () => {
    const target = freshTarget();
    const journal = await NatsJournal.open({ ...target, limits: { maxEntries: 10 } });
    const pending: Promise<void>[] = [];
    for (let seq = 1; seq <= 50; seq++) pending.push(journal.append(entry(seq)));
    await Promise.all(pending);
    const conn = await NatsJournalStream.connect(target, 'test trim');
    try {
      const before = (await conn.jsm.streams.info(target.stream)).state;
      assert.equal(before.messages, 5);
      assert.deepEqual(await journal.trimThrough(40, 100), { records: 4, entries: 40, done: true });
      const after = (await conn.jsm.streams.info(target.stream)).state;
      assert.equal(after.messages, 1);
      assert.equal(after.first_seq, before.first_seq + 4);
      assert.ok(after.bytes < before.bytes / 4, `${after.bytes} bytes left of ${before.bytes}`);
      await assert.rejects(conn.jsm.streams.purge(target.stream), /purge/i);
    } finally {
      await conn.close();
    }
    await journal.close();
  });

  test('a stream that would drop or expire messages, or not on disk, is refused', async () => {
    const target = freshTarget();
    const conn = await NatsJournalStream.connect(target, 'test setup');
    await conn.jsm.streams.add({ ...journalStreamConfig(target), max_age: 3_600_000_000_000 });
    const memory = freshTarget();
    await conn.jsm.streams.add({ ...journalStreamConfig(memory), storage: StorageType.Memory });
    await conn.close();
    await assert.rejects(NatsJournal.open(target), /messages expire/);
    await assert.rejects(NatsJournal.open(memory), /storage is memory, not file/);
    await assert.rejects(NatsJournal.open({ ...freshTarget(), replicas: 3 }));
  });
}
