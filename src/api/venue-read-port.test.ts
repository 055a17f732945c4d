import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, optionSpec } from '../engine/testkit.ts';
import { createVenueReadPort } from './venue-read-port.ts';
import { bookSummaryToWire, tickerToWire } from './wire/market.ts';

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

test('inside the settlement window the estimated delivery price is the settlement average to come', () => {
  // The expiry settles at the index averaged over its last 30 minutes (docs/decisions.md,
  // "Settlement index"). 15 minutes in, the first half averaged 60,000 and the index is 62,000:
  // the best estimate is 0.5 × 60,000 + 0.5 × 62,000, not the index.
  const h = new Harness();
  h.list(optionSpec());
  const reads = createVenueReadPort(h.venue);
  const instrument = reads.instrument(OPTION)!;
  const expiration = instrument.spec.expiration!;
  h.ts = expiration - 40 * 60_000;
  h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 60_000 }] });
  // Before the window it is the index itself.
  assert.equal(bookSummaryToWire(reads.ticker(OPTION)!, instrument).estimatedDeliveryPrice, '60000');
  assert.equal(reads.estimatedDeliveryPrice!('BTC'), 60_000);
  h.ts = expiration - 15 * 60_000;
  h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 62_000 }] });
  assert.equal(bookSummaryToWire(reads.ticker(OPTION)!, instrument).estimatedDeliveryPrice, '61000');
  assert.equal(reads.estimatedDeliveryPrice!('BTC'), 61_000);
  assert.equal(reads.indexPrice('BTC'), 62_000);
});
