import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  COMBO,
  comboInstruments,
  comboTradeView,
  LONG_LEG,
  SHORT_LEG,
} from '../../test/support/combo-trade.ts';
import type { CoreEvent, PositionView } from '../core/events.ts';
import { VenueError } from '../domain/errors.ts';
import { Instrument } from '../domain/instrument.ts';
import { DEFAULT_PRODUCTS, inverseFutureSpec } from '../market/products.ts';
import type { Principal } from './auth/authenticator.ts';
import { registerBuiltinChannels } from './builtin-channels.ts';
import { ChannelRegistry, Fanout, type Subscriber } from './channels.ts';
import type { ReadPort, TickerView } from './ports.ts';

const PERP = new Instrument(1, inverseFutureSpec(DEFAULT_PRODUCTS.BTC!, null, 'perpetual', 0));

/** A market of one instrument whose prices and book the test moves by hand. */
function market() {
  const state = { now: 1_000, mark: 130_000, index: 65_000.5, bid: 129_990, ask: 130_010, renders: 0 };
  const ticker = (): TickerView => {
    state.renders++;
    return {
      instrumentName: PERP.name,
      timestamp: state.now,
      state: 'open',
      bestBidPrice: state.bid,
      bestBidAmount: 5,
      bestAskPrice: state.ask,
      bestAskAmount: 5,
      lastPrice: null,
      markPrice: state.mark,
      indexPrice: state.index,
    };
  };
  const reads = {
    instrument: (name: string) => (name === PERP.name ? PERP : undefined),
    ticker: (name: string) => (name === PERP.name ? ticker() : undefined),
    orderBook: (name: string) =>
      name === PERP.name
        ? {
            instrumentName: name,
            timestamp: state.now,
            bids: [[state.bid, 5] as const],
            asks: [[state.ask, 5] as const],
          }
        : undefined,
  } as unknown as ReadPort;
  const channels = new ChannelRegistry();
  registerBuiltinChannels(channels, reads);
  const fanout = new Fanout(channels);
  let seq = 0;
  const publish = (events: CoreEvent[] = []) => {
    state.now += 100;
    fanout.publish({ seq: ++seq, ts: state.now, events });
  };
  const subscribe = (subscriber: Subscriber, name: string) =>
    fanout.subscribe(subscriber, name, channels.resolve(name, null)!.resolved);
  return { state, fanout, publish, subscribe, channels };
}

function recorder() {
  const pushes: Array<{ channel: string; seq: number; data: Record<string, unknown> }> = [];
  const subscriber: Subscriber = {
    push: (channel, seq, data) => pushes.push({ channel, seq, data: data as Record<string, unknown> }),
  };
  return { subscriber, pushes };
}

const orderEvent = (): CoreEvent => ({ type: 'order', order: { instrumentName: PERP.name } }) as CoreEvent;

test('the ticker follows index and mark updates, which come as batches without events', () => {
  const m = market();
  const client = recorder();
  m.subscribe(client.subscriber, `ticker.${PERP.name}`);
  m.state.mark = 130_020;
  m.state.index = 65_010.25;
  m.publish();
  assert.deepEqual(
    client.pushes.map((p) => [p.seq, p.data.markPrice, p.data.indexPrice]),
    [
      [1, '65000', '65000.5'],
      [2, '65010', '65010.25'],
    ],
  );
});

test('book and ticker push only what changed, and a new snapshot makes the next change reach everyone', () => {
  const m = market();
  const first = recorder();
  m.subscribe(first.subscriber, `book.${PERP.name}`);
  m.subscribe(first.subscriber, `ticker.${PERP.name}`);
  m.publish([orderEvent()]); // an order event that changed nothing shown
  m.publish(); // a price update that moved nothing
  assert.deepEqual(
    first.pushes.map((p) => [p.channel, p.seq]),
    [
      [`book.${PERP.name}`, 1],
      [`ticker.${PERP.name}`, 1],
    ],
  );
  m.state.bid = 129_995;
  m.publish([orderEvent()]);
  const second = recorder();
  m.state.bid = 129_990; // back to what `first` saw before: the snapshot of `second` differs
  m.subscribe(second.subscriber, `book.${PERP.name}`);
  m.state.bid = 129_995;
  m.publish([orderEvent()]);
  const bids = (pushes: typeof first.pushes) =>
    pushes
      .filter((p) => p.channel === `book.${PERP.name}`)
      .map((p) => [p.seq, (p.data.bids as string[][])[0]![0]]);
  assert.deepEqual(bids(first.pushes), [
    [1, '64995'],
    [2, '64997.5'],
    [3, '64997.5'],
  ]);
  assert.deepEqual(bids(second.pushes), [
    [1, '64995'],
    [2, '64997.5'],
  ]);
});

test('a ticker nobody holds any more is no longer rendered', () => {
  const m = market();
  const client = recorder();
  m.subscribe(client.subscriber, `ticker.${PERP.name}`);
  m.fanout.unsubscribeAll(client.subscriber);
  m.state.mark = 130_040;
  m.publish(); // renders once more, finds no subscriber
  const renders = m.state.renders;
  m.state.mark = 130_060;
  m.publish();
  m.publish();
  assert.equal(client.pushes.length, 1);
  assert.equal(m.state.renders, renders);
});

/** A venue of a listed call spread and its two legs, with accounts 1 and 2 subscribing. */
function comboMarket() {
  const instruments = comboInstruments();
  const lastPrice = new Map<string, number | null>();
  const reads = {
    instrument: (name: string) => instruments.get(name),
    currencies: () => ['BTC'],
    ticker: (name: string): TickerView | undefined =>
      instruments.has(name)
        ? {
            instrumentName: name,
            timestamp: 0,
            state: 'open',
            bestBidPrice: null,
            bestBidAmount: 0,
            bestAskPrice: null,
            bestAskAmount: 0,
            lastPrice: lastPrice.get(name) ?? null,
            markPrice: 100,
            indexPrice: 65_000,
          }
        : undefined,
    valuedPosition: (position: PositionView): PositionView => ({
      ...position,
      markPrice: 300,
      floatingPnl: 4,
    }),
  } as unknown as ReadPort;
  const channels = new ChannelRegistry();
  registerBuiltinChannels(channels, reads);
  const fanout = new Fanout(channels);
  let seq = 0;
  const publish = (ts: number, events: CoreEvent[]) => fanout.publish({ seq: ++seq, ts, events });
  const subscribe = (subscriber: Subscriber, name: string, accountId: number | null) => {
    const principal = accountId === null ? null : ({ defaultAccountId: accountId } as Principal);
    return fanout.subscribe(subscriber, name, channels.resolve(name, principal)!.resolved);
  };
  return { lastPrice, publish, subscribe };
}

test('user.trades: a combo trade goes to the combo kinds with its legs, each leg trade to the leg kinds', () => {
  const m = comboMarket();
  const taker = recorder();
  const maker = recorder();
  const channels = [
    'user.trades.option.BTC',
    'user.trades.option_combo.BTC',
    'user.trades.combo.any',
    'user.trades.any.BTC',
    'user.trades.future.BTC',
  ];
  for (const channel of channels) m.subscribe(taker.subscriber, channel, 1);
  m.subscribe(maker.subscriber, 'user.trades.option.any', 2);
  m.publish(1_000, [{ type: 'trade', trade: comboTradeView({ tradeId: 'BTC-10', taker: 1, maker: 2 }) }]);
  type Wire = {
    tradeId: string;
    liquidity: string;
    comboTradeId?: string;
    legs?: Array<{ tradeId: string }>;
  };
  const pushed = (pushes: typeof taker.pushes, channel: string) =>
    pushes
      .filter((p) => p.channel === channel)
      .flatMap((p) => p.data as unknown as Wire[])
      .map((t) => [
        t.tradeId,
        t.liquidity,
        t.comboTradeId ?? null,
        t.legs?.map((leg) => leg.tradeId) ?? null,
      ]);
  const combo = ['BTC-10', 'T', null, ['BTC-10-L1', 'BTC-10-L2']];
  const legs = [
    ['BTC-10-L1', 'T', 'BTC-10', null],
    ['BTC-10-L2', 'T', 'BTC-10', null],
  ];
  assert.deepEqual(pushed(taker.pushes, 'user.trades.option.BTC'), legs);
  assert.deepEqual(pushed(taker.pushes, 'user.trades.option_combo.BTC'), [combo]);
  assert.deepEqual(pushed(taker.pushes, 'user.trades.combo.any'), [combo]);
  assert.deepEqual(pushed(taker.pushes, 'user.trades.any.BTC'), [combo, ...legs]);
  assert.deepEqual(pushed(taker.pushes, 'user.trades.future.BTC'), []);
  assert.deepEqual(pushed(maker.pushes, 'user.trades.option.any'), [
    ['BTC-10-L1', 'M', 'BTC-10', null],
    ['BTC-10-L2', 'M', 'BTC-10', null],
  ]);
});

test("user.trades.{instrument}: a combo trade on the combo's channel with its legs, each leg trade on its leg's, under Deribit's suffixes", () => {
  const m = comboMarket();
  const taker = recorder();
  const maker = recorder();
  const channels = [`user.trades.${COMBO}.raw`, `user.trades.${LONG_LEG}`, `user.trades.${SHORT_LEG}.100ms`];
  for (const channel of channels) assert.equal(m.subscribe(taker.subscriber, channel, 1), true);
  // Another spelling of a channel held is the same subscription.
  assert.equal(m.subscribe(taker.subscriber, `user.trades.${LONG_LEG}.agg2`, 1), false);
  m.subscribe(maker.subscriber, `user.trades.${SHORT_LEG}.raw`, 2);
  m.publish(1_000, [{ type: 'trade', trade: comboTradeView({ tradeId: 'BTC-10', taker: 1, maker: 2 }) }]);
  const shown = (pushes: typeof taker.pushes) =>
    pushes.map((p) => [
      p.channel,
      p.seq,
      (p.data as unknown as Array<{ tradeId: string; instrumentName: string; liquidity: string }>).map(
        (t) => `${t.tradeId} ${t.instrumentName} ${t.liquidity}`,
      ),
    ]);
  assert.deepEqual(
    shown(taker.pushes).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    [
      [`user.trades.${COMBO}.raw`, 1, [`BTC-10 ${COMBO} T`]],
      [`user.trades.${LONG_LEG}`, 1, [`BTC-10-L1 ${LONG_LEG} T`]],
      [`user.trades.${SHORT_LEG}.100ms`, 1, [`BTC-10-L2 ${SHORT_LEG} T`]],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
  assert.deepEqual(shown(maker.pushes), [[`user.trades.${SHORT_LEG}.raw`, 1, [`BTC-10-L2 ${SHORT_LEG} M`]]]);
});

test("user.changes: a combo trade on the combo's channel with its legs; each leg's trade and position on the leg's", () => {
  const m = comboMarket();
  const taker = recorder();
  const maker = recorder();
  for (const channel of [`user.changes.${COMBO}`, `user.changes.${LONG_LEG}.raw`, 'user.changes.option.BTC'])
    m.subscribe(taker.subscriber, channel, 1);
  m.subscribe(maker.subscriber, 'user.changes.any.any', 2);
  const position = (accountId: number, instrumentName: string, size: number): CoreEvent => ({
    type: 'position',
    position: {
      accountId,
      instrumentName,
      size,
      openCost: size * 300,
      averagePrice: 30,
      realisedPnl: 0,
      settlementCurrency: 'BTC',
    },
  });
  const trade = comboTradeView({ tradeId: 'BTC-10', taker: 1, maker: 2 });
  m.publish(1_000, [
    { type: 'trade', trade },
    position(1, LONG_LEG, 5),
    position(1, LONG_LEG, 10), // the last view of the command is the one shown
    position(1, SHORT_LEG, -10),
    position(2, LONG_LEG, -10),
    position(2, SHORT_LEG, 10),
  ]);
  type Changes = {
    instrumentName: string;
    orders: unknown[];
    trades: Array<{ tradeId: string }>;
    positions: Array<{ size: string; markPrice: string; floatingProfitLoss: string }>;
  };
  const sorted = (rows: unknown[][]) =>
    rows.sort((a, b) => `${a[0]} ${a[1]}`.localeCompare(`${b[0]} ${b[1]}`));
  const shown = (pushes: typeof taker.pushes) =>
    sorted(
      pushes.map((p) => {
        const data = p.data as unknown as Changes;
        return [
          p.channel,
          data.instrumentName,
          data.trades.map((t) => t.tradeId),
          data.positions.map((pos) => pos.size),
        ];
      }),
    );
  // Sizes in the instrument's quantity: 10 lots of a BTC option are 1 BTC.
  assert.deepEqual(
    shown(taker.pushes),
    sorted([
      [`user.changes.${COMBO}`, COMBO, ['BTC-10'], []],
      [`user.changes.${LONG_LEG}.raw`, LONG_LEG, ['BTC-10-L1'], ['1']],
      ['user.changes.option.BTC', LONG_LEG, ['BTC-10-L1'], ['1']],
      ['user.changes.option.BTC', SHORT_LEG, ['BTC-10-L2'], ['-1']],
    ]),
  );
  assert.deepEqual(
    shown(maker.pushes),
    sorted([
      ['user.changes.any.any', COMBO, ['BTC-10'], []],
      ['user.changes.any.any', LONG_LEG, ['BTC-10-L1'], ['-1']],
      ['user.changes.any.any', SHORT_LEG, ['BTC-10-L2'], ['1']],
    ]),
  );
  // The position is valued at the mark when pushed (valuedPosition).
  const long = taker.pushes.find((p) => p.channel === `user.changes.${LONG_LEG}.raw`)!
    .data as unknown as Changes;
  assert.equal(typeof long.positions[0]!.markPrice, 'string');
  assert.notEqual(long.positions[0]!.floatingProfitLoss, null);
});

test("Deribit's interval suffixes: spellings of the channel where the family takes them, refused where its pushes have another shape", () => {
  const { channels } = market();
  const principal = { defaultAccountId: 1 } as Principal;
  const canonical = (name: string) => channels.resolve(name, principal)?.resolved.channel;
  assert.equal(canonical(`book.${PERP.name}.raw`), `book.${PERP.name}`);
  assert.equal(canonical(`ticker.${PERP.name}.100ms`), `ticker.${PERP.name}`);
  assert.equal(canonical(`trades.${PERP.name}.agg2`), `trades.${PERP.name}`);
  assert.equal(canonical(`user.orders.${PERP.name}.raw`), `user.orders.${PERP.name}`);
  assert.throws(
    () => channels.resolve(`user.orders.${PERP.name}.100ms`, principal),
    (error: unknown) =>
      error instanceof VenueError &&
      error.errorName === 'invalid_params' &&
      error.data?.field === 'channels' &&
      error.message.endsWith(`subscribe user.orders.${PERP.name}.raw`),
  );
  // One suffix only, and only an interval Deribit has.
  assert.throws(() => channels.resolve(`book.${PERP.name}.raw.raw`, null), /unknown instrument/);
  assert.throws(() => channels.resolve(`book.${PERP.name}.1s`, null), /unknown instrument/);
  // The user channels need an authenticated connection under any spelling.
  assert.throws(
    () => channels.resolve(`user.orders.${PERP.name}.raw`, null),
    (error: unknown) => error instanceof VenueError && error.errorName === 'authorization_required',
  );
});

test('a currency in another letter case is the same channel: one subscription, pushed under the name first subscribed', () => {
  const m = comboMarket();
  const client = recorder();
  assert.equal(m.subscribe(client.subscriber, 'user.trades.any.btc', 1), true);
  assert.equal(m.subscribe(client.subscriber, 'user.trades.any.BTC', 1), false);
  assert.equal(m.subscribe(client.subscriber, 'user.trades.any.Btc', 1), false);
  assert.equal(m.subscribe(client.subscriber, 'user.trades.option.ANY', 1), true);
  assert.equal(m.subscribe(client.subscriber, 'user.trades.option.any', 1), false);
  m.publish(1_000, [{ type: 'trade', trade: comboTradeView({ tradeId: 'BTC-10', taker: 1, maker: 2 }) }]);
  // The combo trade and its two leg trades, once each (one push: one command), under the names
  // first subscribed.
  const ids = new Map<string, [number, string[]][]>();
  for (const push of client.pushes)
    ids.set(push.channel, [
      ...(ids.get(push.channel) ?? []),
      [push.seq, (push.data as unknown as Array<{ tradeId: string }>).map((t) => t.tradeId)],
    ]);
  assert.deepEqual(Object.fromEntries(ids), {
    'user.trades.any.btc': [[1, ['BTC-10', 'BTC-10-L1', 'BTC-10-L2']]],
    'user.trades.option.ANY': [[1, ['BTC-10-L1', 'BTC-10-L2']]],
  });
});

test('user.trades: a sweep through three levels is one push of its three trades on each channel, in order', () => {
  const m = comboMarket();
  const taker = recorder();
  const maker = recorder();
  for (const channel of ['user.trades.option.BTC', 'user.trades.any.any'])
    m.subscribe(taker.subscriber, channel, 1);
  m.subscribe(maker.subscriber, 'user.trades.any.BTC', 2);
  const fill = (n: number, price: number, makerAccount = 2): CoreEvent => {
    const { comboId: _c, comboTradeId: _t, ...leg } = comboTradeView({ maker: makerAccount }).legs![0]!;
    return { type: 'trade', trade: { ...leg, tradeId: `BTC-${n}`, tradeSeq: n, price } };
  };
  // One command: three makers' levels (two of account 2, one of account 3) and an order event.
  m.publish(1_000, [fill(1, 300), fill(2, 310), fill(3, 320, 3), orderEvent()]);
  m.publish(1_100, [orderEvent()]); // no trade: no push
  m.publish(1_200, [fill(4, 330)]);
  const shown = (pushes: typeof taker.pushes) =>
    pushes.map((p) => [
      p.channel,
      p.seq,
      (p.data as unknown as Array<{ tradeId: string }>).map((t) => t.tradeId),
    ]);
  assert.deepEqual(shown(taker.pushes), [
    ['user.trades.option.BTC', 1, ['BTC-1', 'BTC-2', 'BTC-3']],
    ['user.trades.any.any', 1, ['BTC-1', 'BTC-2', 'BTC-3']],
    ['user.trades.option.BTC', 2, ['BTC-4']],
    ['user.trades.any.any', 2, ['BTC-4']],
  ]);
  assert.deepEqual(shown(maker.pushes), [
    ['user.trades.any.BTC', 1, ['BTC-1', 'BTC-2']],
    ['user.trades.any.BTC', 2, ['BTC-4']],
  ]);
});

test('the user channels name their canonical form: the currency upper case, or any', () => {
  const reads = { currencies: () => ['BTC', 'USDC'] } as unknown as ReadPort;
  const channels = new ChannelRegistry();
  registerBuiltinChannels(channels, reads);
  const principal = { defaultAccountId: 1 } as Principal;
  const canonical = (name: string) => channels.resolve(name, principal)?.resolved.channel;
  assert.equal(canonical('user.orders.future.btc'), 'user.orders.future.BTC');
  assert.equal(canonical('user.orders.future.uSdC'), 'user.orders.future.USDC');
  assert.equal(canonical('user.trades.option.ANY'), 'user.trades.option.any');
  assert.equal(canonical('user.trades.option.any'), 'user.trades.option.any');
  // Kinds and instrument names are matched exactly: another case is no channel, or no instrument.
  assert.equal(channels.resolve('user.orders.FUTURE.BTC', principal), null);
  // A kind the venue does not have (a perpetual is a future) is no channel, in a listed currency too.
  assert.equal(channels.resolve('user.orders.perpetual.BTC', principal), null);
  assert.equal(channels.resolve('user.trades.perpetual.any', principal), null);
});

test("a combo trade re-renders its legs' tickers (their trades count there)", () => {
  const m = comboMarket();
  const client = recorder();
  m.subscribe(client.subscriber, `ticker.${LONG_LEG}`, null);
  m.subscribe(client.subscriber, `ticker.${SHORT_LEG}`, null);
  m.publish(1_000, [{ type: 'order', order: { instrumentName: COMBO } } as CoreEvent]); // the price check
  m.lastPrice.set(LONG_LEG, 300);
  m.lastPrice.set(SHORT_LEG, 250);
  m.publish(1_100, [{ type: 'trade', trade: comboTradeView() }]);
  assert.deepEqual(
    client.pushes.filter((p) => p.seq > 1).map((p) => [p.channel, p.data.lastPrice]),
    [
      [`ticker.${LONG_LEG}`, '0.03'],
      [`ticker.${SHORT_LEG}`, '0.025'],
    ],
  );
});

test('a self-trade reaches its account once per channel, both sides in the one push', () => {
  const m = comboMarket();
  const client = recorder();
  m.subscribe(client.subscriber, 'user.trades.option_combo.BTC', 1);
  m.publish(1_000, [{ type: 'trade', trade: comboTradeView({ tradeId: 'BTC-10', taker: 1, maker: 1 }) }]);
  assert.deepEqual(
    client.pushes.map((p) => [
      p.seq,
      (p.data as unknown as Array<{ tradeId: string; liquidity: string }>).map((t) => [
        t.tradeId,
        t.liquidity,
      ]),
    ]),
    [
      [
        1,
        [
          ['BTC-10', 'T'],
          ['BTC-10', 'M'],
        ],
      ],
    ],
  );
});

test("trades.{leg}: a combo trade's leg trade is on its leg's public tape", () => {
  const m = comboMarket();
  const client = recorder();
  m.subscribe(client.subscriber, `trades.${LONG_LEG}`, null);
  m.subscribe(client.subscriber, `trades.${COMBO}`, null);
  m.publish(1_000, [{ type: 'trade', trade: comboTradeView({ tradeId: 'BTC-10' }) }]);
  const tape = (channel: string) =>
    client.pushes
      .filter((p) => p.channel === channel)
      .map((p) => (p.data as unknown as Array<{ tradeId: string }>).map((t) => t.tradeId));
  assert.deepEqual(tape(`trades.${COMBO}`), [['BTC-10']]);
  assert.deepEqual(tape(`trades.${LONG_LEG}`), [['BTC-10-L1']]);
});

test('the ticker is compared with the prices at least once a second while every batch has events', () => {
  const m = market();
  const client = recorder();
  m.subscribe(client.subscriber, `ticker.${PERP.name}`);
  // Events of an instrument nobody watches: they touch no ticker, only the price check does.
  const elsewhere = (): CoreEvent =>
    ({ type: 'order', order: { instrumentName: 'ETH-PERPETUAL' } }) as CoreEvent;
  m.state.mark = 130_020;
  m.publish([elsewhere()]); // ts 1100: the first price check
  m.state.mark = 130_040;
  for (let i = 0; i < 9; i++) m.publish([elsewhere()]); // ts 1200 … 2000: within the second
  assert.equal(client.pushes.length, 2, 'no second price check within a second of the first');
  m.publish([elsewhere()]); // ts 2100: a second on
  assert.deepEqual(
    client.pushes.map((p) => [p.seq, p.data.markPrice]),
    [
      [1, '65000'],
      [2, '65010'],
      [3, '65020'],
    ],
  );
});

test('a channel of an instrument not listed is refused naming channels; a combo id says how to list it', () => {
  const { channels } = market();
  for (const prefix of ['book', 'ticker', 'trades']) {
    assert.throws(
      () => channels.resolve(`${prefix}.BTC-NOPE`, null),
      (error: unknown) =>
        error instanceof VenueError &&
        error.errorName === 'invalid_instrument' &&
        error.data?.field === 'channels' &&
        error.message === `unknown instrument in ${prefix}.BTC-NOPE`,
    );
    const combo = `${prefix}.BTC-FS-18DEC26_PERP`;
    assert.throws(
      () => channels.resolve(combo, null),
      (error: unknown) =>
        error instanceof VenueError &&
        error.errorName === 'invalid_instrument' &&
        error.data?.field === 'channels' &&
        /combo BTC-FS-18DEC26_PERP .* is not listed yet: a signed request/.test(error.message),
      combo,
    );
  }
});

test("Deribit's grouped book: book.{instrument}.none.{depth} shows that many levels and pushes when they change", () => {
  const levels = { bids: [100, 99, 98], asks: [101, 102, 103] };
  const reads = {
    instrument: (name: string) => (name === PERP.name ? PERP : undefined),
    orderBook: (name: string, depth: number) =>
      name === PERP.name
        ? {
            instrumentName: name,
            timestamp: 0,
            bids: levels.bids.slice(0, depth).map((price) => [price * 1_000, 5] as const),
            asks: levels.asks.slice(0, depth).map((price) => [price * 1_000, 5] as const),
          }
        : undefined,
  } as unknown as ReadPort;
  const channels = new ChannelRegistry();
  registerBuiltinChannels(channels, reads);
  const fanout = new Fanout(channels);
  const client = recorder();
  const subscribe = (name: string) =>
    fanout.subscribe(client.subscriber, name, channels.resolve(name, null)!.resolved);
  subscribe(`book.${PERP.name}.none.1.100ms`);
  subscribe(`book.${PERP.name}`);
  const sides = (push: (typeof client.pushes)[number]) => {
    const data = push.data as unknown as { bids: unknown[]; asks: unknown[] };
    return [push.channel, push.seq, data.bids.length, data.asks.length];
  };
  let seq = 0;
  const touch = () =>
    fanout.publish({
      seq: ++seq,
      ts: 1,
      events: [{ type: 'order', order: { instrumentName: PERP.name } } as CoreEvent],
    });
  levels.bids[2] = 97; // below the first level: the full book only
  touch();
  levels.bids[0] = 100.5; // the best bid: both
  touch();
  assert.deepEqual(client.pushes.map(sides), [
    [`book.${PERP.name}.none.1.100ms`, 1, 1, 1],
    [`book.${PERP.name}`, 1, 3, 3],
    [`book.${PERP.name}`, 2, 3, 3],
    [`book.${PERP.name}.none.1.100ms`, 2, 1, 1],
    [`book.${PERP.name}`, 3, 3, 3],
  ]);
  const refused = (name: string) => {
    try {
      channels.resolve(name, null);
      return null;
    } catch (error) {
      return error instanceof VenueError ? [error.errorName, error.data?.field] : String(error);
    }
  };
  assert.deepEqual(refused(`book.${PERP.name}.none.5`), ['invalid_params', 'channels']);
  assert.deepEqual(refused(`book.${PERP.name}.0.1.10`), ['invalid_instrument', 'channels']);
  assert.deepEqual(refused(`book.${PERP.name}.1.10`), ['invalid_params', 'channels']);
  assert.deepEqual(refused(`ticker.${PERP.name}.none.10`), ['invalid_instrument', 'channels']);
  assert.equal(refused(`book.${PERP.name}.none.20.agg2`), null);
});
