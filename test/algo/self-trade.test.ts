/**
 * Portfolios of one account that meet on the book: a limit child never crosses its own account's
 * resting orders, and a leg whose child self-trade prevention cancelled waits before it places
 * again, so opposing portfolios cannot cancel each other in a loop inside one command.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PortfolioMachine } from '../../src/algo/machine.ts';
import { PRICE_RETRY_MS } from '../../src/algo/steps.ts';
import type { LegPricing, PortfolioSpec } from '../../src/algo/types.ts';
import { venueMarketView } from '../../src/algo/venue-market-view.ts';
import { Venue } from '../../src/engine/venue.ts';
import { AlgoHarness, leg, MARKET_PRICING, PERP_60K, portfolio, T0, TRADER } from './harness.ts';

/** The maker's quotes: 59,990 / 60,010 USD. */
const BID = PERP_60K - 20;
const ASK = PERP_60K + 20;

function marketAround(): AlgoHarness {
  const h = AlgoHarness.withMarket();
  h.maker('buy', 1000, BID);
  h.maker('sell', 1000, ASK);
  return h;
}

const limitAt = (usd: number): LegPricing => ({ ...leg().pricing, price: usd });

function icebergSell(usd: number): PortfolioSpec {
  return portfolio({
    portfolioType: 'ICEBERG',
    legs: [leg({ side: 'sell', amount: 1000, pricing: limitAt(usd) })],
    iceberg: { displayAmount: 100, refreshAmount: 100 },
  });
}

function balanceBuyAtAsk(): PortfolioSpec {
  return portfolio({
    portfolioType: 'BALANCE',
    legs: [
      leg({
        amount: 200,
        pricing: {
          priceType: 'DYNAMIC',
          price: 70_000,
          priceIn: 'USD',
          dynamicStrategy: 'ASK',
          dynamicOffset: 0,
          dynamicMs: null,
        },
      }),
    ],
    balance: { parts: 2, eachLimitMs: 10_000, totalLimitMs: 0, totalEndAction: 'CANCEL_REMAINING' },
  });
}

function placeByHand(h: AlgoHarness, side: 'buy' | 'sell', amount: number, price: number) {
  return h.limit(TRADER, side, amount, price, 'by hand');
}

function selfTradeCancels(h: AlgoHarness, portfolioId: number): number {
  return h
    .childOrders(portfolioId)
    .filter((child) => h.venue.getOrder(child.orderId)?.cancelReason === 'self_trade_prevention').length;
}

describe('portfolios of one account on opposite sides', () => {
  test('an ICEBERG sell and a BALANCE buy at crossing prices settle, with bounded activity over 10 s', () => {
    const h = marketAround();
    const icebergPrice = (ASK - 4) / 2; // best ask minus 2 USD
    const iceberg = h.submit(icebergSell(icebergPrice));
    const balance = h.submit(balanceBuyAtAsk());
    h.runUntil(T0 + 10_000);

    assert.ok(h.placed.length <= 4, `${h.placed.length} child orders in 10 s`);
    const sell = h.openChildren(iceberg);
    const buy = h.openChildren(balance);
    assert.equal(sell.length, 1);
    assert.equal(buy.length, 1);
    assert.equal(sell[0]!.price, ASK - 4);
    assert.equal(buy[0]!.price, ASK - 5, "one tick below the account's own resting sell");
    assert.equal(selfTradeCancels(h, iceberg) + selfTradeCancels(h, balance), 0);
    assert.equal(h.machine.portfolio(balance)!.status, 'WORKING');
  });

  test('the BALANCE buy first, then the ICEBERG sell: the sell rests one tick above the own buy', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 10, ASK);
    h.maker('buy', 1000, BID);
    const balance = h.submit(
      portfolio({
        portfolioType: 'BALANCE',
        legs: [leg({ amount: 200, pricing: limitAt((BID + 10) / 2) })],
        balance: { parts: 2, eachLimitMs: 10_000, totalLimitMs: 0, totalEndAction: 'CANCEL_REMAINING' },
      }),
    );
    const iceberg = h.submit(icebergSell(BID / 2));
    h.runUntil(T0 + 10_000);
    assert.equal(h.openChildren(balance)[0]!.price, BID + 10);
    assert.equal(h.openChildren(iceberg)[0]!.price, BID + 11, 'capped above the own buy, not crossing it');
    assert.equal(h.machine.portfolio(iceberg)!.legs[0]!.filled, 0);
    assert.equal(selfTradeCancels(h, balance), 0);
  });

  test('a child cancelled by self-trade prevention is not placed again before one retry interval', () => {
    const h = marketAround();
    const id = h.submit(
      portfolio({
        portfolioType: 'BALANCE',
        legs: [leg({ amount: 100, pricing: limitAt(60_005) })],
        balance: { parts: 1, eachLimitMs: 60_000, totalLimitMs: 0, totalEndAction: 'CANCEL_REMAINING' },
      }),
    );
    assert.equal(h.openChildren(id)[0]!.price, PERP_60K + 10);

    // The same account sells below the portfolio's bid by hand: the venue cancels the resting child.
    placeByHand(h, 'sell', 10, PERP_60K);
    assert.equal(selfTradeCancels(h, id), 1);
    assert.equal(h.openChildren(id).length, 0, 'not re-placed inside the command that cancelled it');
    assert.equal(h.machine.nextWakeup(), T0 + PRICE_RETRY_MS);
    const restored = new PortfolioMachine(venueMarketView(Venue.restore(h.venue.snapshot())));
    restored.restore(h.machine.snapshot());
    assert.equal(restored.nextWakeup(), T0 + PRICE_RETRY_MS, 'the hold survives a restart');

    h.runUntil(T0 + PRICE_RETRY_MS - 1);
    assert.equal(h.openChildren(id).length, 0);
    h.runUntil(T0 + PRICE_RETRY_MS);
    const again = h.openChildren(id);
    assert.equal(again.length, 1, 'placed again at the retry time');
    assert.equal(again[0]!.price, PERP_60K - 1, 'one tick below the own sell');
    assert.equal(selfTradeCancels(h, id), 1);
  });

  test('a market child that takes out another portfolio’s resting child: that leg waits, then rests again', () => {
    const h = marketAround();
    const iceberg = h.submit(icebergSell((ASK - 4) / 2));
    const market = h.submit(
      portfolio({
        legs: [
          leg({
            amount: 50,
            pricing: MARKET_PRICING,
          }),
        ],
      }),
    );
    assert.equal(h.machine.portfolio(market)!.status, 'COMPLETED', 'bought from the maker');
    assert.equal(selfTradeCancels(h, iceberg), 1, 'the own resting sell was cancelled, not traded');
    assert.equal(h.openChildren(iceberg).length, 0);
    h.runUntil(T0 + PRICE_RETRY_MS);
    assert.equal(h.openChildren(iceberg)[0]!.price, ASK - 4);
    assert.equal(h.childOrders(iceberg).length, 2);
  });

  test('a DYNAMIC leg whose child self-trade prevention cancelled waits its own dynamicMs, not PRICE_RETRY_MS', () => {
    const h = marketAround();
    const id = h.submit(
      portfolio({
        portfolioType: 'BALANCE',
        legs: [
          leg({
            amount: 100,
            pricing: {
              priceType: 'DYNAMIC',
              price: null,
              priceIn: 'USD',
              dynamicStrategy: 'BID',
              dynamicOffset: 5,
              dynamicMs: 3_000,
            },
          }),
        ],
        balance: { parts: 1, eachLimitMs: 60_000, totalLimitMs: 0, totalEndAction: 'CANCEL_REMAINING' },
      }),
    );
    assert.equal(h.openChildren(id)[0]!.price, BID + 10, 'the bid plus 5 USD');
    h.ts = T0 + 500;
    // The same account sells into the portfolio's bid by hand: the venue cancels the resting child.
    h.limit(TRADER, 'sell', 10, BID + 10, 'by hand');
    assert.equal(h.openChildren(id).length, 0);
    assert.equal(h.machine.portfolio(id)!.legs[0]!.selfTradeHoldUntil, T0 + 3_500, 'one dynamicMs');
    h.runUntil(T0 + 3_499);
    assert.equal(h.openChildren(id).length, 0, 'held for the whole reprice interval');
    h.runUntil(T0 + 3_500);
    assert.equal(h.openChildren(id).length, 1, 'placed again when the hold ends');
  });
});

describe('ICEBERG children cancelled by self-trade prevention', () => {
  /** An ICEBERG sell of 300 at 60,010 USD: display 100, refresh 50. */
  function iceberg(h: AlgoHarness): number {
    return h.submit(
      portfolio({
        portfolioType: 'ICEBERG',
        legs: [leg({ side: 'sell', amount: 300, pricing: limitAt(ASK / 2) })],
        iceberg: { displayAmount: 100, refreshAmount: 50 },
      }),
    );
  }

  test('the replacement is the cancelled slice’s unfilled rest, after the hold; the total is exact', () => {
    const h = AlgoHarness.withMarket();
    const id = iceberg(h);
    h.maker('buy', 30, ASK);
    assert.equal(h.openChildren(id)[0]!.filledAmount, 30);

    // The account buys at the iceberg's price by hand: the venue cancels the resting child.
    const placed = h.placed.length;
    placeByHand(h, 'buy', 10, ASK);
    assert.equal(selfTradeCancels(h, id), 1);
    assert.equal(h.placed.length, placed, 'nothing placed again inside the command that cancelled it');
    assert.equal(h.machine.nextWakeup(), T0 + PRICE_RETRY_MS);

    // A restart in the hold decides the same replacement.
    const restored = h.restarted();

    for (const copy of [h, restored]) {
      copy.runUntil(T0 + PRICE_RETRY_MS);
      const [child] = copy.openChildren(id);
      assert.equal(
        child!.amount,
        70,
        'the 70 lots the cancel left of the 100-lot slice, not a 50-lot refresh',
      );
      assert.equal(child!.price, ASK + 1, 'one tick above the own buy');
      // A buyer for far more than the portfolio: it sells exactly its 300.
      copy.maker('buy', 1000, ASK + 1);
      const p = copy.machine.portfolio(id)!;
      assert.equal(p.status, 'COMPLETED');
      assert.equal(p.legs[0]!.filled, 300);
      assert.deepEqual(
        copy.childOrders(id).map((c) => [c.amount, c.filled]),
        [
          [100, 30],
          [70, 70],
          [50, 50],
          [50, 50],
          [50, 50],
          [50, 50],
        ],
      );
      assert.equal(copy.openChildren(id).length, 0);
    }
    assert.equal(restored.machine.stateHash(), h.machine.stateHash());
  });

  test('an unfilled first child is replaced with displayQuantity; each cancel costs one hold, not a loop', () => {
    const h = AlgoHarness.withMarket();
    const id = iceberg(h);
    for (let k = 1; k <= 3; k++) {
      // The hand order of the same account crosses the child wherever it rests.
      const child = h.openChildren(id)[0]!;
      const placed = h.placed.length;
      placeByHand(h, 'buy', 1, child.price!);
      assert.equal(selfTradeCancels(h, id), k);
      assert.equal(h.placed.length, placed);
      h.runUntil(h.ts + PRICE_RETRY_MS);
      const [next] = h.openChildren(id);
      assert.equal(next!.amount, 100, 'the whole display again: nothing of it traded');
      assert.equal(next!.price, child.price! + 1);
    }
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING');
    assert.equal(p.legs[0]!.filled, 0);
    assert.equal(h.childOrders(id).length, 4);
  });

  test('the last slice: the replacement never exceeds what remains', () => {
    const h = AlgoHarness.withMarket();
    const id = iceberg(h);
    h.maker('buy', 280, ASK);
    const last = h.openChildren(id)[0]!;
    assert.equal(last.amount - last.filledAmount, 20, 'what rests is what remains');
    h.maker('buy', 5, ASK);
    placeByHand(h, 'buy', 10, ASK);
    h.runUntil(h.ts + PRICE_RETRY_MS);
    assert.equal(h.openChildren(id)[0]!.amount, 15);
    h.maker('buy', 100, ASK + 1);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.legs[0]!.filled, 300);
  });
});

describe('an account in reject_taker mode', () => {
  test('a child refused for meeting its own resting order holds the leg instead of failing the portfolio', () => {
    const h = marketAround();
    h.core({ type: 'set_account_settings', accountId: TRADER, selfTradeMode: 'reject_taker' });
    const own = placeByHand(h, 'sell', 10, ASK - 4).order!.orderId;
    const market = h.submit(
      portfolio({
        legs: [
          leg({
            amount: 50,
            pricing: MARKET_PRICING,
          }),
        ],
      }),
    );
    assert.equal(h.machine.portfolio(market)!.status, 'WORKING', 'refused with order_overlap, held');
    assert.equal(h.childOrders(market).length, 0);
    h.core({ type: 'cancel_order', accountId: TRADER, orderId: own });
    h.runUntil(T0 + PRICE_RETRY_MS - 1);
    assert.equal(h.machine.portfolio(market)!.status, 'WORKING', 'waits one retry interval');
    h.runUntil(T0 + PRICE_RETRY_MS);
    assert.equal(
      h.machine.portfolio(market)!.status,
      'COMPLETED',
      'bought from the maker once its sell left',
    );
  });
});
