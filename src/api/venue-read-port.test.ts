import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, optionSpec } from '../engine/testkit.ts';
import { createVenueReadPort } from './venue-read-port.ts';
import { tickerToWire } from './wire/market.ts';

const OPTION = 'BTC-27DEC26-70000-C';

test('an expired instrument shows its settlement price as the mark, not its last mark', () => {
  const h = new Harness();
  h.list(optionSpec());
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: OPTION, markPrice: 482 }] });
  const reads = createVenueReadPort(h.venue);
  const instrument = reads.instrument(OPTION)!;
  assert.equal(tickerToWire(reads.ticker(OPTION)!, instrument).markPrice, '0.0482');
  h.ok({ type: 'settle_instrument', instrumentName: OPTION, settlementPrice: 300 });
  const ticker = tickerToWire(reads.ticker(OPTION)!, instrument);
  assert.equal(ticker.state, 'expired');
  assert.equal(ticker.markPrice, '0.03');
});
