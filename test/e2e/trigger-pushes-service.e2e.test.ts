/**
 * Trigger and linked orders on the user channels of the whole service (stop 45): the simulator
 * moves the index, marks and tape on the virtual clock, and the market's commands fire stops,
 * take-profits, trailing stops and OTOCO pairs placed around the mark. On every channel seq runs
 * without a gap, each trade comes once (the same trades on user.trades and user.changes, and as
 * the history has them), and each order's last push is what get_order_state answers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { startTestService } from '../support/service-harness.ts';

const PERP = 'BTC-PERPETUAL';
const CHANNELS = ['user.orders.any.any', 'user.trades.any.any', 'user.changes.any.any'];

type Order = Record<string, unknown> & { orderId: string; orderState: string };
type Trade = Record<string, unknown> & { tradeId: string };

test('triggers fired by the market: seq gap-free, each trade once, each order’s last push its state', async () => {
  const running = await startTestService();
  try {
    running.clock.advance(1_000);
    const ws = running.ws(0);
    await ws.connect();
    await ws.auth();
    const pushes: SubscriptionPush[] = [];
    await ws.subscribe(CHANNELS, (push) => pushes.push(push));
    const http = running.http(0);
    const orderIds = new Set<string>();
    const round = (price: number, step: number) => Math.round(price / step) * step;
    for (let cycle = 0; cycle < 6; cycle++) {
      const ticker = await http.call('public/ticker', { instrumentName: PERP });
      const mark = Number(ticker.markPrice);
      const near = (bps: number) => String(round(mark * (1 + bps / 10_000), 0.5));
      const placed = [
        await http.call('private/buy', {
          instrumentName: PERP,
          quantity: '100',
          type: 'stop_market',
          trigger: 'mark_price',
          triggerPrice: near(2),
        }),
        await http.call('private/sell', {
          instrumentName: PERP,
          quantity: '100',
          type: 'stop_market',
          trigger: 'index_price',
          triggerPrice: near(-2),
        }),
        await http.call('private/sell', {
          instrumentName: PERP,
          quantity: '100',
          type: 'take_limit',
          price: near(4),
          trigger: 'last_price',
          triggerPrice: near(5),
        }),
        await http.call('private/sell', {
          instrumentName: PERP,
          quantity: '100',
          type: 'trailing_stop',
          trigger: 'mark_price',
          triggerOffset: String(round(mark * 0.0002, 0.5)),
        }),
        await http.call('private/buy', {
          instrumentName: PERP,
          quantity: '100',
          price: near(-2),
          linkedOrderType: 'one_triggers_one_cancels_other',
          otocoConfig: [
            { side: 'sell', quantity: '100', price: near(6) },
            {
              side: 'sell',
              quantity: '100',
              type: 'stop_market',
              trigger: 'mark_price',
              triggerPrice: near(-8),
            },
          ],
        }),
      ];
      for (const { order } of placed) {
        orderIds.add(order.orderId);
        for (const id of order.otoOrderIds ?? []) orderIds.add(id);
      }
      for (let second = 0; second < 20; second++) {
        running.clock.advance(1_000);
        await ws.call('public/test', {});
      }
    }
    await http.call('private/cancel_all', {});
    await ws.call('public/test', {});
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    await ws.call('public/test', {});

    for (const channel of CHANNELS) {
      const seqs = pushes.filter((p) => p.channel === channel).map((p) => p.seq);
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => i + 1),
        `${channel}: seq gap-free`,
      );
    }
    const last = new Map<string, Order>();
    const lastInChanges = new Map<string, Order>();
    const states = new Map<string, string[]>();
    const tradesPushed: Trade[] = [];
    const tradesInChanges: Trade[] = [];
    for (const push of pushes) {
      if (push.snapshot) continue;
      if (push.channel === 'user.orders.any.any') {
        const order = push.data as Order;
        last.set(order.orderId, order);
        if (!states.has(order.orderId)) states.set(order.orderId, []);
        states.get(order.orderId)!.push(`${order.orderState}${order.triggered ? '+' : ''}`);
      } else if (push.channel === 'user.trades.any.any') tradesPushed.push(...(push.data as Trade[]));
      else {
        const changes = push.data as { orders: Order[]; trades: Trade[] };
        for (const order of changes.orders) lastInChanges.set(order.orderId, order);
        tradesInChanges.push(...changes.trades);
      }
    }
    for (const id of orderIds) assert.ok(last.has(id), `${id} pushed`);
    let fired = 0;
    for (const [id, pushed] of last) {
      const state = await http.call('private/get_order_state', { orderId: id });
      assert.deepEqual(pushed, state, `${id}: last push on user.orders`);
      assert.deepEqual(lastInChanges.get(id), state, `${id}: last push on user.changes`);
      if (state.triggered === true) fired++;
    }
    const ids = tradesPushed.map((t) => t.tradeId);
    assert.equal(new Set(ids).size, ids.length, 'each trade once on user.trades');
    assert.deepEqual(
      tradesInChanges.map((t) => t.tradeId),
      ids,
      'the same trades on user.changes',
    );
    const history = await http.call('private/get_user_trades_by_currency', { currency: 'BTC', count: 1000 });
    for (const trade of tradesPushed)
      assert.deepEqual(
        trade,
        history.trades.find((t) => t.tradeId === trade.tradeId),
        trade.tradeId,
      );
    assert.ok(fired > 0, `some triggers fired (of ${last.size} orders, ${ids.length} trades)`);
    await ws.close();
  } finally {
    await running.close();
  }
});
