import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandResult } from '../core/events.ts';
import { AdvancedHarness, errorOf, orderOf, PERP } from './advanced-testkit.ts';
import { optionSpec } from './testkit.ts';
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
    const stop = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 200_000, {
          orderType: 'stop_limit',
          trigger: 'mark_price',
          triggerPrice: 100_500,
          timeInForce: 'immediate_or_cancel',
        }),
      ),
    );
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
    const primary = orderOf(
      h.ok(
        h.orderCommand(1, 'buy', 10, 100_000, {
          linkedOrderType: 'one_triggers_other',
          otocoConfig: [{ side: 'sell', orderType: 'limit', price: 2_000 }],
        }),
      ),
    );
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
