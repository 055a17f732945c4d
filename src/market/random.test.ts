import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SeededRandom } from './random.ts';

describe('SeededRandom', () => {
  test('same seed, same sequence; state round-trips', () => {
    const a = SeededRandom.fromSeed(42);
    const b = SeededRandom.fromSeed(42);
    for (let i = 0; i < 100; i++) assert.equal(a.next(), b.next());
    const resumed = SeededRandom.fromState(a.state());
    assert.equal(resumed.next(), a.next());
    assert.notEqual(SeededRandom.fromSeed(43).next(), SeededRandom.fromSeed(42).next());
  });

  test('normal draws have mean ≈ 0 and variance ≈ 1; poisson mean ≈ lambda', () => {
    const random = SeededRandom.fromSeed(1);
    let sum = 0;
    let squares = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const x = random.normal();
      sum += x;
      squares += x * x;
    }
    assert.ok(Math.abs(sum / n) < 0.03);
    assert.ok(Math.abs(squares / n - 1) < 0.05);
    let count = 0;
    for (let i = 0; i < n; i++) count += random.poisson(2.5);
    assert.ok(Math.abs(count / n - 2.5) < 0.05);
  });
});
