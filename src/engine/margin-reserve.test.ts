/**
 * Order reserves that must follow the position after placing: a market order with no band (no
 * mark yet), the reducing-order exemption when the position is closed another way, a partial
 * maker fill of an order that is part closing, part opening, and a combo's partial fill.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InstrumentSpec } from '../domain/instrument.ts';
import {
  comboLegSpecs,
  comboSpec,
  HIGH_CALL,
  LOW_CALL,
  listCombos,
  PUT,
  SPREAD,
  STRADDLE,
} from './combo-testkit.ts';
import {
  Harness,
  leastFundsTaken,
  linearPerpetualSpec,
  markedPerpetualVenue,
  optionSpec,
  orderCommand,
  perpetualSpec,
} from './testkit.ts';

const PERP = 'BTC-PERPETUAL';
const OPTION = 'BTC-27DEC26-70000-C';
// Inverse options of lot 0.1 BTC: the naked margin of one lot is 15% of 0.1 BTC, its taker fee
// 0.03% of 0.1 BTC (the index is 60,000).
const NAKED_LOT = 1_500_000;
const FEE_LOT = 3_000;

function summary(h: Harness, accountId: number, currency = 'BTC') {
  return h.venue.accountSummary(accountId, currency)!;
}

/** Account 1 (`funds` sat) and rich accounts 2-4, a fee-free perpetual marked at 50,000 USD. */
function perpetualVenue(funds = 1_000_000): Harness {
  return markedPerpetualVenue(funds);
}

/** Account 1 buys `lots` of the perpetual at 100,000 ticks from account 2. */
function goLong(h: Harness, lots: number): void {
  h.ok(orderCommand(2, 'sell', lots, 100_000));
  const bought = h.order(1, 'buy', lots, 100_000);
  assert.ok(bought.ok && bought.trades!.length === 1);
}

/** What account 4 (no position) reserves for sells of `lots` at `price` each, summed. */
function nakedSells(h: Harness, sells: readonly (readonly [number, number])[]): number {
  const before = summary(h, 4).orderMargin;
  for (const [lots, price] of sells) h.ok(orderCommand(4, 'sell', lots, price));
  const reserved = summary(h, 4).orderMargin - before;
  h.ok({ type: 'cancel_all', accountId: 4 });
  return reserved;
}

describe('a market order without a price band reserves for the levels it reaches', () => {
  test('an option before its first mark: the sweep needs the deepest level, refused when unaffordable', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1, { BTC: 2_000_000 });
    h.account(2);
    h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 60_000 }] });
    h.ok(orderCommand(2, 'sell', 1, 100, { instrumentName: OPTION }));
    h.ok(orderCommand(2, 'sell', 10, 5_000, { instrumentName: OPTION }));
    const refused = h.order(1, 'buy', 11, null, {
      instrumentName: OPTION,
      timeInForce: 'immediate_or_cancel',
    });
    assert.equal(refused.ok ? 'accepted' : refused.error.name, 'not_enough_funds');
    assert.equal(summary(h, 1).balance, 2_000_000);
    // Enough for the first level only: a market order for it trades there.
    const one = h.order(1, 'buy', 1, null, { instrumentName: OPTION, timeInForce: 'immediate_or_cancel' });
    assert.ok(one.ok);
    assert.deepEqual(
      one.trades!.map((t) => [t.price, t.amount]),
      [[100, 1]],
    );
    assert.ok(summary(h, 1).availableFunds >= 0);
  });

  test('a funded sweep trades through the levels and shows its worst fill', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1, { BTC: 100_000_000 });
    h.account(2);
    h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 60_000 }] });
    h.ok(orderCommand(2, 'sell', 1, 100, { instrumentName: OPTION }));
    h.ok(orderCommand(2, 'sell', 10, 5_000, { instrumentName: OPTION }));
    h.ok(orderCommand(2, 'sell', 10, 6_000, { instrumentName: OPTION }));
    const result = h.order(1, 'buy', 11, null, { instrumentName: OPTION, timeInForce: 'fill_or_kill' });
    assert.ok(result.ok);
    assert.deepEqual(
      result.trades!.map((t) => [t.price, t.amount]),
      [
        [100, 1],
        [5_000, 10],
      ],
    );
    assert.equal(result.order!.price, 5_000);
    assert.ok(summary(h, 1).availableFunds >= 0);
  });

  test('a linear perpetual before its first mark: the deeper levels count, so it is refused', () => {
    const h = new Harness();
    h.list(linearPerpetualSpec());
    h.account(1, { USDC: 1_000_000_000 });
    h.account(2, { USDC: 1e13 });
    const name = 'BTC_USDC-PERPETUAL';
    h.ok(orderCommand(2, 'sell', 1, 120_000, { instrumentName: name }));
    h.ok(orderCommand(2, 'sell', 300, 240_000, { instrumentName: name }));
    const result = h.order(1, 'buy', 301, null, { instrumentName: name, timeInForce: 'immediate_or_cancel' });
    assert.equal(result.ok ? 'accepted' : result.error.name, 'not_enough_funds');
    assert.equal(summary(h, 1, 'USDC').positionMargin, 0);
  });
});

describe('a market order with a price band reserves for the levels it reaches, not the band edge', () => {
  const marketBuy = (h: Harness, lots: number) =>
    h.order(1, 'buy', lots, null, { timeInForce: 'immediate_or_cancel' });

  test('the ask at the mark: funded for the margin there, as a limit order at the ask would be', () => {
    // 1,000 lots (10,000 USD) at the 50,000 USD mark: 5% of 0.2 BTC. At the band's edge (52,500
    // USD) it would need 5% of 0.2 BTC again plus 0.0095 BTC lost against the mark.
    const attempt = (funds: number) => {
      const h = perpetualVenue(funds);
      h.ok(orderCommand(2, 'sell', 1000, 100_000));
      return { taken: marketBuy(h, 1000).ok, available: summary(h, 1).availableFunds };
    };
    assert.deepEqual(leastFundsTaken(attempt, 100_000_000), { funds: 1_000_000, available: 0 });
  });

  test('it trades no further than the band edge, and needs what the deepest level it reaches asks', () => {
    const h = perpetualVenue(100_000_000);
    h.ok(orderCommand(2, 'sell', 10, 100_000));
    h.ok(orderCommand(2, 'sell', 10, 104_000));
    h.ok({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 98_000 }] });
    // The band now ends at 102,900: the level at 104,000 is out of reach.
    const result = marketBuy(h, 20);
    assert.ok(result.ok);
    assert.deepEqual(
      result.trades!.map((t) => [t.price, t.amount]),
      [[100_000, 10]],
    );
    assert.equal(result.order!.price, 102_900);
    assert.equal(h.venue.position(1, PERP)!.size, 10);
  });

  test('a fully margined long is closed at a bid near the mark, though the band edge would lose more than it frees', () => {
    const h = perpetualVenue(10_000);
    goLong(h, 10);
    assert.equal(summary(h, 1).availableFunds, 0);
    h.ok(orderCommand(2, 'buy', 10, 99_000));
    const closed = h.order(1, 'sell', 10, null, { timeInForce: 'immediate_or_cancel' });
    assert.ok(closed.ok, closed.ok ? '' : closed.error.message);
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    assert.ok(summary(h, 1).availableFunds >= 0);
  });
});

describe('the reducing-order exemption follows the position', () => {
  test('a resting sell that reduced a long reserves for opening once the long is closed another way', () => {
    const h = perpetualVenue();
    goLong(h, 10);
    h.ok(orderCommand(1, 'sell', 10, 101_000));
    assert.equal(summary(h, 1).orderMargin, 0);
    h.ok(orderCommand(3, 'buy', 10, 100_000));
    const closed = h.order(1, 'sell', 10, 100_000, { timeInForce: 'immediate_or_cancel' });
    assert.ok(closed.ok && closed.trades!.length === 1);
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    assert.equal(summary(h, 1).orderMargin, nakedSells(h, [[10, 101_000]]));
    h.ok(orderCommand(2, 'buy', 10, 101_000));
    assert.ok(summary(h, 1).availableFunds >= 0);
  });

  test('orders claim the reducible lots oldest first: the newest lose the exemption first', () => {
    const h = perpetualVenue();
    goLong(h, 10);
    h.ok(orderCommand(1, 'sell', 10, 101_000));
    h.ok(orderCommand(1, 'sell', 10, 102_000));
    h.ok(orderCommand(3, 'buy', 5, 100_000));
    assert.ok(h.order(1, 'sell', 5, 100_000, { timeInForce: 'immediate_or_cancel' }).ok);
    // Long 5: the older sell reduces 5 and opens 5, the newer opens all 10.
    const expected = nakedSells(h, [
      [5, 101_000],
      [10, 102_000],
    ]);
    assert.equal(summary(h, 1).orderMargin, expected);
  });

  test('an edit that grows an older order pushes the younger ones back in the claims', () => {
    const h = perpetualVenue();
    goLong(h, 10);
    const older = h.order(1, 'sell', 5, 101_000);
    h.ok(orderCommand(1, 'sell', 5, 102_000));
    assert.ok(older.ok);
    assert.equal(summary(h, 1).orderMargin, 0);
    h.ok({ type: 'edit_order', accountId: 1, orderId: older.order!.orderId, amount: 10, price: 101_500 });
    h.ok(orderCommand(3, 'buy', 2, 100_000));
    assert.ok(h.order(1, 'sell', 2, 100_000, { timeInForce: 'immediate_or_cancel' }).ok);
    // Long 8: the older (now 10 lots) opens 2, the younger opens all 5.
    const expected = nakedSells(h, [
      [2, 101_500],
      [5, 102_000],
    ]);
    assert.equal(summary(h, 1).orderMargin, expected);
  });

  test('an order that would close the position is refused when the resting orders it uncovers cannot be funded', () => {
    const h = perpetualVenue(50_000);
    h.ok(orderCommand(2, 'buy', 10, 100_000));
    assert.ok(h.order(1, 'sell', 10, 100_000).ok);
    // A bid far below the mark: 10 lots at 5,000 USD need 0.001 BTC of margin once they open.
    h.ok(orderCommand(1, 'buy', 10, 10_000));
    assert.equal(summary(h, 1).orderMargin, 0);
    h.ok(orderCommand(3, 'sell', 10, 100_000));
    const closing = h.order(1, 'buy', 10, 100_000, { timeInForce: 'immediate_or_cancel' });
    assert.equal(closing.ok ? 'accepted' : closing.error.name, 'not_enough_funds');
    assert.equal(h.venue.position(1, PERP)!.size, -10);
    assert.ok(summary(h, 1).availableFunds >= 0);
  });

  test('a block trade that closes the position leaves the resting sell reserving for opening', () => {
    const h = perpetualVenue(1_000_000_000);
    const block = (side: 'buy' | 'sell', maker: number) =>
      h.ok({
        type: 'block_trade',
        takerAccountId: 1,
        makerAccountId: maker,
        legs: [{ instrumentName: PERP, side, amount: 20_000, price: 100_000 }],
      });
    block('buy', 2);
    h.ok(orderCommand(1, 'sell', 20_000, 101_000));
    assert.equal(summary(h, 1).orderMargin, 0);
    block('sell', 3);
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    assert.equal(summary(h, 1).orderMargin, nakedSells(h, [[20_000, 101_000]]));
  });

  test('options: the resting sale of a closed long is margined naked, and the next sale must fit', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1, { BTC: 10_000_000 });
    h.account(2);
    h.account(3);
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [{ instrumentName: OPTION, markPrice: 100 }],
    });
    const order = (id: number, side: 'buy' | 'sell', lots: number, price: number, more = {}) =>
      h.order(id, side, lots, price, { instrumentName: OPTION, ...more });
    h.ok(orderCommand(2, 'sell', 5, 100, { instrumentName: OPTION }));
    assert.ok(order(1, 'buy', 5, 100).ok);
    assert.ok(order(1, 'sell', 5, 110).ok);
    assert.equal(summary(h, 1).orderMargin, 5 * FEE_LOT);
    h.ok(orderCommand(3, 'buy', 5, 100, { instrumentName: OPTION }));
    assert.ok(order(1, 'sell', 5, 100, { timeInForce: 'immediate_or_cancel' }).ok);
    assert.equal(summary(h, 1).orderMargin, 5 * NAKED_LOT + 5 * FEE_LOT);
    const more = order(1, 'sell', 7, 110);
    assert.equal(more.ok ? 'accepted' : more.error.name, 'not_enough_funds');
    h.ok(orderCommand(2, 'buy', 5, 110, { instrumentName: OPTION }));
    assert.ok(summary(h, 1).availableFunds >= 0);
  });

  test('options: a resting sale whose lots come to reduce a bought long needs no naked margin for them', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1);
    h.account(2);
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [{ instrumentName: OPTION, markPrice: 500 }],
    });
    h.ok(orderCommand(1, 'sell', 53, 500, { instrumentName: OPTION }));
    assert.equal(summary(h, 1).orderMargin, 53 * NAKED_LOT + 53 * FEE_LOT);
    h.ok(orderCommand(1, 'buy', 16, 480, { instrumentName: OPTION }));
    h.ok(orderCommand(2, 'sell', 16, 480, { instrumentName: OPTION }));
    assert.equal(h.venue.position(1, OPTION)!.size, 16);
    assert.equal(summary(h, 1).orderMargin, 37 * NAKED_LOT + 53 * FEE_LOT);
  });
});

describe('a partial maker fill keeps what the rest of the order needs', () => {
  test('options: a sell that reduced 6 and opened 6 keeps the naked margin of the 6 once they are all opening', () => {
    const h = new Harness();
    h.list(optionSpec());
    h.account(1, { BTC: 10_000_000 });
    h.account(2);
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [{ instrumentName: OPTION, markPrice: 100 }],
    });
    h.ok(orderCommand(2, 'sell', 6, 100, { instrumentName: OPTION }));
    assert.ok(h.order(1, 'buy', 6, 100, { instrumentName: OPTION }).ok);
    assert.ok(h.order(1, 'sell', 12, 110, { instrumentName: OPTION }).ok);
    assert.equal(summary(h, 1).orderMargin, 6 * NAKED_LOT + 12 * FEE_LOT);
    h.ok(orderCommand(2, 'buy', 6, 110, { instrumentName: OPTION }));
    assert.equal(summary(h, 1).orderMargin, 6 * NAKED_LOT + 6 * FEE_LOT);
    const extra = h.order(1, 'sell', 3, 110, { instrumentName: OPTION });
    assert.equal(extra.ok ? 'accepted' : extra.error.name, 'not_enough_funds');
    h.ok(orderCommand(2, 'buy', 6, 110, { instrumentName: OPTION }));
    assert.ok(summary(h, 1).availableFunds >= 0);
  });

  test('futures: the opening half of a half-filled sell keeps its whole margin', () => {
    const h = perpetualVenue();
    goLong(h, 6);
    h.ok(orderCommand(1, 'sell', 12, 101_000));
    const reserved = summary(h, 1).orderMargin;
    assert.equal(reserved, nakedSells(h, [[6, 101_000]]));
    h.ok(orderCommand(2, 'buy', 6, 101_000));
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    assert.equal(summary(h, 1).orderMargin, reserved);
  });

  test('a combo whose long leg a resting sale claims first keeps the naked margin of the lots left', () => {
    const h = new Harness();
    listCombos(h, [SPREAD]);
    for (const id of [1, 3]) h.account(id, { BTC: 200_000_000 });
    h.ok({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [
        { instrumentName: 'BTC-PERPETUAL', markPrice: 120_010 },
        { instrumentName: 'BTC-27DEC26', markPrice: 24_100 },
        { instrumentName: LOW_CALL, markPrice: 500 },
        { instrumentName: HIGH_CALL, markPrice: 300 },
        { instrumentName: PUT, markPrice: 1_700 },
        { instrumentName: SPREAD, markPrice: 200 },
      ],
    });
    h.list(comboSpec(STRADDLE, comboLegSpecs(), h.ts));
    // The straddle sale would sell the spread's long leg: 37 of the spread's 55 shorts are naked.
    h.ok(orderCommand(3, 'sell', 37, 2_200, { instrumentName: STRADDLE, postOnly: true }));
    h.ok(orderCommand(3, 'buy', 55, 237, { instrumentName: SPREAD, postOnly: true }));
    assert.ok(summary(h, 3).availableFunds >= 0);
    const sold = h.order(1, 'sell', 15, null, { instrumentName: SPREAD });
    assert.ok(sold.ok && sold.trades!.length === 1);
    // The 15 filled were naked (the straddle claims the long bought): the rest keeps 22 naked.
    assert.equal(summary(h, 3).positionMargin, 15 * NAKED_LOT);
    assert.ok(summary(h, 3).availableFunds >= 0, `${summary(h, 3).availableFunds}`);
  });
});

describe('a future position with no mark yet holds its initial margin at cost', () => {
  test('10 lots bought at 50,000 USD hold 5% of their 0.002 BTC cost, which a further order cannot spend', () => {
    const h = new Harness();
    h.list(perpetualSpec({ takerCommission: '0' }));
    h.account(1, { BTC: 1_000_000 });
    h.account(2);
    h.ok(orderCommand(2, 'sell', 1000, 100_000));
    h.ok(orderCommand(1, 'buy', 10, 100_000));
    assert.equal(h.venue.position(1, PERP)!.size, 10);
    assert.deepEqual([summary(h, 1).positionMargin, summary(h, 1).availableFunds], [10_000, 990_000]);
    // 981 lots at 49,500 USD need 990,910 sat of margin; 980 lots 989,899.
    const bid = (lots: number) => h.order(1, 'buy', lots, 99_000);
    const refused = bid(981);
    assert.equal(refused.ok ? 'accepted' : refused.error.name, 'not_enough_funds');
    assert.ok(bid(980).ok);
    assert.equal(summary(h, 1).availableFunds, 990_000 - 989_899);
  });
});

describe('a reserve released in part keeps the rounding for the venue', () => {
  /** The inverse perpetual with its taker fee, accounts 1-4 rich, marked at 50,000 USD. */
  function feeVenue(): Harness {
    const h = new Harness();
    h.list(perpetualSpec());
    for (const id of [1, 2, 3, 4]) h.account(id);
    h.markPerpetual();
    return h;
  }

  /** What is left of `reserved` for `remaining` lots after `lots` of them go: the share released is rounded down. */
  const kept = (reserved: number, lots: number, remaining: number) =>
    reserved - Math.floor((reserved * lots) / remaining);

  test('a maker filled in parts releases the floor of its pro-rata share each time', () => {
    const h = feeVenue();
    h.ok(orderCommand(1, 'sell', 7, 99_999));
    const margins = [summary(h, 1).orderMargin];
    for (let i = 0; i < 3; i++) {
      h.ok(orderCommand(2, 'buy', 2, 99_999, { timeInForce: 'immediate_or_cancel' }));
      margins.push(summary(h, 1).orderMargin);
    }
    assert.equal(margins[0], 7_073);
    const expected = [7_073];
    for (const remaining of [7, 5, 3]) expected.push(kept(expected.at(-1)!, 2, remaining));
    assert.deepEqual(margins, expected);
    assert.deepEqual(expected, [7_073, 5_053, 3_032, 1_011]);
  });

  test('a reduce-only order shrunk with its position releases the floor of its pro-rata share', () => {
    const h = feeVenue();
    h.ok(orderCommand(2, 'sell', 3, 100_000));
    h.ok(orderCommand(1, 'buy', 3, 100_000));
    const id = h.ok(orderCommand(1, 'sell', 3, 104_000, { reduceOnly: true })).order!.orderId;
    const margins = [summary(h, 1).orderMargin];
    for (let i = 0; i < 2; i++) {
      // Another sell closes 1 lot of the long: the reduce-only order gives 1 lot up.
      h.ok(orderCommand(3, 'buy', 1, 100_000));
      h.ok(orderCommand(1, 'sell', 1, 100_000, { timeInForce: 'immediate_or_cancel' }));
      margins.push(summary(h, 1).orderMargin);
    }
    assert.equal(h.venue.getOrder(id)!.amount, 1);
    assert.equal(margins[0], 29);
    assert.deepEqual(margins, [29, kept(29, 1, 3), kept(kept(29, 1, 3), 1, 2)]);
    assert.deepEqual(margins, [29, 20, 10]);
  });

  test('with no mark, a sale that closes a long below its cost reserves the loss plus one minor unit', () => {
    const h = new Harness();
    h.list(linearPerpetualSpec());
    h.account(1, { USDC: 1_000_000_000 });
    h.account(2, { USDC: 1_000_000_000 });
    const LINEAR = { instrumentName: 'BTC_USDC-PERPETUAL' };
    h.ok(orderCommand(2, 'sell', 3, 24_000, LINEAR));
    h.ok(orderCommand(1, 'buy', 3, 24_000, LINEAR));
    h.ok(orderCommand(1, 'sell', 3, 22_000, LINEAR));
    // 0.003 BTC bought at 12,000 USDC, offered at 11,000: a loss of 3 USDC, rounded up by one
    // minor unit, and the taker fee of 0.05% on 33 USDC.
    assert.equal(summary(h, 1, 'USDC').orderMargin, 3_000_000 + 1 + 16_500);
  });
});

describe('a future traded at a loss against its mark reserves the margin the mark asks', () => {
  /**
   * The least funds with which account 1's order of `lots` at `price` is taken, and what the
   * account has available once it filled with them.
   */
  function tightest(spec: InstrumentSpec, mark: number, side: 'buy' | 'sell', lots: number, price: number) {
    const currency = spec.settlementCurrency;
    const attempt = (funds: number) => {
      const h = new Harness();
      h.list(spec);
      h.account(1, { [currency]: funds });
      h.account(2, { [currency]: 1_000_000_000_000 });
      h.ok({
        type: 'update_prices',
        indexPrices: [{ currency: 'BTC', price: 50_000 }],
        markPrices: [{ instrumentName: spec.name, markPrice: mark }],
      });
      h.ok(orderCommand(2, side === 'buy' ? 'sell' : 'buy', lots, price, { instrumentName: spec.name }));
      const result = h.order(1, side, lots, price, { instrumentName: spec.name });
      return { taken: result.ok, available: summary(h, 1, currency).availableFunds };
    };
    return leastFundsTaken(attempt, 1_000_000_000_000);
  }

  test('an inverse perpetual bought above its mark: funded at the least, nothing is overdrawn', () => {
    // 1,000 lots of 10 USD at 52,000 USD against a 50,000 USD mark: the position is margined on
    // its 0.2 BTC at the mark, not on its 0.1923 BTC at the price.
    const { funds, available } = tightest(
      perpetualSpec({ takerCommission: '0' }),
      100_000,
      'buy',
      1000,
      104_000,
    );
    assert.ok(available >= 0, `funded with ${funds}, ${available} available after the fill`);
    assert.ok(funds >= 1_000_000 + 769_231, `${funds}`);
  });

  test('a linear perpetual sold below its mark: funded at the least, nothing is overdrawn', () => {
    const { funds, available } = tightest(linearPerpetualSpec(), 100_000, 'sell', 1000, 96_000);
    assert.ok(available >= 0, `funded with ${funds}, ${available} available after the fill`);
  });

  test('on the favourable side the price still decides: an inverse perpetual sold above its mark', () => {
    const { available } = tightest(perpetualSpec({ takerCommission: '0' }), 100_000, 'sell', 1000, 104_000);
    assert.ok(available >= 0);
  });
});

describe('lots that close a marked future at a loss against the mark reserve what the freed margin does not cover', () => {
  /** Account 1 (`funds` sat) long 10 lots (100 USD) of the perpetual bought at its 50,000 USD mark. */
  function long(funds: number): Harness {
    const h = perpetualVenue(funds);
    goLong(h, 10);
    return h;
  }

  test('an inverse long sold at the band low: 5% of the mark notional freed, 5.26% lost', () => {
    // 100 USD at 47,500 USD lose 10,526 sat against the mark; the lots free 10,000 of margin.
    const attempt = (funds: number) => {
      if (funds < 10_000) return { taken: false, available: 0 }; // the long's own margin
      const h = long(funds);
      h.ok(orderCommand(2, 'buy', 10, 95_000));
      return { taken: h.order(1, 'sell', 10, 95_000).ok, available: summary(h, 1).availableFunds };
    };
    const { funds, available } = leastFundsTaken(attempt, 1_000_000);
    assert.ok(available >= 0, `funded with ${funds}, ${available} available after the close`);
    assert.ok(funds > 10_000 + 526, `${funds}`);
    // Refused, nothing moved: the long and the funds are as they were.
    const h = long(10_000);
    h.ok(orderCommand(2, 'buy', 10, 95_000));
    const refused = h.order(1, 'sell', 10, 95_000);
    assert.equal(refused.ok ? 'accepted' : refused.error.name, 'not_enough_funds');
    assert.equal(h.venue.position(1, PERP)!.size, 10);
    assert.equal(summary(h, 1).availableFunds, 0);
  });

  test('closing at or above the mark needs no funds', () => {
    const h = long(10_000);
    h.ok(orderCommand(2, 'buy', 10, 100_000));
    assert.ok(h.order(1, 'sell', 10, 100_000).ok);
    assert.equal(h.venue.position(1, PERP)!.size, 0);
    assert.equal(summary(h, 1).availableFunds, 10_000);
  });

  test('a block trade at a price the mark has since left: refused for the party it would overdraw', () => {
    const h = long(10_000);
    const block = (price: number) =>
      h.run({
        type: 'block_trade',
        takerAccountId: 1,
        makerAccountId: 2,
        legs: [{ instrumentName: PERP, side: 'sell', amount: 10, price }],
      });
    const refused = block(85_000);
    assert.equal(refused.ok ? 'accepted' : refused.error.name, 'not_enough_funds');
    assert.equal(!refused.ok && refused.error.data.field, 'takerAccountId');
    assert.equal(h.venue.position(1, PERP)!.size, 10);
    // 100 USD at 42,500 USD lose 35,294 sat against the mark; the lots free 10,000 (one unit kept).
    h.ok({ type: 'deposit', accountId: 1, currency: 'BTC', amount: 25_295 });
    assert.ok(block(85_000).ok);
    assert.ok(summary(h, 1).availableFunds >= 0, `${summary(h, 1).availableFunds}`);
  });
});
