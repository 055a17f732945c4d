/**
 * The journal + snapshot-store contract: every backend runs these same tests through a harness
 * that opens its stores on a fresh, empty database and can touch stored rows directly (to
 * simulate torn writes, corruption and records written by older versions).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { encodeBatch } from '../../src/store/binary-codec.ts';
import {
  type BatchLimits,
  type Journal,
  JournalCorruptError,
  type JournalEntry,
  JournalWriteError,
  type SnapshotStore,
  type TrimResult,
} from '../../src/store/journal.ts';
import { encodeSnapshotV1, type StoredSnapshot } from '../../src/store/record-format.ts';

export interface RawFrame {
  readonly firstSeq: number;
  readonly count: number;
  readonly version: number;
  readonly payload: Buffer;
  readonly checksum: number;
}

export interface StoreHarness {
  openJournal(limits?: BatchLimits): Promise<Journal<TestCommand>>;
  openSnapshots(keep?: number): Promise<SnapshotStore<unknown>>;
  /** Inserts a stored journal record as raw bytes (an older writer, or a forged one). */
  insertRawFrame(frame: RawFrame): Promise<void>;
  /** Flips payload bytes of the record starting at firstSeq without fixing its checksum. */
  corruptFrame(firstSeq: number): Promise<void>;
  corruptSnapshot(seq: number): Promise<void>;
  /** Inserts a stored snapshot record as raw bytes (e.g. a version 1 snapshot of an older writer). */
  insertRawSnapshot(snapshot: StoredSnapshot): Promise<void>;
  frameCount(): Promise<number>;
  dispose(): Promise<void>;
}

export type TestCommand = { readonly type: string; readonly n?: number; readonly [k: string]: unknown };

function entry(seq: number, command: TestCommand = { type: 'noop', n: seq }): JournalEntry<TestCommand> {
  return { seq, ts: 1_700_000_000_000 + seq, command };
}

async function collect<C>(iterable: AsyncIterable<JournalEntry<C>>): Promise<JournalEntry<C>[]> {
  const out: JournalEntry<C>[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

async function appendRange(journal: Journal<TestCommand>, from: number, to: number): Promise<void> {
  const pending: Promise<void>[] = [];
  for (let seq = from; seq <= to; seq++) pending.push(journal.append(entry(seq)));
  await Promise.all(pending);
}

/** A v1 record as an old writer would have stored it (header text + payload under CRC-32). */
export function rawV1Frame(firstSeq: number, pairsJson: string, count: number): RawFrame {
  const payload = Buffer.from(pairsJson, 'utf8');
  const checksum = crc32(payload, crc32(`v1:${firstSeq}:${count}:`)) | 0;
  return { firstSeq, count, version: 1, payload, checksum };
}

/**
 * A version 2 snapshot record as stored: a one-value binary batch under CRC-32 of the literal
 * header `s2:<seq>:<stateHash>:` (the on-disk format, not the writer's helper).
 */
export function rawSnapshotV2(seq: number, ts: number, stateHash: string, state: unknown): StoredSnapshot {
  const payload = encodeBatch([state]);
  const checksum = crc32(payload, crc32(`s2:${seq}:${stateHash}:`)) | 0;
  return { seq, ts, stateHash, version: 2, payload, checksum };
}

/** A JournalCorruptError at `seq` whose message matches `message`. */
function corruptAt(seq: number, message: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof JournalCorruptError, `not a JournalCorruptError: ${String(error)}`);
    assert.match(error.message, message);
    assert.equal(error.atSeq, seq);
    return true;
  };
}

async function seqsFrom(journal: Journal<TestCommand>, from: number): Promise<number[]> {
  const seqs: number[] = [];
  for await (const batch of journal.readBatches(from)) for (const e of batch) seqs.push(e.seq);
  return seqs;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(to - from + 1, 0) }, (_, i) => from + i);
}

export function journalContract(backend: string, makeHarness: () => Promise<StoreHarness>): void {
  async function withHarness(run: (h: StoreHarness) => Promise<void>): Promise<void> {
    const harness = await makeHarness();
    try {
      await run(harness);
    } finally {
      await harness.dispose();
    }
  }

  describe(`journal contract: ${backend}`, () => {
    test('an empty journal has nothing to read and last seq 0', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        assert.equal(await journal.lastSeq(), 0);
        assert.deepEqual(await journal.last(), { seq: 0, ts: 0 });
        assert.equal(await journal.firstSeq(), 1);
        assert.deepEqual(await collect(journal.readFrom(1)), []);
        assert.deepEqual(journal.openReport, { droppedTailRecords: 0, droppedTailEntries: 0 });
        await journal.close();
      }));

    test('appends in one tick share one record; all read back in order after reopening', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        await appendRange(journal, 1, 500);
        assert.equal(await journal.lastSeq(), 500);
        assert.equal(await journal.firstSeq(), 1);
        assert.equal(await h.frameCount(), 1);
        await journal.close();
        const reopened = await h.openJournal();
        assert.deepEqual(await reopened.last(), { seq: 500, ts: 1_700_000_000_500 });
        const read = await collect(reopened.readFrom(1));
        assert.equal(read.length, 500);
        assert.deepEqual(read[41], entry(42));
        assert.deepEqual(
          read.map((e) => e.seq),
          Array.from({ length: 500 }, (_, i) => i + 1),
        );
        await appendRange(reopened, 501, 510);
        assert.equal((await collect(reopened.readFrom(505))).length, 6);
        await reopened.close();
      }));

    test('an append resolves only after the batch holding it is durable, in seq order', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        const order: number[] = [];
        const pending = [1, 2, 3].map((seq) => journal.append(entry(seq)).then(() => order.push(seq)));
        assert.deepEqual(order, []);
        await Promise.all(pending);
        assert.deepEqual(order, [1, 2, 3]);
        await journal.close();
      }));

    test('batch observers are told each durable batch: its entry count and write time', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        const batches: Array<{ entries: number; ms: number; storageMs: number | null }> = [];
        journal.observeBatches((entries, ms, _frame, storageMs) => batches.push({ entries, ms, storageMs }));
        await appendRange(journal, 1, 300);
        await appendRange(journal, 301, 302);
        assert.deepEqual(
          batches.map((batch) => batch.entries),
          [300, 2],
        );
        assert.ok(batches.every((batch) => batch.ms >= 0 && Number.isFinite(batch.ms)));
        // The storage's own time, where a backend measures it, is part of the write time.
        assert.ok(batches.every((b) => b.storageMs === null || (b.storageMs >= 0 && b.storageMs <= b.ms)));
        await journal.close();
      }));

    test('batches respect the entry bound; reads start inside a record', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal({ maxEntries: 10 });
        await appendRange(journal, 1, 25);
        assert.equal(await h.frameCount(), 3);
        const read = await collect(journal.readFrom(14));
        assert.deepEqual(
          read.map((e) => e.seq),
          Array.from({ length: 12 }, (_, i) => i + 14),
        );
        let batches = 0;
        for await (const batch of journal.readBatches(1)) batches += batch.length > 0 ? 1 : 0;
        assert.ok(batches >= 1);
        await journal.close();
      }));

    test('an out-of-order append is refused and poisons the journal', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        await journal.append(entry(1));
        await assert.rejects(journal.append(entry(3)), /expected seq 2/);
        await assert.rejects(journal.append(entry(2)));
        await journal.close();
        const reopened = await h.openJournal();
        assert.equal(await reopened.lastSeq(), 1);
        await reopened.close();
      }));

    test('a command that cannot be encoded is refused and poisons the journal', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        await journal.append(entry(1));
        await assert.rejects(
          journal.append(entry(2, { type: 'bad', n: 1, big: 10n })),
          /cannot encode entry 2/,
        );
        await assert.rejects(journal.append(entry(2)));
        await journal.close();
        const reopened = await h.openJournal();
        assert.equal(await reopened.lastSeq(), 1);
        await reopened.close();
      }));

    test('appending after close is refused', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        await journal.close();
        await assert.rejects(journal.append(entry(1)));
      }));

    test('a torn last record is dropped on open, never replayed, and its seqs are reused', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        await appendRange(journal, 1, 5);
        await appendRange(journal, 6, 8);
        await journal.close();
        await h.corruptFrame(6);
        const reopened = await h.openJournal();
        assert.deepEqual(reopened.openReport, { droppedTailRecords: 1, droppedTailEntries: 3 });
        assert.equal(await reopened.lastSeq(), 5);
        assert.deepEqual(
          (await collect(reopened.readFrom(1))).map((e) => e.seq),
          [1, 2, 3, 4, 5],
        );
        await reopened.append(entry(6, { type: 'after_crash' }));
        const read = await collect(reopened.readFrom(6));
        assert.deepEqual(read, [entry(6, { type: 'after_crash' })]);
        await reopened.close();
      }));

    test('a corrupt record before the tail is a hard error when read', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        await appendRange(journal, 1, 5);
        await appendRange(journal, 6, 8);
        await journal.close();
        await h.corruptFrame(1);
        const reopened = await h.openJournal();
        assert.equal(reopened.openReport.droppedTailRecords, 0);
        await assert.rejects(collect(reopened.readFrom(1)), corruptAt(1, /fails its checksum/));
        await reopened.close();
      }));

    test('a bit flip before the tail that still decodes is caught by the checksum, not served', () =>
      withHarness(async (h) => {
        const written = rawV1Frame(1, '[[1000,{"type":"place_order","amount":10}]]', 1);
        // Disk bit rot: '1' (0x31) -> '9' (0x39), amount 10 -> 90; still valid JSON of one entry.
        const payload = Buffer.from(written.payload);
        const at = payload.indexOf('10}');
        payload[at] = payload[at]! ^ 0x08;
        assert.deepEqual(JSON.parse(payload.toString('utf8')), [[1000, { type: 'place_order', amount: 90 }]]);
        // The later record first: inserting opens the journal, which would drop a bad tail as torn.
        await h.insertRawFrame(rawV1Frame(2, '[[1001,{"type":"place_order","amount":20}]]', 1));
        await h.insertRawFrame({ ...written, payload });
        const journal = await h.openJournal();
        assert.equal(journal.openReport.droppedTailRecords, 0);
        assert.equal(await journal.lastSeq(), 2);
        await assert.rejects(collect(journal.readFrom(1)), corruptAt(1, /seq 1 fails its checksum/));
        await journal.close();
      }));

    test('a gap between records is a hard error when read', () =>
      withHarness(async (h) => {
        await h.insertRawFrame(rawV1Frame(1, '[[10,{"type":"a"}]]', 1));
        await h.insertRawFrame(rawV1Frame(3, '[[30,{"type":"c"}]]', 1));
        const journal = await h.openJournal();
        await assert.rejects(collect(journal.readFrom(1)), /gap/);
        await journal.close();
      }));

    test('a version 1 record written as raw bytes by an older writer is read', () =>
      withHarness(async (h) => {
        await h.insertRawFrame(
          rawV1Frame(
            1,
            '[[1700000000001,{"type":"place_order","price":42}],[1700000000002,{"type":"x"}]]',
            2,
          ),
        );
        const journal = await h.openJournal();
        assert.deepEqual(await journal.last(), { seq: 2, ts: 1_700_000_000_002 });
        assert.deepEqual(await collect(journal.readFrom(1)), [
          { seq: 1, ts: 1_700_000_000_001, command: { type: 'place_order', price: 42 } },
          { seq: 2, ts: 1_700_000_000_002, command: { type: 'x' } },
        ]);
        await journal.append(entry(3));
        assert.equal((await collect(journal.readFrom(1))).length, 3);
        await journal.close();
      }));

    test('a record of an unknown format version is refused, not guessed at', () =>
      withHarness(async (h) => {
        await h.insertRawFrame(rawV1Frame(1, '[[1,{"type":"a"}]]', 1));
        await h.insertRawFrame(rawV1Frame(3, '[[3,{"type":"c"}]]', 1));
        const payload = Buffer.from('[[2,{"type":"b"}]]');
        await h.insertRawFrame({
          firstSeq: 2,
          count: 1,
          version: 99,
          payload,
          checksum: crc32(payload, crc32('v99:2:1:')) | 0,
        });
        const journal = await h.openJournal();
        await assert.rejects(collect(journal.readFrom(1)), /unknown format version 99/);
        await journal.close();
      }));

    test('a version 2 record whose count disagrees with its payload is refused, not truncated', () =>
      withHarness(async (h) => {
        // A writer bug: two entries encoded, count 1 stored, checksum valid over what was stored.
        const payload = encodeBatch([1000, { type: 'a' }, 1001, { type: 'b' }]);
        // The later record first: inserting opens the journal, which must not meet this one as its tail.
        await h.insertRawFrame(rawV1Frame(2, '[[1002,{"type":"c"}]]', 1));
        await h.insertRawFrame({
          firstSeq: 1,
          count: 1,
          version: 2,
          payload,
          checksum: crc32(payload, crc32('v2:1:1:')) | 0,
        });
        const journal = await h.openJournal();
        assert.equal(await journal.lastSeq(), 2);
        await assert.rejects(collect(journal.readFrom(1)), corruptAt(1, /does not hold 1 entries/));
        await journal.close();
      }));

    test('hash checkpoints are stored with the batches and read by range', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal();
        const appended = appendRange(journal, 1, 10);
        journal.recordCheckpoint({ seq: 5, stateHash: 'h5' });
        journal.recordCheckpoint({ seq: 10, stateHash: 'h10' });
        await appended;
        await journal.flush();
        assert.deepEqual(await journal.checkpoints(1, 10), [
          { seq: 5, stateHash: 'h5' },
          { seq: 10, stateHash: 'h10' },
        ]);
        assert.deepEqual(await journal.checkpoints(6, 9), []);
        await journal.close();
      }));

    test('trimming deletes whole records ≤ the seq, oldest first, at most maxRecords a call', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal({ maxEntries: 10 });
        // Records [1-10] [11-20] [21-30] [31-40] [41-45].
        await appendRange(journal, 1, 45);
        assert.equal(await h.frameCount(), 5);
        const last = await journal.last();
        assert.deepEqual(await journal.trimThrough(25, 1), { records: 1, entries: 10, done: false });
        assert.equal(await journal.firstSeq(), 11);
        assert.deepEqual(await journal.trimThrough(25, 5), { records: 1, entries: 10, done: true });
        // [21-30] straddles 25: it stays.
        assert.equal(await journal.firstSeq(), 21);
        assert.deepEqual(await journal.trimThrough(25, 5), { records: 0, entries: 0, done: true });
        assert.deepEqual(await journal.trimThrough(5, 5), { records: 0, entries: 0, done: true });
        assert.equal(await h.frameCount(), 3);
        assert.deepEqual(await journal.last(), last);
        assert.equal(await journal.lastSeq(), 45);
        for (const from of [21, 22, 29, 30, 31, 40, 41, 45, 46]) {
          assert.deepEqual(await seqsFrom(journal, from), range(from, 45), `from ${from}`);
        }
        assert.deepEqual(
          await collect(journal.readFrom(33)),
          range(33, 45).map((seq) => entry(seq)),
        );
        // Exactly at a record's end: that record goes too.
        assert.deepEqual(await journal.trimThrough(40, 10), { records: 2, entries: 20, done: true });
        assert.equal(await journal.firstSeq(), 41);
        assert.deepEqual(await seqsFrom(journal, 41), range(41, 45));
        await assert.rejects(journal.trimThrough(40, 0), RangeError);
        await journal.close();
        await assert.rejects(journal.trimThrough(40, 1), JournalWriteError);
      }));

    test('the newest record is never trimmed; a restart resumes after it', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal({ maxEntries: 10 });
        assert.deepEqual(await journal.trimThrough(100, 10), { records: 0, entries: 0, done: true });
        assert.equal(await journal.firstSeq(), 1);
        await appendRange(journal, 1, 10);
        // A single record is the newest.
        assert.deepEqual(await journal.trimThrough(100, 10), { records: 0, entries: 0, done: true });
        await appendRange(journal, 11, 25);
        assert.deepEqual(await journal.trimThrough(1000, 100), { records: 2, entries: 20, done: true });
        assert.equal(await journal.firstSeq(), 21);
        assert.equal(await h.frameCount(), 1);
        assert.deepEqual(await journal.last(), { seq: 25, ts: entry(25).ts });
        await journal.close();
        const reopened = await h.openJournal({ maxEntries: 10 });
        assert.deepEqual(reopened.openReport, { droppedTailRecords: 0, droppedTailEntries: 0 });
        assert.deepEqual(await reopened.last(), { seq: 25, ts: entry(25).ts });
        assert.equal(await reopened.firstSeq(), 21);
        await appendRange(reopened, 26, 30);
        assert.deepEqual(await seqsFrom(reopened, 21), range(21, 30));
        // Reading from before the first stored seq starts at it.
        assert.deepEqual(await seqsFrom(reopened, 1), range(21, 30));
        assert.deepEqual(await reopened.trimThrough(1000, 100), { records: 1, entries: 5, done: true });
        assert.equal(await reopened.firstSeq(), 26);
        await reopened.close();
      }));

    test('trimming deletes the hash checkpoints the deleted records cover, no later ones', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal({ maxEntries: 10 });
        const appended = appendRange(journal, 1, 25);
        for (const seq of [5, 10, 11, 15, 20, 21, 25])
          journal.recordCheckpoint({ seq, stateHash: `h${seq}` });
        await appended;
        await journal.flush();
        assert.equal((await journal.checkpoints(1, 100)).length, 7);
        await journal.trimThrough(20, 1);
        assert.deepEqual(
          (await journal.checkpoints(1, 100)).map((c) => c.seq),
          [11, 15, 20, 21, 25],
        );
        await journal.trimThrough(24, 5);
        assert.deepEqual(await journal.checkpoints(1, 100), [
          { seq: 21, stateHash: 'h21' },
          { seq: 25, stateHash: 'h25' },
        ]);
        await journal.close();
      }));

    test('trims racing appends lose nothing appended (property)', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal({ maxEntries: 4 });
        let next = 1;
        let trimmed = 0;
        let trimmedThrough = 0;
        const step = fc.oneof(
          fc.record({ append: fc.integer({ min: 1, max: 9 }) }),
          fc.record({ back: fc.integer({ min: -3, max: 12 }), max: fc.integer({ min: 1, max: 3 }) }),
        );
        await fc.assert(
          fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
            const appends: Promise<void>[] = [];
            const trimCalls: Array<{ seq: number; max: number; result: Promise<TrimResult> }> = [];
            // Everything fired in one go: appends and trims interleave with the batches in flight.
            for (const s of steps) {
              if ('append' in s) {
                for (let i = 0; i < s.append; i++) appends.push(journal.append(entry(next++)));
              } else {
                const seq = next - 1 - s.back;
                trimCalls.push({ seq, max: s.max, result: journal.trimThrough(seq, s.max) });
              }
            }
            await Promise.all(appends);
            for (const call of trimCalls) {
              const result = await call.result;
              assert.ok(result.records <= call.max);
              assert.ok(result.entries >= result.records);
              trimmed += result.entries;
              if (result.records > 0) trimmedThrough = Math.max(trimmedThrough, call.seq);
            }
            const lastSeq = next - 1;
            const first = await journal.firstSeq();
            assert.equal(first, trimmed + 1, 'the entries reported trimmed are the ones gone');
            assert.ok(first <= trimmedThrough + 1, 'nothing past a trim seq was trimmed');
            assert.ok(lastSeq === 0 || first <= lastSeq, 'the newest record stays');
            assert.equal(await journal.lastSeq(), lastSeq);
            assert.deepEqual(await seqsFrom(journal, first), range(first, lastSeq));
            const tail = Math.max(first, lastSeq - 5);
            assert.deepEqual(
              await collect(journal.readFrom(tail)),
              range(tail, lastSeq).map((seq) => entry(seq)),
            );
          }),
          { numRuns: 20 },
        );
        const lastSeq = next - 1;
        await journal.close();
        const reopened = await h.openJournal({ maxEntries: 4 });
        assert.equal(await reopened.lastSeq(), lastSeq);
        assert.deepEqual(await seqsFrom(reopened, trimmed + 1), range(trimmed + 1, lastSeq));
        await reopened.close();
      }));

    test('any JSON-serialisable commands round-trip exactly (property)', () =>
      withHarness(async (h) => {
        const journal = await h.openJournal({ maxEntries: 7 });
        let next = 1;
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })), {
              minLength: 1,
              maxLength: 20,
            }),
            async (payloads) => {
              const first = next;
              const entries = payloads.map((p) => entry(next++, { type: 't', ...p }));
              await Promise.all(entries.map((e) => journal.append(e)));
              const read = await collect(journal.readFrom(first));
              // JSON has no -0: compare through JSON.
              assert.deepEqual(JSON.parse(JSON.stringify(read)), JSON.parse(JSON.stringify(entries)));
            },
          ),
          { numRuns: 25 },
        );
        await journal.close();
      }));

    test('snapshots: latest wins, older pruned beyond keep, corrupt ones skipped, maxSeq honoured', () =>
      withHarness(async (h) => {
        const store = await h.openSnapshots(2);
        assert.equal(await store.latestSnapshot(), null);
        await store.saveSnapshot({ seq: 10, ts: 100, stateHash: 'a', state: { books: [1, 2] } });
        await store.saveSnapshot({ seq: 20, ts: 200, stateHash: 'b', state: { books: [3] } });
        const info = await store.saveSnapshot({ seq: 30, ts: 300, stateHash: 'c', state: { books: [] } });
        assert.equal(info.seq, 30);
        assert.ok(info.bytes > 0);
        assert.deepEqual(
          (await store.listSnapshots()).map((s) => s.seq),
          [30, 20],
        );
        assert.deepEqual(await store.latestSnapshot(), {
          seq: 30,
          ts: 300,
          stateHash: 'c',
          state: { books: [] },
        });
        assert.equal((await store.latestSnapshot(25))?.seq, 20);
        assert.equal(await store.discardAfter(25), 1);
        assert.equal((await store.latestSnapshot())?.seq, 20);
        await store.saveSnapshot({ seq: 30, ts: 300, stateHash: 'c', state: { books: [] } });
        await store.close();
        await h.corruptSnapshot(30);
        const reopened = await h.openSnapshots(2);
        assert.deepEqual(await reopened.latestSnapshot(), {
          seq: 20,
          ts: 200,
          stateHash: 'b',
          state: { books: [3] },
        });
        await reopened.close();
      }));

    test('snapshots: pinned ones outlive keep, are listed as pinned and unpinned by unpinBefore', () =>
      withHarness(async (h) => {
        const store = await h.openSnapshots(2);
        const save = (seq: number) =>
          store.saveSnapshot({ seq, ts: seq * 10, stateHash: `h${seq}`, state: { seq } });
        const listed = async () => (await store.listSnapshots()).map((s) => [s.seq, s.pinned]);
        assert.equal((await save(10)).pinned, false);
        await save(20);
        assert.equal(await store.pin(10), true);
        assert.equal(await store.pin(10), true, 'pinning again is fine');
        assert.equal(await store.pin(15), false, 'no snapshot at 15');
        await save(30);
        await save(40);
        assert.deepEqual(await listed(), [
          [40, false],
          [30, false],
          [10, true],
        ]);
        assert.deepEqual(await store.latestSnapshot(25), {
          seq: 10,
          ts: 100,
          stateHash: 'h10',
          state: { seq: 10 },
        });
        // Saved again at its seq (the same state), a pinned snapshot stays pinned.
        assert.equal((await save(10)).pinned, true);
        assert.equal(await store.unpinBefore(10), 0, 'only seqs below are unpinned');
        assert.equal(await store.unpinBefore(35), 1);
        assert.deepEqual(await listed(), [
          [40, false],
          [30, false],
        ]);
        assert.equal(await store.pin(30), true);
        assert.equal(await store.pin(40), true);
        await save(50);
        await save(60);
        assert.deepEqual(await listed(), [
          [60, false],
          [50, false],
          [40, true],
          [30, true],
        ]);
        assert.equal(await store.pin(50), true);
        assert.equal(await store.unpinBefore(35), 1, '30 is unpinned and pruned');
        assert.deepEqual(await listed(), [
          [60, false],
          [50, true],
          [40, true],
        ]);
        // Unpinned but among the newest keep: it stays.
        assert.equal(await store.unpinBefore(55), 1, '40 goes; 50 is among the newest 2');
        assert.deepEqual(await listed(), [
          [60, false],
          [50, false],
        ]);
        await store.close();
        const reopened = await h.openSnapshots(2);
        assert.equal(await reopened.pin(50), true);
        assert.deepEqual(
          (await reopened.listSnapshots()).map((s) => [s.seq, s.pinned]),
          [
            [60, false],
            [50, true],
          ],
        );
        // Snapshots of lost commands go, pinned or not.
        assert.equal(await reopened.discardAfter(40), 2);
        assert.deepEqual(await reopened.listSnapshots(), []);
        await reopened.close();
      }));

    test('a version 1 (JSON) snapshot written by an older writer is read', () =>
      withHarness(async (h) => {
        const store = await h.openSnapshots(3);
        await h.insertRawSnapshot(encodeSnapshotV1(7, 70, 'h7', { legacy: [1, 'two', null] }));
        assert.deepEqual(await store.latestSnapshot(), {
          seq: 7,
          ts: 70,
          stateHash: 'h7',
          state: { legacy: [1, 'two', null] },
        });
        await store.saveSnapshot({ seq: 8, ts: 80, stateHash: 'h8', state: { current: true } });
        assert.deepEqual((await store.latestSnapshot())?.state, { current: true });
        assert.deepEqual((await store.latestSnapshot(7))?.state, { legacy: [1, 'two', null] });
        await store.close();
      }));

    test('a snapshot record is checked under the header s<version>:<seq>:<stateHash>:, its hash included', () =>
      withHarness(async (h) => {
        const store = await h.openSnapshots(3);
        await h.insertRawSnapshot(rawSnapshotV2(9, 90, 'h9', { pinned: ['format'] }));
        assert.deepEqual(await store.latestSnapshot(), {
          seq: 9,
          ts: 90,
          stateHash: 'h9',
          state: { pinned: ['format'] },
        });
        // Its state_hash damaged after it was written: the checksum (over 'h12') no longer holds.
        await h.insertRawSnapshot({ ...rawSnapshotV2(12, 120, 'h12', { newer: true }), stateHash: 'h13' });
        assert.deepEqual((await store.latestSnapshot())?.seq, 9);
        assert.deepEqual((await store.latestSnapshot(12))?.stateHash, 'h9');
        await store.close();
      }));
  });
}
