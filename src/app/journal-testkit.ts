/**
 * A small SQLite data directory for the tests of what reads one back (the snapshot replica, the
 * backup): five core commands journaled one record each, with snapshots where asked.
 */
import { join } from 'node:path';
import type { CoreCommand } from '../core/commands.ts';
import type { MachineCommand } from '../core/machine.ts';
import { T0 } from '../engine/testkit.ts';
import { SQLITE_FILES } from '../store/open-stores.ts';
import { SqliteJournal } from '../store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../store/sqlite/sqlite-snapshots.ts';
import { createCoreMachine } from './core-factory.ts';
import { stampInPlace } from './sequencer.ts';

export const COMMANDS: readonly MachineCommand[] = [
  { type: 'create_account', accountId: 1 },
  { type: 'deposit', accountId: 1, currency: 'BTC', amount: 1_000 },
  { type: 'create_account', accountId: 2 },
  { type: 'deposit', accountId: 2, currency: 'BTC', amount: 2_000 },
  { type: 'deposit', accountId: 1, currency: 'BTC', amount: 3_000 },
] as unknown as CoreCommand[];

/**
 * Journals every command into `dataDir` (seq i + 1 at T0 + i) and saves a snapshot at each seq in
 * `snapshotSeqs`; a seq past the journal's end gets the last state (a snapshot ahead of the
 * durable journal). Returns the live machine.
 */
export async function journalCommands(dataDir: string, snapshotSeqs: readonly number[] = []) {
  const journal = SqliteJournal.open<MachineCommand>({ path: join(dataDir, SQLITE_FILES.journal) });
  const snapshots = new SqliteSnapshotStore({ path: join(dataDir, SQLITE_FILES.snapshots), keep: 10 });
  const machine = createCoreMachine();
  const save = (seq: number) =>
    snapshots.saveSnapshot({
      seq,
      ts: T0 + seq - 1,
      stateHash: machine.stateHash(),
      state: machine.snapshot(),
    });
  try {
    for (const [i, command] of COMMANDS.entries()) {
      const entry = { seq: i + 1, ts: T0 + i, command };
      await journal.append(entry);
      machine.execute(stampInPlace(structuredClone(command), entry));
      if (snapshotSeqs.includes(entry.seq)) await save(entry.seq);
    }
    for (const seq of snapshotSeqs) if (seq > COMMANDS.length) await save(seq);
  } finally {
    await journal.close();
    await snapshots.close();
  }
  return machine;
}
