/**
 * `npm run cli -- storage:backup <dir>` against a running service: the copy starts a service that
 * holds what was acknowledged before the backup (resting orders, history, keys), not what came
 * after, and recovers cleanly; `--verify` passes it and fails a damaged copy; a non-empty target is
 * refused. A copy of a service whose journal is on NATS holds no journal, and verify says so.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { BackupVerifyError, backupDataDir, verifyBackup } from '../../src/app/data-dir-backup.ts';
import { runCli } from '../../src/cli/admin.ts';
import { startNats } from '../support/nats.ts';
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

test('a backup of a service whose journal is on NATS holds its snapshot, and says the journal is elsewhere', async (t) => {
  const nats = await startNats({ jetstream: true });
  if (nats === null) return t.skip('nats-server is not installed');
  const journal = { journalUrl: nats.url, journalStream: `BACKUP_${process.pid}`, journalReplicas: 1 };
  const saved = { DATA_DIR: process.env.DATA_DIR, JOURNAL_URL: process.env.JOURNAL_URL };
  let running = await startTestService({ config: { simulator: false, ...journal } });
  const original = running.dataDir;
  const target = join(mkdtempSync(join(tmpdir(), 'backup-')), 'copy');
  try {
    const resting = await restingBuy(running, '1000', 'before');
    // A clean stop snapshots: the copy then holds the state, and the journal on NATS the rest.
    await running.close();
    process.env.DATA_DIR = original;
    process.env.JOURNAL_URL = nats.url;
    const lines: string[] = [];
    await runCli(['storage:backup', target, '--verify'], (line) => lines.push(line));
    assert.ok(!readdirSync(target).includes('journal.sqlite'));
    assert.match(
      lines.at(-2)!,
      /^verified: the copy holds no journal; its newest snapshot that loads is at seq [1-9]\d*$/,
    );
    assert.match(lines.at(-1)!, /not in it$/);

    running = await startTestService({
      config: { simulator: false, ...journal },
      dataDir: target,
      clock: running.clock,
    });
    assert.equal(running.service.recovery.ok, true);
    running.clock.advance(20_000);
    const state = await running.http(0).call('private/get_order_state', { orderId: resting });
    assert.equal(state.orderState, 'open');
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await running.close();
    await nats.stop();
    rmSync(join(target, '..'), { recursive: true, force: true });
    rmSync(original, { recursive: true, force: true });
  }
});
