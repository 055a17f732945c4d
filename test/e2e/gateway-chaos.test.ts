/**
 * Chaos through the whole in-process service (real storage, sequencer, engine, RFQ desk,
 * algorithms, market simulator, gateway) on a virtual clock, driven through the typed sdk over
 * HTTP and WebSocket with random but VALID-SHAPED requests: orders of every type and flag on real
 * instruments (options, futures, perpetuals, the BTC_USDC products, spot, combos by id), priced
 * near the mark, at tick and band edges, tiny and huge (up to 2^53 lots or ticks), on and off the
 * lot grid; linked orders, advanced orders, edits, cancels, cancel-alls, reads and histories; MMP;
 * Block RFQs (create, quote with the maker keys, accept, cancel); portfolios (submit, info,
 * cancel); subscriptions, cancel-on-disconnect and dropped connections; bursts of requests in
 * flight at once; the clock moving between steps (the simulator trades, algorithms and RFQs wake,
 * and the nearest expiry, 18 minutes after the start, settles); a graceful restart mid-test.
 *
 * Invariants: no answer is `internal_error` or a 5xx (or no answer at all); the core never stops
 * (`core.failed`); every push of every channel held (user.orders, user.trades and others) keeps
 * its seq contiguous, except that each channel of a connection that closed starts again at 1
 * once the sdk has reconnected and resubscribed; a connection closes only when a step drops it or
 * when the service drops it as a slow consumer (1008 "slow consumer", or cut after its grace:
 * the clock's big moves wake algorithms many times at once, and their pushes may pass the
 * gateway's queue limit), each close seen by the client matching one drop the service counts;
 * decimals in answers and pushes are plain decimal strings (no exponent form); the service logs
 * no error; a restart recovers.
 *
 * One service serves every run (state accumulates, as in production). A step is a kind, an actor,
 * a transport and a row of dice that the step reads against the live state, so a failing case
 * prints as plain JSON and shrinks towards the simplest choices (dice 0).
 * Env: GATEWAY_CHAOS_RUNS, GATEWAY_CHAOS_STEPS, GATEWAY_CHAOS_SEED (replay), GATEWAY_CHAOS_SHRINK=1
 * (after a failure, every further run starts on a fresh service, so fast-check can shrink),
 * GATEWAY_CHAOS_START (ISO time), GATEWAY_CHAOS_RESTARTS, GATEWAY_CHAOS_VERBOSE=1 (the outcome
 * table on stderr), GATEWAY_CHAOS_TRACE=1 (every call and its outcome).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { InstrumentInfo, MethodName, SubscriptionPush } from '../../sdk/types.ts';
import type { WsClient } from '../../sdk/ws-client.ts';
import { PORTFOLIO_BASE_PATH } from '../../src/api/portfolios/routes.ts';
import { VirtualClock } from '../../src/app/clock.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const RUNS = Number(process.env.GATEWAY_CHAOS_RUNS ?? 30);
const STEPS = Number(process.env.GATEWAY_CHAOS_STEPS ?? 30);
const SEED = process.env.GATEWAY_CHAOS_SEED ? Number(process.env.GATEWAY_CHAOS_SEED) : undefined;
const SHRINK = process.env.GATEWAY_CHAOS_SHRINK === '1';
const VERBOSE = process.env.GATEWAY_CHAOS_VERBOSE === '1';
/** Every call and its outcome on stderr (developing the generators). */
const TRACE = process.env.GATEWAY_CHAOS_TRACE === '1';
const INTERNAL = ERROR_CATALOGUE.internal_error.code;
/**
 * Virtual start: 18 minutes before the 08:00 UTC expiry of the nearest daily options and future,
 * inside its settlement window, so the clock's bigger moves take the chaos through an expiry.
 */
const START = process.env.GATEWAY_CHAOS_START
  ? Date.parse(process.env.GATEWAY_CHAOS_START)
  : Date.UTC(2026, 10, 21, 7, 42);
/** Graceful restarts of the service between runs (state, ids and connections carried over). */
const RESTARTS = Number(process.env.GATEWAY_CHAOS_RESTARTS ?? 1);

/** Demo keys (src/api/bootstrap.ts): a taker, two makers (desks MAKER1, MAKER2), a two-account taker. */
const TAKER = 0;
const MAKER1 = 1;
const MAKER2 = 2;
const MULTI = 3;
const ACTORS = [TAKER, MAKER1, MAKER2, MULTI] as const;
const USER_CHANNELS = ['user.orders.any.any', 'user.trades.any.any'];
/** Held for the whole test too; every push of every channel held is checked for a contiguous seq. */
const STANDING_CHANNELS = [
  'trade-news',
  'order.change.any',
  'user.mmp_trigger.btc_usd',
  'user.orders.option.BTC',
  'user.trades.future.any',
  'user.orders.option_combo.any',
  'ticker.BTC-PERPETUAL',
  'book.BTC-PERPETUAL',
  'trades.BTC-PERPETUAL',
  'user.orders.BTC-PERPETUAL.raw',
  'user.trades.BTC-PERPETUAL.100ms',
  'user.changes.any.any.raw',
  'user.portfolio.BTC',
  'book.BTC-PERPETUAL.none.10.100ms',
];
const LABELS = ['', 'alpha', 'beta'];

// ---------------------------------------------------------------------------------------------
// Dice: a step's random choices, read in order; 0 is always the simplest choice.

class Dice {
  private at = 0;
  constructor(private readonly values: readonly number[]) {}
  private next(): number {
    const value = this.values[this.at % this.values.length] ?? 0;
    this.at++;
    return value;
  }
  int(min: number, max: number): number {
    return min + (this.next() % (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[this.next() % items.length]!;
  }
  /** True with `percent` % (dice 0: false). */
  chance(percent: number): boolean {
    return this.next() % 100 >= 100 - percent;
  }
  weighted<T>(options: readonly (readonly [number, T])[]): T {
    const total = options.reduce((sum, [weight]) => sum + weight, 0);
    let roll = this.next() % total;
    for (const [weight, value] of options) {
      if (roll < weight) return value;
      roll -= weight;
    }
    return options[0]![1];
  }
}

const KINDS = [
  [30, 'place'],
  [7, 'edit'],
  [5, 'cancel'],
  [3, 'cancel_all'],
  [12, 'read'],
  [9, 'rfq'],
  [5, 'portfolio'],
  [2, 'mmp'],
  [10, 'advance'],
  [2, 'session'],
  [4, 'burst'],
] as const;
type Kind = (typeof KINDS)[number][1];

interface Step {
  readonly kind: Kind;
  readonly actor: number;
  readonly via: 'http' | 'ws';
  readonly dice: number[];
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.oneof(...KINDS.map(([weight, kind]) => ({ weight, arbitrary: fc.constant(kind) }))),
  actor: fc.constantFrom(...ACTORS),
  via: fc.constantFrom('http' as const, 'ws' as const),
  dice: fc.array(fc.nat(1_000_000), { minLength: 32, maxLength: 32 }),
});

// ---------------------------------------------------------------------------------------------
// Numbers on an instrument's grids.

interface Grid {
  readonly name: string;
  readonly kind: string;
  readonly base: string;
  readonly linear: boolean;
  readonly tick: string;
  /** [above in finest ticks, multiple of the finest tick]. */
  readonly steps: readonly (readonly [number, number])[];
  readonly min: string;
  readonly contractSize: string;
  readonly blockMin: string;
  readonly expiration: number | null;
  /** Combos: legs with ratios (+1 bought with the combo, −1 sold). */
  readonly legs?: readonly { readonly name: string; readonly ratio: number }[];
}

const decimalsOf = (text: string) => (text.includes('.') ? text.length - text.indexOf('.') - 1 : 0);
const trim = (text: string) => (text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text);

function gridOf(info: InstrumentInfo): Grid {
  const tick = Number(info.tickSize);
  return {
    name: info.instrumentName,
    kind: info.kind,
    base: info.baseCurrency,
    linear: info.marginKind === 'linear',
    tick: info.tickSize,
    steps: info.tickSizeSteps.map((s) => [
      Math.round(Number(s.abovePrice) / tick),
      Math.round(Number(s.tickSize) / tick),
    ]),
    min: info.minTradeAmount,
    contractSize: info.contractSize,
    blockMin: info.blockTradeMinTradeAmount,
    expiration: info.expiration,
    ...(info.legs ? { legs: info.legs.map((l) => ({ name: l.instrumentName, ratio: l.ratio })) } : {}),
  };
}

/** The tick (in finest ticks) that applies at a price level. */
function tickAt(grid: Grid, ticks: number): number {
  for (let i = grid.steps.length - 1; i >= 0; i--) {
    const [above, multiple] = grid.steps[i]!;
    if (Math.abs(ticks) > above) return multiple;
  }
  return 1;
}
const toTicks = (grid: Grid, price: number) => Math.round(price / Number(grid.tick));
const snap = (grid: Grid, ticks: number) => {
  const step = tickAt(grid, ticks);
  return Math.round(ticks / step) * step;
};
const priceText = (grid: Grid, ticks: number) => (ticks * Number(grid.tick)).toFixed(decimalsOf(grid.tick));
const lotsText = (grid: Grid, lots: number) => (lots * Number(grid.min)).toFixed(decimalsOf(grid.min));
/** Exact decimal text of `count` steps of `step` (a decimal string), for counts past 2^53 too. */
function stepsText(step: string, count: bigint): string {
  const scale = decimalsOf(step);
  const units = BigInt(step.replace('.', '')) * count;
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const text = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`;
  return `${negative ? '-' : ''}${text}`;
}
/** Sizes and prices far out: around 2^53 lots or ticks, where Number arithmetic stops being exact. */
const EXTREME_COUNTS = [
  2n ** 53n - 1n,
  2n ** 53n,
  2n ** 52n + 1n,
  10n ** 15n,
  2n ** 31n,
  10n ** 12n,
  10n ** 9n,
  10n ** 18n,
];
const contractsText = (grid: Grid, lots: number) =>
  trim(((lots * Number(grid.min)) / Number(grid.contractSize)).toFixed(12));

// ---------------------------------------------------------------------------------------------
// Outcomes.

type Outcome = { ok: true; value: unknown } | { ok: false; error: ApiError };

class Stats {
  readonly byMethod = new Map<string, Map<string, number>>();
  add(method: string, outcome: string): void {
    let row = this.byMethod.get(method);
    if (row === undefined) {
      row = new Map();
      this.byMethod.set(method, row);
    }
    row.set(outcome, (row.get(outcome) ?? 0) + 1);
  }
  total(filter: (method: string) => boolean): { ok: number; all: number } {
    let ok = 0;
    let all = 0;
    for (const [method, row] of this.byMethod) {
      if (!filter(method)) continue;
      for (const [outcome, count] of row) {
        all += count;
        if (outcome === 'ok') ok += count;
      }
    }
    return { ok, all };
  }
  table(): string {
    const lines: string[] = [];
    for (const [method, row] of [...this.byMethod].sort(([a], [b]) => a.localeCompare(b))) {
      const cells = [...row].sort((a, b) => b[1] - a[1]).map(([outcome, count]) => `${outcome} ${count}`);
      lines.push(`${method}: ${cells.join(', ')}`);
    }
    return lines.join('\n');
  }
}

const PLACES = (method: string) => method === 'private/buy' || method === 'private/sell';
const WRITES = new Set([
  'private/buy',
  'private/sell',
  'private/edit',
  'private/edit_by_label',
  'private/cancel',
  'private/cancel_all',
  'private/cancel_all_by_instrument',
  'private/cancel_all_by_currency',
  'private/cancel_by_label',
  'private/set_mmp_config',
  'private/reset_mmp',
  'block/rfqs/create_rfq',
  'block/rfqs/cancel_rfq',
  'block/rfqs/accept',
  'block/rfqs/cancel_trigger',
  'block/rfqs/create_quote',
  'block/rfqs/edit_quote',
  'block/rfqs/cancel_quote',
  'block/rfqs/cancel_all_quotes',
  'POST portfolios/submit',
  'POST portfolios/cancel',
  'POST portfolios/cancel-all',
]);

// ---------------------------------------------------------------------------------------------
// The world: the service, its clients, what the steps have created.

/** A client's connection that closed although no step asked for it, as the client saw the close. */
interface ServerClose {
  readonly actor: number;
  readonly code: number;
  readonly reason: string;
  /** The service clock then. */
  readonly at: number;
}

/** The close the gateway sends a slow consumer (src/api/ws-gateway.ts, `dropSlow`). */
const SLOW_CONSUMER_CODE = 1008;
const SLOW_CONSUMER_REASON = 'slow consumer';
/** A close with no close frame: what the client sees of a slow consumer cut after its grace. */
const ABNORMAL_CODE = 1006;

/** Connections the service has dropped as slow consumers since it started (its metrics). */
async function slowConsumerDrops(running: TestService): Promise<number> {
  const metrics = running.service.metrics;
  if (metrics === null) return 0;
  const metric = await metrics.registry.getSingleMetric('venue_ws_slow_consumer_disconnects_total')?.get();
  return (metric?.values ?? []).reduce((sum, { value }) => sum + value, 0);
}

interface KnownOrder {
  readonly orderId: string;
  readonly actor: number;
  readonly grid: Grid;
  price: string | null;
  readonly orderType: string;
  readonly advanced: string | null;
}

interface Universe {
  readonly grids: Map<string, Grid>;
  readonly perps: string[];
  readonly futures: string[];
  readonly linearPerps: string[];
  readonly spots: string[];
  readonly options: string[];
  readonly linearOptions: string[];
  readonly combos: string[];
}

class World {
  readonly http: HttpClient[];
  readonly ws: WsClient[];
  // What the steps created; kept across a restart of the service (adopt).
  orders: KnownOrder[] = [];
  /** Order states as the user.orders pushes last showed them. */
  orderStates = new Map<string, string>();
  rfqs: { actor: number; blockRfqId: string }[] = [];
  quotes: { actor: number; quoteId: string }[] = [];
  portfolios: { actor: number; portfolioId: number; accountId: number }[] = [];
  /**
   * Per ws actor and channel: the last seq seen; a restart at 1 is allowed once on each channel a
   * connection held when it closed (a step dropped it, or the service closed it: `closes`).
   */
  readonly seqs = new Map<string, number>();
  readonly restartAllowed = new Set<string>();
  readonly pushErrors: string[] = [];
  /** The closes no step asked for, in order (all of this service's run; `checkCloses` judges them). */
  readonly closes: ServerClose[] = [];
  /** Actors whose connection a step is dropping now: its close is the step's. */
  readonly dropping = new Set<number>();
  universe!: Universe;

  constructor(
    readonly running: TestService,
    readonly logs: string[],
  ) {
    this.http = ACTORS.map((i) => running.http(i));
    this.ws = ACTORS.map((i) => running.ws(i));
    for (const actor of ACTORS)
      this.ws[actor]!.onDisconnected = ({ code, reason }) => this.onSocketClose(actor, code, reason);
  }

  /** Takes over what a world before a restart knew. */
  adopt(previous: World): void {
    this.orders = previous.orders;
    this.orderStates = previous.orderStates;
    this.rfqs = previous.rfqs;
    this.quotes = previous.quotes;
    this.portfolios = previous.portfolios;
    this.universe = previous.universe;
  }

  async close(): Promise<void> {
    for (const ws of this.ws) await ws.close();
    await this.running.close();
  }

  /**
   * A socket of the actor's client closed. Unless the test closed it, the service did: the close
   * is recorded, and every channel the connection held may start again at 1 (the sdk reconnects
   * and resubscribes). Pushes of the old socket all come before its close event.
   */
  private onSocketClose(actor: number, code: number, reason: string): void {
    if (this.dropping.has(actor)) return;
    const close = { actor, code, reason, at: this.running.clock.now() };
    this.closes.push(close);
    if (TRACE) console.error(`closed by the service: ${JSON.stringify(close)}`);
    for (const channel of this.heldChannels(actor)) this.restartAllowed.add(`${actor} ${channel}`);
  }

  /**
   * Every close no step asked for must be the service dropping a slow consumer: the client saw
   * 1008 "slow consumer", or 1006 (cut after the grace, the close frame never read), and the
   * service counted as many drops as the clients saw such closes. Waits for closes still on their
   * way over the sockets.
   */
  async checkCloses(): Promise<void> {
    const drops = await slowConsumerDrops(this.running);
    await until(() => this.closes.length >= drops, 5_000).catch(() => {});
    const shown = (c: ServerClose) => `actor ${c.actor} ${c.code} "${c.reason}" at ${c.at}`;
    for (const close of this.closes) {
      const slow = close.code === SLOW_CONSUMER_CODE && close.reason === SLOW_CONSUMER_REASON;
      if (!slow && close.code !== ABNORMAL_CODE)
        this.pushErrors.push(`connection closed by the service, not as a slow consumer: ${shown(close)}`);
    }
    if (this.closes.length !== drops)
      this.pushErrors.push(
        `the clients saw ${this.closes.length} closes no step asked for (${this.closes.map(shown).join(', ')}), the service dropped ${drops} slow consumers`,
      );
  }

  accountsOf(actor: number): number[] {
    return this.running.credentials[actor]!.accountIds;
  }

  /** One listener per key, whatever spelling a channel is subscribed under (the sdk keeps it once). */
  readonly listeners = ACTORS.map((actor) => (push: SubscriptionPush) => this.onPush(actor, push));

  async connect(): Promise<void> {
    for (const actor of ACTORS) {
      const ws = this.ws[actor]!;
      await ws.connect();
      await ws.auth();
      const role = this.running.credentials[actor]!.roles.includes('maker') ? 'maker' : 'taker';
      await ws.subscribe(
        [...USER_CHANNELS, ...STANDING_CHANNELS, `block_rfq.${role}.any`],
        this.listeners[actor],
      );
    }
  }

  /** Every channel the key holds (for the restart a dropped connection brings). */
  heldChannels(actor: number): string[] {
    const prefix = `${actor} `;
    return [...this.seqs.keys()]
      .filter((key) => key.startsWith(prefix))
      .map((key) => key.slice(prefix.length));
  }

  private onPush(actor: number, push: SubscriptionPush): void {
    if (push.channel.startsWith('user.orders')) {
      const orders = (Array.isArray(push.data) ? push.data : [push.data]) as {
        orderId: string;
        orderState: string;
        instrumentName: string;
        price: string;
        orderType: string;
        advanced?: string;
      }[];
      for (const order of orders) {
        if (!this.orderStates.has(order.orderId)) {
          // Orders the steps did not place themselves (algorithms' children, linked orders): fair game too.
          const grid = this.universe?.grids.get(order.instrumentName) ?? this.comboGrid(order.instrumentName);
          if (grid !== undefined) this.remember(actor, grid, order);
        }
        this.orderStates.set(order.orderId, order.orderState);
      }
    }
    this.checkSeq(actor, push);
    const bad = exponentDecimals(push.data);
    if (bad.length > 0) this.pushErrors.push(`actor ${actor} ${push.channel}: not plain: ${bad.join(', ')}`);
  }

  remember(
    actor: number,
    grid: Grid,
    order: { orderId: string; price: string; orderType: string; advanced?: string },
  ): void {
    if (this.orders.some((o) => o.orderId === order.orderId)) return;
    this.orders.push({
      orderId: order.orderId,
      actor,
      grid,
      price: order.price === 'market_price' ? null : order.price,
      orderType: order.orderType,
      advanced: order.advanced ?? null,
    });
    if (this.orders.length > 400) this.orders.splice(0, this.orders.length - 400);
  }

  isOpen(orderId: string): boolean {
    const state = this.orderStates.get(orderId);
    return state === 'open' || state === 'untriggered';
  }

  private checkSeq(actor: number, push: SubscriptionPush): void {
    const key = `${actor} ${push.channel}`;
    const last = this.seqs.get(key) ?? 0;
    if (push.seq === last + 1) {
      this.seqs.set(key, push.seq);
    } else if (push.seq === 1 && this.restartAllowed.has(key)) {
      this.restartAllowed.delete(key);
      this.seqs.set(key, 1);
    } else {
      const closes = this.closes.filter((c) => c.actor === actor).length;
      this.pushErrors.push(
        `actor ${actor} ${push.channel}: seq ${push.seq} after ${last} (closes by the service so far: ${closes})`,
      );
      this.seqs.set(key, push.seq);
    }
  }

  async loadUniverse(): Promise<void> {
    const all = await this.http[TAKER]!.call('public/get_instruments', { currency: 'any' });
    const grids = new Map<string, Grid>(all.map((info) => [info.instrumentName, gridOf(info)]));
    const byKind = (predicate: (info: InstrumentInfo) => boolean) =>
      all.filter(predicate).map((info) => info.instrumentName);
    const perps = byKind((i) => i.settlementPeriod === 'perpetual' && i.marginKind !== 'linear');
    const linearPerps = byKind((i) => i.settlementPeriod === 'perpetual' && i.marginKind === 'linear');
    const datedFutures = all
      .filter((i) => i.kind === 'future' && i.settlementPeriod !== 'perpetual')
      .sort((a, b) => (a.expiration ?? 0) - (b.expiration ?? 0));
    const futures = datedFutures.map((i) => i.instrumentName);
    const spots = byKind((i) => i.kind === 'spot');
    const index: Record<string, number> = {};
    for (const perp of perps) {
      const ticker = await this.http[TAKER]!.call('public/ticker', { instrumentName: perp });
      index[grids.get(perp)!.base] = Number(ticker.indexPrice ?? ticker.markPrice);
    }
    const options: string[] = [];
    const linearOptions: string[] = [];
    const combos: string[] = [];
    for (const linear of [false, true]) {
      for (const base of Object.keys(index)) {
        const chain = all.filter(
          (i) => i.kind === 'option' && i.baseCurrency === base && (i.marginKind === 'linear') === linear,
        );
        const expiries = [...new Set(chain.map((i) => i.expiration!))].sort((a, b) => a - b).slice(0, 3);
        for (const [rank, expiry] of expiries.entries()) {
          const near = chain
            .filter((i) => i.expiration === expiry && Math.abs(Number(i.strike) / index[base]! - 1) < 0.12)
            .map((i) => i.instrumentName);
          (linear ? linearOptions : options).push(...near);
          if (rank > 1) continue;
          const strikes = [...new Set(near.map((n) => n.split('-')[2]!))].sort(
            (a, b) => Number(a) - Number(b),
          );
          const code = near[0]?.split('-')[1];
          const pair = near[0]?.split('-')[0];
          if (code === undefined || pair === undefined || strikes.length < 2) continue;
          const mid = Math.floor(strikes.length / 2);
          const [low, high] = [strikes[mid - 1]!, strikes[mid]!];
          combos.push(`${pair}-CS-${code}-${low}_${high}`, `${pair}-PS-${code}-${high}_${low}`);
          combos.push(`${pair}-STRD-${code}-${high}`);
        }
      }
    }
    for (const base of Object.keys(index)) {
      const dated = datedFutures.filter((i) => i.baseCurrency === base && i.marginKind !== 'linear');
      const codes = dated.slice(0, 2).map((i) => i.instrumentName.split('-')[1]!);
      if (codes[0] !== undefined) combos.push(`${base}-FS-${codes[0]}_PERP`);
      if (codes[1] !== undefined) combos.push(`${base}-FS-${codes[1]}_${codes[0]}`);
    }
    this.universe = { grids, perps, futures, linearPerps, spots, options, linearOptions, combos };
  }

  /** A combo's grid: its listing's when listed, else its first leg's (a combo inherits it, without steps). */
  comboGrid(name: string): Grid | undefined {
    const listed = this.universe.grids.get(name);
    if (listed !== undefined) return listed;
    const legs = comboLegsOf(name);
    const first = legs === null ? undefined : this.universe.grids.get(legs[0]!.name);
    if (first === undefined || legs === null) return undefined;
    return { ...first, name, kind: `${first.kind}_combo`, steps: [], legs };
  }
}

/** Legs of a combo id of the shapes the universe builds (src/market/combos.ts). */
function comboLegsOf(name: string): { name: string; ratio: number }[] | null {
  const parts = name.split('-');
  const [pair, code, expiry, rest] = parts;
  if (pair === undefined || code === undefined || expiry === undefined || rest === undefined) return null;
  switch (code) {
    case 'CS':
    case 'PS': {
      const [long, short] = rest.split('_');
      const type = code === 'CS' ? 'C' : 'P';
      return [
        { name: `${pair}-${expiry}-${long}-${type}`, ratio: 1 },
        { name: `${pair}-${expiry}-${short}-${type}`, ratio: -1 },
      ];
    }
    case 'STRD':
      return [
        { name: `${pair}-${expiry}-${rest}-C`, ratio: 1 },
        { name: `${pair}-${expiry}-${rest}-P`, ratio: 1 },
      ];
    case 'FS': {
      const [long, short] = expiry.split('_');
      return [
        { name: `${pair}-${long}`, ratio: 1 },
        { name: short === 'PERP' ? `${pair}-PERPETUAL` : `${pair}-${short}`, ratio: -1 },
      ];
    }
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Calls: every answer is checked here.

class Failure extends Error {}

async function invoke(
  world: World,
  stats: Stats,
  actor: number,
  via: 'http' | 'ws',
  method: MethodName,
  params: Record<string, unknown>,
): Promise<Outcome> {
  const ws = world.ws[actor]!;
  const useWs = via === 'ws' && ws.connected;
  try {
    const value = useWs
      ? await ws.call(method, params as never)
      : await world.http[actor]!.call(method, params as never);
    stats.add(method, 'ok');
    if (TRACE) console.error(`ok ${method} ${JSON.stringify(params)}`);
    checkAnswer(`${useWs ? 'ws' : 'http'} ${method} ${JSON.stringify(params)}`, value);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof Failure) throw error;
    return refusal(stats, method, `${useWs ? 'ws' : 'http'} ${method} ${JSON.stringify(params)}`, error);
  }
}

async function flat(
  world: World,
  stats: Stats,
  actor: number,
  verb: 'GET' | 'POST',
  route: string,
  body?: unknown,
): Promise<Outcome> {
  const name = `${verb} portfolios/${route.split('?')[0]}`;
  try {
    const value = await world.http[actor]!.flat(verb, `${PORTFOLIO_BASE_PATH}/${route}`, body);
    stats.add(name, 'ok');
    if (TRACE) console.error(`ok ${name} ${JSON.stringify(body ?? null)}`);
    checkAnswer(`${name} ${route} ${JSON.stringify(body ?? null)}`, value);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof Failure) throw error;
    return refusal(stats, name, `${name} ${route} ${JSON.stringify(body ?? null)}`, error);
  }
}

/** Fields that carry decimals on the wire (SEMANTICS: decimal strings, never exponent notation). */
const DECIMAL_KEYS = new Set([
  'price',
  'quantity',
  'contracts',
  'filledQuantity',
  'averagePrice',
  'usd',
  'implv',
  'displayAmount',
  'refreshAmount',
  'triggerPrice',
  'triggerOffset',
  'triggerReferencePrice',
  'fee',
  'indexPrice',
  'markPrice',
  'underlyingPrice',
  'iv',
  'profitLoss',
  'size',
  'realizedProfitLoss',
  'floatingProfitLoss',
  'totalProfitLoss',
  'balance',
  'equity',
  'marginBalance',
  'availableFunds',
  'initialMargin',
  'maintenanceMargin',
  'futuresPl',
  'optionsPl',
  'optionsValue',
  'totalPl',
  'bestBidPrice',
  'bestBidAmount',
  'bestAskPrice',
  'bestAskAmount',
  'lastPrice',
  'minPrice',
  'maxPrice',
  'markIv',
  'bidIv',
  'askIv',
  'openInterest',
  'volume',
  'high',
  'low',
  'delta',
  'gamma',
  'vega',
  'theta',
  'rho',
  'quantityLimit',
  'deltaLimit',
  'vegaLimit',
  'hedgePrice',
  'hedgeQuantity',
  'ratio',
  'amount',
  'strike',
  'arrivalPrice',
]);
const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/** Paths of decimal fields in `value` that are not plain decimal strings. */
function exponentDecimals(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) {
    // Book levels: [price, quantity].
    if ((path.endsWith('.bids') || path.endsWith('.asks')) && value.every((l) => Array.isArray(l)))
      return value.flatMap((level, i) =>
        (level as unknown[]).flatMap((cell, j) =>
          typeof cell === 'string' && !PLAIN_DECIMAL.test(cell) ? [`${path}[${i}][${j}]=${cell}`] : [],
        ),
      );
    return value.flatMap((item, i) => exponentDecimals(item, `${path}[${i}]`));
  }
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, field]) => {
    const at = `${path}.${key}`;
    if (typeof field === 'string' && DECIMAL_KEYS.has(key))
      return PLAIN_DECIMAL.test(field) || field === 'market_price' ? [] : [`${at}=${field}`];
    return exponentDecimals(field, at);
  });
}

/** Every successful answer: its decimals are plain decimal strings. */
function checkAnswer(request: string, value: unknown): void {
  const bad = exponentDecimals(value);
  if (bad.length > 0) throw new Failure(`${request} answered decimals that are not plain: ${bad.join(', ')}`);
}

function refusal(stats: Stats, method: string, request: string, error: unknown): Outcome {
  if (!(error instanceof ApiError)) {
    throw new Failure(`no answer to ${request}: ${error instanceof Error ? error.stack : String(error)}`);
  }
  if (error.code === INTERNAL || (error.httpStatus ?? 200) >= 500 || error.code === -1) {
    throw new Failure(
      `${request} → HTTP ${error.httpStatus} ${error.code} ${error.message} ${JSON.stringify(error.data ?? {})}`,
    );
  }
  stats.add(method, error.errorName ?? String(error.code));
  if (TRACE) console.error(`${error.errorName} ${request}: ${error.message}`);
  return { ok: false, error };
}

// ---------------------------------------------------------------------------------------------
// Steps.

interface Reference {
  readonly grid: Grid;
  /** Prices in finest ticks (null: unknown). */
  readonly mark: number | null;
  readonly min: number | null;
  readonly max: number | null;
  readonly bid: number | null;
  readonly ask: number | null;
  readonly markPrice: number | null;
  readonly markIv: number | null;
  readonly index: number | null;
}

class Runner {
  constructor(
    readonly world: World,
    readonly stats: Stats,
  ) {}

  call(step: Step, method: MethodName, params: Record<string, unknown>, actor = step.actor) {
    return invoke(this.world, this.stats, actor, step.via, method, params);
  }

  async run(step: Step): Promise<void> {
    const d = new Dice(step.dice);
    switch (step.kind) {
      case 'place':
        return this.place(step, d);
      case 'edit':
        return this.edit(step, d);
      case 'cancel':
        return this.cancel(step, d);
      case 'cancel_all':
        return this.cancelAll(step, d);
      case 'read':
        return this.read(step, d);
      case 'rfq':
        return this.rfq(step, d);
      case 'portfolio':
        return this.portfolio(step, d);
      case 'mmp':
        return this.mmp(step, d);
      case 'advance':
        return this.advance(d);
      case 'session':
        return this.session(step, d);
      case 'burst':
        return this.burst(step, d);
    }
  }

  /** Two to four steps at once, from every key (races between requests in flight). */
  async burst(step: Step, d: Dice): Promise<void> {
    const count = d.int(2, 4);
    const steps: Step[] = [];
    for (let i = 0; i < count; i++) {
      steps.push({
        kind: d.weighted([
          [5, 'place'],
          [2, 'cancel'],
          [2, 'edit'],
          [1, 'cancel_all'],
          [1, 'read'],
          [1, 'rfq'],
          [1, 'portfolio'],
        ] as const),
        actor: d.pick(ACTORS),
        via: d.pick(['http', 'ws'] as const),
        dice: step.dice.map((_, j) => step.dice[(j + 7 * (i + 1)) % step.dice.length]!),
      });
    }
    const results = await Promise.allSettled(steps.map((s) => this.run(s)));
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }

  pickInstrument(d: Dice): Grid {
    const u = this.world.universe;
    const family = d.weighted([
      [20, u.perps],
      [15, u.options],
      [10, u.futures],
      [10, u.linearPerps],
      [8, u.linearOptions],
      [8, u.spots],
      [12, u.combos],
    ] as const);
    const list = family.length > 0 ? family : u.perps;
    const name = d.pick(list);
    return u.grids.get(name) ?? this.world.comboGrid(name) ?? u.grids.get(u.perps[0]!)!;
  }

  async reference(step: Step, grid: Grid): Promise<Reference> {
    const ticker = await this.call(step, 'public/ticker', { instrumentName: grid.name });
    const t = ticker.ok
      ? (ticker.value as {
          markPrice: string | null;
          minPrice: string | null;
          maxPrice: string | null;
          bestBidPrice: string | null;
          bestAskPrice: string | null;
          markIv?: string | null;
          indexPrice: string | null;
        })
      : null;
    const ticks = (text: string | null | undefined) => (text == null ? null : toTicks(grid, Number(text)));
    let markPrice = t?.markPrice == null ? null : Number(t.markPrice);
    if (markPrice === null && grid.legs !== undefined) {
      // A combo not listed yet, or without a mark: the net of its legs' marks.
      let net = 0;
      for (const leg of grid.legs) {
        const legTicker = await this.call(step, 'public/ticker', { instrumentName: leg.name });
        const mark = legTicker.ok ? (legTicker.value as { markPrice: string | null }).markPrice : null;
        if (mark == null)
          return {
            grid,
            mark: null,
            min: null,
            max: null,
            bid: null,
            ask: null,
            markPrice: null,
            markIv: null,
            index: null,
          };
        net += leg.ratio * Number(mark);
      }
      markPrice = net;
    }
    return {
      grid,
      mark: markPrice === null ? null : snap(grid, toTicks(grid, markPrice)),
      min: ticks(t?.minPrice),
      max: ticks(t?.maxPrice),
      bid: ticks(t?.bestBidPrice),
      ask: ticks(t?.bestAskPrice),
      markPrice,
      markIv: t?.markIv == null ? null : Number(t.markIv),
      index: t?.indexPrice == null ? null : Number(t.indexPrice),
    };
  }

  /** A price for a new order or an edit: valid most of the time, at the edges some of the time. */
  price(d: Dice, ref: Reference, side: 'buy' | 'sell'): string {
    const grid = ref.grid;
    const isCombo = grid.legs !== undefined;
    const mark = ref.mark ?? (isCombo ? 0 : 1);
    const away = (ticks: number, n: number) => snap(grid, ticks + n * tickAt(grid, ticks));
    const mode = d.weighted([
      [45, 'near'],
      [20, 'cross'],
      [8, 'band'],
      [4, 'outside'],
      [3, 'off_tick'],
      [3, 'step_edge'],
      [3, 'tiny'],
      [2, 'huge'],
      [2, 'decimals'],
    ] as const);
    let ticks: number;
    switch (mode) {
      case 'near':
        ticks = away(mark, d.int(-12, 12));
        break;
      case 'cross': {
        const touch = side === 'buy' ? ref.ask : ref.bid;
        ticks = touch ?? away(mark, side === 'buy' ? 3 : -3);
        break;
      }
      case 'band':
        ticks = (side === 'buy' ? ref.max : ref.min) ?? (d.chance(50) ? ref.min : ref.max) ?? mark;
        break;
      case 'outside': {
        const edge = d.chance(50) ? ref.max : ref.min;
        ticks = edge === null ? mark : edge === ref.max ? away(edge, 1) : away(edge, -1);
        break;
      }
      case 'off_tick':
        return (mark * Number(grid.tick) + Number(grid.tick) / 2).toFixed(decimalsOf(grid.tick) + 1);
      case 'step_edge': {
        const [above] = grid.steps[0] ?? [mark];
        ticks = above + d.int(-1, 2);
        return priceText(grid, ticks);
      }
      case 'tiny':
        ticks = isCombo ? d.int(-2, 1) : 1;
        break;
      case 'huge': {
        const count = d.pick(EXTREME_COUNTS);
        return d.pick([
          '1000000000',
          '99999999.5',
          String(mark * 1000 * Number(grid.tick)),
          stepsText(grid.tick, count),
          isCombo ? stepsText(grid.tick, -count) : stepsText(grid.tick, count / 3n),
        ]);
      }
      case 'decimals':
        return `${priceText(grid, mark)}${'0'.repeat(d.int(1, 14))}`;
    }
    if (!isCombo && ticks < 1) ticks = 1;
    return priceText(grid, ticks);
  }

  /** The size fields: quantity and/or contracts, on the grid most of the time. */
  size(d: Dice, grid: Grid, lotsHint?: number): { fields: Record<string, string>; lots: number } {
    const lots =
      lotsHint ??
      d.weighted([
        [60, d.int(1, 10)],
        [20, d.int(10, 60)],
        [5, d.int(100, 400)],
      ] as const);
    const mode = d.weighted([
      [60, 'quantity'],
      [15, 'contracts'],
      [8, 'both'],
      [2, 'mismatch'],
      [3, 'off_grid'],
      [2, 'tiny'],
      [3, 'huge'],
    ] as const);
    switch (mode) {
      case 'quantity':
        return { fields: { quantity: lotsText(grid, lots) }, lots };
      case 'contracts':
        return { fields: { contracts: contractsText(grid, lots) }, lots };
      case 'both':
        return { fields: { quantity: lotsText(grid, lots), contracts: contractsText(grid, lots) }, lots };
      case 'mismatch':
        return { fields: { quantity: lotsText(grid, lots), contracts: contractsText(grid, lots + 1) }, lots };
      case 'off_grid':
        return {
          fields: { quantity: trim((Number(lotsText(grid, lots)) + Number(grid.min) / 2).toFixed(12)) },
          lots,
        };
      case 'tiny':
        return { fields: { quantity: trim((Number(grid.min) / 10).toFixed(12)) }, lots: 0 };
      case 'huge': {
        const count = d.pick([1_000_000n, 123_456_789n, ...EXTREME_COUNTS]);
        const field = d.chance(20) ? 'contracts' : 'quantity';
        const text = field === 'quantity' ? stepsText(grid.min, count) : trim(stepsText(grid.min, count));
        return {
          fields: { [field]: field === 'quantity' ? text : contractsText(grid, Number(count)) },
          lots: 1e9,
        };
      }
    }
  }

  remember(actor: number, grid: Grid, order: unknown): void {
    const o = order as {
      orderId: string;
      price: string;
      orderType: string;
      advanced?: string;
      otoOrderIds?: string[];
    };
    this.world.remember(actor, grid, o);
    for (const id of o.otoOrderIds ?? [])
      this.world.remember(actor, grid, { orderId: id, price: 'market_price', orderType: 'limit' });
  }

  pickOrder(d: Dice, actor: number): KnownOrder | undefined {
    const orders = this.world.orders;
    const own = orders.filter((o) => o.actor === actor);
    const open = own.filter((o) => this.world.isOpen(o.orderId));
    // Mostly an open one; sometimes a closed one, or anyone's (not_owner_of_order, not found).
    const which = d.weighted([
      [80, open],
      [12, own],
      [8, orders],
    ] as const);
    const list = which.length > 0 ? which : own.length > 0 ? own : orders;
    return list.length > 0 ? list[list.length - 1 - (d.int(0, 30) % list.length)] : undefined;
  }

  async place(step: Step, d: Dice): Promise<void> {
    const side = d.pick(['buy', 'sell'] as const);
    const grid = this.pickInstrument(d);
    const ref = await this.reference(step, grid);
    const isOption = grid.kind === 'option';
    const triggerable = grid.kind === 'future' || grid.kind === 'spot';
    const type = d.weighted([
      [120, 'limit'],
      [20, 'market'],
      [10, 'market_limit'],
      [triggerable ? 10 : 1, 'stop_limit'],
      [triggerable ? 10 : 1, 'take_limit'],
      [triggerable ? 8 : 1, 'stop_market'],
      [triggerable ? 8 : 1, 'take_market'],
      [triggerable ? 8 : 1, 'trailing_stop'],
    ] as const);
    const display = type === 'limit' && d.chance(6);
    const { fields, lots } = this.size(d, grid, display ? d.int(100, 300) : undefined);
    const params: Record<string, unknown> = { instrumentName: grid.name, ...fields };
    if (type !== 'limit' || d.chance(20)) params.type = type;
    const priced = type === 'limit' || type === 'stop_limit' || type === 'take_limit';
    // A price only where the type takes one (spec 4.3); now and then a misplaced one, refused
    // naming price (as the misplaced trigger fields below are).
    if (priced || d.chance(3)) params.price = this.price(d, ref, side);
    if (type.startsWith('stop') || type.startsWith('take') || type === 'trailing_stop' || d.chance(3)) {
      params.trigger = d.pick(['mark_price', 'index_price', 'last_price']);
      const mark = ref.mark ?? 1;
      if (type === 'trailing_stop') {
        params.triggerOffset = d.chance(5)
          ? stepsText(grid.tick, d.pick(EXTREME_COUNTS))
          : priceText(grid, d.int(1, 200) * tickAt(grid, mark));
      } else {
        // Stops above the market for buys, takes below (and the other way round for sells); sometimes not.
        const up = type.startsWith('stop') === (side === 'buy');
        const n = d.int(1, 40) * (up === !d.chance(15) ? 1 : -1);
        params.triggerPrice = d.chance(5)
          ? stepsText(grid.tick, d.pick(EXTREME_COUNTS))
          : priceText(grid, Math.max(1, snap(grid, mark + n * tickAt(grid, mark))));
      }
    }
    const tif = d.weighted([
      [70, null],
      [10, 'good_til_cancelled'],
      [6, 'good_til_day'],
      [8, 'immediate_or_cancel'],
      [6, 'fill_or_kill'],
    ] as const);
    if (tif !== null) params[d.chance(30) ? 'timeInforce' : 'timeInForce'] = tif;
    if (d.chance(15)) {
      params.postOnly = true;
      if (d.chance(40)) params.rejectPostOnly = true;
      // Post-only rests: good_til_cancelled (mostly; anything else is refused).
      if (tif !== null && tif !== 'good_til_cancelled' && !d.chance(20)) {
        delete params.timeInforce;
        delete params.timeInForce;
      }
    }
    if (d.chance(10)) params.reduceOnly = true;
    if (d.chance(25)) params.label = d.pick(LABELS);
    if (display) params.displayAmount = lotsText(grid, Math.min(lots, d.int(100, 150)));
    if (d.chance(5)) params.mmp = true;
    if (d.chance(5)) params.validUntil = this.world.running.service.core.now() + d.pick([60_000, 5_000, -1]);
    if (isOption && d.chance(8)) {
      params.advanced = d.pick(['usd', 'implv'] as const);
      params.price = d.chance(15)
        ? d.pick(['0.000001', '999999999', '999999999.999999', '1234567890', '0.5', '1'])
        : params.advanced === 'usd'
          ? ((ref.markPrice ?? 0.01) * (ref.index ?? 60_000)).toFixed(d.int(0, 2))
          : ((ref.markIv ?? 50) + d.int(-5, 5)).toFixed(1);
    }
    if (d.chance(8)) this.linked(d, params, side, ref);
    const answer = await this.call(step, side === 'buy' ? 'private/buy' : 'private/sell', params);
    if (answer.ok) {
      this.remember(step.actor, grid, (answer.value as { order: unknown }).order);
      if (grid.legs !== undefined && !this.world.universe.grids.has(grid.name))
        await this.learnCombo(step, grid);
    }
  }

  /** Reads a combo's listing once an order listed it. */
  async learnCombo(step: Step, grid: Grid): Promise<void> {
    const answer = await this.call(step, 'public/get_instruments', {
      currency: grid.base,
      kind: grid.kind.startsWith('future') ? 'future_combo' : 'option_combo',
    });
    if (!answer.ok) return;
    for (const info of answer.value as InstrumentInfo[])
      this.world.universe.grids.set(info.instrumentName, gridOf(info));
  }

  linked(d: Dice, params: Record<string, unknown>, side: 'buy' | 'sell', ref: Reference): void {
    const grid = ref.grid;
    const mark = ref.mark ?? 1;
    params.linkedOrderType = d.pick([
      'one_triggers_other',
      'one_cancels_other',
      'one_triggers_one_cancels_other',
    ]);
    if (d.chance(60)) params.triggerFillCondition = d.pick(['first_hit', 'complete_fill', 'incremental']);
    const other = side === 'buy' ? 'sell' : 'buy';
    const sign = side === 'buy' ? 1 : -1;
    const entries: Record<string, unknown>[] = [];
    const count = params.linkedOrderType === 'one_triggers_one_cancels_other' ? 2 : d.int(1, 2);
    for (let i = 0; i < count; i++) {
      const entry: Record<string, unknown> = { side: d.chance(10) ? side : other };
      const kind = d.weighted([
        [50, 'limit'],
        [25, 'stop_market'],
        [10, 'stop_limit'],
        [10, 'take_limit'],
        [5, 'market'],
      ] as const);
      if (kind !== 'limit' || d.chance(50)) entry.type = kind;
      if (kind !== 'market' && kind !== 'stop_market')
        entry.price = priceText(
          grid,
          Math.max(1, snap(grid, mark + sign * d.int(1, 30) * tickAt(grid, mark))),
        );
      if (kind !== 'limit' && kind !== 'market') {
        entry.trigger = d.pick(['last_price', 'mark_price', 'index_price']);
        entry.triggerPrice = priceText(
          grid,
          Math.max(1, snap(grid, mark - sign * d.int(1, 30) * tickAt(grid, mark))),
        );
      }
      if (d.chance(40) && typeof params.quantity === 'string') entry.quantity = params.quantity;
      if (d.chance(15)) entry.reduceOnly = true;
      if (d.chance(10)) entry.postOnly = true;
      if (d.chance(10)) entry.timeInForce = d.pick(['good_til_cancelled', 'immediate_or_cancel']);
      if (d.chance(20)) entry.label = d.pick(LABELS);
      entries.push(entry);
    }
    params.otocoConfig = entries;
  }

  async edit(step: Step, d: Dice): Promise<void> {
    const order = this.pickOrder(d, step.actor);
    if (order === undefined) return;
    const grid = order.grid;
    const { fields } = this.size(d, grid);
    const params: Record<string, unknown> = { orderId: order.orderId, ...fields };
    if (order.advanced !== null && d.chance(70)) {
      params.advanced = order.advanced;
      params.price = order.advanced === 'usd' ? String(d.int(10, 5_000)) : String(d.int(20, 120));
    } else if (
      d.chance(80) &&
      (!['market', 'stop_market', 'take_market', 'trailing_stop'].includes(order.orderType) || d.chance(3))
    ) {
      // A price only for an order that takes one (now and then a misplaced one, refused).
      const base =
        order.price !== null
          ? toTicks(grid, Number(order.price))
          : ((await this.reference(step, grid)).mark ?? 1);
      const n = d.int(-6, 6);
      params.price = d.chance(10)
        ? this.price(d, await this.reference(step, grid), d.pick(['buy', 'sell'] as const))
        : priceText(grid, Math.max(grid.legs ? -5 : 1, snap(grid, base + n * tickAt(grid, base))));
    }
    if (d.chance(15)) params.postOnly = d.chance(80);
    if (d.chance(8)) params.rejectPostOnly = true;
    if (d.chance(8)) params.reduceOnly = d.chance(50);
    if (d.chance(5)) params.mmp = d.chance(50);
    if (d.chance(5)) params.validUntil = this.world.running.service.core.now() + d.pick([-1, 60_000]);
    if (order.orderType.startsWith('stop') || order.orderType.startsWith('take')) {
      if (d.chance(60) && order.price !== null) params.triggerPrice = order.price;
    }
    if (order.orderType === 'trailing_stop' && d.chance(60))
      params.triggerOffset = priceText(grid, d.int(1, 100));
    if (d.chance(5)) params.displayAmount = d.chance(50) ? lotsText(grid, 100) : 100 * Number(grid.min);
    // Now and then by label (refused unless exactly one open order there carries it).
    const byLabel = d.chance(10);
    const { orderId: _, ...fieldsOnly } = params;
    const answer = byLabel
      ? await this.call(step, 'private/edit_by_label', {
          ...fieldsOnly,
          label: d.pick(LABELS),
          instrumentName: grid.name,
        })
      : await this.call(step, 'private/edit', params);
    if (answer.ok && !byLabel) {
      const edited = (answer.value as { order: { price: string } }).order;
      order.price = edited.price === 'market_price' ? null : edited.price;
    }
  }

  async cancel(step: Step, d: Dice): Promise<void> {
    const order = this.pickOrder(d, step.actor);
    if (order === undefined) return;
    await this.call(step, 'private/cancel', { orderId: order.orderId });
  }

  async cancelAll(step: Step, d: Dice): Promise<void> {
    const detailed = d.chance(40) ? { detailed: d.chance(70) } : {};
    const grid = this.pickInstrument(d);
    const type = d.chance(40)
      ? { type: d.pick(['all', 'limit', 'trigger_all', 'stop', 'take', 'trailing_stop']) }
      : {};
    const kind = d.chance(40)
      ? { kind: d.pick(['future', 'option', 'spot', 'future_combo', 'option_combo', 'combo', 'any']) }
      : {};
    const which = d.weighted([
      [3, 'private/cancel_all_by_instrument'],
      [3, 'private/cancel_all_by_currency'],
      [2, 'private/cancel_by_label'],
      [1, 'private/cancel_all'],
    ] as const);
    switch (which) {
      case 'private/cancel_all':
        await this.call(step, which, detailed);
        return;
      case 'private/cancel_all_by_instrument':
        await this.call(step, which, { instrumentName: grid.name, ...type, ...detailed });
        return;
      case 'private/cancel_all_by_currency':
        await this.call(step, which, {
          currency: d.pick(['BTC', 'ETH', 'USDC', 'btc', 'any']),
          ...kind,
          ...type,
          ...detailed,
        });
        return;
      case 'private/cancel_by_label':
        await this.call(step, which, {
          label: d.pick(LABELS),
          ...(d.chance(50) ? { currency: d.pick(['BTC', 'ETH', 'USDC']) } : {}),
          ...detailed,
        });
        return;
    }
  }

  async read(step: Step, d: Dice): Promise<void> {
    const currency = d.pick(['BTC', 'ETH', 'USDC', 'USDT', 'any', 'eth']);
    const kindFilter = d.chance(40)
      ? { kind: d.pick(['future', 'option', 'spot', 'future_combo', 'option_combo', 'combo', 'any']) }
      : {};
    const grid = this.pickInstrument(d);
    const now = this.world.running.service.core.now();
    const which = d.pick([
      'private/get_order_state',
      'private/get_open_orders',
      'private/get_open_orders_by_currency',
      'private/get_open_orders_by_instrument',
      'private/get_open_orders_by_label',
      'private/get_order_history_by_currency',
      'private/get_user_trades_by_currency',
      'private/get_user_trades_by_instrument',
      'private/get_user_trades_by_order',
      'private/get_positions',
      'private/get_position',
      'private/get_margins',
      'private/close_position',
      'private/get_account_summary',
      'private/get_account_summaries',
      'public/ticker',
      'public/get_book_summary_by_currency',
      'public/get_book_summary_by_instrument',
      'public/get_instrument',
      'public/get_index_price_names',
      'public/get_index_price',
      'public/get_order_book',
      'public/get_last_trades_by_instrument',
      'public/get_last_trades_by_currency',
      'public/get_instruments',
      'public/get_combo_ids',
      'public/get_combos',
      'public/get_combo_details',
      'private/create_combo',
    ] as const);
    const openType = d.chance(30)
      ? {
          type: d.pick(['all', 'limit', 'trigger_all', 'stop_all', 'take_all', 'trailing_all', 'stop_limit']),
        }
      : {};
    switch (which) {
      case 'private/get_order_state': {
        const order = this.pickOrder(d, step.actor);
        if (order !== undefined) await this.call(step, which, { orderId: order.orderId });
        return;
      }
      case 'private/get_open_orders':
        await this.call(step, which, { ...kindFilter, ...openType });
        return;
      case 'private/get_open_orders_by_currency':
        await this.call(step, which, { currency, ...kindFilter, ...openType });
        return;
      case 'private/get_open_orders_by_instrument':
        await this.call(step, which, { instrumentName: grid.name, ...openType });
        return;
      case 'private/get_open_orders_by_label':
        await this.call(step, which, { currency, label: d.pick(LABELS) });
        return;
      case 'private/get_order_history_by_currency': {
        const params: Record<string, unknown> = { currency, ...kindFilter };
        if (d.chance(40)) params.count = d.int(1, 30);
        if (d.chance(20)) params.offset = d.int(0, 20);
        if (d.chance(30)) params.includeUnfilled = true;
        if (d.chance(20)) params.includeOld = true;
        if (d.chance(20)) params.historical = true;
        if (d.chance(40)) params.withContinuation = true;
        const first = await this.call(step, which, params);
        const token = first.ok ? (first.value as { continuation?: string | null }).continuation : null;
        if (token) await this.call(step, which, { ...params, offset: null, continuation: token });
        return;
      }
      case 'private/get_user_trades_by_currency':
      case 'private/get_user_trades_by_instrument': {
        const params: Record<string, unknown> =
          which === 'private/get_user_trades_by_currency'
            ? { currency, ...kindFilter }
            : { instrumentName: grid.name };
        if (d.chance(40)) params.count = d.int(1, 20);
        if (d.chance(30)) params.sorting = d.pick(['asc', 'desc', 'default']);
        if (d.chance(20)) params.startTimestamp = now - d.int(0, 3_600_000);
        if (d.chance(20)) params.endTimestamp = now - d.int(0, 60_000);
        if (d.chance(15)) params.historical = true;
        if (d.chance(15)) params.includeOld = true;
        // Now and then under Deribit's *_and_time name, which requires both ends of the window.
        const method =
          d.chance(15) && params.startTimestamp !== undefined && params.endTimestamp !== undefined
            ? (`${which}_and_time` as const)
            : which;
        const first = await this.call(step, method, params);
        const token = first.ok ? (first.value as { continuation?: string | null }).continuation : null;
        if (token) await this.call(step, method, { ...params, continuation: token });
        return;
      }
      case 'private/get_positions':
        await this.call(step, which, {
          ...(d.chance(60) ? { currency: d.pick(['BTC', 'ETH', 'USDC']) } : {}),
          ...kindFilter,
        });
        return;
      case 'private/get_account_summary':
        await this.call(step, which, { currency: d.pick(['BTC', 'ETH', 'USDC', 'USDT', 'btc']) });
        return;
      case 'private/get_account_summaries':
        await this.call(step, which, {});
        return;
      case 'private/get_user_trades_by_order': {
        const order = this.pickOrder(d, step.actor);
        if (order !== undefined)
          await this.call(step, which, {
            orderId: order.orderId,
            ...(d.chance(30) ? { sorting: d.pick(['asc', 'desc', 'default']) } : {}),
          });
        return;
      }
      case 'private/get_position':
        await this.call(step, which, { instrumentName: grid.name });
        return;
      case 'private/get_margins': {
        const price = this.price(d, await this.reference(step, grid), d.pick(['buy', 'sell']));
        await this.call(step, which, { instrumentName: grid.name, ...this.size(d, grid).fields, price });
        return;
      }
      case 'private/close_position': {
        // A limit priced as an order's would be (near the mark, at the band's edges, off the
        // grid), or a market close.
        const limit = d.chance(50);
        const price = limit ? this.price(d, await this.reference(step, grid), d.pick(['buy', 'sell'])) : null;
        await this.call(step, which, {
          instrumentName: grid.name,
          type: limit ? 'limit' : 'market',
          ...(price === null ? {} : { price }),
        });
        return;
      }
      case 'public/get_index_price':
        await this.call(step, which, { indexName: d.pick(['btc_usd', 'eth_usd', 'usdc_usd', 'BTC_USD']) });
        return;
      case 'public/get_book_summary_by_currency':
        await this.call(step, which, { currency: d.pick(['BTC', 'ETH', 'USDC', 'any']), ...kindFilter });
        return;
      case 'public/ticker':
      case 'public/get_book_summary_by_instrument':
      case 'public/get_instrument':
        await this.call(step, which, { instrumentName: grid.name });
        return;
      case 'public/get_index_price_names':
        await this.call(step, which, {});
        return;
      case 'public/get_order_book':
        await this.call(step, which, {
          instrumentName: grid.name,
          ...(d.chance(50) ? { depth: d.int(1, 50) } : {}),
        });
        return;
      case 'public/get_last_trades_by_instrument':
      case 'public/get_last_trades_by_currency':
        await this.call(step, which, {
          ...(which === 'public/get_last_trades_by_currency'
            ? { currency, ...kindFilter }
            : { instrumentName: grid.name }),
          ...(d.chance(50) ? { count: d.int(1, 100) } : {}),
          ...(d.chance(30) ? { sorting: d.pick(['asc', 'desc', 'default']) } : {}),
          ...(d.chance(20) ? { startTimestamp: now - 600_000, endTimestamp: now } : {}),
        });
        return;
      case 'public/get_instruments':
        await this.call(step, which, { currency, ...kindFilter, ...(d.chance(20) ? { expired: true } : {}) });
        return;
      case 'public/get_combo_ids':
        await this.call(step, which, {
          currency,
          ...(d.chance(40) ? { state: d.pick(['active', 'inactive']) } : {}),
        });
        return;
      case 'public/get_combos':
        await this.call(step, which, { currency });
        return;
      case 'public/get_combo_details':
        await this.call(step, which, {
          comboId:
            d.chance(80) && this.world.universe.combos.length > 0
              ? d.pick(this.world.universe.combos)
              : grid.name,
        });
        return;
      case 'private/create_combo': {
        // A combo's own legs (sometimes all flipped, or in the other order), or any two instruments.
        const flip = d.chance(30);
        const legs = grid.legs ?? [
          { name: grid.name, ratio: 1 },
          { name: this.pickInstrument(d).name, ratio: -1 },
        ];
        const trades = legs.map((leg) => ({
          instrumentName: leg.name,
          direction: leg.ratio > 0 !== flip ? ('buy' as const) : ('sell' as const),
          ...(d.chance(30) ? { amount: d.pick(['1', '1.0', '2', '0.5']) } : {}),
        }));
        await this.call(step, which, { trades: d.chance(50) ? trades.reverse() : trades });
        return;
      }
    }
  }

  // ---- Block RFQ ---------------------------------------------------------------------------

  async rfq(step: Step, d: Dice): Promise<void> {
    // Taker actions from the taker keys, quotes from the maker keys (sometimes the wrong key).
    const taker = d.chance(5) ? step.actor : step.actor % 2 === 0 ? TAKER : MULTI;
    const maker = d.chance(5) ? step.actor : step.actor % 2 === 0 ? MAKER1 : MAKER2;
    const action = d.weighted([
      [25, 'create'],
      [25, 'quote'],
      [15, 'accept'],
      [6, 'edit_quote'],
      [5, 'cancel_quote'],
      [3, 'cancel_all_quotes'],
      [5, 'cancel_rfq'],
      [3, 'cancel_trigger'],
      [8, 'get'],
    ] as const);
    switch (action) {
      case 'create':
        return this.createRfq(step, d, taker);
      case 'quote':
        return this.quote(step, d, maker);
      case 'accept':
        return this.accept(step, d, taker);
      case 'edit_quote': {
        const known = this.world.quotes.filter((q) => q.actor === maker);
        if (known.length === 0) return this.quote(step, d, maker);
        const { quoteId } = d.pick(known);
        const quotes = await this.call(step, 'block/rfqs/get_quotes', { quoteId }, maker);
        const quote = quotes.ok ? (quotes.value as { blockRfqId: string }[])[0] : undefined;
        if (quote === undefined) return;
        return this.quote(step, d, maker, { quoteId, blockRfqId: quote.blockRfqId });
      }
      case 'cancel_quote': {
        const known = this.world.quotes.filter((q) => q.actor === maker);
        if (known.length > 0)
          await this.call(step, 'block/rfqs/cancel_quote', { quoteId: d.pick(known).quoteId }, maker);
        return;
      }
      case 'cancel_all_quotes':
        await this.call(step, 'block/rfqs/cancel_all_quotes', {}, maker);
        return;
      case 'cancel_rfq':
      case 'cancel_trigger': {
        const own = this.world.rfqs.filter((r) => r.actor === taker);
        if (own.length === 0) return;
        const { blockRfqId } = own[own.length - 1 - (d.int(0, 5) % own.length)]!;
        if (action === 'cancel_rfq') await this.call(step, 'block/rfqs/cancel_rfq', { blockRfqId }, taker);
        else
          await this.call(
            step,
            'block/rfqs/cancel_trigger',
            {
              blockRfqId,
              ...(d.chance(50) ? { side: d.pick(['buy', 'sell']) } : {}),
            },
            taker,
          );
        return;
      }
      case 'get': {
        const which = d.pick([
          'block/rfqs/get_rfqs',
          'block/rfqs/get_quotes',
          'block/rfqs/get_trades',
          'block/rfqs/get_instruments',
        ] as const);
        const actor = d.pick(ACTORS);
        const params: Record<string, unknown> =
          which === 'block/rfqs/get_rfqs'
            ? {
                ...(d.chance(40)
                  ? { status: d.pick(['created', 'open', 'filled', 'cancelled', 'expired']) }
                  : {}),
                ...(d.chance(30) ? { currency: d.pick(['BTC', 'eth', 'any', 'USDC']) } : {}),
                ...(d.chance(30) ? { count: d.int(1, 5) } : {}),
              }
            : which === 'block/rfqs/get_quotes'
              ? {}
              : which === 'block/rfqs/get_trades'
                ? { currency: d.pick(['BTC', 'ETH', 'any']), ...(d.chance(30) ? { count: d.int(1, 5) } : {}) }
                : {
                    currency: d.pick(['BTC', 'ETH', 'usdc', 'any']),
                    ...(d.chance(50) ? { kind: d.pick(['option', 'future']) } : {}),
                  };
        await this.call(step, which, params, actor);
        return;
      }
    }
  }

  async createRfq(step: Step, d: Dice, taker: number): Promise<void> {
    const u = this.world.universe;
    const family = d.weighted([
      [6, u.options],
      [3, u.linearOptions],
      [1, u.perps],
    ] as const);
    if (family.length === 0) return;
    const first = d.pick(family);
    const grid = u.grids.get(first)!;
    // Legs of one expiry and currency pair (most of the time), one to three.
    const sameExpiry = family.filter((n) => {
      const other = u.grids.get(n);
      return n !== first && other?.expiration === grid.expiration && other.base === grid.base;
    });
    const count =
      grid.kind === 'option'
        ? d.weighted([
            [5, 1],
            [4, 2],
            [1, 3],
          ] as const)
        : 1;
    const names = [first];
    for (let i = 1; i < count && sameExpiry.length > 0; i++) {
      const name = d.pick(sameExpiry);
      if (!names.includes(name)) names.push(name);
    }
    const block = Number(grid.blockMin);
    const multiple = d.weighted([
      [6, 1],
      [3, 2],
      [1, 4],
    ] as const);
    const legs = names.map((name, i) => ({
      instrumentName: name,
      side: i === 0 ? d.pick(['buy', 'sell']) : d.pick(['sell', 'buy']),
      quantity: d.chance(5)
        ? d.pick([lotsText(grid, 1), stepsText(grid.min, d.pick(EXTREME_COUNTS))])
        : trim((block * (i === 0 ? multiple : d.pick([1, multiple]))).toFixed(decimalsOf(grid.min))),
    }));
    const params: Record<string, unknown> = { legs };
    if (d.chance(30)) params.label = d.pick(LABELS);
    if (d.chance(30)) params.makers = d.pick([['MAKER1'], ['MAKER2'], ['MAKER1', 'MAKER2'], ['NOBODY']]);
    if (d.chance(20)) params.disclosed = d.chance(50);
    const perp = u.perps.find((p) => u.grids.get(p)?.base === grid.base);
    if (grid.kind === 'option' && !grid.linear && perp !== undefined && d.chance(15)) {
      const perpGrid = u.grids.get(perp)!;
      const ref = await this.reference(step, perpGrid);
      params.hedge = {
        instrumentName: perp,
        side: d.pick(['buy', 'sell']),
        quantity: lotsText(perpGrid, d.int(1, 100)),
        price: priceText(perpGrid, ref.mark ?? 1),
      };
    }
    const answer = await this.call(step, 'block/rfqs/create_rfq', params, taker);
    if (answer.ok)
      this.world.rfqs.push({ actor: taker, blockRfqId: (answer.value as { blockRfqId: string }).blockRfqId });
  }

  async quote(
    step: Step,
    d: Dice,
    maker: number,
    editing?: { quoteId: string; blockRfqId: string },
  ): Promise<void> {
    type MakerRfq = {
      blockRfqId: string;
      quantity: string;
      legs: { instrumentName: string; ratio: string; side: 'buy' | 'sell' }[];
      hedge?: { instrumentName: string; quantity: string; side: string; price: string };
    };
    const seen = await this.call(
      step,
      'block/rfqs/get_rfqs',
      editing
        ? { blockRfqId: editing.blockRfqId, role: 'maker' }
        : { role: 'maker', ...(d.chance(70) ? { status: d.pick(['open', 'created']) } : {}) },
      maker,
    );
    if (!seen.ok) return;
    const rfqs = (seen.value as { results: MakerRfq[] }).results;
    if (rfqs.length === 0) return;
    const rfq = rfqs[d.int(0, 3) % rfqs.length]!;
    const side = d.pick(['sell', 'buy'] as const);
    const legs = [];
    for (const leg of rfq.legs) {
      const grid = this.world.universe.grids.get(leg.instrumentName);
      if (grid === undefined) return;
      const ref = await this.reference(step, grid);
      const mark = ref.mark ?? 1;
      // A maker selling the structure asks a bit above the marks of the legs it sells... roughly.
      const edge = (leg.side === 'buy') === (side === 'sell') ? 1 : -1;
      const ticks = Math.max(1, snap(grid, mark + edge * d.int(-2, 8) * tickAt(grid, mark)));
      legs.push({
        instrumentName: leg.instrumentName,
        ratio: leg.ratio,
        side: leg.side,
        price: d.chance(3) ? stepsText(grid.tick, d.pick(EXTREME_COUNTS)) : priceText(grid, ticks),
      });
    }
    const params: Record<string, unknown> = {
      executionInstruction: d.pick(['any_part_of', 'all_or_none']),
      side,
      quantity: d.chance(20) ? trim((Number(rfq.quantity) / 2).toFixed(6)) : rfq.quantity,
      legs,
    };
    if (rfq.hedge !== undefined)
      params.hedge = { ...rfq.hedge, side: rfq.hedge.side === 'buy' ? 'buy' : 'sell' };
    if (d.chance(20)) params.label = d.pick(LABELS);
    if (d.chance(15)) params.expiresAt = this.world.running.service.core.now() + d.pick([-1, 2_000, 60_000]);
    const answer = editing
      ? await this.call(step, 'block/rfqs/edit_quote', { quoteId: editing.quoteId, ...params }, maker)
      : await this.call(step, 'block/rfqs/create_quote', { blockRfqId: rfq.blockRfqId, ...params }, maker);
    if (answer.ok && !editing)
      this.world.quotes.push({ actor: maker, quoteId: (answer.value as { quoteId: string }).quoteId });
  }

  async accept(step: Step, d: Dice, taker: number): Promise<void> {
    type View = {
      blockRfqId: string;
      quantity: string;
      legs: { instrumentName: string; ratio: string; side: string }[];
      bids?: { price: string }[];
      asks?: { price: string }[];
      hedge?: { instrumentName: string; quantity: string; side: string; price: string };
    };
    let view: View | undefined;
    if (d.chance(70)) {
      // An open RFQ of the taker's with quotes, when there is one.
      const open = await this.call(step, 'block/rfqs/get_rfqs', { role: 'taker', status: 'open' }, taker);
      const quoted = open.ok
        ? (open.value as { results: View[] }).results.filter(
            (r) => (r.asks?.length ?? 0) + (r.bids?.length ?? 0) > 0,
          )
        : [];
      if (quoted.length > 0) view = d.pick(quoted);
    }
    if (view === undefined) {
      const own = this.world.rfqs.filter((r) => r.actor === taker);
      if (own.length === 0) return;
      const { blockRfqId } = own[own.length - 1 - (d.int(0, 4) % own.length)]!;
      const seen = await this.call(step, 'block/rfqs/get_rfqs', { blockRfqId }, taker);
      view = seen.ok ? (seen.value as { results: View[] }).results[0] : undefined;
    }
    if (view === undefined) return;
    const blockRfqId = view.blockRfqId;
    // Mostly the side that has quotes to trade with.
    const asks = view.asks ?? [];
    const bids = view.bids ?? [];
    const quoted = asks.length > 0 && (bids.length === 0 || d.chance(50)) ? 'buy' : 'sell';
    const side =
      (asks.length > 0 || bids.length > 0) && !d.chance(15) ? quoted : d.pick(['buy', 'sell'] as const);
    const best = side === 'buy' ? asks[0]?.price : bids[0]?.price;
    const price = d.chance(3)
      ? d.pick(['999999999999', '-999999999999', '9007199254740993'])
      : (best ?? d.pick(['0.01', '0.0001', '1', '-0.01']));
    const params: Record<string, unknown> = { blockRfqId, side, price };
    if (d.chance(30)) params.timeInForce = d.pick(['fill_or_kill', 'good_til_cancelled']);
    if (d.chance(20))
      params.quantity = d.chance(50) ? view.quantity : trim((Number(view.quantity) / 2).toFixed(6));
    if (d.chance(20))
      params.legs = view.legs.map((l) => ({
        instrumentName: l.instrumentName,
        ratio: l.ratio,
        side: l.side,
      }));
    if (view.hedge !== undefined && d.chance(50)) params.hedge = view.hedge;
    await this.call(step, 'block/rfqs/accept', params, taker);
  }

  // ---- portfolios ----------------------------------------------------------------------------

  async portfolio(step: Step, d: Dice): Promise<void> {
    const actor = step.actor;
    const accounts = this.world.accountsOf(actor);
    const action = d.weighted([
      [50, 'submit'],
      [25, 'info'],
      [15, 'cancel'],
      [5, 'cancel_all'],
    ] as const);
    const anyone = d.chance(5);
    const known = this.world.portfolios.filter((p) => anyone || p.actor === actor);
    if (action === 'info' || action === 'cancel') {
      if (known.length === 0) return this.submitPortfolio(step, d, accounts);
      const p = known[known.length - 1 - (d.int(0, 5) % known.length)]!;
      if (action === 'info')
        await flat(this.world, this.stats, actor, 'GET', `info?portfolioId=${p.portfolioId}`);
      else
        await flat(this.world, this.stats, actor, 'POST', 'cancel', {
          portfolioId: p.portfolioId,
          ...(d.chance(50) ? { accountId: p.accountId } : {}),
        });
      return;
    }
    if (action === 'cancel_all') {
      await flat(this.world, this.stats, actor, 'POST', 'cancel-all', {
        accountId: d.pick(accounts),
        ...(d.chance(50) ? { portfolioType: d.pick(['BALANCE', 'TWAP', 'COMMON', 'ICEBERG']) } : {}),
      });
      return;
    }
    return this.submitPortfolio(step, d, accounts);
  }

  async portfolioLeg(step: Step, d: Dice, grid: Grid, type: string): Promise<Record<string, unknown>> {
    const ref = await this.reference(step, grid);
    const markPrice = ref.markPrice ?? Number(grid.tick);
    const instrumentType =
      grid.kind === 'option'
        ? 'OPTION'
        : grid.kind === 'spot'
          ? 'SPOT'
          : grid.expiration === null
            ? 'PERPETUAL'
            : 'DELIVERY_FUTURES';
    const priceType = d.weighted([
      [70, 'LIMIT'],
      [15, 'MARKET'],
      [15, 'DYNAMIC'],
    ] as const);
    const quote = grid.kind === 'option' ? (grid.linear ? 'USDC' : grid.base) : grid.linear ? 'USDC' : 'USD';
    const away = 1 + d.int(-20, 20) / 1000;
    let priceIn = quote;
    let price = markPrice * away;
    const unit =
      grid.kind === 'option'
        ? d.weighted([
            [70, quote],
            [15, 'IV'],
            [15, grid.linear ? quote : 'USD'],
          ] as const)
        : quote;
    if (unit === 'IV') {
      priceIn = 'IV';
      price = Math.round(ref.markIv ?? 50);
    } else if (unit === 'USD' && grid.kind === 'option') {
      priceIn = 'USD';
      price = markPrice * (ref.index ?? 60_000);
    }
    const text = d.chance(3)
      ? d.pick(['999999999.99', '999999999', '0.00000000000000000001', '1000'])
      : Number(price.toPrecision(6)).toString();
    const options: Record<string, unknown> = { priceType };
    if (priceType !== 'MARKET' || d.chance(20)) {
      options.price =
        type === 'BALANCE' ? text : type === 'TWAP' ? Number(text) : d.chance(50) ? text : Number(text);
      options.priceIn = priceIn;
    }
    if (priceType === 'DYNAMIC') {
      options.dynamicPriceStrategy = d.pick(['MID', 'MARK', 'MODEL', 'BID', 'ASK']);
      if (d.chance(50))
        options.dynamicPriceOffset = d.pick([
          0,
          '0',
          -1 * Number(grid.tick),
          Number(grid.tick) * 2,
          -999_999_999.5,
          '999999999.99999999999',
        ]);
      if (type === 'TWAP' || d.chance(50)) options.dynamicMs = d.pick([100, 500, 2_000]);
    }
    const leg: Record<string, unknown> = {
      instrument: grid.name,
      instrumentType,
      side: d.pick([1, 2]),
      quantity: d.chance(3)
        ? stepsText(grid.min, d.pick(EXTREME_COUNTS))
        : lotsText(
            grid,
            d.weighted([
              [6, d.int(1, 20)],
              [3, d.int(20, 200)],
              [1, 1_000],
            ] as const),
          ),
      priceOptions: options,
    };
    if (d.chance(20)) leg.timeInForce = d.pick([1, 2, 3, 4]);
    if (d.chance(10)) leg.postOnly = true;
    if (d.chance(10)) leg.reduceOnly = true;
    if (d.chance(15)) leg.hidden = true;
    return leg;
  }

  async submitPortfolio(step: Step, d: Dice, accounts: number[]): Promise<void> {
    const u = this.world.universe;
    const type = d.weighted([
      [3, 'TWAP'],
      [3, 'BALANCE'],
      [3, 'COMMON'],
      [2, 'ICEBERG'],
    ] as const);
    const family = d.weighted([
      [4, u.perps],
      [3, u.options],
      [1, u.linearPerps],
      [1, u.linearOptions],
      [1, u.spots],
      [1, u.futures],
    ] as const);
    const first = u.grids.get(d.pick(family.length > 0 ? family : u.perps))!;
    const legs = [await this.portfolioLeg(step, d, first, type)];
    if (type !== 'ICEBERG' && d.chance(40)) {
      // A second leg of the same expiry (a spread COMMON lists as a combo) or a hedge.
      const partner =
        first.kind === 'option'
          ? d.pick(
              (first.linear ? u.linearOptions : u.options).filter(
                (n) => u.grids.get(n)?.expiration === first.expiration,
              ),
            )
          : d.pick(u.perps);
      const partnerGrid = u.grids.get(partner);
      if (partnerGrid !== undefined && partner !== first.name)
        legs.push(await this.portfolioLeg(step, d, partnerGrid, type));
    }
    const accountId = d.chance(3) ? 999 : accounts[0]!;
    const body: Record<string, unknown> = { accountId, portfolioType: type, legs };
    if (d.chance(30)) body.strategy = d.pick(['Custom', 'Straddle', 'Spread']);
    const minLots = Math.min(
      ...legs.map((l) => Math.round(Number(l.quantity) / Number(u.grids.get(String(l.instrument))!.min))),
    );
    switch (type) {
      case 'TWAP':
        body.twapTrade = {
          startTimestamp: d.chance(20) ? this.world.running.service.core.now() + d.int(0, 5_000) : null,
          durationSec: d.int(1, 60),
          frequencySec: d.int(1, 10),
        };
        break;
      case 'BALANCE':
        body.balanceTrade = {
          parts: Math.max(1, Math.min(minLots, d.int(1, 4))),
          eachLimitMs: d.pick([1_000, 5_000, 60_000]),
          totalLimitMs: d.pick([0, 0, 10_000]),
          totalEndAction: d.pick([1, 2]),
        };
        break;
      case 'ICEBERG': {
        const grid = first;
        const display = Math.max(1, Math.floor(minLots / d.int(1, 5)));
        body.icebergTrade = {
          displayQuantity: lotsText(grid, display),
          ...(d.chance(30) ? { refreshQuantity: lotsText(grid, Math.max(1, Math.floor(display / 2))) } : {}),
        };
        break;
      }
      case 'COMMON':
        break;
    }
    if (accounts.length > 1 && d.chance(50)) body.sendToDummyAccountIds = accounts.slice(1);
    const answer = await flat(this.world, this.stats, step.actor, 'POST', 'submit', body);
    if (answer.ok)
      this.world.portfolios.push({
        actor: step.actor,
        portfolioId: (answer.value as { portfolioId: number }).portfolioId,
        accountId,
      });
  }

  // ---- MMP, time, sessions -------------------------------------------------------------------

  async mmp(step: Step, d: Dice): Promise<void> {
    const indexName = d.pick(['btc_usd', 'eth_usd']);
    const which = d.weighted([
      [5, 'private/set_mmp_config'],
      [2, 'private/get_mmp_config'],
      [2, 'private/reset_mmp'],
    ] as const);
    if (which === 'private/set_mmp_config') {
      await this.call(step, which, {
        indexName,
        interval: d.pick([10, 60, 1, 0]),
        frozenTime: d.pick([0, 1, 5]),
        quantityLimit: d.pick(['100', '1', '0.5', 20, '99999999999999999999', 1e308, '9007199254740993']),
        ...(d.chance(30) ? { deltaLimit: d.pick(['10', '0.5']) } : {}),
        ...(d.chance(20) ? { vegaLimit: '1000' } : {}),
      });
    } else if (which === 'private/get_mmp_config') {
      await this.call(step, which, d.chance(50) ? { indexName } : {});
    } else {
      await this.call(step, which, { indexName });
    }
  }

  async advance(d: Dice): Promise<void> {
    const ms = d.weighted([
      [60, d.int(100, 1_000)],
      [28, d.int(1_000, 3_000)],
      [8, d.int(3_000, 8_000)],
      [4, d.int(60_000, 1_200_000)],
    ] as const);
    await advanceClock(this.world.running, ms);
    // Expiries come and go with big moves: trade what is listed now (and what expired, a little).
    if (ms >= 60_000) await this.world.loadUniverse();
  }

  async session(step: Step, d: Dice): Promise<void> {
    const ws = this.world.ws[step.actor]!;
    const action = d.weighted([
      [3, 'enable_cod'],
      [2, 'drop'],
      [1, 'disable_cod'],
      [1, 'get_cod'],
      [4, 'subscribe'],
      [1, 'respell'],
      [2, 'unsubscribe'],
    ] as const);
    if (action === 'drop') {
      // The reconnect resubscribes: every channel starts again at seq 1.
      for (const channel of this.world.heldChannels(step.actor))
        this.world.restartAllowed.add(`${step.actor} ${channel}`);
      // Its close comes before the reconnect that `connected` waits for.
      this.world.dropping.add(step.actor);
      try {
        ws.dropConnection();
        await until(() => ws.connected, 5_000);
      } finally {
        this.world.dropping.delete(step.actor);
      }
      return;
    }
    if (action === 'subscribe' || action === 'respell') {
      const grid = this.pickInstrument(d);
      const channel =
        action === 'respell'
          ? // Another spelling of a channel held all along: answered under the held name, no new snapshot.
            d.pick(['user.orders.any.ANY', 'user.trades.any.Any', 'user.orders.option.btc'])
          : d.pick([
              `book.${grid.name}`,
              `ticker.${grid.name}`,
              `trades.${grid.name}`,
              `user.orders.${d.pick(['future', 'option', 'spot', 'future_combo', 'combo'])}.${d.pick(['BTC', 'ETH', 'USDC', 'any'])}`,
              `user.trades.${d.pick(['option', 'spot', 'option_combo', 'any'])}.${d.pick(['BTC', 'ETH', 'USDC'])}`,
              `block_rfq.${d.pick(['taker', 'maker'])}.${d.pick(['BTC', 'ETH', 'any'])}`,
              `user.mmp_trigger.${d.pick(['btc_usd', 'eth_usd'])}`,
            ]);
      if (!ws.connected) return;
      try {
        await ws.subscribe([channel], this.world.listeners[step.actor]);
        this.stats.add('ws subscribe', 'ok');
      } catch (error) {
        refusal(this.stats, 'ws subscribe', `subscribe ${channel}`, error);
      }
      return;
    }
    if (action === 'unsubscribe') {
      const held = this.world
        .heldChannels(step.actor)
        .filter(
          (c) => !USER_CHANNELS.includes(c) && !STANDING_CHANNELS.includes(c) && !c.startsWith('block_rfq'),
        );
      if (held.length === 0 || !ws.connected) return;
      const channel = d.pick(held);
      try {
        await ws.unsubscribe([channel]);
        this.stats.add('ws unsubscribe', 'ok');
        // A later subscription counts from 1 again.
        this.world.seqs.delete(`${step.actor} ${channel}`);
      } catch (error) {
        refusal(this.stats, 'ws unsubscribe', `unsubscribe ${channel}`, error);
      }
      return;
    }
    const method =
      action === 'enable_cod'
        ? 'private/enable_cancel_on_disconnect'
        : action === 'disable_cod'
          ? 'private/disable_cancel_on_disconnect'
          : 'private/get_cancel_on_disconnect';
    await this.call(
      { ...step, via: 'ws' },
      method,
      d.chance(30) ? { scope: d.pick(['connection', 'account']) } : {},
    );
  }
}

/**
 * Moves the virtual clock, a market tick at a time (the market loop schedules its next tick only
 * once the last one is done), waiting for each tick and every timer command to be durable.
 */
async function advanceClock(running: TestService, ms: number): Promise<void> {
  const settle = async () => {
    await running.service.market.idle();
    await running.service.core.drain();
  };
  let left = ms;
  if (left > 5_000) {
    // A jump: one tick on the way (expiries, marks), the rest of the way a second at a time.
    running.clock.advance(left - 1_000);
    left = 1_000;
    await settle();
  }
  while (left > 0) {
    const chunk = Math.min(left, 1_000);
    running.clock.advance(chunk);
    left -= chunk;
    await settle();
  }
}

// ---------------------------------------------------------------------------------------------

describe('gateway chaos: valid-shaped requests through the whole service', () => {
  let world: World;
  const logs: string[] = [];
  const stats = new Stats();
  const allLogs: string[] = [];

  const logger = pino({ level: 'error' }, { write: (line: string) => void logs.push(line) });

  async function ready(running: TestService, previous?: World): Promise<World> {
    const next = new World(running, logs);
    if (previous !== undefined) next.adopt(previous);
    await next.connect();
    await advanceClock(running, 1_000);
    if (previous === undefined) await next.loadUniverse();
    return next;
  }
  const fresh = async () => ready(await startTestService({ logger, clock: new VirtualClock(START) }));

  before(async () => {
    world = await fresh();
  });
  after(async () => {
    await world.close();
  });

  test('no internal error, no fatal core, contiguous user pushes', async (t) => {
    let failedOnce = false;
    let runIndex = 0;
    const restartAt = new Set(
      Array.from({ length: RESTARTS }, (_, i) => Math.floor(((i + 1) * RUNS) / (RESTARTS + 1)) + 1),
    );
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: STEPS, size: 'max' }), async (steps) => {
        runIndex++;
        if (failedOnce && SHRINK) {
          await world.close().catch(() => {});
          world = await fresh();
        } else if (restartAt.has(runIndex)) {
          // A graceful restart: snapshot, recovery, the same ids and data (orders, RFQs, portfolios).
          for (const ws of world.ws) await ws.close();
          const running = await world.running.restart();
          assert.ok(running.service.recovery.ok, JSON.stringify(running.service.recovery));
          assert.deepEqual(running.service.recovery.mismatches, []);
          world = await ready(running, world);
        }
        const runner = new Runner(world, stats);
        allLogs.push(...logs);
        logs.length = 0;
        world.pushErrors.length = 0;
        try {
          for (const [i, step] of steps.entries()) {
            try {
              await runner.run(step);
            } catch (error) {
              if (error instanceof Failure)
                throw new Failure(`step ${i} ${JSON.stringify(step)}: ${error.message}`);
              throw error;
            }
            const failed = world.running.service.core.failed;
            if (failed !== null)
              throw new Failure(`step ${i} ${JSON.stringify(step)}: the core stopped: ${failed.stack}`);
          }
          await world.running.service.core.drain();
          await new Promise((resolve) => setImmediate(resolve));
          await world.checkCloses();
          assert.deepEqual(
            world.pushErrors,
            [],
            'pushes keep their seq contiguous, with plain decimals; connections close only as slow consumers',
          );
          // Nothing unexpected behind the answers either (push producers, timers, the market loop).
          assert.deepEqual(logs, [], 'no error logged by the service');
          assert.equal(world.running.service.core.failed, null);
        } catch (error) {
          failedOnce = true;
          const tail = logs.slice(-5).join('');
          throw new Error(
            `${error instanceof Error ? error.message : String(error)}\nservice log (errors):\n${tail}`,
            {
              cause: error,
            },
          );
        }
      }),
      {
        numRuns: RUNS,
        includeErrorInReport: true,
        ...(SEED === undefined ? {} : { seed: SEED }),
        ...(SHRINK ? {} : { endOnFailure: true }),
      },
    );
    const places = stats.total(PLACES);
    const writes = stats.total((m) => WRITES.has(m));
    const summary = [
      `${RUNS} runs × ≤${STEPS} steps in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      `orders placed: ${places.ok}/${places.all} accepted; writes: ${writes.ok}/${writes.all} accepted`,
    ];
    for (const line of summary) t.diagnostic(line);
    if (VERBOSE)
      console.error(
        `${summary.join('\n')}\n${stats.table()}\nerror logs: ${allLogs.length}\n${allLogs.slice(0, 5).join('')}`,
      );
    // The chaos must keep reaching the engine: mostly valid requests, not validation refusals.
    assert.ok(places.ok * 3 >= places.all, `only ${places.ok} of ${places.all} orders accepted`);
  });
});
