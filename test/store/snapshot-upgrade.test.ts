/**
 * A snapshot written by an earlier build (commit 6455e46: positions, RFQ trades, a working TWAP
 * and BALANCE) restores under this build to the state hash it was written with. Recovery refuses
 * to start on a mismatch, so a field added to saved state must restore to what it was saved as:
 * absent stays absent.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createCoreMachine } from '../../src/app/core-factory.ts';
import type { MachineSnapshot } from '../../src/core/machine.ts';

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/core-snapshot-6455e46.json', import.meta.url), 'utf8'),
) as { commit: string; seq: number; stateHash: string; snapshot: MachineSnapshot };

test(`a snapshot of ${fixture.commit} restores to the hash it was written with`, () => {
  const machine = createCoreMachine(fixture.snapshot);
  assert.equal(machine.stateHash(), fixture.stateHash);
});

test('the restored core goes on: a timer moves the portfolios without throwing', () => {
  const machine = createCoreMachine(fixture.snapshot);
  const ts = (fixture.snapshot as unknown as { venue: { now: number } }).venue.now + 10_000;
  const result = machine.execute({ type: 'timer', seq: fixture.seq + 1, ts } as never);
  assert.ok(result);
  assert.notEqual(machine.stateHash(), fixture.stateHash);
});
