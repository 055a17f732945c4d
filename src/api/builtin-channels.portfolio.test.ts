/**
 * SEMANTICS, Portfolios: "every push about a portfolio carries portfolioId". A portfolio's child
 * order (its `owner` is the portfolio id) is pushed on `user.orders` with `portfolioId`, as
 * `order.change.any` pushes it, and its fills on `user.trades` too; other orders and trades carry
 * no such field (review stop 43, F6). Real engine and read port, no gateway.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreEvent } from '../core/events.ts';
import { AdvancedHarness } from '../engine/advanced-testkit.ts';
import type { Principal } from './auth/authenticator.ts';
import { registerBuiltinChannels } from './builtin-channels.ts';
import { ChannelRegistry, Fanout, type Subscriber } from './channels.ts';
import { registerPortfolioChannels } from './portfolios/channels.ts';
import { createVenueReadPort } from './venue-read-port.ts';

type Wire = Record<string, unknown>;

test("user.orders and user.trades: a portfolio's child order and its fills carry portfolioId, others none", () => {
  const h = new AdvancedHarness();
  const reads = createVenueReadPort(h.venue);
  const channels = new ChannelRegistry();
  registerBuiltinChannels(channels, reads);
  registerPortfolioChannels(channels, reads);
  const fanout = new Fanout(channels);
  let seq = 0;
  const publish = (events: readonly CoreEvent[]) => fanout.publish({ seq: ++seq, ts: seq, events });
  const run = (command: Record<string, unknown>) =>
    publish(h.ok(command as Parameters<AdvancedHarness['ok']>[0]).events);

  // A child of portfolio 7 and a plain order of account 1 rest before the subscription.
  run(h.orderCommand(1, 'sell', 2, 100_000, { owner: '7' }));
  run(h.orderCommand(1, 'sell', 2, 100_100));
  const pushes: Array<{ channel: string; data: unknown; snapshot: boolean }> = [];
  const subscriber: Subscriber = {
    push: (channel, _seq, data, snapshot) => pushes.push({ channel, data, snapshot }),
  };
  const principal = { defaultAccountId: 1, accountIds: new Set([1]) } as unknown as Principal;
  for (const name of ['user.orders.any.BTC', 'user.trades.any.BTC', 'order.change.any'])
    fanout.subscribe(subscriber, name, channels.resolve(name, principal)!.resolved);

  const snapshot = pushes.find((p) => p.channel === 'user.orders.any.BTC')!.data as Wire[];
  assert.deepEqual(
    snapshot.map((o) => [o.label, o.portfolioId]),
    [
      ['', 7],
      ['', undefined],
    ],
  );
  assert.equal('portfolioId' in snapshot[1]!, false, 'no field on an order no portfolio owns');

  // Account 2 lifts both levels: a fill of the child, then of the plain order.
  run(h.orderCommand(2, 'buy', 4, 100_100, { timeInForce: 'immediate_or_cancel' }));
  // A new child order of portfolio 7, then cancelled.
  run(h.orderCommand(1, 'buy', 1, 90_000, { owner: '7' }));
  const changes = pushes.filter((p) => !p.snapshot);
  const orders = changes.filter((p) => p.channel === 'user.orders.any.BTC').map((p) => p.data as Wire);
  const orderChanges = changes.filter((p) => p.channel === 'order.change.any').map((p) => p.data as Wire);
  assert.equal(orders.length, 3);
  assert.equal(orderChanges.length, 3);
  for (const [i, order] of orders.entries()) {
    const change = orderChanges[i]!;
    // The same order object; order.change.any says null where user.orders has no field.
    const { portfolioId, ...rest } = change;
    assert.deepEqual(order, portfolioId === null ? rest : change, `${order.orderId}`);
  }
  assert.deepEqual(
    orders.map((o) => o.portfolioId),
    [7, undefined, 7],
  );
  const trades = changes.filter((p) => p.channel === 'user.trades.any.BTC').flatMap((p) => p.data as Wire[]);
  assert.deepEqual(
    trades.map((t) => [t.price, t.portfolioId]),
    [
      ['50000', 7],
      ['50050', undefined],
    ],
  );
  assert.equal('portfolioId' in trades[1]!, false);
});
