/**
 * Trigger orders and linked orders (OTO, OTOCO, OCO) on the user channels, through the sdk over
 * the real engine (stop 45): `user.orders`, `user.trades` and `user.changes` (by kind and by
 * instrument) while an order waits untriggered, fires, rests, fills, and while a linked
 * secondary is released or cancelled by its partner. On every channel: `seq` runs 1, 2, 3… with
 * no gap, each trade comes once, and each order's last push is what `get_order_state` answers.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import type { WsClient } from '../../sdk/ws-client.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const PERP = 'BTC-PERPETUAL';
const CHANNELS = [
  'user.orders.any.BTC',
  'user.orders.BTC-PERPETUAL',
  'user.trades.future.BTC',
  `user.trades.${PERP}`,
  'user.changes.future.BTC',
  `user.changes.${PERP}`,
];

type Order = Record<string, unknown> & { orderId: string; orderState: string };
type Trade = Record<string, unknown> & { tradeId: string; orderId: string };
interface Changes {
  instrumentName: string;
  orders: Order[];
  trades: Trade[];
  positions: unknown[];
}

/** One account's pushes on the six channels, with the checks every channel must pass. */
class Recorder {
  readonly pushes: SubscriptionPush[] = [];
  constructor(
    readonly ws: WsClient,
    readonly http: HttpClient,
  ) {}

  on(channel: string): SubscriptionPush[] {
    return this.pushes.filter((p) => p.channel === channel);
  }

  /** The last order pushed for `orderId` on `channel` (user.orders or user.changes). */
  lastOrder(channel: string, orderId: string): Order | undefined {
    let last: Order | undefined;
    for (const push of this.on(channel)) {
      if (push.snapshot) continue;
      const orders = channel.startsWith('user.changes')
        ? (push.data as Changes).orders
        : [push.data as Order];
      for (const order of orders) if (order.orderId === orderId) last = order;
    }
    return last;
  }

  /** Every state an order went through on `channel`, in order. */
  states(channel: string, orderId: string): string[] {
    const out: string[] = [];
    for (const push of this.on(channel)) {
      if (push.snapshot) continue;
      const orders = channel.startsWith('user.changes')
        ? (push.data as Changes).orders
        : [push.data as Order];
      for (const order of orders)
        if (order.orderId === orderId) out.push(`${order.orderState}${order.triggered === true ? '+' : ''}`);
    }
    return out;
  }

  tradesOn(channel: string): Trade[] {
    return this.on(channel).flatMap((p) =>
      channel.startsWith('user.changes') ? (p.data as Changes).trades : (p.data as Trade[]),
    );
  }

  /** Waits until the service has pushed what it will (a round trip after the last command). */
  async settle(): Promise<void> {
    await this.ws.call('public/test', {});
  }

  /** seq gap-free from 1 on each channel; each trade once per channel; last pushes = reads. */
  async check(orderIds: readonly string[], tradeIds: readonly string[]): Promise<void> {
    await this.settle();
    for (const channel of CHANNELS) {
      const seqs = this.on(channel).map((p) => p.seq);
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => i + 1),
        `${channel}: seq runs from 1 without a gap`,
      );
    }
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.orders'))) {
      const ids = this.tradesOn(channel).map((t) => t.tradeId);
      assert.deepEqual([...ids].sort(), [...tradeIds].sort(), `${channel}: each trade once`);
    }
    for (const orderId of orderIds) {
      const state = await this.http.call('private/get_order_state', { orderId });
      for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades')))
        assert.deepEqual(
          this.lastOrder(channel, orderId),
          state,
          `${channel}: ${orderId}'s last push is its state`,
        );
    }
    // A trade pushed is the trade as the history keeps it.
    if (tradeIds.length > 0) {
      const history = await this.http.call('private/get_user_trades_by_instrument', {
        instrumentName: PERP,
        count: 100,
      });
      for (const trade of this.tradesOn('user.trades.future.BTC')) {
        const kept = history.trades.find((t) => t.tradeId === trade.tradeId);
        assert.deepEqual(trade, kept, `${trade.tradeId} as history keeps it`);
      }
    }
  }
}

describe('trigger and linked orders on the user channels', () => {
  let harness: Harness;
  let engine: EngineVenue;
  let taker: Recorder;
  let maker: HttpClient;
  let markNow = 60_000;

  /** Moves index and mark (a market command, as the price feed sends). */
  const prices = async (price: number) => {
    markNow = price;
    const result = await engine.submit({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price }],
      markPrices: [
        {
          instrumentName: PERP,
          markPrice: engine.venue.instrument(PERP)!.instrument.parsePrice(String(price)),
        },
      ],
    });
    assert.ok(result.ok);
  };

  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  beforeEach(async () => {
    await harness.http(2).call('private/cancel_all', {});
    await harness.http(3).call('private/cancel_all', {});
    if (markNow !== 60_000) await prices(60_000);
    const ws = harness.ws(2);
    await ws.connect();
    await ws.auth();
    const recorder = new Recorder(ws, harness.http(2));
    await ws.subscribe(CHANNELS, (push) => recorder.pushes.push(push));
    taker = recorder;
    maker = harness.http(3);
  });
  afterEach(() => taker.ws.close());

  test('stop_market: untriggered, then fired by the mark and filled in one command', async () => {
    await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price: '60100',
      postOnly: true,
    });
    const stop = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '50',
      type: 'stop_market',
      trigger: 'mark_price',
      triggerPrice: '60050',
    });
    assert.equal(stop.order.orderState, 'untriggered');
    assert.equal(stop.order.price, 'market_price');
    assert.equal(stop.order.triggered, false);
    await taker.settle();
    const id = stop.order.orderId;
    assert.deepEqual(
      taker.lastOrder('user.orders.any.BTC', id),
      stop.order,
      'the untriggered push is the answer',
    );
    await prices(60_060);
    await taker.settle();
    const state = await taker.http.call('private/get_order_state', { orderId: id });
    assert.deepEqual(
      [state.orderState, state.triggered, state.triggerOrderId, state.orderType, state.filledQuantity],
      ['filled', true, id, 'stop_market', '50'],
    );
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades')))
      assert.deepEqual(taker.states(channel, id), ['untriggered', 'filled+'], channel);
    const trades = taker.tradesOn('user.trades.future.BTC');
    assert.deepEqual(
      trades.map((t) => [t.orderId, t.orderType, t.liquidity, t.price]),
      [[id, 'market', 'T', '60100']],
    );
    await taker.check(
      [id],
      trades.map((t) => t.tradeId),
    );
  });

  test('stop_limit fired by another account’s trade (last_price): rests open and triggered, then fills', async () => {
    const stop = await taker.http.call('private/sell', {
      instrumentName: PERP,
      quantity: '50',
      price: '59800',
      type: 'stop_limit',
      trigger: 'last_price',
      triggerPrice: '59900',
    });
    const id = stop.order.orderId;
    assert.equal(stop.order.price, '59800');
    // Others trade at 59,900: the last price reaches the trigger inside their command.
    await maker.call('private/buy', { instrumentName: PERP, quantity: '10', price: '59900', postOnly: true });
    await harness.http(1).call('private/sell', { instrumentName: PERP, quantity: '10', type: 'market' });
    await taker.settle();
    let state = await taker.http.call('private/get_order_state', { orderId: id });
    assert.deepEqual(
      [state.orderState, state.triggered, state.triggerOrderId, state.orderType],
      ['open', true, id, 'stop_limit'],
    );
    assert.deepEqual(taker.lastOrder('user.orders.any.BTC', id), state, 'the fired order as it rests');
    // A buyer takes it.
    const taken = await maker.call('private/buy', { instrumentName: PERP, quantity: '50', type: 'market' });
    assert.equal(taken.trades.length, 1);
    state = await taker.http.call('private/get_order_state', { orderId: id });
    assert.equal(state.orderState, 'filled');
    await taker.settle();
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades')))
      assert.deepEqual(taker.states(channel, id), ['untriggered', 'open+', 'filled+'], channel);
    const trades = taker.tradesOn('user.trades.future.BTC');
    assert.deepEqual(
      trades.map((t) => [t.orderId, t.orderType, t.liquidity, t.price]),
      [[id, 'limit', 'M', '59800']],
    );
    await taker.check([id], [taken.trades[0]!.tradeId]);
  });

  test('take_limit fired by the mark: part filled as it fires, the rest later', async () => {
    await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '30',
      price: '59950',
      postOnly: true,
    });
    const take = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '50',
      price: '59950',
      type: 'take_limit',
      trigger: 'mark_price',
      triggerPrice: '59900',
    });
    const id = take.order.orderId;
    assert.equal(take.order.orderState, 'untriggered');
    await prices(59_890);
    await taker.settle();
    let state = await taker.http.call('private/get_order_state', { orderId: id });
    assert.deepEqual([state.orderState, state.triggered, state.filledQuantity], ['open', true, '30']);
    await maker.call('private/sell', { instrumentName: PERP, quantity: '20', type: 'market' });
    state = await taker.http.call('private/get_order_state', { orderId: id });
    assert.equal(state.orderState, 'filled');
    await taker.settle();
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades')))
      assert.deepEqual(taker.states(channel, id), ['untriggered', 'open+', 'filled+'], channel);
    const trades = taker.tradesOn('user.trades.future.BTC');
    assert.deepEqual(
      trades.map((t) => [t.liquidity, t.quantity]),
      [
        ['T', '30'],
        ['M', '20'],
      ],
    );
    // The fill as it fired comes in the same user.changes push as the order it filled.
    const fired = taker.on('user.changes.future.BTC').map((p) => p.data as Changes)[1]!;
    assert.deepEqual(
      [fired.orders.map((o) => o.orderState), fired.trades.length, fired.positions.length],
      [['open'], 1, 1],
    );
    await taker.check(
      [id],
      trades.map((t) => t.tradeId),
    );
  });

  test('trailing_stop: each move of its stop is pushed, then it fires and fills', async () => {
    await maker.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '60050',
      postOnly: true,
    });
    const trail = await taker.http.call('private/sell', {
      instrumentName: PERP,
      quantity: '40',
      type: 'trailing_stop',
      trigger: 'mark_price',
      triggerOffset: '100',
    });
    const id = trail.order.orderId;
    assert.deepEqual([trail.order.triggerPrice, trail.order.triggerReferencePrice], ['59900', '59900']);
    await prices(60_200);
    await taker.settle();
    let state = await taker.http.call('private/get_order_state', { orderId: id });
    assert.equal(state.triggerPrice, '60100', 'the stop followed the mark');
    assert.deepEqual(taker.lastOrder('user.orders.any.BTC', id), state, 'the moved stop is pushed');
    await prices(60_090);
    await taker.settle();
    state = await taker.http.call('private/get_order_state', { orderId: id });
    assert.deepEqual([state.orderState, state.triggered, state.filledQuantity], ['filled', true, '40']);
    const trades = taker.tradesOn('user.trades.future.BTC');
    assert.equal(trades.length, 1);
    await taker.check(
      [id],
      trades.map((t) => t.tradeId),
    );
  });

  test('OTOCO: the primary’s fill releases the pair; the stop fires and cancels the take-profit', async () => {
    const entry = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '59950',
      linkedOrderType: 'one_triggers_one_cancels_other',
      otocoConfig: [
        { side: 'sell', quantity: '100', price: '60500' },
        { side: 'sell', quantity: '100', type: 'stop_market', trigger: 'mark_price', triggerPrice: '59500' },
      ],
    });
    const primary = entry.order.orderId;
    const [tp, sl] = entry.order.otoOrderIds!;
    assert.ok(tp && sl);
    await taker.settle();
    for (const id of [tp, sl]) {
      const waiting = taker.lastOrder('user.orders.any.BTC', id)!;
      assert.deepEqual(
        [waiting.orderState, waiting.primaryOrderId, waiting.isSecondaryOto],
        ['untriggered', primary, true],
      );
      assert.deepEqual(waiting, await taker.http.call('private/get_order_state', { orderId: id }));
    }
    // The maker sells into the primary: the pair is released as one OCO group.
    const fill = await maker.call('private/sell', { instrumentName: PERP, quantity: '100', type: 'market' });
    await taker.settle();
    const tpState = await taker.http.call('private/get_order_state', { orderId: tp });
    const slState = await taker.http.call('private/get_order_state', { orderId: sl });
    assert.deepEqual([tpState.orderState, slState.orderState], ['open', 'untriggered']);
    assert.ok(tpState.ocoRef !== undefined && tpState.ocoRef === slState.ocoRef, 'one OCO group');
    assert.deepEqual(taker.lastOrder('user.orders.any.BTC', tp), tpState);
    assert.deepEqual(taker.lastOrder('user.orders.any.BTC', sl), slState);
    // The mark falls through the stop: it sells into the maker's bid; the take-profit is cancelled.
    await maker.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '59400',
      postOnly: true,
    });
    await prices(59_450);
    await taker.settle();
    const after = await taker.http.call('private/get_order_state', { orderId: tp });
    assert.deepEqual([after.orderState, after.cancelReason], ['cancelled', 'oco_other_closed']);
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades'))) {
      assert.deepEqual(taker.states(channel, primary), ['open', 'filled'], `${channel} primary`);
      assert.deepEqual(
        taker.states(channel, tp),
        ['untriggered', 'open', 'cancelled'],
        `${channel} take-profit`,
      );
      assert.deepEqual(
        taker.states(channel, sl),
        ['untriggered', 'untriggered', 'filled+'],
        `${channel} stop`,
      );
    }
    // The stop's fill and the take-profit's cancel are one command: one user.changes push.
    const last = taker.on('user.changes.future.BTC').at(-1)!.data as Changes;
    assert.deepEqual(
      last.orders.map((o) => [o.orderId, o.orderState]).sort(),
      [
        [sl, 'filled'],
        [tp, 'cancelled'],
      ].sort(),
    );
    const trades = taker.tradesOn('user.trades.future.BTC');
    assert.deepEqual(
      trades.map((t) => t.orderId),
      [primary, sl],
    );
    assert.equal(trades[0]!.tradeId, fill.trades[0]!.tradeId);
    await taker.check(
      [primary, tp, sl],
      trades.map((t) => t.tradeId),
    );
  });

  test('OTO: cancelling the primary cancels its waiting secondary', async () => {
    const entry = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '59000',
      linkedOrderType: 'one_triggers_other',
      otocoConfig: [{ side: 'sell', quantity: '100', price: '61000' }],
    });
    const primary = entry.order.orderId;
    const [secondary] = entry.order.otoOrderIds!;
    await taker.http.call('private/cancel', { orderId: primary });
    await taker.settle();
    const state = await taker.http.call('private/get_order_state', { orderId: secondary! });
    assert.deepEqual([state.orderState, state.cancelReason], ['cancelled', 'oto_primary_closed']);
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades'))) {
      assert.deepEqual(taker.states(channel, primary), ['open', 'cancelled'], channel);
      assert.deepEqual(taker.states(channel, secondary!), ['untriggered', 'cancelled'], channel);
    }
    await taker.check([primary, secondary!], []);
  });

  test('OCO placed together: the limit member fills, its stop partner is cancelled in the same command', async () => {
    const placed = await taker.http.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price: '60100',
      linkedOrderType: 'one_cancels_other',
      otocoConfig: [
        { side: 'sell', quantity: '100', type: 'stop_market', trigger: 'mark_price', triggerPrice: '59000' },
      ],
    });
    const limit = placed.order.orderId;
    await taker.settle();
    const members = new Set(
      taker
        .on('user.orders.any.BTC')
        .filter((p) => !p.snapshot)
        .map((p) => (p.data as Order).orderId),
    );
    assert.equal(members.size, 2);
    const stop = [...members].find((id) => id !== limit)!;
    const taken = await maker.call('private/buy', { instrumentName: PERP, quantity: '100', type: 'market' });
    await taker.settle();
    const state = await taker.http.call('private/get_order_state', { orderId: stop });
    assert.deepEqual([state.orderState, state.cancelReason], ['cancelled', 'oco_other_closed']);
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades'))) {
      assert.deepEqual(taker.states(channel, limit), ['open', 'filled'], channel);
      assert.deepEqual(taker.states(channel, stop), ['untriggered', 'cancelled'], channel);
    }
    await taker.check(
      [limit, stop],
      taken.trades.map((t) => t.tradeId),
    );
  });

  test('a reduce-only stop rejected as it fires, and a stop already crossed when placed', async () => {
    // Flat account? Close whatever earlier tests left, so reduce-only has nothing to reduce.
    const position = (await taker.http.call('private/get_positions', {})).find(
      (p) => p.instrumentName === PERP,
    );
    if (position !== undefined && position.size !== '0') {
      const size = position.size.replace('-', '');
      await maker.call(position.direction === 'buy' ? 'private/buy' : 'private/sell', {
        instrumentName: PERP,
        quantity: size,
        price: '60000',
        postOnly: true,
      });
      await taker.http.call(position.direction === 'buy' ? 'private/sell' : 'private/buy', {
        instrumentName: PERP,
        quantity: size,
        type: 'market',
      });
    }
    const reduce = await taker.http.call('private/sell', {
      instrumentName: PERP,
      quantity: '10',
      type: 'stop_market',
      trigger: 'mark_price',
      triggerPrice: '59900',
      reduceOnly: true,
    });
    const rejectedId = reduce.order.orderId;
    await prices(59_800);
    const rejected = await taker.http.call('private/get_order_state', { orderId: rejectedId });
    assert.equal(rejected.orderState, 'rejected');
    // Already crossed: fires within its own command and the answer shows it filled.
    await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '20',
      price: '59850',
      postOnly: true,
    });
    const crossed = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '20',
      type: 'stop_market',
      trigger: 'mark_price',
      triggerPrice: '59700',
    });
    assert.deepEqual([crossed.order.orderState, crossed.order.triggered], ['filled', true]);
    await taker.settle();
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades'))) {
      assert.deepEqual(taker.states(channel, rejectedId), ['untriggered', 'rejected+'], channel);
      // user.orders pushes each change (placed, then fired and filled); user.changes the order
      // as the command left it.
      assert.deepEqual(
        taker.states(channel, crossed.order.orderId),
        channel.startsWith('user.orders') ? ['untriggered', 'filled+'] : ['filled+'],
        channel,
      );
    }
    assert.deepEqual(taker.lastOrder('user.orders.any.BTC', crossed.order.orderId), crossed.order);
    const trades = taker.tradesOn('user.trades.future.BTC');
    const closing = trades.filter((t) => t.orderId !== crossed.order.orderId);
    assert.deepEqual(
      trades.filter((t) => t.orderId === crossed.order.orderId).map((t) => t.tradeId),
      crossed.trades.map((t) => t.tradeId),
    );
    await taker.check(
      [rejectedId, crossed.order.orderId],
      [...closing, ...crossed.trades].map((t) => t.tradeId),
    );
  });

  test('OTOCO incremental: each part fill of the primary releases its own pair, pushed with the primary’s otoOrderIds', async () => {
    const entry = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '59950',
      linkedOrderType: 'one_triggers_one_cancels_other',
      triggerFillCondition: 'incremental',
      otocoConfig: [
        { side: 'sell', quantity: '100', price: '60500' },
        { side: 'sell', quantity: '100', type: 'stop_market', trigger: 'mark_price', triggerPrice: '59500' },
      ],
    });
    const primary = entry.order.orderId;
    const fills = [];
    for (const quantity of ['30', '70'])
      fills.push(await maker.call('private/sell', { instrumentName: PERP, quantity, type: 'market' }));
    await taker.settle();
    const state = await taker.http.call('private/get_order_state', { orderId: primary });
    assert.equal(state.orderState, 'filled');
    const ids = state.otoOrderIds!;
    assert.ok(ids.length > 2, `partial releases listed: ${ids.join(', ')}`);
    const all = new Set<string>([primary, ...ids]);
    for (const push of taker.on('user.orders.any.BTC'))
      if (!push.snapshot) all.add((push.data as Order).orderId);
    await taker.check(
      [...all],
      fills.flatMap((f) => f.trades.map((t) => t.tradeId)),
    );
    await taker.http.call('private/cancel_all', {});
    await taker.check(
      [...all],
      fills.flatMap((f) => f.trades.map((t) => t.tradeId)),
    );
  });

  test('OTOCO whose primary fills as placed: the pair is released in the same command', async () => {
    await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price: '60000',
      postOnly: true,
    });
    const entry = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      type: 'market',
      linkedOrderType: 'one_triggers_one_cancels_other',
      otocoConfig: [
        { side: 'sell', quantity: '100', price: '60500' },
        { side: 'sell', quantity: '100', type: 'stop_market', trigger: 'mark_price', triggerPrice: '59500' },
      ],
    });
    const [tp, sl] = entry.order.otoOrderIds!;
    await taker.settle();
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades'))) {
      const each = channel.startsWith('user.orders');
      assert.deepEqual(taker.states(channel, entry.order.orderId), ['filled'], channel);
      assert.deepEqual(taker.states(channel, tp!), each ? ['untriggered', 'open'] : ['open'], channel);
      assert.deepEqual(
        taker.states(channel, sl!),
        each ? ['untriggered', 'untriggered'] : ['untriggered'],
        channel,
      );
    }
    assert.equal(taker.on('user.changes.future.BTC').length, 1, 'one command, one push');
    // A user cancel of one member cancels its partner.
    await taker.http.call('private/cancel', { orderId: tp! });
    const partner = await taker.http.call('private/get_order_state', { orderId: sl! });
    assert.deepEqual([partner.orderState, partner.cancelReason], ['cancelled', 'oco_other_closed']);
    await taker.check(
      [entry.order.orderId, tp!, sl!],
      entry.trades.map((t) => t.tradeId),
    );
  });

  test('edits of a waiting stop and of an OTOCO primary, then cancel_all: each pushed as get_order_state has it', async () => {
    const stop = await taker.http.call('private/sell', {
      instrumentName: PERP,
      quantity: '10',
      type: 'stop_limit',
      price: '58000',
      trigger: 'index_price',
      triggerPrice: '58100',
    });
    const edited = await taker.http.call('private/edit', {
      orderId: stop.order.orderId,
      quantity: '20',
      price: '58500',
      triggerPrice: '58600',
    });
    assert.deepEqual([edited.order.orderState, edited.order.triggerPrice], ['untriggered', '58600']);
    const entry = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '59000',
      linkedOrderType: 'one_triggers_one_cancels_other',
      otocoConfig: [
        { side: 'sell', quantity: '100', price: '61000' },
        { side: 'sell', quantity: '100', type: 'stop_market', trigger: 'mark_price', triggerPrice: '58000' },
      ],
    });
    const [tp, sl] = entry.order.otoOrderIds!;
    // A waiting secondary changes with its primary only (refused); the primary is edited.
    await taker.http.call('private/edit', { orderId: entry.order.orderId, quantity: '100', price: '59010' });
    const ids = [stop.order.orderId, entry.order.orderId, tp!, sl!];
    await taker.check(ids, []);
    const cancelled = await taker.http.call('private/cancel_all', {});
    assert.equal(cancelled, 4);
    await taker.check(ids, []);
    for (const id of ids)
      assert.equal(taker.lastOrder('user.orders.any.BTC', id)!.orderState, 'cancelled', id);
  });

  test('OTO complete_fill: a part fill releases nothing; the primary cancelled then cancels the waiting secondary', async () => {
    const entry = await taker.http.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '59950',
      linkedOrderType: 'one_triggers_other',
      triggerFillCondition: 'complete_fill',
      otocoConfig: [
        { side: 'sell', quantity: '100', type: 'stop_market', trigger: 'mark_price', triggerPrice: '59000' },
      ],
    });
    const primary = entry.order.orderId;
    const [secondary] = entry.order.otoOrderIds!;
    const part = await maker.call('private/sell', { instrumentName: PERP, quantity: '40', type: 'market' });
    await taker.settle();
    assert.equal(
      (await taker.http.call('private/get_order_state', { orderId: secondary! })).orderState,
      'untriggered',
    );
    await taker.http.call('private/cancel', { orderId: primary });
    const state = await taker.http.call('private/get_order_state', { orderId: secondary! });
    assert.deepEqual([state.orderState, state.cancelReason], ['cancelled', 'oto_primary_closed']);
    for (const channel of CHANNELS.filter((c) => !c.startsWith('user.trades'))) {
      assert.deepEqual(taker.states(channel, primary), ['open', 'open', 'cancelled'], channel);
      assert.deepEqual(taker.states(channel, secondary!), ['untriggered', 'cancelled'], channel);
    }
    await taker.check(
      [primary, secondary!],
      part.trades.map((t) => t.tradeId),
    );
  });
});
