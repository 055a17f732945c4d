import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandResult } from '../core/events.ts';
import { AdvancedHarness, errorOf, orderOf, PERP } from './advanced-testkit.ts';
import {
  Harness,
  linearPerpetualSpec,
  markedPerpetualVenue,
  optionSpec,
  orderCommand,
  perpetualSpec,
} from './testkit.ts';
import { Venue } from './venue.ts';

const OPTION = 'BTC-27DEC26-70000-C';

/** The prices of the trades in a command's events. */
function tradePrices(result: CommandResult): number[] {
  return result.events.flatMap((e) => (e.type === 'trade' ? [e.trade.price] : []));
}

function checkReplay(h: AdvancedHarness): void {
  h.venue.validate();
  assert.equal(h.replayHash(), h.venue.stateHash());
  assert.equal(Venue.restore(h.venue.snapshot()).stateHash(), h.venue.stateHash());
}

describe('activation keeps limit prices inside the price band', () => {
  test('a triggered sell limit below the band is clamped to the band minimum when it fires', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000); // band 95_000 .. 105_000
    // A plain sell that far below the band is refused...
    assert.equal(errorOf(h.run(h.orderCommand(1, 'sell', 10, 2_000))), 'price_too_low');
    // ...a trigger order is placed (it goes live later, under a later band)...
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 10, 2_000, {
          orderType: 'take_limit',
          trigger: 'mark_price',
          triggerPrice: 100_500,
        }),
      ),
    );
    assert.equal(stop.orderState, 'untriggered');
    assert.equal(stop.price, 2_000);
    // ...and fires under the band of its time: 100_500 ± 5_025.
    h.prices(null, 100_500);
    const live = h.get(stop.orderId);
    assert.equal(live.orderState, 'open');
    assert.equal(live.triggered, true);
    assert.equal(live.price, 95_475);
    assert.equal(h.venue.book(PERP)!.bestAsk, 95_475);
    const buy = h.ok(h.orderCommand(2, 'buy', 10, 100_000));
    assert.deepEqual(tradePrices(buy), [95_475]);
    checkReplay(h);
  });

  test('a triggered buy limit above the band is clamped to the band maximum', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(2, 'sell', 10, 104_000));
    const stop = h.markStop(1, 'buy', 10, 200_000, 100_500, { timeInForce: 'immediate_or_cancel' });
    assert.equal(stop.price, 200_000);
    const fired = h.prices(null, 100_500); // band max 105_525
    assert.deepEqual(tradePrices(fired), [104_000]);
    const after = h.get(stop.orderId);
    assert.equal(after.orderState, 'filled');
    assert.equal(after.price, 105_525);
    checkReplay(h);
  });

  test('a released OTO limit secondary below the band rests at the band minimum', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    const primary = h.place(1, 'buy', 10, 100_000, {
      linkedOrderType: 'one_triggers_other',
      otocoConfig: [{ side: 'sell', orderType: 'limit', price: 2_000 }],
    });
    const secondaryId = primary.otoOrderIds![0]!;
    assert.equal(h.get(secondaryId).price, 2_000);
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    const live = h.get(secondaryId);
    assert.equal(live.orderState, 'open');
    assert.equal(live.price, 95_000);
    const buy = h.ok(h.orderCommand(3, 'buy', 10, 100_000));
    assert.deepEqual(tradePrices(buy), [95_000]);
    checkReplay(h);
  });

  test('on a stepped tick grid the clamped price is the nearest grid price inside the band', () => {
    const h = new AdvancedHarness();
    h.list(optionSpec());
    h.prices(50_000);
    // Mark 0.1003 BTC, ±50%: band 502 .. 1504 ticks of 0.0001; above 0.005 the grid is 0.0005.
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: OPTION, markPrice: 1_003 }] });
    const order = (
      accountId: number,
      side: 'buy' | 'sell',
      price: number,
      secondary: Record<string, unknown>,
    ) =>
      orderOf(
        h.ok({
          ...h.orderCommand(accountId, side, 10, price, {
            linkedOrderType: 'one_triggers_other',
            otocoConfig: [secondary],
          }),
          instrumentName: OPTION,
        }),
      );
    const a = order(1, 'buy', 1_000, { side: 'sell', orderType: 'limit', price: 100 });
    h.ok({ ...h.orderCommand(2, 'sell', 10, 1_000), instrumentName: OPTION });
    assert.equal(h.get(a.otoOrderIds![0]!).price, 505);
    const b = order(3, 'sell', 1_200, { side: 'buy', orderType: 'limit', price: 5_000 });
    // Takes account 1's released ask at 505 and then the primary at 1200.
    h.ok({ ...h.orderCommand(4, 'buy', 20, 1_200), instrumentName: OPTION });
    assert.equal(h.get(a.otoOrderIds![0]!).orderState, 'filled');
    const released = h.get(b.otoOrderIds![0]!);
    // 1504 is off the 5-tick grid: the buy goes down to 1500, not up out of the band.
    assert.equal(released.orderState, 'open');
    assert.equal(released.price, 1_500);
    assert.equal(h.venue.book(OPTION)!.bestBid, 1_500);
    checkReplay(h);
  });

  test('without a band (no mark yet) a triggered limit keeps its price', () => {
    const h = new AdvancedHarness();
    h.ok(h.orderCommand(2, 'buy', 1, 98_000));
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'sell', 3, 2_000, {
          orderType: 'stop_limit',
          trigger: 'last_price',
          triggerPrice: 99_000,
        }),
      ),
    );
    h.print(99_000);
    const after = h.get(stop.orderId);
    assert.equal(after.price, 2_000);
    assert.equal(after.averagePrice, 98_000);
  });
});

describe('activation checks funds as placing does', () => {
  const LINEAR = 'BTC_USDC-PERPETUAL';
  const usdc = (h: Harness, id: number) => h.venue.accountSummary(id, 'USDC')!;
  const btc = (h: Harness, id: number) => h.venue.accountSummary(id, 'BTC')!;

  /** A fee-free inverse perpetual marked at 100,000 ticks; account 1 holds `funds` sat, 2-4 plenty. */
  function marked(funds: number): Harness {
    return markedPerpetualVenue(funds);
  }

  /** What account 4 (no position) reserves for a sell of `lots` at `price`. */
  function nakedSell(h: Harness, lots: number, price: number): number {
    const before = btc(h, 4).orderMargin;
    h.ok(orderCommand(4, 'sell', lots, price));
    const reserved = btc(h, 4).orderMargin - before;
    h.ok({ type: 'cancel_all', accountId: 4 });
    return reserved;
  }

  test('a stop_market without a band must afford the deepest level it reaches, as a market order must', () => {
    const h = new Harness();
    h.list(linearPerpetualSpec());
    h.account(1, { USDC: 1_000_000_000 });
    for (const id of [2, 3, 4]) h.account(id, { USDC: 1e13 });
    // No mark, so no band: the book is all a market order has.
    h.ok(orderCommand(2, 'sell', 1, 120_000, { instrumentName: LINEAR }));
    h.ok(orderCommand(2, 'sell', 300, 240_000, { instrumentName: LINEAR }));
    // Placed now, the market buy is refused (margin-reserve.test.ts)...
    const placed = h.order(1, 'buy', 301, null, {
      instrumentName: LINEAR,
      timeInForce: 'immediate_or_cancel',
    });
    assert.equal(errorOf(placed), 'not_enough_funds');
    // ...and going live from a trigger, it is rejected the same way.
    const stop = orderOf(
      h.ok(
        orderCommand(1, 'buy', 301, null, {
          instrumentName: LINEAR,
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 119_000,
          timeInForce: 'immediate_or_cancel',
        }),
      ),
    );
    h.ok(orderCommand(3, 'sell', 1, 119_000, { instrumentName: LINEAR }));
    const fired = h.ok(
      orderCommand(4, 'buy', 1, 119_000, { instrumentName: LINEAR, timeInForce: 'immediate_or_cancel' }),
    );
    assert.deepEqual(
      fired.events.flatMap((e) => (e.type === 'trade' ? [e.trade.price] : [])),
      [119_000],
    );
    assert.equal(h.venue.getOrder(stop.orderId)!.orderState, 'rejected');
    assert.equal(h.venue.getOrder(stop.orderId)!.cancelReason, 'not_enough_funds');
    assert.equal(h.venue.position(1, LINEAR)?.size ?? 0, 0);
    assert.ok(usdc(h, 1).availableFunds >= 0);
  });

  test('a funded stop_market without a band trades only down to the level it needs', () => {
    const h = new Harness();
    h.list(linearPerpetualSpec());
    for (const id of [1, 2, 3, 4]) h.account(id, { USDC: 1e13 });
    h.ok(orderCommand(2, 'sell', 1, 120_000, { instrumentName: LINEAR }));
    h.ok(orderCommand(2, 'sell', 1, 121_000, { instrumentName: LINEAR }));
    h.ok(orderCommand(2, 'sell', 5, 130_000, { instrumentName: LINEAR }));
    const stop = orderOf(
      h.ok(
        orderCommand(1, 'buy', 2, null, {
          instrumentName: LINEAR,
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 119_000,
          timeInForce: 'immediate_or_cancel',
        }),
      ),
    );
    h.ok(orderCommand(3, 'sell', 1, 119_000, { instrumentName: LINEAR }));
    h.ok(orderCommand(4, 'buy', 1, 119_000, { instrumentName: LINEAR, timeInForce: 'immediate_or_cancel' }));
    const after = h.venue.getOrder(stop.orderId)!;
    assert.equal(after.orderState, 'filled');
    assert.equal(after.averagePrice, 120_500);
    assert.equal(after.price, 121_000);
    assert.equal(h.venue.book(LINEAR)!.bestAsk, 130_000);
  });

  test('a stop that would close the position is rejected when the resting orders it uncovers cannot be funded', () => {
    const h = marked(50_000);
    h.ok(orderCommand(2, 'buy', 10, 100_000));
    assert.ok(h.order(1, 'sell', 10, 100_000).ok);
    // A bid far below the mark: it only reduces the short, so it reserves nothing, but 10 lots at
    // 5,000 USD need 0.001 BTC of margin once they open.
    h.ok(orderCommand(1, 'buy', 10, 10_000));
    assert.equal(btc(h, 1).orderMargin, 0);
    h.ok(orderCommand(3, 'sell', 10, 100_000));
    // Placing the closing order is refused (margin-reserve.test.ts)...
    assert.equal(
      errorOf(h.order(1, 'buy', 10, 100_000, { timeInForce: 'immediate_or_cancel' })),
      'not_enough_funds',
    );
    // ...and a stop that sends it when the last price moves is rejected when it goes live.
    const stop = orderOf(
      h.ok(
        orderCommand(1, 'buy', 10, null, {
          orderType: 'stop_market',
          trigger: 'last_price',
          triggerPrice: 99_000,
          timeInForce: 'immediate_or_cancel',
        }),
      ),
    );
    h.ok(orderCommand(4, 'buy', 1, 99_000));
    h.ok(orderCommand(2, 'sell', 1, 99_000, { timeInForce: 'immediate_or_cancel' }));
    assert.equal(h.venue.getOrder(stop.orderId)!.orderState, 'rejected');
    assert.equal(h.venue.getOrder(stop.orderId)!.cancelReason, 'not_enough_funds');
    assert.equal(h.venue.position(1, PERP)!.size, -10);
    assert.ok(btc(h, 1).availableFunds >= 0);
  });

  test('a released OTO secondary that would close the position is rejected when it cannot fund what it uncovers', () => {
    const h = marked(50_000);
    h.ok(orderCommand(2, 'buy', 10, 100_000));
    assert.ok(h.order(1, 'sell', 10, 100_000).ok);
    h.ok(orderCommand(1, 'buy', 10, 10_000));
    h.ok(orderCommand(3, 'sell', 10, 100_000));
    // The primary rests as the best ask; its secondary would buy back the short at the next one.
    const primary = orderOf(
      h.ok(
        orderCommand(1, 'sell', 1, 99_500, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [
            {
              side: 'buy',
              amount: 10,
              orderType: 'limit',
              price: 100_000,
              timeInForce: 'immediate_or_cancel',
            },
          ],
        }),
      ),
    );
    const secondary = h.venue.getOrder(primary.orderId)!.otoOrderIds![0]!;
    h.ok(orderCommand(4, 'buy', 1, 99_500, { timeInForce: 'immediate_or_cancel' }));
    assert.equal(h.venue.getOrder(primary.orderId)!.orderState, 'filled');
    assert.equal(h.venue.getOrder(secondary)!.orderState, 'rejected');
    assert.equal(h.venue.getOrder(secondary)!.cancelReason, 'not_enough_funds');
    assert.equal(h.venue.position(1, PERP)!.size, -11);
    assert.ok(btc(h, 1).availableFunds >= 0);
  });

  test('a stop going live ahead of a younger sell pays for the opening it pushes that sell into, to the sat', () => {
    /**
     * Account 1 long 10 with a plain sell (younger) claiming the long and an older stop_limit sell
     * that goes live when the mark drops: it claims the long first, so the plain sell opens 10.
     */
    const session = (funds: number, stop: boolean) => {
      const h = marked(funds);
      h.ok(orderCommand(2, 'sell', 10, 100_000));
      assert.ok(h.order(1, 'buy', 10, 100_000).ok, 'account 1 buys its long');
      const trigger = { orderType: 'stop_limit', trigger: 'mark_price', triggerPrice: 99_000 } as const;
      const placed = stop ? orderOf(h.ok(orderCommand(1, 'sell', 10, 102_000, trigger))).orderId : null;
      const younger = orderOf(h.ok(orderCommand(1, 'sell', 10, 101_000))).orderId;
      return { h, stop: placed, younger };
    };
    const drop = (h: Harness) =>
      h.ok({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 99_000 }] });
    // Going live it pays, as placing does, the larger of its reserve at its number (nothing: it
    // only reduces) and as the newest order (opening 10), plus the plain sell's opening 10.
    const RICH = 1_000_000_000;
    const probe = session(RICH, false);
    drop(probe.h);
    const used = RICH - btc(probe.h, 1).availableFunds;
    const required = nakedSell(probe.h, 10, 102_000) + nakedSell(probe.h, 10, 101_000);
    for (const [funds, goesLive] of [
      [used + required, true],
      [used + required - 1, false],
    ] as const) {
      const { h, stop, younger } = session(funds, true);
      drop(h);
      const fired = h.venue.getOrder(stop!)!;
      assert.equal(fired.orderState, goesLive ? 'open' : 'rejected', `${funds - used} sat for ${required}`);
      assert.equal(h.venue.getOrder(younger)!.orderState, 'open', 'the younger sell keeps resting');
      assert.ok(btc(h, 1).availableFunds >= 0, `available ${btc(h, 1).availableFunds}`);
    }
  });

  test('a trigger order placed before resting sells claims the position before them once it rests', () => {
    const h = marked(1_000_000_000);
    h.ok(orderCommand(2, 'sell', 10, 100_000));
    assert.ok(h.order(1, 'buy', 10, 100_000).ok);
    // The stop sell (older) goes live after the plain sell (younger) rested.
    h.ok(
      orderCommand(1, 'sell', 10, 104_000, {
        orderType: 'stop_limit',
        trigger: 'mark_price',
        triggerPrice: 99_000,
      }),
    );
    h.ok(orderCommand(1, 'sell', 10, 101_000));
    assert.equal(btc(h, 1).orderMargin, 0);
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 99_000 }] });
    // The long's 10 lots go to the older order: the stop needs nothing, the plain sell opens all 10.
    assert.equal(btc(h, 1).orderMargin, nakedSell(h, 10, 101_000));
    h.venue.validate();
  });
});

describe('activation reviews claims only when it rests ahead of younger orders', () => {
  test('the youngest order going live does not re-reserve an older resting order at the new mark', () => {
    const LINEAR = 'BTC_USDC-PERPETUAL';
    /** Account 2: long 1 lot, an older sell far below the price to come, and maybe a take order. */
    const session = (take: boolean) => {
      const h = new Harness();
      h.list(linearPerpetualSpec());
      h.account(2, { USDC: 1_200_000_000 });
      h.account(3, { USDC: 1e13 });
      h.ok(orderCommand(3, 'sell', 1, 12_001, { instrumentName: LINEAR }));
      h.ok(orderCommand(2, 'buy', 1, 12_001, { instrumentName: LINEAR, timeInForce: 'immediate_or_cancel' }));
      // No mark yet: the sell reserves the margin of the 30 lots it opens, no loss against a mark.
      h.ok(orderCommand(2, 'sell', 31, 24_002, { instrumentName: LINEAR }));
      if (take)
        h.ok(
          orderCommand(2, 'sell', 1, 1_200, {
            instrumentName: LINEAR,
            orderType: 'take_limit',
            trigger: 'mark_price',
            triggerPrice: 12_001,
            reduceOnly: true,
          }),
        );
      // The first mark: the take order goes live, last in every claim queue (the youngest).
      h.ok({ type: 'update_prices', markPrices: [{ instrumentName: LINEAR, markPrice: 120_010 }] });
      return h.venue.accountSummary(2, 'USDC')!;
    };
    const without = session(false);
    const withTake = session(true);
    // Only the take order's own reserve (a lot's margin and its loss against the mark, ~6 USDC)
    // is added; the older sell keeps its reserve, as a mark move leaves it (it was raised by its
    // 1,440 USDC loss against the new mark before, and funds went to about -213 USDC).
    assert.ok(withTake.orderMargin - without.orderMargin < 10_000_000, `${withTake.orderMargin}`);
    assert.ok(withTake.availableFunds >= 0);
  });
});

describe('activation ahead of younger claims', () => {
  test('a reduce-only stop that goes live ahead of a younger resting sell is charged for what that sell then needs', () => {
    const h = new Harness();
    h.list(perpetualSpec({ takerCommission: '0' }));
    h.account(1, { BTC: 25_000 });
    for (const id of [2, 3, 4]) h.account(id);
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 50_000 }],
      markPrices: [{ instrumentName: PERP, markPrice: 100_000 }],
    });
    h.ok(orderCommand(2, 'sell', 10, 100_000));
    h.ok(orderCommand(1, 'buy', 10, 100_000));
    // The stop (older) waits; the plain sell (younger) claims the long and reserves nothing.
    const stop = orderOf(
      h.ok(
        orderCommand(1, 'sell', 10, 104_000, {
          orderType: 'stop_limit',
          trigger: 'mark_price',
          triggerPrice: 99_000,
          reduceOnly: true,
        }),
      ),
    );
    h.ok(orderCommand(1, 'sell', 10, 101_000));
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 99_500 }] });
    assert.ok(h.venue.accountSummary(1, 'BTC')!.availableFunds > 0);
    // The stop goes live ahead of the plain sell, which now opens all 10 lots: either both are
    // funded or the stop is rejected. Today the stop rests and funds go to about -6,600 sat.
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 99_000 }] });
    const state = h.venue.getOrder(stop.orderId)!.orderState;
    assert.ok(
      h.venue.accountSummary(1, 'BTC')!.availableFunds >= 0,
      `stop ${state}, funds ${h.venue.accountSummary(1, 'BTC')!.availableFunds}`,
    );
  });
});

describe('activation refuses and adjusts what placing does', () => {
  test('a trigger order that could rest is rejected when it fires with the account at its open-order limit', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    const stop = h.markStop(1, 'sell', 10, 98_000, 99_000);
    h.ok(h.orderCommand(1, 'buy', 10, 90_000));
    h.ok(h.orderCommand(1, 'buy', 10, 90_001));
    h.ok({ type: 'set_account_settings', accountId: 1, maxOpenOrders: 2 });
    h.prices(null, 99_000);
    const fired = h.get(stop.orderId);
    assert.equal(fired.orderState, 'rejected', `stop state ${fired.orderState}`);
    assert.equal(fired.cancelReason, 'max_open_orders');
    assert.equal(fired.cancelReason, 'max_open_orders', `stop reason ${fired.cancelReason}`);
  });

  test('a reduce-only stop firing after the position shrank is cut to the position', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok(h.orderCommand(2, 'sell', 10, 100_000));
    h.ok(h.orderCommand(1, 'buy', 10, 100_000));
    const stop = h.markStop(1, 'sell', 10, null, 99_000, { reduceOnly: true });
    h.ok(h.orderCommand(3, 'buy', 5, 100_000));
    h.ok(h.orderCommand(1, 'sell', 5, 100_000, { timeInForce: 'immediate_or_cancel' }));
    assert.equal(h.venue.position(1, PERP)!.size, 5, 'long 5 before the stop fires');
    h.ok(h.orderCommand(3, 'buy', 20, 99_000));
    h.prices(null, 99_000);
    const fired = h.get(stop.orderId);
    assert.equal(fired.filledAmount, 5, `stop filled ${fired.filledAmount}`);
    assert.equal(h.venue.position(1, PERP)!.size, 0, 'position closed, not flipped short');
  });

  test('a released post-only OTO secondary priced at the opposite touch is re-priced inside it, not traded', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    const primary = h.place(1, 'buy', 10, 99_000, {
      linkedOrderType: 'one_triggers_other',
      otocoConfig: [{ side: 'buy', orderType: 'limit', price: 100_500, amount: 5, postOnly: true }],
    });
    const secondaryId = primary.otoOrderIds![0]!;
    h.ok(h.orderCommand(3, 'sell', 5, 100_500));
    h.ok(h.orderCommand(2, 'sell', 10, 99_000));
    const live = h.get(secondaryId);
    assert.equal(live.orderState, 'open', `secondary state ${live.orderState}`);
    assert.equal(live.filledAmount, 0, 'a post-only order never takes');
    assert.equal(live.price, 100_499, `secondary price ${live.price}`);
  });

  test('a trigger limit that meets its own resting order in reject_taker mode is cancelled, not rested crossed', () => {
    const h = new AdvancedHarness();
    h.prices(50_000, 100_000);
    h.ok({ type: 'set_account_settings', accountId: 1, selfTradeMode: 'reject_taker' });
    h.ok(h.orderCommand(1, 'sell', 5, 99_500));
    const stop = h.markStop(1, 'buy', 5, 100_000, 100_500);
    h.prices(null, 100_500);
    const fired = h.get(stop.orderId);
    assert.equal(fired.orderState, 'cancelled', `stop state ${fired.orderState}`);
    assert.equal(fired.cancelReason, 'self_trade_prevention', `stop reason ${fired.cancelReason}`);
    assert.equal(h.venue.book(PERP)!.bestBid, null, 'no bid rests against the own ask');
  });
});
