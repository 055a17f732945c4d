import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LONG_STEP, runInTurns, runToEnd, type Steps } from './steps.ts';

/** Virtual time: each step advances it by its cost; turns are counted, never slept. */
class Harness {
  time = 0;
  turns: number[] = [];
  yields = 0;

  options(budgetMs: number) {
    return {
      budgetMs,
      now: () => this.time,
      yieldTurn: async () => {
        this.yields++;
      },
      onTurn: (ms: number) => this.turns.push(ms),
    };
  }

  /** Steps costing `costs[i]` ms each, returning the order they ran in. */
  *work(costs: readonly number[], long: ReadonlySet<number> = new Set()): Steps<number[]> {
    const ran: number[] = [];
    for (let i = 0; i < costs.length; i++) {
      if (long.has(i)) yield LONG_STEP;
      this.time += costs[i]!;
      ran.push(i);
      if (i < costs.length - 1) yield;
    }
    return ran;
  }
}

describe('steps', () => {
  test('runToEnd runs every step and returns the result', () => {
    const harness = new Harness();
    assert.deepEqual(runToEnd(harness.work([1, 1, 1])), [0, 1, 2]);
    assert.equal(harness.time, 3);
  });

  test('a turn ends after the step that reaches the budget', async () => {
    const harness = new Harness();
    const result = await runInTurns(harness.work([5, 5, 5, 5, 5, 5, 5]), harness.options(10));
    assert.deepEqual(result, [0, 1, 2, 3, 4, 5, 6]);
    // 7 steps of 5 with a budget of 10: turns of 2, 2, 2 and 1 steps.
    assert.deepEqual(harness.turns, [10, 10, 10, 5]);
    assert.equal(harness.yields, 3);
  });

  test('the first turn is timed from when the run starts, not from clock zero', async () => {
    const harness = new Harness();
    harness.time = 1_000;
    await runInTurns(harness.work([1, 1, 1, 1, 1]), harness.options(3));
    assert.deepEqual(harness.turns, [3, 2]);
    assert.equal(harness.yields, 1);
  });

  test('a turn lasts at most the budget plus one step', async () => {
    const harness = new Harness();
    await runInTurns(harness.work([2, 9, 30, 1, 1]), harness.options(10));
    assert.deepEqual(harness.turns, [11, 30, 2]);
  });

  test('a long step starts on a fresh turn', async () => {
    const harness = new Harness();
    const result = await runInTurns(harness.work([3, 3, 25, 3], new Set([2])), harness.options(10));
    assert.deepEqual(result, [0, 1, 2, 3]);
    assert.deepEqual(harness.turns, [6, 25, 3]);
  });

  test('a zero budget gives each step its own turn; the result does not depend on the turns', async () => {
    const costs = [1, 4, 2, 3];
    const a = new Harness();
    const b = new Harness();
    const inTurns = await runInTurns(a.work(costs), a.options(0));
    assert.equal(a.turns.length, costs.length);
    assert.deepEqual(inTurns, runToEnd(b.work(costs)));
  });

  test('no steps: one turn, the result', async () => {
    const harness = new Harness();
    // biome-ignore lint/correctness/useYield: a generator with no pause point is a valid Steps
    const none = function* (): Steps<string> {
      return 'done';
    };
    assert.equal(await runInTurns(none(), harness.options(1)), 'done');
    assert.deepEqual(harness.turns, [0]);
    assert.equal(harness.yields, 0);
  });
});
