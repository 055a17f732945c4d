import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { replayGuard, takeReplayState } from './replay-state.ts';

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
