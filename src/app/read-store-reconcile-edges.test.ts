import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reconcileReadStore } from './read-store-reconcile.ts';

function store(lastAppliedSeq: number) {
  const resets: number[] = [];
  return { resets, lastAppliedSeq, reset: async (seq: number) => void resets.push(seq) };
}
const quiet = { warn: () => {} };

test('a snapshot at firstSeq - 1 is one the trimmed journal continues (keep / rebuild from it)', async () => {
  // Journal holds 6..20; the snapshot at 5 is continued by it.
  const journal = { lastSeq: async () => 20, firstSeq: async () => 6 };
  const snapshots = {
    listSnapshots: async () => [{ seq: 5 }, { seq: 30 }] as never,
    latestSnapshot: async (max?: number) => ({ seq: Math.min(max ?? 30, 5) }) as never,
  };
  const kept = store(7);
  await reconcileReadStore(kept, journal, snapshots, quiet);
  assert.deepEqual(kept.resets, [], 'a store at 7 is re-fed from the snapshot at 5: kept');
  const ahead = store(25);
  await reconcileReadStore(ahead, journal, snapshots, quiet);
  assert.deepEqual(ahead.resets, [5], 'rebuilt from the snapshot at 5, not one past the journal end');
});

test('a listed snapshot that does not load is skipped for the next one', async () => {
  const journal = { lastSeq: async () => 20, firstSeq: async () => 6 };
  const snapshots = {
    listSnapshots: async () => [{ seq: 8 }, { seq: 12 }] as never,
    // The one at 8 fails its checksum: asked for <= 8 the store finds nothing that loads.
    latestSnapshot: async (max?: number) => ((max ?? 99) >= 12 ? { seq: 12 } : null) as never,
  };
  const read = store(2);
  await reconcileReadStore(read, journal, snapshots, quiet);
  assert.deepEqual(read.resets, [12]);
});

test('a journal trimmed to start at seq 2 still needs a snapshot (seq 1 lost)', async () => {
  const journal = { lastSeq: async () => 20, firstSeq: async () => 2 };
  const snapshots = {
    listSnapshots: async () => [{ seq: 1 }] as never,
    latestSnapshot: async () => ({ seq: 1 }) as never,
  };
  const read = store(25);
  await reconcileReadStore(read, journal, snapshots, quiet);
  assert.deepEqual(read.resets, [1], 'rebuilt from the snapshot at 1, not from 0 (seq 1 is gone)');
});

test('a snapshot past the journal end is no base: no usable one stops the start', async () => {
  const journal = { lastSeq: async () => 20, firstSeq: async () => 6 };
  const snapshots = {
    listSnapshots: async () => [{ seq: 30 }] as never,
    latestSnapshot: async () => ({ seq: 30 }) as never,
  };
  const read = store(25);
  await assert.rejects(reconcileReadStore(read, journal, snapshots, quiet), { name: 'JournalTrimmedError' });
  assert.deepEqual(read.resets, []);
});
