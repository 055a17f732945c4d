/**
 * The snapshot replica's worker thread: a second core machine that follows the journal and takes
 * the hash checkpoints and snapshots, so the live core never stops for them (see
 * snapshot-replica.ts for the protocol and the invariants).
 *
 * Start: the latest snapshot no newer than `startSeq` (and, when it writes the read store, no
 * newer than what that store has written, so it re-feeds what the store lost), then the journal up
 * to `startSeq` read on its own read-only connection; after that, the frames the live journal made
 * durable, as they arrive. Messages are handled one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MachineCommand, MachineSnapshot } from '../core/machine.ts';
import type { JournalEntry } from '../store/journal.ts';
import { openFollowerStores } from '../store/open-stores.ts';
import { subMachineProjections } from '../store/read/sub-projections.ts';
import { readVerifiedFrames } from '../store/read-frames.ts';
import type { StoredFrame } from '../store/record-format.ts';
import { Snapshotter } from '../store/snapshotter.ts';
import { createCoreMachine } from './core-factory.ts';
import { stampInPlace } from './sequencer.ts';
import type { ReplicaReply, ReplicaRequest, ReplicaSettings } from './snapshot-replica.ts';

const settings = workerData as ReplicaSettings;
const port = parentPort!;
const post = (reply: ReplicaReply) => port.postMessage(reply);

const queue: ReplicaRequest[] = [];
let ready = false;
let pumping = false;
let failed = false;
port.on('message', (request: ReplicaRequest) => {
  queue.push(request);
  void pump();
});

const stores = await openFollowerStores<MachineCommand>({
  dataDir: settings.dataDir,
  databaseUrl: settings.databaseUrl,
  natsJournal: settings.natsJournal,
  keepSnapshots: settings.keepSnapshots,
  // Its start may pass over snapshots the live core's recovery never reached (an older bound).
  onSnapshotSkipped: (seq: number) => post({ type: 'snapshotSkipped', seq }),
  ...(settings.writesReadStore
    ? {
        readStore: {
          // The same projections the service registers (service.ts).
          projections: subMachineProjections(),
          ...(settings.retention === undefined ? {} : { retention: settings.retention }),
          onWritten: (seq: number) => post({ type: 'readWritten', seq }),
          onError: (error: unknown) => void fail(new Error('read store write failed', { cause: error })),
        },
      }
    : {}),
});
const readStore = stores.readStore;
// The service empties a store ahead of the journal before it starts a replica (service.ts,
// `reconcileReadStore`), and a restarted replica starts at the last durable seq, which the
// store never passes: a store ahead here was written by something else, and is not touched.
if (readStore !== null && readStore.lastAppliedSeq > settings.startSeq) {
  throw new Error(
    `the read store is at seq ${readStore.lastAppliedSeq}, past the journal's ${settings.startSeq}; it is rebuilt only at the service's start`,
  );
}
const snapshot = await stores.snapshots.latestSnapshot(
  Math.min(settings.startSeq, readStore?.lastAppliedSeq ?? settings.startSeq),
);
const machine = createCoreMachine((snapshot?.state as MachineSnapshot | undefined) ?? null);
let seq = snapshot?.seq ?? 0;
let saveFailure: unknown = null;
// Snapshots are due as for the inline snapshotter; checkpoints are taken in `apply` instead, at
// seqs that are multiples of the interval, so a restart does not move them.
const snapshotter = new Snapshotter(
  { ...settings.policy, checkpointEveryCommands: 0 },
  {
    journal: { recordCheckpoint: () => undefined },
    snapshots: stores.snapshots,
    capture: () => ({
      seq,
      ts: machine.venue.now,
      stateHash: machine.stateHash(),
      state: machine.snapshot(),
    }),
    currentHash: () => ({ seq, stateHash: machine.stateHash() }),
    onSaved: (info, ms) => post({ type: 'saved', info, ms }),
    onError: (error) => {
      saveFailure = error;
      void fail(error);
    },
  },
);

function apply(entry: JournalEntry<MachineCommand>, live: boolean): void {
  if (entry.seq !== seq + 1) throw new Error(`replica expected seq ${seq + 1}, got ${entry.seq}`);
  // The decoded command is this thread's own.
  const result = machine.execute(stampInPlace(entry.command, entry));
  seq = entry.seq;
  // Seqs the store has written already (the catch-up from an older snapshot) are ignored by it.
  readStore?.push({ seq, ts: entry.ts, events: result.engineEvents, subEvents: result.subEvents });
  if (!live) return;
  const { checkpointEveryCommands } = settings.policy;
  if (checkpointEveryCommands > 0 && seq % checkpointEveryCommands === 0) {
    post({ type: 'checkpoint', checkpoint: { seq, stateHash: machine.stateHash() } });
  }
  snapshotter.onCommitted(entry.ts);
}

async function handle(request: ReplicaRequest): Promise<boolean> {
  switch (request.type) {
    case 'frames':
      for (const stored of request.frames) {
        // Structured clone delivers a Uint8Array: viewed as a Buffer, not copied.
        const { buffer, byteOffset, byteLength } = stored.payload;
        const frame: StoredFrame = { ...stored, payload: Buffer.from(buffer, byteOffset, byteLength) };
        for (const entry of readVerifiedFrames<MachineCommand>([frame], frame.firstSeq, frame.firstSeq)) {
          apply(entry, true);
        }
      }
      return true;
    case 'status':
      post({ type: 'status', id: request.id, seq, stateHash: machine.stateHash() });
      return true;
    case 'readFlush':
      // A failed write has failed the replica already.
      await readStore?.flush().catch(() => undefined);
      post({ type: 'readFlushed', seq: readStore?.lastAppliedSeq ?? 0 });
      return true;
    case 'stop':
      await readStore?.flush().catch(() => undefined);
      await snapshotter.idle();
      if (request.finalSnapshot) await snapshotter.snapshotNow(machine.venue.now);
      if (saveFailure !== null) throw saveFailure;
      await stores.close();
      post({ type: 'stopped', seq });
      port.close();
      return false;
  }
}

/** Reports the error once and ends the thread: the live core then snapshots inline. */
async function fail(error: unknown): Promise<void> {
  if (failed) return;
  failed = true;
  queue.length = 0;
  post({ type: 'failed', error: describe(error) });
  await stores.close().catch(() => undefined);
  port.close();
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const text = error.stack ?? error.message;
  return error.cause === undefined ? text : `${text}\ncaused by: ${describe(error.cause)}`;
}

async function pump(): Promise<void> {
  if (!ready || pumping || failed) return;
  pumping = true;
  try {
    while (queue.length > 0) {
      if (!(await handle(queue.shift()!))) return;
    }
  } catch (error) {
    await fail(error);
  } finally {
    pumping = false;
  }
}

try {
  for await (const batch of stores.readJournal(seq + 1)) {
    for (const entry of batch) if (entry.seq <= settings.startSeq) apply(entry, false);
    if (seq >= settings.startSeq) break;
  }
  if (seq !== settings.startSeq)
    throw new Error(`the journal ends at seq ${seq}, the live core at ${settings.startSeq}`);
  ready = true;
  post({ type: 'ready', seq });
  await pump();
} catch (error) {
  await fail(error);
}
