/**
 * `npm run cli -- storage:backup <dir>` against a running service: the copy starts a service that
 * holds what was acknowledged before the backup (resting orders, history, keys), not what came
 * after, and recovers cleanly; `--verify` passes it and fails a damaged copy; a non-empty target is
 * refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { BackupVerifyError, backupDataDir, verifyBackup } from '../../src/app/data-dir-backup.ts';
import { runCli } from '../../src/cli/admin.ts';
import { restingBuy, startTestService } from '../support/service-harness.ts';

test('a backup taken while the service runs restores what was acknowledged before it', async () => {
  const running = await startTestService({ config: { simulator: false } });
  const saved = process.env.DATA_DIR;
  process.env.DATA_DIR = running.dataDir;
  const target = join(mkdtempSync(join(tmpdir(), 'backup-')), 'copy');
  let restored: Awaited<ReturnType<typeof startTestService>> | null = null;
  try {
    const resting = await restingBuy(running, '1000', 'before');
    const cancelled = await restingBuy(running, '1001', 'cancelled');
    await running.http(0).call('private/cancel', { orderId: cancelled });

    const lines: string[] = [];
    await runCli(['storage:backup', target, '--verify'], (line) => lines.push(line));
    const verified = lines.pop()!;
    assert.match(verified, /^verified: journal seqs 1–(\d+), a restore starts from seq 1 \(no snapshot\)$/);
    assert.deepEqual(
      lines.map((line) => line.split(':')[0]),
      [
        'read.sqlite',
        'snapshots.sqlite',
        'journal.sqlite',
        'keys.db',
        'secret.key',
        'admin.token',
        'credentials.json',
      ],
    );
    assert.equal(statSync(join(target, 'secret.key')).mode & 0o777, 0o600, 'secrets keep their mode');
    assert.ok(!readdirSync(target).includes('replay-memory.json'));
    const after = await restingBuy(running, '1002', 'after');
    await running.close();

    restored = await startTestService({
      config: { simulator: false },
      dataDir: target,
      clock: running.clock,
    });
    assert.equal(restored.service.recovery.ok, true);
    // Restored as after a crash: requests signed in the last run's window are refused until it passes.
    running.clock.advance(20_000);
    const state = await restored.http(0).call('private/get_order_state', { orderId: resting });
    assert.equal(state.orderState, 'open');
    const gone = await restored.http(0).call('private/get_order_state', { orderId: cancelled });
    assert.equal(gone.orderState, 'cancelled');
    await assert.rejects(restored.http(0).call('private/get_order_state', { orderId: after }));
    const history = await restored.http(0).call('private/get_order_history_by_currency', {
      currency: 'BTC',
      includeUnfilled: true,
    });
    assert.ok(Array.isArray(history));
    assert.deepEqual(
      history.map((order) => order.label),
      ['cancelled'],
    );

    // A copy damaged afterwards fails verification, naming the record.
    const damaged = join(target, '..', 'damaged');
    backupDataDir(target, damaged);
    const db = new Database(join(damaged, 'journal.sqlite'));
    try {
      const row = db
        .prepare('SELECT first_seq, payload FROM journal ORDER BY first_seq LIMIT 1 OFFSET 1')
        .get() as {
        first_seq: number;
        payload: Buffer;
      };
      const payload = Buffer.from(row.payload);
      payload[0] = payload[0]! ^ 0xff;
      db.prepare('UPDATE journal SET payload = ? WHERE first_seq = ?').run(payload, row.first_seq);
    } finally {
      db.close();
    }
    await assert.rejects(
      verifyBackup(damaged),
      (error: unknown) => error instanceof BackupVerifyError && /fails its checksum/.test(error.message),
    );

    // Never over what is there.
    writeFileSync(join(target, 'other'), '');
    await assert.rejects(
      runCli(['storage:backup', target], () => undefined),
      /the backup target .* is not empty/,
    );
  } finally {
    if (saved === undefined) delete process.env.DATA_DIR;
    else process.env.DATA_DIR = saved;
    await restored?.close();
    await running.close();
    rmSync(join(target, '..'), { recursive: true, force: true });
  }
});
