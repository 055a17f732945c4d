/**
 * A read store ahead of the journal (an older journal put back, as after a NATS journal lost
 * acknowledged commands in an OS crash) is rebuilt at start-up: the service logs it, history
 * holds exactly the journal's orders (not those of the lost commands, whose seqs the journal now
 * reuses), and new orders appear in it. With the snapshot replica writing the store (the default)
 * and without the replica.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { startTestService, type TestService } from '../support/service-harness.ts';

/** The SQLite journal's files under DATA_DIR (src/store/open-stores.ts), -wal/-shm included. */
const journalFiles = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('journal.sqlite'));

function copyJournal(from: string, to: string): void {
  for (const name of journalFiles(to)) rmSync(join(to, name));
  for (const name of journalFiles(from)) copyFileSync(join(from, name), join(to, name));
}

/** Resting orders far from the market, labelled, then all cancelled: history with includeUnfilled. */
async function placeAndCancel(running: TestService, label: string, count: number): Promise<string[]> {
  const client = running.http(0);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const placed = await client.call('private/buy', {
      instrumentName: 'BTC-PERPETUAL',
      quantity: '10',
      price: String(1000 + i),
      postOnly: true,
      label,
    });
    ids.push(placed.order.orderId);
  }
  assert.equal(await client.call('private/cancel_all_by_currency', { currency: 'BTC' }), count);
  return ids;
}

/** The order history as `label:orderId`, sorted. */
async function history(running: TestService): Promise<string[]> {
  const orders = await running.http(0).call('private/get_order_history_by_currency', {
    currency: 'BTC',
    count: 1000,
    includeUnfilled: true,
  });
  assert.ok(Array.isArray(orders));
  return orders.map((order) => `${order.label}:${order.orderId}`).sort();
}

const tagged = (label: string, ids: readonly string[]) => ids.map((id) => `${label}:${id}`);

for (const snapshotReplica of [true, false]) {
  describe(`a read store ahead of the journal (snapshot replica ${snapshotReplica ? 'on' : 'off'})`, () => {
    test('is rebuilt at start: history holds the journal’s orders only, and new ones', async () => {
      const logs: { level: number; msg: string; readStoreSeq?: number; journalSeq?: number }[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
      const saved = mkdtempSync(join(tmpdir(), 'journal-copy-'));
      const options = { logger, config: { simulator: false, snapshotReplica } };
      let running = await startTestService(options);
      try {
        const first = await placeAndCancel(running, 'first', 3);
        assert.deepEqual(await history(running), tagged('first', first).sort());
        await running.close();
        const journalSeq = running.service.core.sequence;
        // After a clean stop: the journal's files are complete as they are.
        assert.ok(journalFiles(running.dataDir).includes('journal.sqlite'));
        copyJournal(running.dataDir, saved);

        running = await startTestService({ ...options, dataDir: running.dataDir, clock: running.clock });
        const second = await placeAndCancel(running, 'second', 4);
        assert.equal((await history(running)).length, 7);
        await running.close();
        const readStoreSeq = running.service.core.sequence;
        assert.equal(running.service.readStore.lastAppliedSeq, readStoreSeq);

        // The older journal is put back: the read store is now ahead of it.
        copyJournal(saved, running.dataDir);
        // Past the replay guard's window: the journal's last command is older than the saved memory.
        running.clock.advance(60_000);
        logs.length = 0;
        running = await startTestService({ ...options, dataDir: running.dataDir, clock: running.clock });
        assert.equal(running.service.recovery.lastSeq, journalSeq);
        const rebuilt = logs.filter((entry) => entry.msg.includes('read store is ahead of the journal'));
        assert.equal(rebuilt.length, 1, 'the rebuild is logged');
        assert.equal(rebuilt[0]!.level, 40, 'as a warning');
        assert.equal(rebuilt[0]!.readStoreSeq, readStoreSeq);
        assert.equal(rebuilt[0]!.journalSeq, journalSeq);
        assert.deepEqual(await history(running), tagged('first', first).sort(), 'the journal’s orders only');
        assert.ok(second.length > 0);

        // New commands reuse the lost seqs; they are projected, not skipped as applied.
        const third = await placeAndCancel(running, 'third', 2);
        assert.deepEqual(
          await history(running),
          [...tagged('first', first), ...tagged('third', third)].sort(),
        );

        // The next start finds the store in step: nothing to rebuild, history the same.
        logs.length = 0;
        running = await running.restart();
        assert.equal(logs.filter((entry) => entry.msg.includes('read store is ahead')).length, 0);
        assert.deepEqual(
          await history(running),
          [...tagged('first', first), ...tagged('third', third)].sort(),
        );
      } finally {
        await running.close();
        rmSync(saved, { recursive: true, force: true });
        rmSync(running.dataDir, { recursive: true, force: true });
      }
    });
  });
}
