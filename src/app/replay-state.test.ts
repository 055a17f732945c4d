import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { replayGuard, saveReplayState, takeReplayState } from './replay-state.ts';

const NONCE = { apiKey: 'k', nonce: 'n', expiresAt: 10, value: 5 };

test('a saved memory is taken once, and restored only when the journal ends where it was saved', () => {
  const dir = mkdtempSync(join(tmpdir(), 'replay-state-'));
  try {
    const errors: unknown[] = [];
    saveReplayState(dir, { lastSeq: 42, nonces: [NONCE] });
    const saved = takeReplayState(dir, (error) => errors.push(error));
    assert.deepEqual(saved, { lastSeq: 42, nonces: [NONCE] });
    assert.deepEqual(readdirSync(dir), [], 'removed before serving, nothing left aside');
    assert.equal(
      takeReplayState(dir, (error) => errors.push(error)),
      null,
    );
    assert.deepEqual(errors, []);

    assert.deepEqual(replayGuard(saved, { lastSeq: 42, lastTs: 1_000 }, 15_000), {
      kind: 'restore',
      nonces: [NONCE],
    });
    // The journal went on after the save (a crash later): the memory is incomplete.
    assert.deepEqual(replayGuard(saved, { lastSeq: 43, lastTs: 1_000 }, 15_000), {
      kind: 'refuse',
      signedUntil: 16_000,
    });
    assert.deepEqual(replayGuard(null, { lastSeq: 7, lastTs: 2_000 }, 15_000), {
      kind: 'refuse',
      signedUntil: 17_000,
    });
    assert.deepEqual(replayGuard(null, { lastSeq: 0, lastTs: 0 }, 15_000), { kind: 'none' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unreadable saved memory is reported and removed, and counts as none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'replay-state-'));
  try {
    writeFileSync(join(dir, 'replay-memory.json'), '{"version":1,"lastSeq":');
    const errors: unknown[] = [];
    assert.equal(
      takeReplayState(dir, (error) => errors.push(error)),
      null,
    );
    assert.equal(errors.length, 1);
    assert.deepEqual(readdirSync(dir), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a memory saved past where the recovered journal ends is not restored (lost commands)', () => {
  const saved = { lastSeq: 42, nonces: [] };
  assert.deepEqual(replayGuard(saved, { lastSeq: 41, lastTs: 1_000 }, 15_000), {
    kind: 'refuse',
    signedUntil: 16_000,
  });
});

test('a replay file of another version or shape is reported and not trusted', () => {
  for (const body of [
    { version: 2, lastSeq: 1, nonces: [] },
    { lastSeq: 1, nonces: [] },
    { version: 1, lastSeq: '1', nonces: [] },
    { version: 1, nonces: [] },
    { version: 1, lastSeq: 1, nonces: {} },
    { version: 1, lastSeq: 1 },
  ]) {
    const dir = mkdtempSync(join(tmpdir(), 'replay-kill-'));
    try {
      writeFileSync(join(dir, 'replay-memory.json'), JSON.stringify(body));
      const errors: unknown[] = [];
      assert.equal(
        takeReplayState(dir, (e) => errors.push(e)),
        null,
        JSON.stringify(body),
      );
      assert.equal(errors.length, 1, JSON.stringify(body));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});
