import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreCommand } from '../core/commands.ts';
import { Harness, orderCommand, perpetualSpec } from './testkit.ts';
import { tradeForParty, Venue } from './venue.ts';

/** A deterministic little session that exercises most paths. */
function session(h: Harness): CoreCommand[] {
  const log: CoreCommand[] = [];
  const original = h.venue.execute.bind(h.venue);
  h.venue.execute = (command) => {
    log.push(structuredClone(command));
    return original(command);
  };
  h.list(perpetualSpec());
  for (const a of [1, 2, 3]) h.account(a);
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: 'BTC-PERPETUAL', markPrice: 100_000 }] });
  for (let i = 0; i < 40; i++) {
    h.ts += 10;
    const side = i % 2 === 0 ? 'buy' : 'sell';
    h.order((i % 3) + 1, side, (i % 5) + 1, 100_000 + ((i * 7) % 11) - 5, {
      timeInForce: i % 7 === 0 ? 'good_til_day' : 'good_til_cancelled',
      label: `L${i % 4}`,
    });
  }
  const open = h.venue.openOrders({ accountId: 1 });
  if (open[0])
    h.run({ type: 'edit_order', accountId: 1, orderId: open[0].orderId, price: open[0].price! + 1 });
  if (open[1]) h.run({ type: 'cancel_order', accountId: 1, orderId: open[1].orderId });
  h.venue.execute = original;
  return log;
}

describe('determinism, snapshots and hashes', () => {
  test('replaying the command log gives the same state hash and the same events', () => {
    const live = new Harness();
    const log = session(live);
    const replay = Venue.create();
    for (const command of log) replay.execute(command);
    assert.equal(replay.stateHash(), live.venue.stateHash());
  });

  test('restore(snapshot) is identical and keeps behaving identically', () => {
    const live = new Harness();
    session(live);
    const snapshot = JSON.parse(JSON.stringify(live.venue.snapshot()));
    const restored = Venue.restore(snapshot);
    restored.validate();
    assert.equal(restored.stateHash(), live.venue.stateHash());
    assert.deepEqual(restored.snapshot(), live.venue.snapshot());
    const next: CoreCommand = {
      ...orderCommand(2, 'buy', 20, null, { timeInForce: 'immediate_or_cancel' }),
      seq: 10_000,
      ts: live.ts + 1,
    };
    assert.deepEqual(restored.execute(next), live.venue.execute(next));
    assert.equal(restored.stateHash(), live.venue.stateHash());
  });

  test('the hash changes when state changes', () => {
    const h = new Harness();
    session(h);
    const before = h.venue.stateHash();
    h.order(1, 'buy', 1, 99_000);
    assert.notEqual(h.venue.stateHash(), before);
  });
});

describe('queries', () => {
  test('book depth hides hidden orders; open orders filter; per-party trade view', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.account(1);
    h.account(2);
    h.order(1, 'buy', 2, 99_000);
    h.order(1, 'buy', 3, 99_000, { hidden: true });
    h.order(1, 'buy', 4, 98_000, { hidden: true });
    const book = h.venue.book('BTC-PERPETUAL')!;
    assert.deepEqual(book.bids, [{ price: 99_000, amount: 2, orders: 2 }]);
    assert.equal(h.venue.openOrders({ accountId: 1, kind: 'future' }).length, 3);
    assert.equal(h.venue.openOrders({ accountId: 1, kind: 'option' }).length, 0);
    const trade = h.order(2, 'sell', 5, 99_000).trades![1]!;
    const mine = tradeForParty(trade, 1)!;
    assert.equal(mine.liquidity, 'M');
    assert.equal(mine.side, 'buy');
    assert.equal(mine.tradeSeq, 2);
    assert.equal(tradeForParty(trade, 99), null);
    assert.equal(h.venue.recentTrades('BTC-PERPETUAL').length, 2);
    assert.equal(h.venue.instrument('BTC-PERPETUAL')!.lastPrice, 99_000);
  });

  test('closed orders stay queryable up to the configured number', () => {
    const h = new Harness({ recentClosedOrders: 2 });
    h.list(perpetualSpec());
    h.account(1);
    const ids = [0, 1, 2].map(() => h.order(1, 'buy', 1, 99_000).order!.orderId);
    for (const id of ids) h.ok({ type: 'cancel_order', accountId: 1, orderId: id });
    assert.equal(h.venue.getOrder(ids[0]!), null);
    assert.equal(h.venue.getOrder(ids[2]!)!.orderState, 'cancelled');
  });
});
