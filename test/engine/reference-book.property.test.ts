/**
 * Property test: random command streams run through the engine and through a deliberately
 * simple reference book (arrays, full sorts, no cleverness) must give identical trades, order
 * states and books; invariants are checked after every command:
 * - the engine's internal structure is consistent and the book is never crossed at rest;
 * - quantity is conserved (each order: filled ≤ amount; Σ fills = 2 × Σ trade amounts);
 * - positions net to zero on the instrument;
 * - each balance equals deposits + Σ (realised PnL − fee) of its trades.
 *
 * PROPERTY_RUNS (default 10,000) sets the number of streams.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { TradeView } from '../../src/core/events.ts';
import type { Side, TimeInForce } from '../../src/core/types.ts';
import { Harness, perpetualSpec } from '../../src/engine/testkit.ts';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 10_000);
const ACCOUNTS = [1, 2, 3];
const DEPOSIT = 1_000_000_000_000;

interface RefOrder {
  id: string;
  number: number;
  account: number;
  side: Side;
  price: number;
  amount: number;
  filled: number;
  postOnly: boolean;
  state: 'open' | 'filled' | 'cancelled';
}

interface RefTrade {
  taker: string;
  maker: string;
  price: number;
  amount: number;
}

/** The reference: orders in one array; the book is recomputed by filtering and sorting. */
class ReferenceBook {
  orders = new Map<string, RefOrder>();
  private arrival = 0;

  resting(side: Side): RefOrder[] {
    return [...this.orders.values()]
      .filter((o) => o.state === 'open' && o.side === side && o.number > 0)
      .sort((a, b) => (side === 'buy' ? b.price - a.price : a.price - b.price) || a.number - b.number);
  }

  best(side: Side): number | null {
    return this.resting(side)[0]?.price ?? null;
  }

  private crosses(taker: RefOrder, limit: number, maker: RefOrder): boolean {
    return taker.side === 'buy' ? maker.price <= limit : maker.price >= limit;
  }

  private match(taker: RefOrder, limit: number): RefTrade[] {
    const trades: RefTrade[] = [];
    const opposite = taker.side === 'buy' ? 'sell' : 'buy';
    for (const maker of this.resting(opposite)) {
      if (taker.filled === taker.amount || !this.crosses(taker, limit, maker)) break;
      if (maker.account === taker.account) {
        maker.state = 'cancelled';
        continue;
      }
      const lots = Math.min(taker.amount - taker.filled, maker.amount - maker.filled);
      taker.filled += lots;
      maker.filled += lots;
      if (maker.filled === maker.amount) maker.state = 'filled';
      trades.push({ taker: taker.id, maker: maker.id, price: maker.price, amount: lots });
    }
    if (taker.filled === taker.amount) taker.state = 'filled';
    return trades;
  }

  place(
    id: string,
    account: number,
    side: Side,
    amount: number,
    price: number | null,
    tif: TimeInForce,
    postOnly: boolean,
  ): RefTrade[] {
    const order: RefOrder = {
      id,
      number: 0,
      account,
      side,
      price: price ?? 0,
      amount,
      filled: 0,
      postOnly,
      state: 'open',
    };
    this.orders.set(id, order);
    if (postOnly && price !== null) order.price = this.postOnlyPrice(side, price);
    const limit = price === null ? (side === 'buy' ? Infinity : -Infinity) : order.price;
    if (tif === 'fill_or_kill') {
      const opposite = side === 'buy' ? 'sell' : 'buy';
      const available = this.resting(opposite)
        .filter((m) => m.account !== account && this.crosses(order, limit, m))
        .reduce((sum, m) => sum + m.amount - m.filled, 0);
      if (available < amount) {
        order.state = 'cancelled';
        return [];
      }
    }
    const trades = this.match(order, limit);
    if (order.state === 'open') {
      if (price === null || tif === 'immediate_or_cancel' || tif === 'fill_or_kill')
        order.state = 'cancelled';
      else order.number = ++this.arrival;
    }
    return trades;
  }

  private postOnlyPrice(side: Side, price: number): number {
    if (side === 'buy') {
      const ask = this.best('sell');
      return ask !== null && price >= ask ? ask - 1 : price;
    }
    const bid = this.best('buy');
    return bid !== null && price <= bid ? bid + 1 : price;
  }

  cancel(id: string): boolean {
    const order = this.orders.get(id);
    if (order === undefined || order.state !== 'open') return false;
    order.state = 'cancelled';
    return true;
  }

  edit(id: string, amount: number | undefined, price: number | undefined): RefTrade[] | null {
    const order = this.orders.get(id);
    if (order === undefined || order.state !== 'open') return null;
    const newAmount = amount ?? order.amount;
    if (newAmount <= order.filled) return null;
    let newPrice = price ?? order.price;
    if (order.postOnly) newPrice = this.postOnlyPrice(order.side, newPrice);
    if (newPrice === order.price && newAmount <= order.amount) {
      order.amount = newAmount;
      return [];
    }
    order.number = 0; // out of the book while it re-enters
    order.amount = newAmount;
    order.price = newPrice;
    const trades = this.match(order, newPrice);
    if (order.state === 'open') order.number = ++this.arrival;
    return trades;
  }
}

type Step =
  | {
      kind: 'place';
      account: number;
      side: Side;
      amount: number;
      price: number;
      tif: TimeInForce;
      market: boolean;
      postOnly: boolean;
    }
  | { kind: 'cancel'; pick: number }
  | { kind: 'edit'; pick: number; amount: number | null; price: number | null };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('place' as const),
      account: fc.constantFrom(...ACCOUNTS),
      side: fc.constantFrom<Side>('buy', 'sell'),
      amount: fc.integer({ min: 1, max: 5 }),
      price: fc.integer({ min: 100, max: 108 }),
      tif: fc.constantFrom<TimeInForce>(
        'good_til_cancelled',
        'good_til_cancelled',
        'immediate_or_cancel',
        'fill_or_kill',
      ),
      market: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      postOnly: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('edit' as const),
      pick: fc.nat(),
      amount: fc.option(fc.integer({ min: 1, max: 6 })),
      price: fc.option(fc.integer({ min: 100, max: 108 })),
    }),
  },
);

function engineBook(h: Harness): Array<[number, string, number]> {
  const out: Array<[number, string, number]> = [];
  for (const order of ACCOUNTS.flatMap((a) => h.venue.openOrders({ accountId: a }))) {
    out.push([order.price!, order.orderId, order.amount - order.filledAmount]);
  }
  return out.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
}

function referenceBook(ref: ReferenceBook): Array<[number, string, number]> {
  return [...ref.resting('buy'), ...ref.resting('sell')]
    .map((o) => [o.price, o.id, o.amount - o.filled] as [number, string, number])
    .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
}

function asRef(trades: readonly TradeView[]): RefTrade[] {
  return trades.map((t) => ({
    taker: t.taker.orderId,
    maker: t.maker.orderId,
    price: t.price,
    amount: t.amount,
  }));
}

function runStream(steps: Step[]): void {
  const h = new Harness();
  h.list(perpetualSpec({ makerCommission: '-0.0001', takerCommission: '0.0005' }));
  for (const a of ACCOUNTS) h.account(a, { BTC: DEPOSIT });
  const ref = new ReferenceBook();
  const ids: string[] = [];
  const expectedBalance = new Map(ACCOUNTS.map((a) => [a, DEPOSIT]));
  let tradedLots = 0;
  for (const step of steps) {
    h.ts += 1;
    let trades: readonly TradeView[] = [];
    if (step.kind === 'place') {
      const price = step.market ? null : step.price;
      const tif = step.market ? 'immediate_or_cancel' : step.tif;
      const postOnly = step.postOnly && !step.market && tif === 'good_til_cancelled';
      const result = h.order(step.account, step.side, step.amount, price, { timeInForce: tif, postOnly });
      assert.ok(result.ok, `place refused: ${!result.ok && result.error.message}`);
      const id = result.order!.orderId;
      ids.push(id);
      const expected = ref.place(id, step.account, step.side, step.amount, price, tif, postOnly);
      trades = result.trades!;
      assert.deepEqual(asRef(trades), expected);
    } else if (step.kind === 'cancel') {
      if (ids.length === 0) continue;
      const id = ids[step.pick % ids.length]!;
      const owner = ref.orders.get(id)!.account;
      const result = h.run({ type: 'cancel_order', accountId: owner, orderId: id });
      assert.equal(result.ok, ref.cancel(id));
    } else {
      if (ids.length === 0) continue;
      const id = ids[step.pick % ids.length]!;
      const owner = ref.orders.get(id)!.account;
      const result = h.run({
        type: 'edit_order',
        accountId: owner,
        orderId: id,
        ...(step.amount !== null ? { amount: step.amount } : {}),
        ...(step.price !== null ? { price: step.price } : {}),
      });
      const expected = ref.edit(id, step.amount ?? undefined, step.price ?? undefined);
      assert.equal(result.ok, expected !== null, `edit ok mismatch: ${!result.ok ? result.error.name : ''}`);
      if (result.ok) {
        trades = result.trades!;
        assert.deepEqual(asRef(trades), expected);
      }
    }
    for (const trade of trades) {
      tradedLots += trade.amount;
      for (const party of [trade.taker, trade.maker]) {
        expectedBalance.set(
          party.accountId,
          expectedBalance.get(party.accountId)! + party.profitLoss - party.fee,
        );
      }
    }
    // Same books, same order states, invariants.
    h.venue.validate();
    assert.deepEqual(engineBook(h), referenceBook(ref));
    let filled = 0;
    for (const [id, refOrder] of ref.orders) {
      const order = h.venue.getOrder(id)!;
      assert.equal(order.orderState, refOrder.state, `state of ${id}`);
      assert.equal(order.filledAmount, refOrder.filled, `filled of ${id}`);
      assert.ok(order.filledAmount <= order.amount);
      filled += order.filledAmount;
    }
    assert.equal(filled, 2 * tradedLots);
    const sizes = ACCOUNTS.map((a) => h.venue.position(a, 'BTC-PERPETUAL')?.size ?? 0);
    assert.equal(
      sizes.reduce((x, y) => x + y, 0),
      0,
    );
    for (const a of ACCOUNTS) assert.equal(h.venue.accountSummary(a, 'BTC')!.balance, expectedBalance.get(a));
  }
}

test('engine and reference book agree on random command streams', () => {
  fc.assert(
    fc.property(fc.array(stepArb, { minLength: 1, maxLength: 20 }), (steps) => {
      runStream(steps);
    }),
    { numRuns: RUNS, seed: Number(process.env.PROPERTY_SEED ?? 20261122) },
  );
});
