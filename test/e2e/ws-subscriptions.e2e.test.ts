/**
 * Subscriptions through the whole service (real sequencer, journal, core and gateway), over raw
 * WebSockets so that several requests leave in one turn of the event loop:
 * - a snapshot taken while commands are applied but not yet durable is followed by exactly the
 *   changes after it (not the older states those commands' pushes show, nothing twice);
 * - several subscribes in one turn: each one's snapshots come after its own answer;
 * - `public/subscribe` refuses private channels, naming their index.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { signWs } from '../../sdk/index.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';
const ORDERS = 'user.orders.future.BTC';
const ORDER_CHANGE = 'order.change.any';

interface Message {
  rid?: number;
  method?: string;
  result?: unknown;
  error?: { message: string; data?: { field?: string } };
  params?: { channel: string; seq: number; snapshot?: true; data: unknown };
}

interface WireOrder {
  orderId: string;
  orderState: string;
  price: string;
  quantity: string;
}

/** A raw socket: `send` writes at once (several in one turn), `call` waits for the answer. */
class RawSocket {
  readonly messages: Message[] = [];
  private nextRid = 1;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.messages.push(JSON.parse(data.toString()) as Message));
  }

  static async open(url: string): Promise<RawSocket> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    return new RawSocket(socket);
  }

  send(method: string, params: unknown): number {
    const rid = this.nextRid++;
    this.socket.send(JSON.stringify({ rid, method, params }));
    return rid;
  }

  async answer(rid: number): Promise<Message> {
    await until(() => this.messages.some((m) => m.rid === rid));
    return this.messages.find((m) => m.rid === rid)!;
  }

  async call(method: string, params: unknown): Promise<unknown> {
    const answer = await this.answer(this.send(method, params));
    if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result;
  }

  pushes(channel: string): NonNullable<Message['params']>[] {
    return this.messages.flatMap((m) =>
      m.method === 'subscription' && m.params?.channel === channel ? [m.params] : [],
    );
  }

  close(): void {
    this.socket.close();
  }
}

describe('WebSocket subscriptions through the service', () => {
  let running: TestService;
  const sockets: RawSocket[] = [];
  before(async () => {
    running = await startTestService();
  });
  after(async () => {
    for (const socket of sockets) socket.close();
    await running.close();
  });

  async function authenticated(): Promise<RawSocket> {
    const socket = await RawSocket.open(running.wsUrl);
    sockets.push(socket);
    const { apiKey, apiSecret } = running.credentials[0]!;
    const timestamp = running.service.core.now();
    const nonce = randomUUID();
    await socket.call('public/auth', {
      apiKey,
      timestamp,
      nonce,
      signature: signWs(apiSecret, String(timestamp), nonce),
    });
    return socket;
  }

  /** The id the next order of the first key gets: order ids count on across the venue. */
  async function nextOrderId(socket: RawSocket): Promise<string> {
    const placed = (await socket.call('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: '40000',
      postOnly: true,
    })) as { order: WireOrder };
    await socket.call('private/cancel', { orderId: placed.order.orderId });
    const [currency, number] = placed.order.orderId.split('-');
    return `${currency}-${Number(number) + 1}`;
  }

  /**
   * On socket A, in one turn: a buy and then `second` on that order; on socket B (same key), in
   * the same turn, a subscribe to both order channels. B's view of the order, snapshot first.
   */
  async function raceSubscribe(second: (orderId: string) => [string, unknown]) {
    const a = await authenticated();
    const b = await authenticated();
    const orderId = await nextOrderId(a);
    const [method, params] = second(orderId);
    const buy = a.send('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: '50000',
      postOnly: true,
    });
    const then = a.send(method, params);
    const subscribe = b.send('private/subscribe', { channels: [ORDERS, ORDER_CHANGE] });
    assert.equal((await a.answer(buy)).error, undefined);
    assert.equal((await a.answer(then)).error, undefined);
    assert.equal((await b.answer(subscribe)).error, undefined);
    // The pushes of A's commands went to B before A was answered: a round trip on B collects them.
    await b.call('public/test', {});
    const view = (channel: string, snapshotOrders: (data: unknown) => WireOrder[]) => {
      const pushes = b.pushes(channel);
      assert.deepEqual(
        pushes.map((p) => p.seq),
        pushes.map((_, i) => i + 1),
        `${channel}: seq counts 1, 2, 3… without a gap`,
      );
      assert.equal(pushes[0]?.snapshot, true, `${channel}: the snapshot comes first`);
      const shown = snapshotOrders(pushes[0]!.data).find((o) => o.orderId === orderId);
      const changes = pushes.slice(1).flatMap((p) => {
        const order = p.data as WireOrder;
        return order.orderId === orderId ? [order] : [];
      });
      return { shown, changes };
    };
    return {
      orders: view(ORDERS, (data) => data as WireOrder[]),
      orderChange: view(ORDER_CHANGE, (data) => (data as { openOrders: WireOrder[] }).openOrders),
    };
  }

  const state = (order: WireOrder | undefined) =>
    order === undefined ? 'absent' : `${order.orderState} ${order.quantity} @ ${order.price}`;

  /** What follows the snapshot is exactly the states after the one it shows: none older, none twice. */
  function assertFollows(channel: string, timeline: string[], shown: string, changes: string[]): void {
    const from = timeline.indexOf(shown);
    assert.ok(from >= 0, `${channel}: the snapshot shows ${shown}, one of ${timeline.join(', ')}`);
    assert.deepEqual(changes, timeline.slice(from + 1), `${channel}: after ${shown}`);
  }

  test('buy then edit while B subscribes: the snapshot shows the edited order and no older state follows', async () => {
    const seen = await raceSubscribe((orderId) => [
      'private/edit',
      { orderId, quantity: '20', price: '50500' },
    ]);
    for (const [channel, { shown, changes }] of Object.entries(seen)) {
      // The race: B's subscribe came after both commands were applied, before they were durable.
      assert.equal(state(shown), 'open 20 @ 50500', `${channel}: the snapshot shows the edit`);
      assertFollows(
        channel,
        ['absent', 'open 10 @ 50000', 'open 20 @ 50500'],
        state(shown),
        changes.map(state),
      );
    }
  });

  test('buy then cancel while B subscribes: the snapshot has no such order and nothing of it follows', async () => {
    const seen = await raceSubscribe((orderId) => ['private/cancel', { orderId }]);
    for (const [channel, { shown, changes }] of Object.entries(seen)) {
      assert.equal(state(shown), 'absent', `${channel}: the cancelled order is not open`);
      assert.deepEqual(changes.map(state), [], `${channel}: the open order it no longer is never comes`);
    }
  });

  test('after the snapshot, later changes still come, once each', async () => {
    const a = await authenticated();
    const b = await authenticated();
    const orderId = await nextOrderId(a);
    const buy = a.send('private/buy', {
      instrumentName: PERP,
      quantity: '10',
      price: '50000',
      postOnly: true,
    });
    const subscribe = b.send('private/subscribe', { channels: [ORDERS, ORDER_CHANGE] });
    await b.answer(subscribe);
    await a.answer(buy);
    await a.call('private/edit', { orderId, quantity: '20', price: '50500' });
    await b.call('public/test', {});
    const snapshots: Record<string, (data: unknown) => WireOrder[]> = {
      [ORDERS]: (data) => data as WireOrder[],
      [ORDER_CHANGE]: (data) => (data as { openOrders: WireOrder[] }).openOrders,
    };
    for (const [channel, ordersOf] of Object.entries(snapshots)) {
      const pushes = b.pushes(channel);
      const shown = ordersOf(pushes[0]!.data).find((o) => o.orderId === orderId);
      const changes = pushes.slice(1).flatMap((p) => {
        const order = p.data as WireOrder;
        return order.orderId === orderId ? [state(order)] : [];
      });
      // Whether the snapshot came before or after the buy, the edit after it is pushed, once.
      assertFollows(channel, ['absent', 'open 10 @ 50000', 'open 20 @ 50500'], state(shown), changes);
      assert.deepEqual(
        pushes.map((p) => p.seq),
        pushes.map((_, i) => i + 1),
      );
    }
    await a.call('private/cancel', { orderId });
  });

  test('several subscribes in one turn: each one answers before its own snapshots', async () => {
    const socket = await authenticated();
    const rids = [
      socket.send('private/subscribe', { channels: [`book.${PERP}`] }),
      socket.send('private/subscribe', { channels: [`ticker.${PERP}`] }),
      socket.send('private/subscribe', { channels: [ORDERS, ORDER_CHANGE] }),
    ];
    await until(() => socket.pushes(ORDER_CHANGE).length === 1 && socket.pushes(ORDERS).length === 1);
    const order = socket.messages.map((m) => (m.rid !== undefined ? `answer ${m.rid}` : m.params!.channel));
    assert.deepEqual(order, [
      `answer ${rids[0]! - 1}`, // public/auth
      `answer ${rids[0]}`,
      `book.${PERP}`,
      `answer ${rids[1]}`,
      `ticker.${PERP}`,
      `answer ${rids[2]}`,
      ORDERS,
      ORDER_CHANGE,
    ]);
  });

  test('public/subscribe refuses a private channel, naming its index, and subscribes none', async () => {
    const socket = await authenticated();
    const rid = socket.send('public/subscribe', { channels: [`book.${PERP}`, ORDERS] });
    const answer = await socket.answer(rid);
    assert.equal(answer.error?.data?.field, 'channels[1]');
    assert.match(answer.error?.message ?? '', /private channel.*private\/subscribe/);
    // An unknown name before it is refused first, as before.
    const unknown = await socket.answer(
      socket.send('public/subscribe', { channels: ['nope', ORDER_CHANGE] }),
    );
    assert.equal(unknown.error?.data?.field, 'channels[0]');
    // Nothing was subscribed; private/subscribe takes the same channels.
    await socket.call('public/test', {});
    assert.equal(socket.pushes(`book.${PERP}`).length, 0);
    assert.deepEqual(await socket.call('public/subscribe', { channels: [`book.${PERP}`] }), [`book.${PERP}`]);
    assert.deepEqual(await socket.call('private/subscribe', { channels: [ORDERS] }), [ORDERS]);
  });
});

test('the service caps subscriptions per connection at WS_MAX_SUBSCRIPTIONS_PER_CONNECTION', async () => {
  const running = await startTestService({ config: { http: { wsMaxSubscriptionsPerConnection: 2 } } });
  const socket = await RawSocket.open(running.wsUrl);
  try {
    assert.deepEqual(
      await socket.call('public/subscribe', { channels: [`book.${PERP}`, `ticker.${PERP}`] }),
      [`book.${PERP}`, `ticker.${PERP}`],
    );
    const refused = await socket.answer(socket.send('public/subscribe', { channels: [`trades.${PERP}`] }));
    assert.equal(refused.error?.data?.field, 'channels');
    assert.match(refused.error?.message ?? '', /limit of 2/);
  } finally {
    socket.close();
    await running.close();
  }
});
