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

test('an expired instrument takes no orders: its ticker and book show no price band', () => {
  const h = new Harness();
  h.list(optionSpec());
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: OPTION, markPrice: 482 }] });
  const reads = createVenueReadPort(h.venue);
  assert.ok(reads.ticker(OPTION)!.priceBand != null, 'a marked open option has a band');
  assert.ok(reads.orderBook(OPTION, 5)!.priceBand != null, 'its book shows it too');
  h.ok({ type: 'settle_instrument', instrumentName: OPTION, settlementPrice: 300 });
  assert.equal(reads.ticker(OPTION)!.priceBand, null);
  assert.equal(reads.orderBook(OPTION, 5)!.priceBand, null);
});

test('get_instruments reads: open ones apart, expired ones only while recently expired', () => {
  const h = new Harness();
  h.list(optionSpec());
  h.list(optionSpec({ name: 'BTC-27DEC26-75000-C', strike: '75000' }));
  const reads = createVenueReadPort(h.venue);
  const names = (expired: boolean) => reads.instruments(expired).map((i) => i.name);
  assert.deepEqual(names(false), [OPTION, 'BTC-27DEC26-75000-C']);
  assert.deepEqual(names(true), []);
  const expiration = reads.instrument(OPTION)!.spec.expiration!;
  h.ts = expiration;
  h.ok({ type: 'settle_instrument', instrumentName: OPTION, settlementPrice: 300 });
  assert.deepEqual(names(false), ['BTC-27DEC26-75000-C']);
  assert.deepEqual(names(true), [OPTION]);
  // Three days after its expiration it is no longer recent; it is still known by name.
  h.ts = expiration + 3 * 24 * 3_600_000 + 1;
  h.ok({ type: 'timer' });
  assert.deepEqual(names(true), []);
  assert.equal(reads.instrument(OPTION)!.name, OPTION);
  assert.deepEqual(reads.currencies(), ['BTC']);
});
