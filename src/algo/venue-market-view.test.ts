import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Harness, markedPerpetualVenue, optionSpec, orderCommand, perpetualSpec } from '../engine/testkit.ts';
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

  test('own accounts: their visible lots leave each level, other accounts’ lots keep it', () => {
    const h = markedPerpetualVenue(100_000_000_000);
    const view = venueMarketView(h.venue);
    const PERP = 'BTC-PERPETUAL';
    h.ok(orderCommand(2, 'buy', 10, 99_000));
    h.ok(orderCommand(1, 'buy', 50, 99_000)); // shares the other account's level
    h.ok(orderCommand(3, 'buy', 40, 99_500)); // a level all of the own accounts'
    h.ok(orderCommand(1, 'buy', 500, 99_800, { displayAmount: 100 })); // an iceberg: its display
    h.ok(orderCommand(1, 'buy', 5, 99_900, { hidden: true })); // not on the book at all
    h.ok(orderCommand(4, 'sell', 10, 100_500));
    h.ok(orderCommand(3, 'sell', 10, 100_200));
    assert.equal(view.bestBid(PERP), 99_800);
    assert.equal(view.bestBid(PERP, [1]), 99_500);
    assert.equal(view.bestBid(PERP, [1, 3]), 99_000, 'account 2 still bids there');
    assert.equal(view.bestBid(PERP, [1, 2, 3]), null);
    assert.equal(view.bestAsk(PERP, [1, 3]), 100_500);
    assert.equal(view.bestAsk(PERP, []), 100_200);
  });

  test('expired: from the expiry instant on, before the settlement too', () => {
    const h = climbingVenue(EXPIRY - 60_000);
    const view = venueMarketView(h.venue);
    assert.equal(view.expired(CALL, EXPIRY - 1), false);
    assert.equal(view.expired(CALL, EXPIRY), true);
    assert.equal(view.expired('BTC-PERPETUAL', EXPIRY + 1_000_000), false, 'no expiry');
    assert.equal(view.expired('BTC-NOPE', EXPIRY), false, 'unknown');
  });
});
