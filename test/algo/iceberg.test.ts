import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PortfolioMachine } from '../../src/algo/machine.ts';
import type { LegPricing, PortfolioSpec } from '../../src/algo/types.ts';
import { venueMarketView } from '../../src/algo/venue-market-view.ts';
import { AlgoHarness, leg, MARKET_PRICING, PERP, PERP_60K, portfolio, TRADER } from './harness.ts';

function iceberg(
  amount: number,
  displayAmount: number,
  refreshAmount: number | null = null,
  pricing?: LegPricing,
): PortfolioSpec {
  return portfolio({
    portfolioType: 'ICEBERG',
    legs: [leg({ amount, ...(pricing === undefined ? {} : { pricing }) })],
    iceberg: { displayAmount, refreshAmount },
  });
}

/** Lots the public book shows at a bid price. */
function shownBid(h: AlgoHarness, price: number): number {
  return h.venue.book(PERP, 20)!.bids.find((level) => level.price === price)?.amount ?? 0;
}

describe('ICEBERG with a venue iceberg order', () => {
  test('one child for the whole leg shows the display, refreshes, and completes the portfolio', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(iceberg(1000, 100));
    const open = h.openChildren(id);
    assert.equal(open.length, 1);
    assert.equal(open[0]!.amount, 1000, 'the leg’s whole quantity');
    assert.equal(open[0]!.displayAmount, 100);
    assert.equal(shownBid(h, PERP_60K), 100, 'the book shows only the display');
    h.maker('sell', 150, PERP_60K);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 150);
    assert.equal(shownBid(h, PERP_60K), 50, 'refreshed to the display, less the 50 taken since');
    assert.equal(h.childOrders(id)[0]!.iceberg, 50);
    for (let i = 0; i < 8; i++) h.maker('sell', 100, PERP_60K);
    assert.equal(p.legs[0]!.filled, 950, 'filled in many pieces, one child');
    assert.equal(p.status, 'WORKING');
    h.maker('sell', 500, PERP_60K);
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.legs[0]!.filled, 1000, 'never more than the total');
    assert.equal(h.childOrders(id).length, 1);
    assert.equal(h.placed.length, 1);
  });

  test('a refreshQuantity equal to the display uses the venue iceberg too', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(iceberg(500, 100, 100));
    assert.equal(h.openChildren(id)[0]!.displayAmount, 100);
    assert.equal(h.openChildren(id)[0]!.amount, 500);
  });

  test('a child cancelled by hand is followed by one venue iceberg for the rest', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(iceberg(1000, 100));
    h.maker('sell', 300, PERP_60K);
    const first = h.openChildren(id)[0]!;
    h.core({ type: 'cancel_order', accountId: TRADER, orderId: first.orderId });
    const open = h.openChildren(id);
    assert.equal(open.length, 1);
    assert.notEqual(open[0]!.orderId, first.orderId);
    assert.deepEqual([open[0]!.amount, open[0]!.displayAmount], [700, 100]);
  });

  test('a DYNAMIC re-price amends the child and keeps its display; its own display is left out of the reference', () => {
    const h = AlgoHarness.withMarket();
    h.maker('buy', 10, PERP_60K - 20);
    const bid: LegPricing = {
      priceType: 'DYNAMIC',
      price: null,
      priceIn: 'USD',
      dynamicStrategy: 'BID',
      dynamicOffset: 0,
      dynamicMs: 100,
    };
    const id = h.submit(iceberg(1000, 100, null, bid));
    const child = h.childOrders(id)[0]!;
    assert.equal(child.price, PERP_60K - 20);
    assert.equal(shownBid(h, PERP_60K - 20), 110);
    h.runUntil(h.ts + 500);
    assert.equal(child.price, PERP_60K - 20, 'the maker’s 10 lots still make the bid');
    h.maker('buy', 10, PERP_60K - 10);
    h.runUntil(h.ts + 200);
    assert.equal(child.price, PERP_60K - 10);
    const open = h.openChildren(id);
    assert.equal(open.length, 1, 'amended, not replaced');
    assert.deepEqual([open[0]!.amount, open[0]!.displayAmount], [1000, 100]);
    assert.equal(shownBid(h, PERP_60K - 10), 110);
  });

  test('a restored machine goes on with the venue iceberg child', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(iceberg(1000, 100));
    h.maker('sell', 250, PERP_60K);
    const restored = new PortfolioMachine(venueMarketView(h.venue));
    restored.restore(h.machine.snapshot());
    assert.equal(restored.stateHash(), h.machine.stateHash());
    h.machine = restored;
    h.maker('sell', 750, PERP_60K);
    assert.equal(h.machine.portfolio(id)!.status, 'COMPLETED');
    assert.equal(h.placed.length, 1);
  });
});

describe('ICEBERG falls back to plain slices', () => {
  test('a display below the venue minimum of 100 lots', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(iceberg(500, 99));
    const open = h.openChildren(id);
    assert.deepEqual([open[0]!.amount, open[0]!.displayAmount], [99, null]);
    assert.equal('iceberg' in h.childOrders(id)[0]!, false, 'plain children record no display');
    h.maker('sell', 99, PERP_60K);
    assert.equal(h.childOrders(id).length, 2);
  });

  test('a refreshQuantity different from the display', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(iceberg(1000, 100, 50));
    h.maker('sell', 100, PERP_60K);
    assert.deepEqual(
      h.childOrders(id).map((c) => c.amount),
      [100, 50],
    );
    assert.equal(h.openChildren(id)[0]!.displayAmount, null);
  });

  test('a hidden rest of 100 displays or more, then the venue iceberg once it is below that', () => {
    const h = AlgoHarness.withMarket();
    // 10,100 lots showing 100 would hide 10,000: 100 displays.
    const id = h.submit(iceberg(10_100, 100));
    assert.deepEqual([h.openChildren(id)[0]!.amount, h.openChildren(id)[0]!.displayAmount], [100, null]);
    h.maker('sell', 100, PERP_60K);
    const open = h.openChildren(id);
    assert.deepEqual([open[0]!.amount, open[0]!.displayAmount], [10_000, 100]);
  });

  test('a MARKET leg slices with market orders', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, PERP_60K);
    const market = MARKET_PRICING;
    const id = h.submit(iceberg(300, 100, null, market));
    assert.equal(h.machine.portfolio(id)!.status, 'COMPLETED');
    assert.deepEqual(
      h.childOrders(id).map((c) => [c.market, c.amount]),
      [
        [true, 100],
        [true, 100],
        [true, 100],
      ],
    );
  });

  test('plain slices: the last slice is cut to what the leg still needs, never a whole refresh', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, PERP_60K);
    const id = h.submit(iceberg(130, 50, 60));
    const p = h.machine.portfolio(id)!;
    assert.deepEqual(
      h.childOrders(id).map((c) => c.amount),
      [50, 60, 20],
    );
    assert.equal(p.legs[0]!.filled, 130, 'never more than the total');
    assert.equal(p.status, 'COMPLETED');
  });

  test('a MARKET leg: the last market slice is cut to the rest', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, PERP_60K);
    const id = h.submit(iceberg(250, 100, null, MARKET_PRICING));
    const p = h.machine.portfolio(id)!;
    assert.deepEqual(
      h.childOrders(id).map((c) => [c.market, c.amount]),
      [
        [true, 100],
        [true, 100],
        [true, 50],
      ],
    );
    assert.equal(p.legs[0]!.filled, 250);
    assert.equal(p.status, 'COMPLETED');
  });
});
