/**
 * The rules version (src/core/rules-version.ts): a start journals it before any other command
 * when the core's differs, and recovery refuses to replay commands journaled under other rules,
 * which would rewrite what another build acknowledged (docs/decisions.md, "Rule changes and the
 * journal"). A clean stop snapshots the journal's end, so an upgrade after one replays nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { RULES_VERSION } from '../../src/core/rules-version.ts';
import { lockDataDir } from '../../src/store/data-dir-lock.ts';
import { SqliteJournal } from '../../src/store/sqlite/sqlite-journal.ts';
import { SERVICE_T0, startTestService } from '../support/service-harness.ts';

async function journaled(dataDir: string): Promise<Array<{ seq: number; type: string }>> {
  const journal = SqliteJournal.open<{ type: string }>({
    path: join(dataDir, 'journal.sqlite'),
    writerThread: false,
  });
  const entries: Array<{ seq: number; type: string }> = [];
  for await (const entry of journal.readFrom(1)) entries.push({ seq: entry.seq, type: entry.command.type });
  await journal.close();
  return entries;
}

test('a start journals its rules version first, once; a clean restart keeps it', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rules-version-'));
  try {
    let running = await startTestService({ dataDir, config: { simulator: false } });
    assert.equal(running.service.core.machine.rulesVersion, RULES_VERSION);
    running = await running.restart();
    assert.equal(running.service.core.machine.rulesVersion, RULES_VERSION);
    await running.close();
    const types = (await journaled(dataDir)).map((entry) => entry.type);
    assert.equal(types[0], 'rules_version', 'the first command of the journal');
    assert.equal(
      types.filter((type) => type === 'rules_version').length,
      1,
      'not again after a clean restart',
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('commands journaled under other rules after the last snapshot are refused at start, with the remedy', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rules-version-other-'));
  try {
    // As a build before versions left it after a crash: commands, no marker, no snapshot.
    const journal = SqliteJournal.open({ path: join(dataDir, 'journal.sqlite'), writerThread: false });
    await journal.append({ seq: 1, ts: SERVICE_T0, command: { type: 'create_account', accountId: 1 } });
    await journal.append({
      seq: 2,
      ts: SERVICE_T0,
      command: { type: 'deposit', accountId: 1, currency: 'BTC', amount: 100 },
    });
    await journal.close();
    await assert.rejects(
      startTestService({ dataDir, config: { simulator: false } }),
      (error: Error) =>
        /2 commands after the last snapshot \(from seq 1\) were journaled under other rules \(version 0, this build \d+\)/.test(
          error.message,
        ) && /start that build once and stop it with SIGTERM/.test(error.message),
    );
    assert.deepEqual(
      (await journaled(dataDir)).map((entry) => entry.type),
      ['create_account', 'deposit'],
      'nothing journaled by the refused start',
    );
    lockDataDir(dataDir).release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
