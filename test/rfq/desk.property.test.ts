/**
 * Property: random create/quote/edit/cancel/accept/time sequences never execute a partial
 * structure and conserve quantities: every block trade has every leg at fill × lotsPerUnit,
 * fills sum to the RFQ's filled quantity (≤ its quantity), positions match the fills and net to
 * zero, AON quotes fill whole or not at all, and a snapshot restores to the same hash.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { TradeView } from '../../src/core/events.ts';
import { hedgeShare } from '../../src/rfq/quote-terms.ts';
import type { UnstampedRfqCommand } from '../../src/rfq/types.ts';
import {
  CALL_70,
  CALL_75,
  DESK_A,
  DESK_B,
  MAKER_A,
  MAKER_B,
  MAKER_C,
  PERP,
  PUT_70,
  RfqHarness,
  TAKER,
  TAKER_2,
} from './harness.ts';

const INSTRUMENTS = [CALL_70, CALL_75, PUT_70];
const MAKERS = [
  { desk: DESK_A, accountId: MAKER_A },
  { desk: DESK_B, accountId: MAKER_B },
];

const side = fc.constantFrom<'buy' | 'sell'>('buy', 'sell');
const optionPrice = fc.integer({ min: 11, max: 200 }).map((n) => n * 5);

const createOp = fc.record({
  kind: fc.constant('create' as const),
  legs: fc.uniqueArray(
    fc.record({ instrument: fc.constantFrom(...INSTRUMENTS), side, amount: fc.integer({ min: 1, max: 12 }) }),
    { minLength: 1, maxLength: 3, selector: (leg) => leg.instrument },
  ),
  hedge: fc.option(fc.record({ side, amount: fc.integer({ min: 1, max: 50 }) }), { nil: null }),
  /** Skip the grace period right away (most runs should reach open RFQs). */
  open: fc.boolean(),
  allocation: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
});
const quoteOp = fc.record({
  kind: fc.constant('quote' as const),
  rfq: fc.nat(),
  maker: fc.integer({ min: 0, max: 1 }),
  side,
  quantity: fc.integer({ min: 1, max: 12 }),
  prices: fc.array(optionPrice, { minLength: 3, maxLength: 3 }),
  aon: fc.boolean(),
  expiresIn: fc.option(fc.integer({ min: 1, max: 120_000 }), { nil: null }),
});
const editOp = fc.record({
  kind: fc.constant('edit' as const),
  quote: fc.nat(),
  quantity: fc.integer({ min: 1, max: 12 }),
  bump: fc.integer({ min: -20, max: 20 }),
});
const acceptOp = fc.record({
  kind: fc.constant('accept' as const),
  rfq: fc.nat(),
  side,
  price: fc.integer({ min: -3000, max: 3000 }),
  quantity: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
  gtc: fc.boolean(),
});

const op = fc.oneof(
  { weight: 2, arbitrary: createOp },
  { weight: 6, arbitrary: quoteOp },
  { weight: 1, arbitrary: editOp },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel_quote' as const), quote: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('cancel_all' as const), maker: fc.integer({ min: 0, max: 1 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel_rfq' as const), rfq: fc.nat() }) },
  { weight: 4, arbitrary: acceptOp },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 1, max: 90_000 }) }),
  },
);

test('random RFQ sequences never trade partial structures and conserve quantities', () => {
  let fills = 0;
  let multiMaker = 0;
  fc.assert(
    fc.property(fc.array(op, { minLength: 15, maxLength: 40 }), (ops) => {
      const h = new RfqHarness();
      const rfqIds: string[] = [];
      const quoteIds: string[] = [];
      for (const o of ops) {
        switch (o.kind) {
          case 'create': {
            const result = h.run({
              type: 'rfq_create',
              accountId: TAKER,
              userId: TAKER,
              takerAlias: null,
              makers: [],
              targetDesks: [DESK_A, DESK_B],
              disclosed: true,
              label: '',
              legs: o.legs.map((l) => ({ instrumentName: l.instrument, side: l.side, amount: l.amount })),
              hedge:
                o.hedge === null
                  ? null
                  : { instrumentName: PERP, side: o.hedge.side, amount: o.hedge.amount, price: 120_000 },
              tradeAllocations:
                o.allocation === null ? [] : [{ amount: o.allocation, userId: TAKER, accountId: TAKER_2 }],
            });
            if (result.ok && result.value.kind === 'rfq') rfqIds.push(result.value.rfq.blockRfqId);
            if (o.open) h.at(h.now + 5_000);
            break;
          }
          case 'quote': {
            if (rfqIds.length === 0) break;
            const rfq = h.desk.takerRfq(new Set([TAKER]), rfqIds[o.rfq % rfqIds.length]!)!;
            const maker = MAKERS[o.maker]!;
            const command: UnstampedRfqCommand = {
              type: 'rfq_quote_create',
              accountId: maker.accountId,
              userId: maker.accountId,
              desk: maker.desk,
              blockRfqId: rfq.makerRecords.find((r) => r.desk === maker.desk)!.blockRfqId,
              side: o.side,
              // Mostly partial sizes, so accepts often combine several quotes.
              quantity: 1 + ((o.quantity - 1) % Math.max(1, Math.ceil(rfq.quantity / 2))),
              price: null,
              legs: rfq.legs.map((leg, i) => ({
                instrumentName: leg.instrumentName,
                side: leg.side,
                ratio: leg.ratio,
                price: o.prices[i]!,
              })),
              hedge: null,
              executionInstruction: o.aon ? 'all_or_none' : 'any_part_of',
              expiresAt: o.expiresIn === null ? null : h.now + o.expiresIn,
              label: '',
            };
            const result = h.run(command);
            if (result.ok && result.value.kind === 'quote') quoteIds.push(result.value.quote.quoteId);
            break;
          }
          case 'edit': {
            if (quoteIds.length === 0) break;
            const quote = h.desk.quote(quoteIds[o.quote % quoteIds.length]!);
            if (quote === undefined) break;
            h.run({
              type: 'rfq_quote_edit',
              accountId: quote.accountId,
              desk: quote.desk,
              quoteId: quote.quoteId,
              side: quote.side,
              quantity: 1 + ((o.quantity - 1) % quote.quantity),
              price: null,
              legs: quote.legs.map((leg) => ({ ...leg, price: Math.max(55, leg.price + o.bump * 5) })),
              hedge: null,
              executionInstruction: quote.executionInstruction,
              expiresAt: null,
              label: '',
            });
            break;
          }
          case 'cancel_quote': {
            if (quoteIds.length === 0) break;
            const quote = h.desk.quote(quoteIds[o.quote % quoteIds.length]!);
            if (quote === undefined) break;
            h.run({
              type: 'rfq_quote_cancel',
              accountId: quote.accountId,
              desk: quote.desk,
              quoteId: quote.quoteId,
            });
            break;
          }
          case 'cancel_all':
            h.run({
              type: 'rfq_quote_cancel_all',
              accountId: MAKERS[o.maker]!.accountId,
              desk: MAKERS[o.maker]!.desk,
              blockRfqId: null,
            });
            break;
          case 'cancel_rfq':
            if (rfqIds.length > 0)
              h.run({ type: 'rfq_cancel', accountId: TAKER, blockRfqId: rfqIds[o.rfq % rfqIds.length]! });
            break;
          case 'accept': {
            if (rfqIds.length === 0) break;
            const target = h.desk.takerRfq(new Set([TAKER]), rfqIds[o.rfq % rfqIds.length]!)!;
            h.run({
              type: 'rfq_accept',
              accountId: TAKER,
              blockRfqId: target.blockRfqId,
              side: o.side,
              price: o.price,
              quantity: o.quantity === null ? null : 1 + ((o.quantity - 1) % target.quantity),
              timeInForce: o.gtc ? 'good_til_cancelled' : 'fill_or_kill',
            });
            break;
          }
          case 'time':
            h.at(h.now + o.ms);
            break;
          default: {
            const _exhaustive: never = o;
            throw new Error(String(_exhaustive));
          }
        }
      }
      checkInvariants(h, rfqIds);
      for (const trade of h.desk.trades()) {
        fills += trade.fills.length;
        if (new Set(trade.fills.map((f) => f.quoteId)).size > 1) multiMaker++;
      }
    }),
    { numRuns: 300 },
  );
  if (process.env.RFQ_PROP_STATS) console.log({ fills, multiMaker });
  // The generator must actually reach trades, including multi-maker ones.
  assert.ok(fills > 20, `only ${fills} fills`);
  assert.ok(multiMaker > 0, `no multi-quote trade generated (${fills} fills)`);
});

function checkInvariants(h: RfqHarness, rfqIds: readonly string[]): void {
  const tradesByBlock = new Map<string, TradeView[]>();
  for (const event of h.engineEvents) {
    if (event.type !== 'trade' || event.trade.blockTradeId === null) continue;
    const list = tradesByBlock.get(event.trade.blockTradeId) ?? [];
    list.push(event.trade);
    tradesByBlock.set(event.trade.blockTradeId, list);
  }
  const expected = new Map<string, number>();
  const add = (account: number, instrument: string, lots: number) => {
    const key = `${account}|${instrument}`;
    expected.set(key, (expected.get(key) ?? 0) + lots);
  };
  let fillCount = 0;
  for (const id of rfqIds) {
    const rfq = h.desk.takerRfq(new Set([TAKER]), id)!;
    const trade = h.desk.trades().find((t) => t.blockRfqId === id);
    const filled = trade?.fills.reduce((sum, fill) => sum + fill.quantity, 0) ?? 0;
    assert.equal(filled, rfq.filledQuantity);
    assert.ok(rfq.filledQuantity <= rfq.quantity);
    assert.equal(rfq.status === 'filled', rfq.filledQuantity === rfq.quantity && rfq.quantity > 0);
    if (rfq.filledQuantity > 0) assert.ok(rfq.status === 'filled' || rfq.status === 'traded');
    let hedgeTotal = 0;
    const hedgeByQuote = new Map<string, number>();
    for (const fill of trade?.fills ?? []) {
      fillCount++;
      const legs = tradesByBlock.get(fill.blockTradeId) ?? [];
      const withHedge = rfq.legs.length + (fill.hedgeAmount > 0 ? 1 : 0);
      assert.equal(legs.length, withHedge, 'every leg of the structure traded, nothing else');
      for (const [i, leg] of rfq.legs.entries()) {
        const t = legs.find((x) => x.instrumentName === leg.instrumentName);
        assert.ok(t, `leg ${leg.instrumentName} missing`);
        assert.equal(t.amount, fill.quantity * leg.lotsPerUnit);
        assert.equal(t.price, fill.legPrices[i]);
        const takerSide = trade!.side === 'buy' ? leg.side : leg.side === 'buy' ? 'sell' : 'buy';
        assert.equal(t.taker.side, takerSide);
        const signed = (takerSide === 'buy' ? 1 : -1) * t.amount;
        add(fill.takerAccountId, leg.instrumentName, signed);
        add(fill.makerAccountId, leg.instrumentName, -signed);
      }
      if (fill.hedgeAmount > 0) {
        const t = legs.find((x) => x.instrumentName === PERP)!;
        const signed = (t.taker.side === 'buy' ? 1 : -1) * t.amount;
        add(fill.takerAccountId, PERP, signed);
        add(fill.makerAccountId, PERP, -signed);
      }
      hedgeTotal += fill.hedgeAmount;
      hedgeByQuote.set(fill.quoteId, (hedgeByQuote.get(fill.quoteId) ?? 0) + fill.hedgeAmount);
    }
    if (rfq.hedge === null) assert.equal(hedgeTotal, 0);
    else assert.ok(hedgeTotal <= rfq.hedge.amount, 'never more hedge than the RFQ asked');
    for (const quote of h.desk.quotesOfRfq(id)) {
      // A quote books exactly the hedge it shows for what it filled: its share, never more.
      assert.equal(hedgeByQuote.get(quote.quoteId) ?? 0, hedgeShare(rfq, quote.filledQuantity));
      assert.ok(quote.filledQuantity <= quote.quantity);
      if (quote.status !== 'filled') assert.equal(quote.filledQuantity, 0, 'only filled quotes traded');
      if (quote.executionInstruction === 'all_or_none')
        assert.ok(quote.filledQuantity === 0 || quote.filledQuantity === quote.quantity);
      if (quote.status === 'open') assert.ok(rfq.status === 'created' || rfq.status === 'open');
    }
  }
  assert.equal(tradesByBlock.size, fillCount, 'no block trade outside the recorded fills');
  for (const account of [TAKER, TAKER_2, MAKER_A, MAKER_B, MAKER_C]) {
    for (const instrument of [...INSTRUMENTS, PERP]) {
      assert.equal(
        h.size(account, instrument),
        expected.get(`${account}|${instrument}`) ?? 0,
        `${account} ${instrument}`,
      );
    }
  }
  const hash = h.desk.stateHash();
  h.desk.restore(JSON.parse(JSON.stringify(h.desk.snapshot())));
  assert.equal(h.desk.stateHash(), hash);
}
