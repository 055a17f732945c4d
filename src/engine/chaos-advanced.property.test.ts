/**
 * Chaos over trigger and linked orders: random sessions on an inverse perpetual (marked from the
 * start) and a linear one (no mark, so no price band, until a mark step gives it one) of
 * stop/take limit and market orders on the mark, the index and the last price, trailing stops,
 * OTO/OCO/OTOCO groups (first_hit, complete_fill, incremental) whose members may themselves be
 * trigger, market or market_limit orders, plain limit and market orders (post-only, reduce-only,
 * every time in force), edits of resting and waiting orders, cancels, cancel-alls (some by order
 * type), mark and index moves, prints that move the last price, and waits past the session end,
 * from accounts with modest funds, so refusals and rejections at activation are common.
 *
 * Properties: the core never throws, `validate` holds after every command, and the funds check
 * holds: no command takes an account with funds available (≥ 0) below zero, except for
 *
 * - makers that trade at a loss against the mark (`lostAgainstMark`, as in
 *   chaos.property.test.ts): a resting order reserves the loss against the mark of its placing,
 *   and a later mark move does not touch it;
 * - what a price update does by itself. A price update moves equity and margins, not reserves, so
 *   it may take funds below zero; but it also fires trigger orders, and what those do when they
 *   go live (and the linked secondaries their fills release) is the orders' own doing, checked at
 *   activation as placing checks. So an account that a price update takes below zero is excused
 *   only when the same update alone takes it there: the session is replayed into a fresh venue
 *   up to the update, its trigger book emptied (the only orders a price update can send to the
 *   market: OTO templates go out only on their primary's fills, which only activations make here),
 *   and the update run there. If the account stays at or above zero in that replay, the
 *   activations took it below and the property fails (the makers excused above aside).
 *
 * Commands that are not price updates fire triggers too (a print moves the last price, a fill
 * releases secondaries): everything such a command makes happen is its own, with no excuse beyond
 * those above. Trades are read from the command's events, so those of activations count.
 *
 * CHAOS_RUNS (default 300 per property, about 3 s) and CHAOS_SEED as in chaos.property.test.ts.
 * A counterexample can be replayed with its trace from a scratch test: `fundsSession(steps, true)`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { CoreCommand, OtocoOrderConfig, UnstampedCommand } from '../core/commands.ts';
import type { CommandResult, TradeView } from '../core/events.ts';
import type { OrderType, TriggerKind } from '../core/types.ts';
import type { VenueState } from './state.ts';
import { Harness, linearPerpetualSpec, orderCommand, perpetualSpec, restoreStored } from './testkit.ts';
import { Venue } from './venue.ts';

const PERP = 'BTC-PERPETUAL';
const LINEAR = 'BTC_USDC-PERPETUAL';
/** Reference prices in ticks, the ticks a price step moves, and the most lots an order takes. */
const TRADED = [
  { name: PERP, ref: 120_010, step: 4, maxLots: 400 },
  { name: LINEAR, ref: 120_010, step: 4, maxLots: 100 },
] as const;
const ACCOUNTS = [1, 2, 3];
const FUNDS: Record<number, Record<string, number>> = {
  1: { BTC: 150_000, USDC: 300_000_000 },
  2: { BTC: 600_000, USDC: 1_200_000_000 },
  3: { BTC: 3_000_000, USDC: 6_000_000_000 },
};
const CURRENCIES = ['BTC', 'USDC'];
const INDEX = 60_005;
const HOUR = 3_600_000;

type Tif = 'good_til_cancelled' | 'good_til_day' | 'immediate_or_cancel' | 'fill_or_kill';
type TriggerType = 'stop_limit' | 'stop_market' | 'take_limit' | 'take_market' | 'trailing_stop';

interface Secondary {
  side: 'buy' | 'sell';
  lots: number;
  type: OrderType;
  away: number;
  trigger: TriggerKind;
  triggerAway: number;
  offset: number;
  tif: Tif;
  postOnly: boolean;
  rejectPostOnly: boolean;
  reduceOnly: boolean;
}

export type Step =
  | {
      kind: 'place';
      account: number;
      at: number;
      side: 'buy' | 'sell';
      lots: number;
      away: number;
      market: boolean;
      /** Far from the market: a buy at a tenth of it, a sell at twice it (deep levels, big reserves). */
      far: boolean;
      /** On the side that reduces the account's position, at most its size (when it has one). */
      fit: boolean;
      postOnly: boolean;
      rejectPostOnly: boolean;
      reduceOnly: boolean;
      tif: Tif;
    }
  | {
      kind: 'trigger';
      account: number;
      at: number;
      side: 'buy' | 'sell';
      lots: number;
      type: TriggerType;
      trigger: TriggerKind;
      away: number;
      /** A limit price far outside the band (clamped when it goes live). */
      far: boolean;
      triggerAway: number;
      offset: number;
      reduceOnly: boolean;
      /** Closes the account's position (a stop loss or take profit): its side and size. */
      closing: boolean;
      tif: Tif;
    }
  | {
      kind: 'linked';
      account: number;
      at: number;
      link: 'one_triggers_other' | 'one_cancels_other' | 'one_triggers_one_cancels_other';
      condition: 'first_hit' | 'complete_fill' | 'incremental';
      side: 'buy' | 'sell';
      lots: number;
      primaryType: OrderType;
      away: number;
      trigger: TriggerKind;
      triggerAway: number;
      tif: Tif;
      postOnly: boolean;
      reduceOnly: boolean;
      secondaries: Secondary[];
    }
  | {
      kind: 'edit';
      account: number;
      pick: number;
      lots: number;
      away: number;
      triggerAway: number;
      offset: number;
      postOnly: boolean;
      reduceOnly: boolean | null;
    }
  | { kind: 'cancel'; account: number; pick: number }
  | { kind: 'cancel_all'; account: number; filter: 'all' | 'limit' | 'trigger_all' | 'instrument' }
  | { kind: 'mark'; linear: boolean; away: number }
  | { kind: 'index'; away: number }
  | { kind: 'print'; at: number; seller: number; buyer: number; lots: number; away: number }
  | { kind: 'wait'; hours: number };

const account = fc.constantFrom(...ACCOUNTS);
const chance = (percent: number) => fc.integer({ min: 0, max: 99 }).map((n) => n < percent);
const at = fc.nat(TRADED.length - 1);
const away = fc.integer({ min: -60, max: 60 });
const side = fc.constantFrom('buy' as const, 'sell' as const);
const triggerKind = fc.constantFrom<TriggerKind>('mark_price', 'index_price', 'last_price');
const fraction = fc.integer({ min: 1, max: 100 });
/** Mostly a few lots (orders that fit the position and the funds), sometimes many. */
const lots = fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 1000 }));
const restingTif = fc.constantFrom<Tif>(
  'good_til_cancelled',
  'good_til_cancelled',
  'good_til_cancelled',
  'good_til_day',
  'immediate_or_cancel',
);
const anyTif = fc.constantFrom<Tif>(
  'good_til_cancelled',
  'good_til_cancelled',
  'good_til_day',
  'immediate_or_cancel',
  'fill_or_kill',
);
const triggerType = fc.constantFrom<TriggerType>(
  'stop_limit',
  'stop_market',
  'take_limit',
  'take_market',
  'trailing_stop',
);
const secondary: fc.Arbitrary<Secondary> = fc.record({
  side,
  lots,
  type: fc.constantFrom<OrderType>(
    'limit',
    'limit',
    'limit',
    'market',
    'market_limit',
    'stop_limit',
    'stop_market',
    'take_limit',
    'take_market',
    'trailing_stop',
  ),
  away,
  trigger: triggerKind,
  triggerAway: away,
  offset: fc.integer({ min: 1, max: 40 }),
  tif: restingTif,
  postOnly: chance(25),
  rejectPostOnly: fc.boolean(),
  reduceOnly: chance(20),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('place' as const),
      account,
      at,
      side,
      lots,
      away,
      market: chance(20),
      far: chance(20),
      fit: chance(30),
      postOnly: chance(20),
      rejectPostOnly: fc.boolean(),
      reduceOnly: chance(15),
      tif: anyTif,
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('trigger' as const),
      account,
      at,
      side,
      lots,
      type: triggerType,
      trigger: triggerKind,
      away,
      far: chance(10),
      triggerAway: away,
      offset: fc.integer({ min: 1, max: 40 }),
      reduceOnly: chance(20),
      closing: chance(40),
      tif: restingTif,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('linked' as const),
      account,
      at,
      link: fc.constantFrom(
        'one_triggers_other' as const,
        'one_cancels_other' as const,
        'one_triggers_one_cancels_other' as const,
      ),
      condition: fc.constantFrom('first_hit' as const, 'complete_fill' as const, 'incremental' as const),
      side,
      lots,
      primaryType: fc.constantFrom<OrderType>(
        'limit',
        'limit',
        'limit',
        'market',
        'stop_limit',
        'take_limit',
      ),
      away,
      trigger: triggerKind,
      triggerAway: away,
      tif: restingTif,
      postOnly: chance(15),
      reduceOnly: chance(10),
      secondaries: fc.array(secondary, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('edit' as const),
      account,
      pick: fc.nat(),
      lots: fraction,
      away,
      triggerAway: away,
      offset: fc.integer({ min: 1, max: 40 }),
      postOnly: chance(15),
      reduceOnly: fc.constantFrom(null, null, true, false),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), account, pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('cancel_all' as const),
      account,
      filter: fc.constantFrom(
        'all' as const,
        'limit' as const,
        'trigger_all' as const,
        'instrument' as const,
      ),
    }),
  },
  // The linear perpetual is marked rarely: it spends much of a session with no band.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('mark' as const), linear: chance(15), away }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('index' as const), away }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('print' as const),
      at,
      seller: account,
      buyer: account,
      lots: fc.integer({ min: 1, max: 5 }),
      away,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('wait' as const), hours: fc.integer({ min: 1, max: 30 }) }),
  },
);

/** A harness that keeps every command it ran, for the price-update replays. */
class LoggingHarness extends Harness {
  readonly log: CoreCommand[] = [];

  constructor() {
    super();
    const original = this.venue.execute.bind(this.venue);
    this.venue.execute = (command) => {
      this.log.push(structuredClone(command));
      return original(command);
    };
  }
}

function venue(): LoggingHarness {
  const h = new LoggingHarness();
  h.list(perpetualSpec());
  h.list(linearPerpetualSpec());
  for (const id of ACCOUNTS) h.account(id, FUNDS[id]);
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: INDEX }],
    markPrices: [{ instrumentName: PERP, markPrice: TRADED[0].ref }],
  });
  return h;
}

/** Where an instrument trades now: its mark, else its last price, else its reference. */
function base(h: Harness, at: number): number {
  const traded = TRADED[at]!;
  const info = h.venue.instrument(traded.name)!;
  return info.markPrice ?? info.lastPrice ?? traded.ref;
}

function scaled(at: number, lots: number): number {
  return 1 + ((lots - 1) % TRADED[at]!.maxLots);
}

/**
 * The side and lots of an order of `account` that reduces its position: `lots` at most the
 * position's size (all of it when `whole`); null when it has none.
 */
function reducing(
  h: Harness,
  accountId: number,
  at: number,
  lots: number,
  whole: boolean,
): { side: 'buy' | 'sell'; lots: number } | null {
  const size = h.venue.position(accountId, TRADED[at]!.name)?.size ?? 0;
  if (size === 0) return null;
  const most = Math.abs(size);
  return { side: size > 0 ? 'sell' : 'buy', lots: whole ? most : 1 + ((lots - 1) % most) };
}

const isTrigger = (type: OrderType) =>
  type === 'stop_limit' ||
  type === 'stop_market' ||
  type === 'take_limit' ||
  type === 'take_market' ||
  type === 'trailing_stop';
const hasPrice = (type: OrderType) => type === 'limit' || type === 'stop_limit' || type === 'take_limit';

function commands(h: Harness, s: Step): UnstampedCommand[] {
  switch (s.kind) {
    case 'place': {
      const traded = TRADED[s.at]!;
      const now = base(h, s.at);
      const fit = s.fit ? reducing(h, s.account, s.at, s.lots, false) : null;
      const side = fit?.side ?? s.side;
      const near = s.far ? (side === 'buy' ? Math.floor(now / 25) : now * 2) : now;
      const price = Math.max(1, near + s.away * traded.step);
      return [
        orderCommand(s.account, side, fit?.lots ?? scaled(s.at, s.lots), s.market ? null : price, {
          instrumentName: traded.name,
          postOnly: !s.market && s.postOnly,
          rejectPostOnly: !s.market && s.postOnly && s.rejectPostOnly,
          reduceOnly: s.reduceOnly,
          timeInForce: s.postOnly && !s.market ? 'good_til_cancelled' : s.tif,
        }),
      ];
    }
    case 'trigger': {
      const traded = TRADED[s.at]!;
      const now = base(h, s.at);
      const closing = s.closing ? reducing(h, s.account, s.at, s.lots, true) : null;
      const side = closing?.side ?? s.side;
      const limit = s.far ? (side === 'buy' ? now * 2 : Math.max(1, Math.floor(now / 10))) : now;
      return [
        orderCommand(s.account, side, closing?.lots ?? scaled(s.at, s.lots), null, {
          instrumentName: traded.name,
          orderType: s.type,
          price: hasPrice(s.type) ? Math.max(1, limit + s.away * traded.step) : null,
          trigger: s.trigger,
          triggerPrice: s.type === 'trailing_stop' ? null : Math.max(1, now + s.triggerAway * traded.step),
          triggerOffset: s.type === 'trailing_stop' ? s.offset * traded.step : null,
          reduceOnly: s.reduceOnly,
          timeInForce: s.tif,
        }),
      ];
    }
    case 'linked': {
      const traded = TRADED[s.at]!;
      const now = base(h, s.at);
      const amount = scaled(s.at, s.lots);
      const trigger = isTrigger(s.primaryType);
      const config: OtocoOrderConfig[] = s.secondaries.map((c) => ({
        side: c.side,
        amount: 1 + ((c.lots - 1) % amount),
        orderType: c.type,
        price: hasPrice(c.type) ? Math.max(1, now + c.away * traded.step) : null,
        timeInForce: c.type === 'market' && c.tif === 'good_til_day' ? 'immediate_or_cancel' : c.tif,
        postOnly: c.postOnly,
        rejectPostOnly: c.postOnly && c.rejectPostOnly,
        reduceOnly: c.reduceOnly,
        ...(isTrigger(c.type)
          ? {
              trigger: c.trigger,
              ...(c.type === 'trailing_stop'
                ? { triggerOffset: c.offset * traded.step }
                : { triggerPrice: Math.max(1, now + c.triggerAway * traded.step) }),
            }
          : {}),
      }));
      const market = s.primaryType === 'market';
      return [
        orderCommand(s.account, s.side, amount, market ? null : Math.max(1, now + s.away * traded.step), {
          instrumentName: traded.name,
          orderType: s.primaryType,
          linkedOrderType: s.link,
          triggerFillCondition: s.condition,
          otocoConfig: config,
          postOnly: !market && !trigger && s.postOnly,
          reduceOnly: s.reduceOnly,
          timeInForce: market && s.tif === 'good_til_day' ? 'immediate_or_cancel' : s.tif,
          ...(trigger
            ? { trigger: s.trigger, triggerPrice: Math.max(1, now + s.triggerAway * traded.step) }
            : {}),
        }),
      ];
    }
    case 'edit': {
      const open = h.venue.openOrders({ accountId: s.account });
      const order = open[s.pick % Math.max(1, open.length)];
      if (order === undefined) return [];
      const at = TRADED.findIndex((t) => t.name === order.instrumentName);
      const traded = TRADED[at]!;
      const now = base(h, at);
      const amount = 1 + ((s.lots * Math.max(order.amount, 10)) % (2 * traded.maxLots));
      const priced = order.price !== null && hasPrice(order.orderType);
      return [
        {
          type: 'edit_order',
          accountId: s.account,
          orderId: order.orderId,
          amount,
          ...(priced ? { price: Math.max(1, order.price! + s.away * traded.step) } : {}),
          ...(order.orderType === 'trailing_stop' ? { triggerOffset: s.offset * traded.step } : {}),
          ...(order.triggerPrice !== null && order.orderType !== 'trailing_stop'
            ? { triggerPrice: Math.max(1, now + s.triggerAway * traded.step) }
            : {}),
          ...(s.postOnly ? { postOnly: true } : {}),
          ...(s.reduceOnly === null ? {} : { reduceOnly: s.reduceOnly }),
        },
      ];
    }
    case 'cancel': {
      const open = h.venue.openOrders({ accountId: s.account });
      const order = open[s.pick % Math.max(1, open.length)];
      return order === undefined
        ? []
        : [{ type: 'cancel_order', accountId: s.account, orderId: order.orderId }];
    }
    case 'cancel_all':
      return [
        {
          type: 'cancel_all',
          accountId: s.account,
          ...(s.filter === 'instrument'
            ? { instrumentName: PERP }
            : s.filter === 'all'
              ? {}
              : { orderType: s.filter }),
        },
      ];
    case 'mark': {
      const traded = TRADED[s.linear ? 1 : 0]!;
      return [
        {
          type: 'update_prices',
          markPrices: [{ instrumentName: traded.name, markPrice: traded.ref + s.away * traded.step }],
        },
      ];
    }
    case 'index':
      return [{ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: INDEX + s.away * 1.25 }] }];
    case 'print': {
      if (s.seller === s.buyer) return [];
      const traded = TRADED[s.at]!;
      const price = Math.max(1, base(h, s.at) + s.away * traded.step);
      return [
        orderCommand(s.seller, 'sell', s.lots, price, { instrumentName: traded.name }),
        orderCommand(s.buyer, 'buy', s.lots, price, {
          instrumentName: traded.name,
          timeInForce: 'immediate_or_cancel',
        }),
      ];
    }
    case 'wait':
      h.ts += s.hours * HOUR;
      return [];
  }
}

const sessions = fc.array(step, { minLength: 1, maxLength: 100, size: 'max' });
const runs = { numRuns: Number(process.env.CHAOS_RUNS ?? 300) };
const options = () => ({
  ...runs,
  seed: process.env.CHAOS_SEED ? Number(process.env.CHAOS_SEED) : undefined,
  includeErrorInReport: true,
});

test('property: random sessions of trigger and linked orders never make the core throw, and the venue stays valid', () => {
  fc.assert(
    fc.property(sessions, (steps) => {
      const h = venue();
      for (const [i, s] of steps.entries()) {
        for (const next of commands(h, s)) {
          h.ts += 10;
          assert.doesNotThrow(() => h.run(next), `step ${i}: ${JSON.stringify(s)}`);
          h.venue.validate();
        }
      }
    }),
    options(),
  );
});

/** Makers of a trade at a loss against its mark (see the header; chaos.property.test.ts). */
function lostAgainstMark(trades: readonly TradeView[]): Set<number> {
  const lost = new Set<number>();
  for (const trade of trades) {
    const mark = trade.markPrice;
    if (mark === null) continue;
    const maker = trade.maker;
    if (maker.side === 'sell' ? trade.price < mark : trade.price > mark) lost.add(maker.accountId);
  }
  return lost;
}

function tradesOf(result: CommandResult): TradeView[] {
  return result.events.flatMap((e) => (e.type === 'trade' ? [e.trade] : []));
}

type Funds = Map<string, number>;
const key = (id: number, currency: string) => `${id}:${currency}`;

function fundsOf(v: Venue): Funds {
  const funds: Funds = new Map();
  for (const id of ACCOUNTS)
    for (const currency of CURRENCIES)
      funds.set(key(id, currency), v.accountSummary(id, currency)!.availableFunds);
  return funds;
}

/**
 * Funds after `update` alone: the session replayed into a fresh venue up to it, the trigger
 * book emptied (test-only access to the venue's state), then the update.
 */
function fundsAfterPricesAlone(log: readonly CoreCommand[], update: CoreCommand): Funds {
  const replay = Venue.create();
  for (const command of log) replay.execute(command);
  const state = (replay as unknown as { state: VenueState }).state;
  for (const order of [...state.advanced.untriggered.values()]) state.advanced.removeUntriggered(order);
  replay.execute(update);
  return fundsOf(replay);
}

/**
 * One session of the funds property; `trace` prints each command, its answer and the funds
 * (for replaying a counterexample from a scratch script).
 */
export function fundsSession(steps: readonly Step[], trace = false): void {
  const h = venue();
  for (const [i, s] of steps.entries()) {
    for (const next of commands(h, s)) {
      h.ts += 10;
      const before = fundsOf(h.venue);
      const logged = h.log.length;
      const result = h.run(next);
      const after = fundsOf(h.venue);
      if (trace) {
        console.log(`step ${i}`, JSON.stringify(next));
        for (const e of result.events) console.log('  ', JSON.stringify(e).slice(0, 600));
        console.log('  funds', JSON.stringify([...after]));
      }
      const fell = [...before].filter(([k, v]) => v >= 0 && after.get(k)! < 0).map(([k]) => k);
      if (fell.length === 0) continue;
      const trades = tradesOf(result);
      const excused = lostAgainstMark(trades);
      const alone =
        next.type === 'update_prices' ? fundsAfterPricesAlone(h.log.slice(0, logged), h.log[logged]!) : null;
      for (const k of fell) {
        const id = Number(k.split(':')[0]);
        if (excused.has(id)) continue;
        if (alone !== null && alone.get(k)! < 0) continue;
        assert.fail(
          `step ${i} (${JSON.stringify(s)}): ${k} had ${before.get(k)} available, now ${after.get(k)}` +
            (alone === null ? '' : ` (${alone.get(k)} after the price update alone)`),
        );
      }
    }
  }
}

test('property: a venue restored from a snapshot mid-session answers every later command as the live one does', () => {
  fc.assert(
    fc.property(sessions, fc.nat(), (steps, cut) => {
      const h = venue();
      let restored: Venue | null = null;
      for (const [i, s] of steps.entries()) {
        for (const next of commands(h, s)) {
          h.ts += 10;
          const live = h.run(next);
          if (restored !== null)
            assert.deepEqual(restored.execute(h.log.at(-1)!), live, `step ${i}: ${JSON.stringify(s)}`);
        }
        if (i === cut % steps.length) restored = restoreStored(h.venue);
      }
      const copy = restored!;
      copy.validate();
      assert.equal(copy.stateHash(), h.venue.stateHash());
      for (const id of ACCOUNTS) {
        for (const currency of CURRENCIES)
          assert.deepEqual(copy.accountSummary(id, currency), h.venue.accountSummary(id, currency));
        assert.deepEqual(copy.openOrders({ accountId: id }), h.venue.openOrders({ accountId: id }));
      }
    }),
    options(),
  );
});

test('property: no command takes an account with funds below zero, and a price update only by itself', () => {
  fc.assert(
    fc.property(sessions, (steps) => fundsSession(steps)),
    options(),
  );
});
