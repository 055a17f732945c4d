import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Instrument } from '../domain/instrument.ts';
import { perpetualSpec } from '../engine/testkit.ts';
import { type ComboPlan, netComboTicks } from './combo.ts';

test('a combo limit nets its legs on the combo grid: a finer leg tick rounds down for a buy, up for a sell', () => {
  const future = new Instrument(0, perpetualSpec({ name: 'BTC-27DEC26', tickSize: '2.5' }));
  const perpetual = new Instrument(1, perpetualSpec());
  const combo = new Instrument(2, perpetualSpec({ name: 'BTC-FS-27DEC26_PERP', tickSize: '2.5' }));
  const plan = (side: 'buy' | 'sell'): ComboPlan => ({
    instrumentName: combo.name,
    instrument: combo,
    side,
    legs: [
      { leg: 0, ratio: 1 },
      { leg: 1, ratio: -1 },
    ],
  });
  // 60,500 − 60,005.5 = 494.5 USD = 197.8 ticks of 2.5.
  assert.equal(netComboTicks(plan('buy'), [future, perpetual], [24_200, 120_011]), 197);
  assert.equal(netComboTicks(plan('sell'), [future, perpetual], [24_200, 120_011]), 198);
  // 60,500 − 60,005 = 495 USD: exactly 198 ticks either way.
  assert.equal(netComboTicks(plan('buy'), [future, perpetual], [24_200, 120_010]), 198);
  // Negative nets round the same way: −0.5 USD is −0.2 ticks.
  assert.equal(netComboTicks(plan('buy'), [future, perpetual], [24_200, 121_001]), -1);
  assert.equal(netComboTicks(plan('sell'), [future, perpetual], [24_200, 121_001]), 0);
});
