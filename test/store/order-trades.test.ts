/**
 * One order's trades (`orderTrades`, private/get_user_trades_by_order) on the SQLite read store and
 * the in-memory port: the order's trades newest first, found by walking the account's trades on
 * the instrument in steps (here past two steps of other orders' trades), stopping once they add
 * up to the order's fill or the rows are older than the order.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { MemoryHistory } from '../../src/api/memory-history.ts';
import type { CommittedBatch } from '../../src/api/ports.ts';
import type { CoreEvent } from '../../src/core/events.ts';
import { SqliteReadDb } from '../../src/store/read/read-db.ts';
import { ReadStore } from '../../src/store/read/read-store.ts';
import { tradeView } from './read-store-contract.ts';

const T0 = 1_800_000_000_000;
const INSTRUMENT = 'BTC-27DEC24-60000-C';
const ORDER = 'BTC-X';

/** Account 1 takes from account 2; the maker order is ORDER or one of its own. */
function trade(tradeId: string, timestamp: number, makerOrder: string): CoreEvent {
  const view = tradeView(tradeId, timestamp, 1, 2);
  return { type: 'trade', trade: { ...view, maker: { ...view.maker, orderId: makerOrder } } };
}

function batches(): CommittedBatch[] {
  const out: CommittedBatch[] = [
    { seq: 1, ts: T0, events: [trade('BTC-1', T0, ORDER), trade('BTC-2', T0, ORDER)] },
  ];
  // 1,200 trades of other maker orders: the walk passes two steps of 500 before the first two.
  let id = 3;
  for (let seq = 2; seq <= 13; seq++) {
    const ts = T0 + seq * 1_000;
    out.push({
      seq,
      ts,
      events: Array.from({ length: 100 }, () => trade(`BTC-${id}`, ts, `BTC-other-${id++}`)),
    });
  }
  out.push({ seq: 14, ts: T0 + 20_000, events: [trade(`BTC-${id}`, T0 + 20_000, ORDER)] });
  return out;
}

const stores: ReadStore[] = [];
after(async () => {
  for (const store of stores) await store.close();
});

async function ports() {
  const store = await ReadStore.open({
    db: new SqliteReadDb(':memory:', { writerThread: false }),
    kindOf: () => 'option',
  });
  stores.push(store);
  const memory = new MemoryHistory(() => 'option');
  for (const batch of batches()) {
    store.push(batch);
    memory.record(batch);
  }
  await store.flush();
  return [
    ['read store (SQLite)', store],
    ['memory', memory],
  ] as const;
}

test("an order's trades, newest first, past other orders' trades; the taker's side as its own", async () => {
  for (const [name, port] of await ports()) {
    const found = await port.orderTrades({
      accountId: 2,
      orderId: ORDER,
      instrumentName: INSTRUMENT,
      since: T0 - 1,
      filled: 3,
    });
    assert.deepEqual(
      found.map((t) => [t.trade.tradeId, t.liquidity]),
      [
        ['BTC-1203', 'M'],
        ['BTC-2', 'M'],
        ['BTC-1', 'M'],
      ],
      name,
    );
    const taker = await port.orderTrades({
      accountId: 1,
      orderId: 'TBTC-2',
      instrumentName: INSTRUMENT,
      since: T0 - 1,
      filled: 1,
    });
    assert.deepEqual(
      taker.map((t) => [t.trade.tradeId, t.liquidity]),
      [['BTC-2', 'T']],
      name,
    );
    const otherAccount = await port.orderTrades({
      accountId: 1,
      orderId: ORDER,
      instrumentName: INSTRUMENT,
      since: T0 - 1,
      filled: 3,
    });
    assert.deepEqual(otherAccount, [], `${name}: the maker's order is not the taker account's`);
  }
});

test('the walk stops at rows older than the order, and once the fills add up', async () => {
  const [[, store]] = await ports();
  const younger = await store.orderTrades({
    accountId: 2,
    orderId: ORDER,
    instrumentName: INSTRUMENT,
    since: T0 + 20_000,
    filled: 3,
  });
  assert.deepEqual(
    younger.map((t) => t.trade.tradeId),
    ['BTC-1203'],
    'trades before the order was made are not its',
  );
  const partly = await store.orderTrades({
    accountId: 2,
    orderId: ORDER,
    instrumentName: INSTRUMENT,
    since: T0 - 1,
    filled: 1,
  });
  assert.deepEqual(
    partly.map((t) => t.trade.tradeId),
    ['BTC-1203'],
    'its fill is accounted for by the newest trade',
  );
});
