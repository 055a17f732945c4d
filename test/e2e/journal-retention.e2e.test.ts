/**
 * `JOURNAL_RETENTION_DAYS` through the service, on a virtual clock 40 hours long: the journal keeps
 * at least a day of commands and starts right after a kept snapshot; a restart recovers from that
 * snapshot with the orders resting since before it; a read store lost while the service was down
 * is re-fed from that snapshot, with the history the journal still holds (from the next snapshot
 * when that one is damaged; refused, naming the journal's start, when none loads). On SQLite
 * with the snapshot replica (the default) and without, on PostgreSQL, and with the journal on NATS
 * JetStream (snapshots and read store on SQLite).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { lockDataDir } from '../../src/store/data-dir-lock.ts';
import type { JournalEntry } from '../../src/store/journal.ts';
import type { NatsJournalTarget } from '../../src/store/nats/nats-journal.ts';
import { openFollowerStores, openStores } from '../../src/store/open-stores.ts';
import { subMachineProjections } from '../../src/store/read/sub-projections.ts';
import { JournalTrimmedError } from '../../src/store/recovery.ts';
import { restingBuy, startTestService, type TestService } from '../support/service-harness.ts';
import { startStoreServers } from '../support/store-servers.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Labels in order history, both windows: the recent one and the historical one. */
async function historyLabels(running: TestService): Promise<string[]> {
  const labels: string[] = [];
  for (const historical of [false, true]) {
    const orders = await running.http(0).call('private/get_order_history_by_currency', {
      currency: 'BTC',
      count: 1000,
      includeUnfilled: true,
      historical,
      includeOld: true,
    });
    assert.ok(Array.isArray(orders));
    for (const order of orders) labels.push(order.label ?? '');
  }
  return labels;
}

/** Where the stores of one run are. */
interface Stores {
  readonly databaseUrl: string | null;
  readonly natsJournal: NatsJournalTarget | null;
}

interface Backend {
  readonly name: string;
  readonly stores: () => Promise<Stores>;
  /** Sets the payload of the snapshots with seq ≥ `fromSeq` (all of them: `only` false) to junk. */
  readonly damageSnapshots: (
    dataDir: string,
    databaseUrl: string | null,
    fromSeq: number,
    only: boolean,
  ) => Promise<void>;
}

const servers = await startStoreServers();
after(() => servers.stop());
const { postgres, nats } = servers;
let streams = 0;

const BACKENDS: ReadonlyArray<Backend & { readonly replicaOff: boolean; readonly skip: string | false }> = [
  { ...sqliteBackend(), replicaOff: true, skip: false },
  {
    name: 'PostgreSQL',
    stores: async () => ({
      databaseUrl: await postgres!.createDatabase(`journal_retention_${process.pid}_${Date.now()}`),
      natsJournal: null,
    }),
    damageSnapshots: async (_dataDir, url, fromSeq, only) => {
      const client = new pg.Client({ connectionString: url! });
      await client.connect();
      try {
        await client.query(
          `UPDATE snapshots SET payload = '\\x00'::bytea WHERE seq IN (SELECT seq FROM snapshots WHERE seq >= $1 ORDER BY seq LIMIT $2)`,
          [fromSeq, only ? 1 : 1_000_000],
        );
      } finally {
        await client.end();
      }
    },
    replicaOff: false,
    skip: postgres === null ? 'PostgreSQL is not installed (run scripts/ensure-system-deps.sh)' : false,
  },
  {
    ...sqliteBackend(),
    name: 'NATS JetStream',
    stores: async () => ({
      databaseUrl: null,
      natsJournal: { servers: nats!.url, stream: `RETENTION_${process.pid}_${++streams}`, replicas: 1 },
    }),
    replicaOff: false,
    skip: nats === null ? 'nats-server is not installed (run scripts/ensure-system-deps.sh)' : false,
  },
];

function sqliteBackend(): Backend {
  return {
    name: 'SQLite',
    stores: async () => ({ databaseUrl: null, natsJournal: null }),
    damageSnapshots: async (dataDir, _url, fromSeq, only) => {
      const db = new Database(join(dataDir, 'snapshots.sqlite'));
      try {
        db.prepare(
          "UPDATE snapshots SET payload = x'00' WHERE seq IN (SELECT seq FROM snapshots WHERE seq >= ? ORDER BY seq LIMIT ?)",
        ).run(fromSeq, only ? 1 : 1_000_000);
      } finally {
        db.close();
      }
    },
  };
}

/** The first entry the journal holds, read as the snapshot replica reads it. */
async function firstStoredEntry(dataDir: string, at: Stores): Promise<JournalEntry> {
  const stores = await openFollowerStores({ dataDir, ...at });
  try {
    for await (const batch of stores.readJournal(0)) return batch[0]!;
    throw new Error('the journal is empty');
  } finally {
    await stores.close();
  }
}

/** The read store is lost while the service is down: emptied, as a new one would be. */
async function loseReadStore(dataDir: string, at: Stores): Promise<void> {
  const stores = await openStores({ dataDir, ...at, projections: subMachineProjections() });
  try {
    await stores.readStore.reset();
  } finally {
    await stores.close();
  }
}

const RUNS = BACKENDS.flatMap((backend) =>
  (backend.replicaOff ? [true, false] : [true]).map((snapshotReplica) => ({ backend, snapshotReplica })),
);

for (const { backend, snapshotReplica } of RUNS) {
  describe(`journal retention (${backend.name}, snapshot replica ${snapshotReplica ? 'on' : 'off'})`, () => {
    test('keeps a day of commands, recovers from the snapshot it starts after, re-feeds a lost read store from there', {
      skip: backend.skip,
    }, async () => {
      const at = await backend.stores();
      const { databaseUrl, natsJournal } = at;
      const journal =
        natsJournal === null
          ? {}
          : { journalUrl: natsJournal.servers, journalStream: natsJournal.stream, journalReplicas: 1 };
      const options = {
        config: { simulator: false, snapshotReplica, journalRetentionDays: 1, databaseUrl, ...journal },
        snapshotPolicy: { everyCommands: 0, everyMs: HOUR, checkpointEveryCommands: 0 },
      };
      let running = await startTestService(options);
      try {
        const resting = await restingBuy(running, '1000', 'resting');
        await running.http(0).call('private/cancel', { orderId: await restingBuy(running, '1001', 'early') });
        // A snapshot an hour, an order placed and cancelled after each.
        for (let hour = 1; hour <= 40; hour++) {
          running.clock.advance(HOUR);
          await running
            .http(0)
            .call('private/cancel', { orderId: await restingBuy(running, '1001', `h${hour}`) });
          // The replica's saves reach the trimmer before its status answer.
          await running.service.snapshotReplica?.status();
          await running.service.journalTrimmer?.idle();
        }
        const firstSeq = running.service.journalFirstSeq();
        assert.ok(firstSeq > 1, 'trimmed');
        const first = await firstStoredEntry(running.dataDir, at);
        assert.equal(first.seq, firstSeq);
        const kept = running.clock.now() - first.ts;
        // At least the retention; at most a quarter more, plus the snapshot interval.
        assert.ok(kept >= DAY && kept <= 1.25 * DAY + HOUR, `kept ${kept / HOUR} h`);

        running = await running.restart();
        const { recovery } = running.service;
        assert.ok(recovery.snapshotSeq !== null && recovery.snapshotSeq >= firstSeq - 1);
        const state = await running.http(0).call('private/get_order_state', { orderId: resting });
        assert.equal(state.orderState, 'open');
        const before = await historyLabels(running);
        assert.ok(before.includes('early') && before.includes('h40'), before.join());
        const { dataDir, clock } = running;
        await running.close();

        // The read store is lost while the service is down.
        await loseReadStore(dataDir, at);
        running = await startTestService({ ...options, dataDir, clock });
        const after = await historyLabels(running);
        // What the journal holds is back (every order of the last day at least); what it no
        // longer holds is not.
        for (let hour = 16; hour <= 40; hour++) assert.ok(after.includes(`h${hour}`), `h${hour} is back`);
        assert.ok(!after.includes('early'));
        assert.ok(after.every((label) => before.includes(label)));
        const open = await running.http(0).call('private/get_order_state', { orderId: resting });
        assert.equal(open.orderState, 'open');
        // The service goes on: new orders are journaled and listed.
        await running.http(0).call('private/cancel', { orderId: await restingBuy(running, '1001', 'later') });
        const rebuilt = await historyLabels(running);
        assert.ok(rebuilt.includes('later'));
        await running.close();

        // Lost again, and the snapshot it was re-fed from is damaged: the next one that loads is
        // used, with less history.
        await backend.damageSnapshots(dataDir, databaseUrl, firstSeq - 1, true);
        await loseReadStore(dataDir, at);
        running = await startTestService({ ...options, dataDir, clock });
        const again = await historyLabels(running);
        assert.ok(again.includes('later') && again.includes('h40'));
        assert.ok(again.length < rebuilt.length && again.every((label) => rebuilt.includes(label)));
        await running.close();

        // With no snapshot the trimmed journal can continue from, the start is refused, and what
        // it opened is released.
        await backend.damageSnapshots(dataDir, databaseUrl, firstSeq - 1, false);
        await loseReadStore(dataDir, at);
        await assert.rejects(
          startTestService({ ...options, dataDir, clock }),
          (error: unknown) => error instanceof JournalTrimmedError && error.firstSeq === firstSeq,
        );
        lockDataDir(dataDir).release();
      } finally {
        await running.close();
      }
    });
  });
}
