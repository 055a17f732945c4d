/**
 * `JOURNAL_RETENTION_DAYS` through the service, on a virtual clock 40 hours long: the journal keeps
 * at least a day of commands and starts right after a kept snapshot; a restart recovers from that
 * snapshot with the orders resting since before it; a read store lost while the service was down
 * is re-fed from that snapshot, with the history the journal still holds (from the next snapshot
 * when that one is damaged; refused, naming the journal's start, when none loads). With the
 * snapshot replica (the default) and without.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { lockDataDir } from '../../src/store/data-dir-lock.ts';
import type { JournalEntry } from '../../src/store/journal.ts';
import { JournalTrimmedError } from '../../src/store/recovery.ts';
import { readSqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { restingBuy, startTestService, type TestService } from '../support/service-harness.ts';

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

/** The first entry the journal file holds, read on a read-only connection of its own. */
async function firstStoredEntry(dataDir: string): Promise<JournalEntry> {
  const db = new Database(join(dataDir, 'journal.sqlite'), { readonly: true });
  try {
    for await (const batch of readSqliteJournal(db, 0)) return batch[0]!;
    throw new Error('the journal is empty');
  } finally {
    db.close();
  }
}

for (const snapshotReplica of [true, false]) {
  describe(`journal retention (snapshot replica ${snapshotReplica ? 'on' : 'off'})`, () => {
    test('keeps a day of commands, recovers from the snapshot it starts after, re-feeds a lost read store from there', async () => {
      const options = {
        config: { simulator: false, snapshotReplica, journalRetentionDays: 1 },
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
        const first = await firstStoredEntry(running.dataDir);
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
        for (const suffix of ['', '-wal', '-shm'])
          rmSync(join(dataDir, `read.sqlite${suffix}`), { force: true });
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
        const snapshotDb = new Database(join(dataDir, 'snapshots.sqlite'));
        try {
          const base = snapshotDb
            .prepare('SELECT seq, payload FROM snapshots WHERE seq >= ? ORDER BY seq LIMIT 1')
            .get(firstSeq - 1) as { seq: number; payload: Buffer };
          const payload = Buffer.from(base.payload);
          payload[payload.length >> 1] = payload[payload.length >> 1]! ^ 0xff;
          snapshotDb.prepare('UPDATE snapshots SET payload = ? WHERE seq = ?').run(payload, base.seq);
        } finally {
          snapshotDb.close();
        }
        for (const suffix of ['', '-wal', '-shm'])
          rmSync(join(dataDir, `read.sqlite${suffix}`), { force: true });
        running = await startTestService({ ...options, dataDir, clock });
        const again = await historyLabels(running);
        assert.ok(again.includes('later') && again.includes('h40'));
        assert.ok(again.length < rebuilt.length && again.every((label) => rebuilt.includes(label)));
        await running.close();

        // With no snapshot the trimmed journal can continue from, the start is refused, and what
        // it opened is released.
        const damaged = new Database(join(dataDir, 'snapshots.sqlite'));
        try {
          damaged.prepare("UPDATE snapshots SET payload = x'00' WHERE seq >= ?").run(firstSeq - 1);
        } finally {
          damaged.close();
        }
        for (const suffix of ['', '-wal', '-shm'])
          rmSync(join(dataDir, `read.sqlite${suffix}`), { force: true });
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
