/**
 * Before recovery, makes the read store one the journal can re-feed.
 *
 * - A store that has written past the journal's last durable seq holds commands the journal no
 *   longer has (a NATS journal that lost acknowledged commands in an OS crash, an older journal
 *   backup restored), and the journal reuses those seqs for other commands, which the store would
 *   skip as already applied.
 * - A store the trimmed journal cannot re-feed lacks commands no one holds any more. Recovery (or
 *   the snapshot replica) re-feeds a store from the newest snapshot no newer than its last write,
 *   then the journal after it; that snapshot must be one the journal continues (seq ≥ its first
 *   entry − 1). A store behind the journal's first entry has none; nor has one a little ahead of
 *   it when the trimmer pruned the snapshots between: it keeps the one it trims after, and trims
 *   whole records only, so the journal may start before that snapshot. A store can fall there
 *   when its last writes are lost (it commits with synchronous=NORMAL) or an old copy is restored.
 *
 * Either way it is emptied (rows and lastAppliedSeq, one transaction) and set to where the journal
 * can re-feed it from: 0 for a journal that starts at seq 1 (a replay of the whole journal), else
 * the oldest snapshot that loads and that the trimmed journal continues (history before it is not
 * restored).
 *
 * A store is kept when a listed snapshot lies between the journal's start and its last write; its
 * checksum is verified only when recovery loads it (loading it here too would double the start-up
 * time of a large venue). One that fails its checksum there, with no older one the journal
 * continues, stops the start with `JournalTrimmedError`, as a journal with no usable snapshot does.
 */
import type { Journal, SnapshotStore } from '../store/journal.ts';
import type { ReadStore } from '../store/read/read-store.ts';
import { JournalTrimmedError } from '../store/recovery.ts';

export async function reconcileReadStore(
  readStore: Pick<ReadStore, 'lastAppliedSeq' | 'reset'>,
  journal: Pick<Journal<unknown>, 'lastSeq' | 'firstSeq'>,
  snapshots: Pick<SnapshotStore, 'listSnapshots' | 'latestSnapshot'>,
  log: { warn(fields: object, message: string): void },
): Promise<void> {
  const readStoreSeq = readStore.lastAppliedSeq;
  const journalSeq = await journal.lastSeq();
  const firstSeq = await journal.firstSeq();
  const ahead = readStoreSeq > journalSeq;
  if (!ahead && (firstSeq <= 1 || (await continuedSnapshot(snapshots, firstSeq, readStoreSeq)))) return;
  const baseSeq = firstSeq > 1 ? await journalBaseSnapshot(snapshots, firstSeq, journalSeq) : 0;
  const from =
    baseSeq === 0 ? 'the whole journal' : `the snapshot at seq ${baseSeq} the trimmed journal starts after`;
  log.warn(
    { readStoreSeq, journalSeq, firstSeq, baseSeq },
    ahead
      ? `the read store is ahead of the journal (acknowledged commands lost, or an older journal restored): rebuilding it from ${from}`
      : `the read store is behind the trimmed journal (no snapshot it continues lies between the journal's start and the store's last write): rebuilding it from ${from}; history before that snapshot is not restored`,
  );
  await readStore.reset(baseSeq);
}

/** Whether a snapshot the trimmed journal continues (seq ≥ firstSeq − 1) lies at or before `seq`. */
async function continuedSnapshot(
  snapshots: Pick<SnapshotStore, 'listSnapshots'>,
  firstSeq: number,
  seq: number,
): Promise<boolean> {
  return (await snapshots.listSnapshots()).some((s) => s.seq >= firstSeq - 1 && s.seq <= seq);
}

/**
 * The oldest snapshot a trimmed journal (first entry `firstSeq`, last `journalSeq`) continues
 * that loads (its checksum verifies); `JournalTrimmedError` when there is none.
 */
async function journalBaseSnapshot(
  snapshots: Pick<SnapshotStore, 'listSnapshots' | 'latestSnapshot'>,
  firstSeq: number,
  journalSeq: number,
): Promise<number> {
  const candidates = (await snapshots.listSnapshots())
    .filter((s) => s.seq >= firstSeq - 1 && s.seq <= journalSeq)
    .sort((a, b) => a.seq - b.seq);
  for (const candidate of candidates) {
    if ((await snapshots.latestSnapshot(candidate.seq))?.seq === candidate.seq) return candidate.seq;
  }
  throw new JournalTrimmedError(firstSeq, null);
}
