import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Instrument } from '../../domain/instrument.ts';
import { optionSpec } from '../../engine/testkit.ts';
import { createCombo } from '../combos.ts';
import { inventoryOf } from './simulator.ts';

test('a combo quote is skewed by the legs’ positions, where its trades are booked', () => {
  const expiration = Date.UTC(2026, 11, 27, 8);
  const legs = new Map(
    [optionSpec(), optionSpec({ name: 'BTC-27DEC26-75000-C', strike: '75000' })].map((spec) => [
      spec.name,
      spec,
    ]),
  );
  const created = createCombo(
    {
      kind: 'call_spread',
      currency: 'BTC',
      linear: false,
      expiration,
      longStrike: 70_000,
      shortStrike: 75_000,
    },
    (name) => legs.get(name),
    0,
  );
  assert.ok(created.ok);
  const spread = new Instrument(2, created.spec);
  const call = new Instrument(0, legs.get('BTC-27DEC26-70000-C')!);
  // After selling 10 call spreads: short the 70,000 call, long the 75,000 call.
  const positions = new Map([
    ['BTC-27DEC26-70000-C', -10],
    ['BTC-27DEC26-75000-C', 10],
  ]);
  assert.equal(inventoryOf(spread, positions), -10);
  assert.equal(inventoryOf(call, positions), -10);
  assert.equal(inventoryOf(spread, new Map()), 0);
});
