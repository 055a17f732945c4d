/**
 * Property test: random orders on two option combos (a call spread and a straddle) and on their
 * legs, with moving marks and cancels, from three accounts. After every command:
 * - no account holds a position on a combo; the positions on each leg net to zero;
 * - every combo trade has one leg trade per leg, of its amount, at whole leg prices ≥ 1 tick
 *   that net exactly to its price, linked by comboId/comboTradeId, its fees the legs' sums;
 * - cash is conserved: option premiums move between accounts, so the accounts' balances change
 *   by exactly minus the fees of every trade.
 *
 * PROPERTY_RUNS (default 200) sets the number of streams.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { CoreEvent, TradeView } from '../../src/core/events.ts';
import { HIGH_CALL, LOW_CALL, listCombos, PUT, SPREAD, STRADDLE } from '../../src/engine/combo-testkit.ts';
import { Harness, propertySeed } from '../../src/engine/testkit.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);
const ACCOUNTS = [1, 2, 3];
const DEPOSIT = 1_000_000_000_000;
const LEGS = [LOW_CALL, HIGH_CALL, PUT] as const;
const INSTRUMENTS = [...LEGS, SPREAD, STRADDLE];
/** What orders are placed on: the combos twice as often as each leg. */
const CHOICES = [...LEGS, SPREAD, SPREAD, STRADDLE, STRADDLE];
/** Mid prices in ticks the orders are placed around (0.0001 BTC ticks). */
const MIDS: Record<string, number> = {
  [LEGS[0]]: 500,
  [LEGS[1]]: 300,
  [LEGS[2]]: 900,
  [SPREAD]: 200,
  [STRADDLE]: 1_400,
};

function venue(): Harness {
  const h = new Harness();
  listCombos(h, [SPREAD, STRADDLE]);
  for (const a of ACCOUNTS) h.account(a, { BTC: DEPOSIT });
  h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 60_000 }] });
  return h;
}

type Step =
  | {
      kind: 'order';
      account: number;
      instrument: number;
      side: 'buy' | 'sell';
      offset: number;
      lots: number;
      market: boolean;
    }
  | { kind: 'cancel'; pick: number }
  | { kind: 'marks'; moves: number[]; withoutMark: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('order' as const),
      account: fc.constantFrom(...ACCOUNTS),
      instrument: fc.nat({ max: CHOICES.length - 1 }),
      side: fc.constantFrom('buy' as const, 'sell' as const),
      offset: fc.integer({ min: -40, max: 40 }),
      lots: fc.integer({ min: 1, max: 20 }),
      market: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('marks' as const),
      moves: fc.array(fc.integer({ min: -200, max: 200 }), { minLength: 3, maxLength: 3 }),
      withoutMark: fc.boolean(),
    }),
  },
);

function tradesOf(events: readonly CoreEvent[]): TradeView[] {
  return events.flatMap((event) => (event.type === 'trade' ? [event.trade] : []));
}

function checkComboTrade(trade: TradeView): void {
  const legs = trade.legs!;
  const ratios = trade.instrumentName === SPREAD ? [1, -1] : [1, 1];
  assert.equal(legs.length, 2);
  assert.equal(
    legs.reduce((sum, leg, i) => sum + ratios[i]! * leg.price, 0),
    trade.price,
    'leg prices net to the combo price',
  );
  for (const [i, leg] of legs.entries()) {
    assert.ok(Number.isSafeInteger(leg.price) && leg.price >= 1, `leg price ${leg.price}`);
    assert.equal(leg.amount, trade.amount);
    assert.equal(leg.comboId, trade.instrumentName);
    assert.equal(leg.comboTradeId, trade.tradeId);
    assert.equal(leg.taker.orderId, trade.taker.orderId);
    const takerSide = ratios[i] === 1 ? trade.taker.side : trade.maker.side;
    assert.equal(leg.taker.side, takerSide);
  }
  assert.equal(trade.taker.fee, legs[0]!.taker.fee + legs[1]!.taker.fee);
  assert.equal(trade.maker.fee, legs[0]!.maker.fee + legs[1]!.maker.fee);
}

test('combo trades book on their legs: positions net out, legs net to the price, cash is conserved', () => {
  let runs = 0;
  let runsWithComboTrades = 0;
  fc.assert(
    fc.property(fc.array(step, { minLength: 1, maxLength: 60, size: 'max' }), (steps) => {
      const h = venue();
      const marks = [500, 300, 900];
      h.ok({
        type: 'update_prices',
        markPrices: LEGS.map((instrumentName, i) => ({ instrumentName, markPrice: marks[i]! })),
      });
      const orderIds: string[] = [];
      let fees = 0;
      let comboTrades = 0;
      for (const s of steps) {
        let events: readonly CoreEvent[] = [];
        if (s.kind === 'order') {
          const instrumentName = CHOICES[s.instrument]!;
          // Options tick by 0.0005 BTC (5 ticks) above 0.005 BTC; combos by the finest tick.
          const price = Math.max(2, MIDS[instrumentName]! + s.offset * 5);
          const result = h.order(s.account, s.side, s.lots, s.market ? null : price, {
            instrumentName,
            timeInForce: s.market ? 'immediate_or_cancel' : 'good_til_cancelled',
          });
          if (result.ok && result.order !== undefined) orderIds.push(result.order.orderId);
          events = result.events;
        } else if (s.kind === 'cancel' && orderIds.length > 0) {
          const orderId = orderIds[s.pick % orderIds.length]!;
          const order = h.venue.getOrder(orderId);
          if (order !== null)
            events = h.run({ type: 'cancel_order', accountId: order.accountId, orderId }).events;
        } else if (s.kind === 'marks') {
          for (let i = 0; i < marks.length; i++) marks[i] = Math.max(1, marks[i]! + s.moves[i]!);
          // A leg without a mark yet prices from its last trade (or one tick).
          const markPrices = LEGS.map((instrumentName, i) => ({ instrumentName, markPrice: marks[i]! }));
          events = h.ok({
            type: 'update_prices',
            markPrices: s.withoutMark ? markPrices.slice(1) : markPrices,
          }).events;
        }
        for (const trade of tradesOf(events)) {
          fees += trade.taker.fee + trade.maker.fee;
          if (trade.instrumentName === SPREAD || trade.instrumentName === STRADDLE) {
            comboTrades++;
            checkComboTrade(trade);
          } else assert.equal(trade.legs, undefined);
        }
        for (const name of INSTRUMENTS) {
          const sizes = ACCOUNTS.map((a) => h.venue.position(a, name)?.size ?? 0);
          if (name === SPREAD || name === STRADDLE)
            assert.deepEqual(sizes, [0, 0, 0], `no position on ${name}`);
          else assert.equal(sizes[0]! + sizes[1]! + sizes[2]!, 0, `${name} positions net to zero`);
        }
        h.venue.validate();
        const cash = ACCOUNTS.reduce(
          (sum, a) => sum + h.venue.accountSummary(a, 'BTC')!.balance - DEPOSIT,
          0,
        );
        assert.equal(cash + fees, 0, 'premiums move between accounts; only fees leave');
      }
      runs++;
      if (comboTrades > 0) runsWithComboTrades++;
      return true;
    }),
    { numRuns: RUNS, seed: propertySeed() },
  );
  // The streams must really trade the combos, or the checks above prove nothing.
  if (process.env.COMBO_DEBUG) console.log('runs', runs, 'with combo trades', runsWithComboTrades);
  assert.ok(runsWithComboTrades >= runs / 3, `${runsWithComboTrades} of ${runs} streams traded a combo`);
});
