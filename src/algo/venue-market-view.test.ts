import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Harness, optionSpec, perpetualSpec } from '../engine/testkit.ts';
import { SETTLEMENT_WINDOW_MS } from '../market/settlement.ts';
import { venueMarketView } from './venue-market-view.ts';

const EXPIRY = Date.UTC(2026, 11, 27, 8);
const CALL = 'BTC-27DEC26-60000-C';

/** A venue whose BTC index climbs from 60,000 to 61,200 across the settlement window. */
function climbingVenue(until: number): Harness {
  const h = new Harness();
  h.ts = EXPIRY - SETTLEMENT_WINDOW_MS - 60_000;
  h.list(perpetualSpec());
  h.list(optionSpec({ name: CALL, strike: '60000' }));
  const start = EXPIRY - SETTLEMENT_WINDOW_MS;
  for (let t = h.ts; t <= until; t += 10_000) {
    h.ts = t;
    const climbed = Math.max(0, t - start) / SETTLEMENT_WINDOW_MS;
    h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 60_000 + 1_200 * climbed }] });
  }
  return h;
}

describe('venue market view', () => {
  test('inside the settlement window MODEL prices use the part of the average the venue has fixed', () => {
    const at = EXPIRY - 60_000;
    const h = climbingVenue(at);
    const view = venueMarketView(h.venue);
    const fixing = h.venue.settlementFixing('BTC', EXPIRY, at);
    assert.ok(fixing !== null && Math.abs(fixing.fixedFraction - 29 / 30) < 1e-12);
    // The average so far is about the middle of the climb; the index is near its top.
    assert.ok(Math.abs(fixing.average - 60_580) < 5 && h.venue.indexPrice('BTC')! > 61_150);
    const context = view.optionContext(CALL, at)!;
    const forward = context.forward;
    assert.ok(Math.abs(forward - (fixing.average * 29 + context.index) / 30) < 5);
    // A minute before expiry the call is worth about its payoff at that forward, in coin.
    const model = view.modelPrice(CALL, at)!;
    assert.ok(Math.abs(model - (forward - 60_000) / forward) < 2e-4, `${model}`);
    // Priced on the index alone it would be worth about twice as much.
    const onIndex = (context.index - 60_000) / context.index;
    assert.ok(onIndex > 1.8 * model);
  });

  test('outside the window nothing is fixed', () => {
    const at = EXPIRY - SETTLEMENT_WINDOW_MS - 10_000;
    const h = climbingVenue(at);
    assert.equal(h.venue.settlementFixing('BTC', EXPIRY, at), null);
    const context = venueMarketView(h.venue).optionContext(CALL, at)!;
    assert.ok(context.forward >= context.index);
  });
});
