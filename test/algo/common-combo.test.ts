/**
 * COMMON portfolios whose two legs form a combo (src/algo/combo.ts): one child order on the combo
 * at the legs' net price; its trades fill each leg at the leg trade's price. Legs that form no
 * combo (or whose combo is not listed) are placed one order each, as before.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PRICE_RETRY_MS } from '../../src/algo/steps.ts';
import type { LegSpec, PortfolioSpec } from '../../src/algo/types.ts';
import { portfolioInfoToWire, tradeNewsToWire } from '../../src/api/portfolios/wire.ts';
import { optionSpec } from '../../src/engine/testkit.ts';
import { createCombo, parseComboName } from '../../src/market/combos.ts';
import { AlgoHarness, leg, MAKER, OPTION, PUT, portfolio, TRADER } from './harness.ts';

const CALL_75 = 'BTC-27DEC26-75000-C';
const SPREAD = 'BTC-CS-27DEC26-70000_75000';
const STRADDLE = 'BTC-STRD-27DEC26-70000';

/** The standard market plus the 75000 call; marks 0.052 (70000-C) and 0.031 (75000-C). */
function market(combos: readonly string[] = [SPREAD]): AlgoHarness {
  const h = AlgoHarness.withMarket();
  h.core({ type: 'list_instrument', spec: optionSpec({ name: CALL_75, strike: '75000' }) });
  h.core({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: OPTION, markPrice: 520 },
      { instrumentName: CALL_75, markPrice: 310 },
    ],
  });
  for (const name of combos) listCombo(h, name);
  return h;
}

function listCombo(h: AlgoHarness, name: string): void {
  const built = createCombo(parseComboName(name)!, (n) => h.venue.instrument(n)?.instrument.spec, h.ts);
  assert.ok(built.ok);
  assert.ok(h.core({ type: 'list_instrument', spec: built.spec }).ok);
}

function option(name: string, side: 'buy' | 'sell', btc: number, overrides: Partial<LegSpec> = {}): LegSpec {
  return leg({
    instrumentName: name,
    instrumentType: 'OPTION',
    side,
    amount: 10,
    pricing: { ...leg().pricing, price: btc, priceIn: 'BTC' },
    ...overrides,
  });
}

/** Buys the 70000/75000 call spread: 70000-C at 0.05 BTC (500 ticks), 75000-C sold at 0.03 (300). */
function callSpread(overrides: Partial<PortfolioSpec> = {}, legOverrides: Partial<LegSpec> = {}) {
  return portfolio({
    legs: [option(OPTION, 'buy', 0.05, legOverrides), option(CALL_75, 'sell', 0.03, legOverrides)],
    ...overrides,
  });
}

const lookupOf = (h: AlgoHarness) => (name: string) => h.venue.instrument(name)?.instrument;

describe('COMMON as a combo order', () => {
  test('legs that form a listed combo: one child on the combo at the net price; fills split to the legs', () => {
    const h = market();
    const id = h.submit(callSpread());
    const p = h.machine.portfolio(id)!;
    assert.equal(p.children.length, 1);
    const child = p.children[0]!;
    assert.deepEqual(child.combo, { instrumentName: SPREAD, legs: [0, 1], tradeSeq: 0 });
    const [order] = h.openChildren(id);
    assert.equal(order!.instrumentName, SPREAD);
    assert.equal(order!.side, 'buy');
    assert.equal(order!.amount, 10);
    assert.equal(order!.price, 200, 'net of the legs: 500 − 300 ticks');
    assert.equal(order!.label, `portfolio:${id}`);
    assert.equal(order!.timeInForce, 'good_til_cancelled');
    assert.deepEqual(
      p.legs.map((l) => l.working),
      [child.orderId, child.orderId],
    );
    const placed = h.news.filter((e) => e.portfolioId === id && e.messageType === 'ORDER_PLACED');
    assert.equal(placed.length, 1, 'one order, one ORDER_PLACED');
    assert.equal(placed[0]!.instrumentName, SPREAD);
    assert.equal(placed[0]!.legIndex, undefined);

    // A maker sells the spread at the portfolio's price, in two goes. The engine splits 200
    // ticks into legs at their marks (520, 310), the dearest absorbing the rest: 510 and 310.
    h.limit(MAKER, 'sell', 4, 200, 'maker', SPREAD);
    assert.deepEqual(
      p.legs.map((l) => [l.filled, l.notional]),
      [
        [4, 4 * 510],
        [4, 4 * 310],
      ],
    );
    assert.equal(p.status, 'WORKING');
    assert.equal(child.filled, 4);
    assert.equal(child.notional, 4 * 200, 'the child keeps its own (combo) figures');
    h.limit(MAKER, 'sell', 6, 200, 'maker', SPREAD);
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.endReason, 'filled');
    assert.deepEqual(
      p.legs.map((l) => l.filled),
      [10, 10],
    );
    assert.equal(h.venue.position(TRADER, OPTION)?.size, 10);
    assert.equal(h.venue.position(TRADER, CALL_75)?.size, -10);
    assert.equal(h.venue.position(TRADER, SPREAD)?.size ?? 0, 0, 'no position on the combo');

    const lookup = lookupOf(h);
    const info = portfolioInfoToWire(p, lookup);
    assert.deepEqual(
      info.legs.map((l) => [l.filledQuantity, l.remainingQuantity, l.averagePrice, l.childOrderIds]),
      [
        ['1', '0', '0.051', [child.orderId]],
        ['1', '0', '0.031', [child.orderId]],
      ],
    );
    assert.equal(info.childOrders.length, 1);
    assert.deepEqual(
      {
        ...info.childOrders[0]!,
        placedTimestamp: 0,
      },
      {
        orderId: child.orderId,
        legId: 0,
        legIds: [0, 1],
        instrument: SPREAD,
        part: 0,
        orderType: 'limit',
        quantity: '1',
        filledQuantity: '1',
        price: '0.02',
        open: false,
        placedTimestamp: 0,
      },
    );
    const fills = h.news.filter((e) => e.portfolioId === id && e.messageType === 'ORDER_FILLED');
    assert.deepEqual(
      fills.map((e) => [e.legIndex, e.instrumentName, e.amount, e.price, e.orderId]),
      [
        [0, OPTION, 4, 510, child.orderId],
        [1, CALL_75, 4, 310, child.orderId],
        [0, OPTION, 6, 510, child.orderId],
        [1, CALL_75, 6, 310, child.orderId],
      ],
    );
    assert.equal(tradeNewsToWire(fills[1]!, lookup).price, '0.031');
  });

  test('the combo child takes at once: the trade, seen in the result and again in react, counts once', () => {
    const h = market();
    h.limit(MAKER, 'sell', 10, 190, 'maker', SPREAD);
    const id = h.submit(callSpread());
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'COMPLETED');
    // 190 = 520 − 310 − 20: the 70000-C absorbs the difference.
    assert.deepEqual(
      p.legs.map((l) => [l.filled, l.notional]),
      [
        [10, 10 * 500],
        [10, 10 * 310],
      ],
    );
    const filled = h.news.filter((e) => e.portfolioId === id && e.messageType === 'ORDER_FILLED');
    assert.equal(filled.length, 2);
    assert.equal(p.children[0]!.combo!.tradeSeq, 1);
  });

  test('a sold straddle: the combo sold, both legs sold at their net', () => {
    const h = market([STRADDLE]);
    const id = h.submit(
      portfolio({
        legs: [option(OPTION, 'sell', 0.05), option(PUT, 'sell', 0.1)],
      }),
    );
    const [order] = h.openChildren(id);
    assert.equal(order!.instrumentName, STRADDLE);
    assert.equal(order!.side, 'sell');
    assert.equal(order!.price, 1500, '500 + 1000 ticks');
  });

  test('MARKET legs: a market combo order when the combo book has an opposite order, else one per leg', () => {
    const marketLegs = { pricing: { ...leg().pricing, priceType: 'MARKET' as const, price: null } };
    const h = market();
    h.limit(MAKER, 'sell', 10, 250, 'maker', SPREAD);
    const id = h.submit(callSpread({}, marketLegs));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.children.length, 1);
    assert.equal(p.children[0]!.combo?.instrumentName, SPREAD);
    assert.equal(p.children[0]!.market, true);
    assert.equal(p.status, 'COMPLETED');

    const empty = market();
    empty.maker('sell', 10, 600, OPTION);
    empty.maker('buy', 10, 250, CALL_75);
    const perLeg = empty.submit(callSpread({}, marketLegs));
    const q = empty.machine.portfolio(perLeg)!;
    assert.deepEqual(
      q.children.map((c) => [c.leg, c.combo]),
      [
        [0, undefined],
        [1, undefined],
      ],
    );
    assert.equal(q.status, 'COMPLETED');
  });

  const perLegCases: {
    name: string;
    spec: () => PortfolioSpec;
    combos?: string[];
    setup?: (h: AlgoHarness) => void;
  }[] = [
    {
      name: 'different quantities',
      spec: () =>
        portfolio({ legs: [option(OPTION, 'buy', 0.05), option(CALL_75, 'sell', 0.03, { amount: 20 })] }),
    },
    {
      name: 'a same-side spread (both calls bought)',
      spec: () => portfolio({ legs: [option(OPTION, 'buy', 0.05), option(CALL_75, 'buy', 0.03)] }),
    },
    {
      name: 'three legs',
      spec: () =>
        portfolio({
          legs: [option(OPTION, 'buy', 0.05), option(CALL_75, 'sell', 0.03), leg({ amount: 10 })],
        }),
    },
    {
      name: 'other times in force',
      spec: () =>
        portfolio({
          legs: [
            option(OPTION, 'buy', 0.05),
            option(CALL_75, 'sell', 0.03, { timeInForce: 'good_til_cancelled' }),
          ],
        }),
    },
    {
      name: 'a reduce-only leg',
      // Long 10 of the 75000-C, so that the reduce-only sell is accepted.
      setup: (h) => {
        h.maker('sell', 10, 310, CALL_75);
        h.limit(TRADER, 'buy', 10, 310, 'long', CALL_75);
      },
      spec: () =>
        portfolio({
          legs: [option(OPTION, 'buy', 0.05), option(CALL_75, 'sell', 0.03, { reduceOnly: true })],
        }),
    },
    {
      name: 'DYNAMIC legs',
      spec: () =>
        callSpread(
          {},
          {
            pricing: {
              priceType: 'DYNAMIC',
              price: null,
              priceIn: 'BTC',
              dynamicStrategy: 'MARK',
              dynamicOffset: 0,
              dynamicMs: 1000,
            },
          },
        ),
    },
    { name: 'a combo that is not listed', spec: () => callSpread(), combos: [] },
    {
      name: 'an option and a perpetual',
      spec: () => portfolio({ legs: [option(OPTION, 'buy', 0.05), leg()] }),
    },
  ];
  for (const c of perLegCases) {
    test(`legs that form no usable combo go one order each: ${c.name}`, () => {
      const h = market(c.combos ?? [SPREAD]);
      c.setup?.(h);
      const spec = c.spec();
      const id = h.submit(spec);
      const p = h.machine.portfolio(id)!;
      assert.deepEqual(
        p.children.map((child) => child.leg),
        spec.legs.map((_, i) => i),
      );
      for (const child of p.children) assert.equal('combo' in child, false, 'no combo field on a leg child');
      assert.deepEqual(
        h.openChildren(id).map((o) => o.instrumentName),
        spec.legs.map((l) => l.instrumentName),
      );
    });
  }

  test('a combo order the engine refuses is no failure: the legs go one order each', () => {
    const h = market();
    // A mark of 0.005 on the spread puts the net 0.02 above its price band.
    h.core({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [{ instrumentName: SPREAD, markPrice: 50 }],
    });
    const id = h.submit(callSpread());
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING');
    assert.deepEqual(
      h.openChildren(id).map((o) => [o.instrumentName, o.price]),
      [
        [OPTION, 500],
        [CALL_75, 300],
      ],
    );
    assert.ok(
      h.placed.some((placed) => placed.includes(SPREAD)),
      'the combo order was tried first',
    );
  });

  test('cancel: the combo child is cancelled, the portfolio CANCELLED, the legs have no working child', () => {
    const h = market();
    const id = h.submit(callSpread());
    h.limit(MAKER, 'sell', 3, 200, 'maker', SPREAD);
    const result = h.algo({ type: 'cancel_portfolio', portfolioId: id, accountId: TRADER } as never);
    assert.equal(result.ok, true);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'CANCELLED');
    assert.equal(h.openChildren(id).length, 0);
    assert.equal(p.children[0]!.open, false);
    assert.deepEqual(
      p.legs.map((l) => [l.working, l.filled]),
      [
        [null, 3],
        [null, 3],
      ],
    );
    const info = portfolioInfoToWire(p, lookupOf(h));
    assert.deepEqual(
      info.legs.map((l) => [l.filledQuantity, l.remainingQuantity]),
      [
        ['0.3', '0.7'],
        ['0.3', '0.7'],
      ],
    );
  });

  test('an IOC combo child that closes unfilled ends the portfolio EXPIRED', () => {
    const h = market();
    const id = h.submit(callSpread({}, { timeInForce: 'immediate_or_cancel' }));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.children.length, 1);
    assert.ok(p.children[0]!.combo);
    assert.equal(p.status, 'EXPIRED');
    assert.equal(p.endReason, 'orders_closed');
  });

  test('the combo child rests clear of the account’s own opposite combo order', () => {
    const h = market();
    h.limit(TRADER, 'sell', 1, 150, 'by hand', SPREAD);
    const id = h.submit(callSpread());
    const order = h.openChildren(id)[0]!;
    assert.equal(order.instrumentName, SPREAD);
    assert.equal(order.price, 149, 'one tick below its own sell at 150, not 200');
  });

  test('restart: a snapshot and a replay with a combo child decide alike', () => {
    const h = market();
    h.submit(callSpread());
    h.limit(MAKER, 'sell', 4, 200, 'maker', SPREAD);

    const restored = h.restarted();
    assert.equal(restored.machine.stateHash(), h.machine.stateHash());

    const replayed = h.replayed();
    assert.equal(replayed.machine.stateHash(), h.machine.stateHash());

    for (const copy of [h, restored, replayed]) {
      copy.limit(MAKER, 'sell', 6, 200, 'maker', SPREAD);
      assert.equal(copy.machine.portfolio(1)!.status, 'COMPLETED');
      assert.deepEqual(
        copy.machine.portfolio(1)!.legs.map((l) => [l.filled, l.notional]),
        [
          [10, 5100],
          [10, 3100],
        ],
      );
    }
    assert.equal(restored.machine.stateHash(), h.machine.stateHash());
    assert.equal(replayed.machine.stateHash(), h.machine.stateHash());
  });

  test('a combo whose leg price cannot be converted yet looks again PRICE_RETRY_MS later', () => {
    const inEth = (price: number) => ({ pricing: { ...leg().pricing, price, priceIn: 'ETH' } });
    const h = market();
    // Priced in ETH with no ETH index yet: no leg price, so no combo price.
    const id = h.submit(
      portfolio({ legs: [option(OPTION, 'buy', 1, inEth(1)), option(CALL_75, 'sell', 0.6, inEth(0.6))] }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING');
    assert.equal(p.children.length, 0, 'waiting for a price');
    assert.equal(h.machine.nextWakeup(), h.ts + PRICE_RETRY_MS, 'a retry is scheduled');
    h.core({
      type: 'update_prices',
      indexPrices: [
        { currency: 'BTC', price: 60_000 },
        { currency: 'ETH', price: 3_000 },
      ],
      markPrices: [
        { instrumentName: OPTION, markPrice: 520 },
        { instrumentName: CALL_75, markPrice: 310 },
      ],
    });
    h.runUntil(h.ts + PRICE_RETRY_MS);
    assert.deepEqual(
      p.children.map((c) => c.combo?.instrumentName),
      [SPREAD],
      'the combo child is placed at the retry',
    );
  });
});
