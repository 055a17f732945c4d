/**
 * The engine: one deterministic state machine per shard. `execute(command)` applies one
 * stamped command and returns its result with the events it caused; read methods answer
 * queries without changing anything.
 *
 * Invariants:
 * - Pure: no I/O, no clock, no randomness. Time is `command.ts` (never moves backwards: an
 *   older ts is treated as the current time). Same commands ⇒ same events and `stateHash()`.
 * - Before every command, good-til-day orders whose session ended at ts are cancelled.
 * - Refusals are results (`ok: false`), never exceptions; an exception means a bug.
 */
import { createHash } from 'node:crypto';
import type { CoreCommand } from '../core/commands.ts';
import type {
  CommandResult,
  CommandSuccess,
  CoreError,
  OrderView,
  PositionView,
  TradeView,
} from '../core/events.ts';
import type { SelfTradeMode } from '../core/types.ts';
import { instrumentCurrencies } from '../domain/currency.ts';
import type { Instrument, InstrumentKind } from '../domain/instrument.ts';
import type { Fixing } from '../market/settlement.ts';
import { afterCommand, isAdvancedPlace, placeAdvanced, waitingOrders } from './advanced-orders.ts';
import { validateAdvanced } from './advanced-snapshot.ts';
import {
  cancelCodSessions,
  codSessionOrders,
  setAccountCancelOnDisconnect,
  setCancelOnDisconnect,
} from './cod-sessions.ts';
import { comboLegs, legSide } from './combo-legs.ts';
import { type EngineConfig, engineConfig } from './config.ts';
import {
  blockTrade,
  createAccount,
  expireDue,
  listInstrument,
  moveFunds,
  setAccountSettings,
  settleInstrument,
  updatePrices,
} from './lifecycle.ts';
import { clipReduceOnly } from './matching.ts';
import { type MmpStatus, mmpStatus, resetMmp, setMmpConfig } from './mmp.ts';
import type { Order } from './order.ts';
import { type FundsView, floatingPnl, funds, orderReserve, type PriceBand, priceBand } from './risk.ts';
import { restoreState, takeSnapshot, type VenueSnapshot } from './snapshot.ts';
import { type InstrumentState, VenueState } from './state.ts';
import {
  openInterestOf,
  pruneTradeStats,
  type TradeStatsView,
  tradeStatsExpiry,
  tradeStatsView,
} from './trade-stats.ts';
import { cancelAll, cancelOrder, editOrder, lookup, placeOrder, priceProblem } from './trading.ts';

export interface OpenOrderFilter {
  readonly accountId: number;
  readonly instrumentName?: string | null;
  /** A currency the instrument is filed under (`Instrument.filedUnder`: base or settlement). */
  readonly currency?: string | null;
  /** InstrumentKind, 'combo' or 'any'. */
  readonly kind?: string | null;
  readonly label?: string | null;
  readonly owner?: string | null;
}

export interface BookLevelView {
  /** Ticks. */
  readonly price: number;
  /** Visible lots (hidden orders excluded). */
  readonly amount: number;
  readonly orders: number;
}

export interface BookView {
  readonly instrumentName: string;
  readonly bids: readonly BookLevelView[];
  readonly asks: readonly BookLevelView[];
  readonly bestBid: number | null;
  readonly bestAsk: number | null;
}

export interface InstrumentInfo {
  readonly instrument: Instrument;
  readonly status: 'open' | 'expired';
  readonly markPrice: number | null;
  readonly indexPrice: number | null;
  readonly lastPrice: number | null;
  readonly tradeSeq: number;
  readonly settlementPrice: number | null;
  /** Allowed order prices when a mark is known (ticker min/max price). */
  readonly priceBand: PriceBand | null;
}

export interface AccountSummary extends FundsView {
  readonly accountId: number;
  readonly currency: string;
  /** The account's self-trade prevention mode (per account, the same in every currency). */
  readonly selfTradeMode: SelfTradeMode;
}

export interface AccountInfo {
  readonly accountId: number;
  readonly userId: number | null;
  readonly selfTradeMode: SelfTradeMode;
  readonly maxOpenOrders: number;
  readonly openOrderCount: number;
  readonly currencies: readonly string[];
}

/**
 * How long after its expiration an expired instrument is still listed as recently expired
 * (`instruments({ expired: true })`, `listedInstruments(true)`): docs/decisions.md.
 */
export const RECENTLY_EXPIRED_MS = 3 * 24 * 3_600_000;

/**
 * The open instruments apart from the expired ones, so the listings read every market tick and
 * by `public/get_instruments` do not walk every instrument ever listed. Derived from the state
 * (its `instrumentList` only grows, and an instrument's status only goes from open to expired),
 * caught up on read: not state, not saved, rebuilt after a restore.
 */
class Listing {
  /** Open instruments in listing order (a Set keeps insertion order through deletes). */
  readonly open = new Set<InstrumentState>();
  /** Expired instruments still recent, or seen expired since the last prune; by id once sorted. */
  private expired: InstrumentState[] = [];
  private expiredSorted = true;
  /** Currencies of every instrument ever listed (`venueCurrencies`' set). */
  readonly currencies = new Set<string>();
  private scanned = 0;

  constructor(private readonly state: VenueState) {}

  /** Takes in the instruments listed and settled since the last call. O(open + new). */
  catchUp(): void {
    const list = this.state.instrumentList;
    let expiredMore = false;
    for (; this.scanned < list.length; this.scanned++) {
      const entry = list[this.scanned]!;
      for (const currency of instrumentCurrencies(entry.instrument.spec)) this.currencies.add(currency);
      if (entry.status === 'open') this.open.add(entry);
      else {
        this.expired.push(entry);
        expiredMore = true;
      }
    }
    for (const entry of this.open) {
      if (entry.status === 'open') continue;
      this.open.delete(entry);
      this.expired.push(entry);
      expiredMore = true;
    }
    if (expiredMore) {
      this.expiredSorted = false;
      this.pruneExpired();
    }
  }

  /** Recently expired instruments in listing order. */
  recentlyExpired(): readonly InstrumentState[] {
    this.pruneExpired();
    if (!this.expiredSorted) {
      this.expired.sort((a, b) => a.id - b.id);
      this.expiredSorted = true;
    }
    return this.expired;
  }

  /**
   * Drops the expired instruments whose expiration is more than `RECENTLY_EXPIRED_MS` before
   * the venue's time; one without an expiration (a perpetual or spot pair an operator settled)
   * stays.
   */
  private pruneExpired(): void {
    const since = this.state.now - RECENTLY_EXPIRED_MS;
    const recent = (entry: InstrumentState) => {
      const expiration = entry.instrument.spec.expiration;
      return expiration === null || expiration >= since;
    };
    if (!this.expired.every(recent)) this.expired = this.expired.filter(recent);
  }
}

export class Venue {
  private readonly listing: Listing;

  private constructor(private readonly state: VenueState) {
    this.listing = new Listing(state);
  }

  static create(config: Partial<EngineConfig> = {}): Venue {
    return new Venue(new VenueState(engineConfig(config)));
  }

  static restore(snapshot: VenueSnapshot): Venue {
    return new Venue(restoreState(snapshot));
  }

  get config(): EngineConfig {
    return this.state.config;
  }

  /** Closed orders the venue still keeps (at most `config.recentClosedOrders`, the newest). */
  closedOrderCount(): number {
    return this.state.closedOrders.reduce((count, order) => (order === undefined ? count : count + 1), 0);
  }

  /** Time of the last command (ms). */
  get now(): number {
    return this.state.now;
  }

  /**
   * When the engine next has something due (a good_til_day expiry, an advanced order's expiry,
   * trades leaving the ticker's 24 h window), or null.
   */
  nextWakeup(): number | null {
    this.state.expiries.prune();
    const at = Math.min(
      this.state.expiries.nextAt(),
      this.state.advanced.nextExpiry(),
      tradeStatsExpiry(this.state),
    );
    return Number.isFinite(at) ? at : null;
  }

  execute(command: CoreCommand): CommandResult {
    const result = this.dispatch(command);
    if (!result.ok) {
      if (this.state.reduceOnlyChecks.length !== 0) this.state.reduceOnlyChecks = [];
      return result;
    }
    const before = this.state.events.length;
    // Reduce-only orders follow the positions the command's fills changed.
    clipReduceOnly(this.state);
    // Advanced orders (triggers, linked, MMP, usd/implv) react to what the command did.
    if (this.state.advanced.active || command.type === 'update_prices') afterCommand(this.state, command);
    if (result.order !== undefined && this.state.events.length > before) return withReactions(result, before);
    return result;
  }

  private dispatch(command: CoreCommand): CommandResult {
    const state = this.state;
    state.events = [];
    if (command.ts > state.now) state.now = command.ts;
    if (state.expiries.nextAt() <= state.now) expireDue(state);
    if (tradeStatsExpiry(state) <= state.now) pruneTradeStats(state);
    switch (command.type) {
      case 'place_order':
        return isAdvancedPlace(command) ? placeAdvanced(state, command) : placeOrder(state, command);
      case 'cancel_order':
        return cancelOrder(state, command);
      case 'edit_order':
        return editOrder(state, command);
      case 'cancel_all':
        return cancelAll(state, command);
      case 'set_cancel_on_disconnect':
        return setCancelOnDisconnect(state, command);
      case 'set_account_cancel_on_disconnect':
        return setAccountCancelOnDisconnect(state, command);
      case 'cancel_cod_sessions':
        return cancelCodSessions(state, command);
      case 'update_prices':
        return updatePrices(state, command);
      case 'create_account':
        return createAccount(state, command);
      case 'set_account_settings':
        return setAccountSettings(state, command);
      case 'deposit':
      case 'withdraw':
        return moveFunds(state, command);
      case 'list_instrument':
        return listInstrument(state, command);
      case 'settle_instrument':
        return settleInstrument(state, command);
      case 'block_trade':
        return blockTrade(state, command);
      case 'set_mmp_config':
        return setMmpConfig(state, command);
      case 'reset_mmp':
        return resetMmp(state, command);
      case 'timer':
        return { ok: true, events: state.events };
      default: {
        const _exhaustive: never = command;
        throw new Error(`unknown command ${JSON.stringify(_exhaustive)}`);
      }
    }
  }

  // ---- queries ------------------------------------------------------------------------------

  /** An open order or a recently closed one (the last `recentClosedOrders`). */
  getOrder(orderId: string): OrderView | null {
    return this.state.orders.get(orderId)?.toView() ?? null;
  }

  /**
   * The ids of the open and waiting orders that belong to a cancel-on-disconnect session, by
   * session (cod-sessions.ts). Empty when no WebSocket connection has cancel-on-disconnect on.
   */
  codSessionOrders(): Map<string, string[]> {
    return codSessionOrders(this.state);
  }

  /**
   * The account's cancel-on-disconnect default (`account` scope): connections that authenticate
   * for it start with cancel-on-disconnect on. False for an unknown account.
   */
  accountCancelOnDisconnect(accountId: number): boolean {
    return this.state.accounts.get(accountId)?.cancelOnDisconnect ?? false;
  }

  /** MMP configs and current window sums of an account, by index name. */
  mmpConfig(accountId: number, indexName?: string | null): MmpStatus[] {
    const all = mmpStatus(this.state, accountId);
    return indexName == null ? all : all.filter((s) => s.indexName === indexName);
  }

  /**
   * Resting orders and waiting ones (untriggered trigger orders and OTO/OTOCO secondaries
   * waiting for their primary), by order number.
   */
  openOrders(filter: OpenOrderFilter): OrderView[] {
    const account = this.state.accounts.get(filter.accountId);
    if (account === undefined) return [];
    const out: Order[] = [];
    const waiting = this.state.advanced.active
      ? waitingOrders(this.state).filter((o) => o.accountId === account.id)
      : [];
    for (const order of [...account.openOrders, ...waiting]) {
      const instrument = this.state.instrumentList[order.instrumentId]!.instrument;
      if (filter.instrumentName != null && order.instrumentName !== filter.instrumentName) continue;
      if (filter.currency != null && !instrument.filedUnder(filter.currency)) continue;
      if (filter.kind != null && filter.kind !== 'any' && !kindMatches(instrument.kind, filter.kind))
        continue;
      if (filter.label != null && order.label !== filter.label) continue;
      if (filter.owner != null && order.owner !== filter.owner) continue;
      out.push(order);
    }
    return out.sort((a, b) => a.number - b.number).map((o) => o.toView());
  }

  /**
   * A position as a command left it (an event's view), valued at the instrument's mark now: its
   * mark and floating PnL, null without a mark (0 when flat).
   */
  valuedPosition(view: PositionView): PositionView {
    const instrument = this.state.instruments.get(view.instrumentName);
    const mark = instrument?.markPrice ?? null;
    if (instrument === undefined || mark === null) return { ...view, markPrice: null, floatingPnl: null };
    const floating = view.size === 0 ? 0 : floatingPnl({ economics: instrument.economics, ...view }, mark);
    return { ...view, markPrice: mark, floatingPnl: floating };
  }

  position(accountId: number, instrumentName: string): PositionView | null {
    const instrument = this.state.instruments.get(instrumentName);
    if (instrument === undefined) return null;
    return instrument.positions.get(accountId)?.toView() ?? null;
  }

  /** Non-flat positions of an account, optionally of one currency (`Instrument.filedUnder`) and kind. */
  positions(accountId: number, currency?: string | null, kind?: string | null): PositionView[] {
    const account = this.state.accounts.get(accountId);
    if (account === undefined) return [];
    const out: PositionView[] = [];
    for (const position of account.positions.values()) {
      const instrument = position.economics.instrument;
      if (position.size === 0) continue;
      if (currency != null && !instrument.filedUnder(currency)) continue;
      if (kind != null && kind !== 'any' && !kindMatches(instrument.kind, kind)) continue;
      out.push(this.valuedPosition(position.toView()));
    }
    return out;
  }

  accountSummary(accountId: number, currency: string): AccountSummary | null {
    const account = this.state.accounts.get(accountId);
    if (account === undefined) return null;
    return {
      accountId,
      currency,
      selfTradeMode: account.selfTradeMode,
      ...funds(this.state, account, currency),
    };
  }

  account(accountId: number): AccountInfo | null {
    const account = this.state.accounts.get(accountId);
    if (account === undefined) return null;
    return {
      accountId,
      userId: account.userId,
      selfTradeMode: account.selfTradeMode,
      maxOpenOrders: account.maxOpenOrders,
      openOrderCount: account.openOrderCount,
      currencies: [...account.ledgers.keys()],
    };
  }

  /**
   * The opposite best an order on `side` meets (the ask for a buy, the bid for a sell), hidden
   * orders included: what matching and post-only repricing use. Null when that side is empty or
   * the instrument unknown.
   */
  touch(instrumentName: string, side: 'buy' | 'sell'): number | null {
    const book = this.state.instruments.get(instrumentName)?.book;
    if (book === undefined) return null;
    return side === 'buy' ? book.bestAsk() : book.bestBid();
  }

  /** Visible depth: up to `depth` levels per side, best first (hidden-only levels skipped). */
  book(instrumentName: string, depth = 20): BookView | null {
    const instrument = this.state.instruments.get(instrumentName);
    if (instrument === undefined) return null;
    const side = (
      levels: ReturnType<InstrumentState['book']['bids']['levelsBestFirst']>,
    ): BookLevelView[] => {
      const out: BookLevelView[] = [];
      for (const level of levels) {
        if (out.length >= depth) break;
        if (level.visible > 0) out.push({ price: level.price, amount: level.visible, orders: level.count });
      }
      return out;
    };
    const bids = side(instrument.book.bids.levelsBestFirst());
    const asks = side(instrument.book.asks.levelsBestFirst());
    return { instrumentName, bids, asks, bestBid: bids[0]?.price ?? null, bestAsk: asks[0]?.price ?? null };
  }

  /** Most recent trades of an instrument, newest last. */
  recentTrades(instrumentName: string, count = 20): TradeView[] {
    const instrument = this.state.instruments.get(instrumentName);
    return instrument === undefined ? [] : instrument.recentTrades.slice(-count);
  }

  /**
   * The ticker's 24 h volume, high and low and the open interest (lots, ticks), as of the last
   * command's time (trade-stats.ts); null for an unknown instrument.
   */
  tradeStats(instrumentName: string): TradeStatsView | null {
    const instrument = this.state.instruments.get(instrumentName);
    return instrument === undefined ? null : tradeStatsView(instrument);
  }

  instrument(name: string): InstrumentInfo | null {
    const instrument = this.state.instruments.get(name);
    return instrument === undefined ? null : this.info(instrument);
  }

  /**
   * With `expired`: the open instruments (false) or the recently expired ones (true, those whose
   * expiration is within `RECENTLY_EXPIRED_MS` of now), in listing order. Without: every
   * instrument ever listed, a walk over all of them (for tools and tests, not hot paths).
   */
  instruments(filter?: { readonly expired: boolean }): InstrumentInfo[] {
    if (filter === undefined) return this.state.instrumentList.map((i) => this.info(i));
    this.listing.catchUp();
    const entries = filter.expired ? this.listing.recentlyExpired() : [...this.listing.open];
    return entries.map((i) => this.info(i));
  }

  /**
   * `instruments({ expired })` without the prices and band: the instruments alone, for the
   * listings read often (the simulator's view every tick, `public/get_instruments`).
   */
  listedInstruments(expired = false): Instrument[] {
    this.listing.catchUp();
    const entries = expired ? this.listing.recentlyExpired() : this.listing.open;
    const out: Instrument[] = [];
    for (const entry of entries) out.push(entry.instrument);
    return out;
  }

  /** The currencies of every instrument ever listed (`venueCurrencies`), sorted. */
  currencies(): string[] {
    this.listing.catchUp();
    return [...this.listing.currencies].sort();
  }

  indexPrice(currency: string): number | null {
    return this.state.indexPrice(currency);
  }

  /**
   * What an order of `lots` at `price` would reserve now on each side, as placing it reserves
   * (margin, worst-case fee and losses, in the currency it draws on), against the account's
   * positions and open orders; or what refuses any order there (an unknown account or
   * instrument, an expired one, a price off the grid or not positive). The band is per side and
   * not checked here. A read: no state changes.
   */
  orderMargins(
    accountId: number,
    instrumentName: string,
    lots: number,
    price: number,
  ):
    | { ok: true; buy: { currency: string; amount: number }; sell: { currency: string; amount: number } }
    | { ok: false; error: CoreError } {
    const found = lookup(this.state, accountId, instrumentName);
    if ('name' in found) return { ok: false, error: found };
    const problem = priceProblem(this.state, found.instrument, price);
    if (problem !== null) return { ok: false, error: problem };
    const { account, instrument } = found;
    return {
      ok: true,
      buy: orderReserve(this.state, instrument, account, 'buy', lots, price),
      sell: orderReserve(this.state, instrument, account, 'sell', lots, price),
    };
  }

  /** Prices (ticks) an order on the instrument may have now; null with no mark (or unknown). */
  priceBand(instrumentName: string): PriceBand | null {
    const instrument = this.state.instruments.get(instrumentName);
    return instrument === undefined ? null : priceBand(this.state, instrument);
  }

  private info(instrument: InstrumentState): InstrumentInfo {
    return {
      instrument: instrument.instrument,
      status: instrument.status,
      markPrice: instrument.markPrice,
      indexPrice: this.state.indexPrice(instrument.instrument.currency),
      lastPrice: instrument.lastPrice,
      tradeSeq: instrument.tradeSeq,
      settlementPrice: instrument.settlementPrice,
      priceBand: priceBand(this.state, instrument),
    };
  }

  // ---- persistence and checks ---------------------------------------------------------------

  snapshot(): VenueSnapshot {
    return takeSnapshot(this.state);
  }

  /**
   * SHA-256 over the canonical snapshot: equal for equal books, orders, accounts, counters. The
   * index samples are left out (see `VenueState.indexSamples`).
   */
  stateHash(): string {
    const { indexSamples: _derived, ...hashed } = this.snapshot();
    return createHash('sha256').update(JSON.stringify(hashed)).digest('hex');
  }

  /** The index samples of the last settlement window (`VenueState.indexSamples`). */
  indexSamples(): Array<[string, Array<[number, number]>]> {
    return this.state.indexSamples.samples();
  }

  /**
   * The part of an expiry's settlement average the index samples have fixed at `now`
   * (`IndexHistory.fixing`); null outside its window.
   */
  settlementFixing(currency: string, expiration: number, now: number): Fixing | null {
    return this.state.indexSamples.fixing(currency, expiration, now);
  }

  /** Checks internal consistency (books, totals, reserves); throws on the first breach. For tests. */
  validate(): void {
    const state = this.state;
    for (const instrument of state.instrumentList) {
      instrument.book.validate();
      if (instrument.openInterest !== openInterestOf(instrument))
        throw new Error(`${instrument.instrument.name} open interest drifted`);
    }
    validateAdvanced(state);
    for (const account of state.accounts.values()) {
      const reserved = new Map<string, number>();
      const open = new Map<number, { buys: number; sells: number }>();
      for (const order of account.openOrders) {
        if (order.state !== 'open' || order.level === null)
          throw new Error(`order ${order.id} listed open but not resting`);
        reserved.set(order.reserveCurrency, (reserved.get(order.reserveCurrency) ?? 0) + order.reserved);
        const lots = open.get(order.instrumentId) ?? { buys: 0, sells: 0 };
        if (order.side === 'buy') lots.buys += order.amount - order.filled;
        else lots.sells += order.amount - order.filled;
        open.set(order.instrumentId, lots);
      }
      if (account.openOrders.size !== account.openOrderCount)
        throw new Error(`account ${account.id} open count drifted`);
      for (const ledger of account.ledgers.values()) {
        if (ledger.reserved !== (reserved.get(ledger.currency) ?? 0))
          throw new Error(`account ${account.id} ${ledger.currency} reserve drifted`);
      }
      for (const position of account.positions.values()) {
        const lots = open.get(position.instrumentId) ?? { buys: 0, sells: 0 };
        if (position.openBuys !== lots.buys || position.openSells !== lots.sells)
          throw new Error(`account ${account.id} open lots drifted`);
      }
      const comboOpen = new Map<number, { buys: number; sells: number }>();
      for (const order of account.openOrders) {
        const combo = comboLegs(this.state, this.state.instrumentList[order.instrumentId]!);
        if (combo === null) continue;
        for (const leg of combo.legs) {
          const lots = comboOpen.get(leg.instrument.id) ?? { buys: 0, sells: 0 };
          if (legSide(order.side, leg.ratio) === 'buy') lots.buys += order.amount - order.filled;
          else lots.sells += order.amount - order.filled;
          comboOpen.set(leg.instrument.id, lots);
        }
      }
      for (const [id, lots] of account.comboOpen) {
        const expected = comboOpen.get(id) ?? { buys: 0, sells: 0 };
        if (lots.buys !== expected.buys || lots.sells !== expected.sells)
          throw new Error(`account ${account.id} combo open lots drifted on instrument ${id}`);
      }
      for (const id of comboOpen.keys()) {
        if (!account.comboOpen.has(id))
          throw new Error(`account ${account.id} combo open lots missing on ${id}`);
      }
      for (const position of account.positions.values()) {
        if (position.size === 0 && position.openCost !== 0)
          throw new Error(`account ${account.id} flat position with cost`);
        const instrument = this.state.instrumentList[position.instrumentId]!;
        if (instrument.positions.get(account.id) !== position)
          throw new Error(
            `account ${account.id} position on ${instrument.instrument.name} not the instrument's`,
          );
        // A settlement drops its holders' positions; a snapshot of an older build restores them flat.
        if (
          instrument.status !== 'open' &&
          (position.size !== 0 || position.openBuys + position.openSells !== 0)
        )
          throw new Error(`account ${account.id} holds ${instrument.instrument.name} after its settlement`);
      }
    }
    for (const instrument of state.instrumentList) {
      for (const [accountId, position] of instrument.positions) {
        if (state.accounts.get(accountId)?.positions.get(instrument.id) !== position)
          throw new Error(`${instrument.instrument.name} position of account ${accountId} not the account's`);
      }
    }
  }
}

function kindMatches(kind: InstrumentKind, filter: string): boolean {
  if (filter === 'combo') return kind === 'future_combo' || kind === 'option_combo';
  return kind === filter;
}

/** A trade as one participant sees it (spec 2.7): the party for `accountId`, or null. */
export function tradeForParty(trade: TradeView, accountId: number, liquidity?: 'M' | 'T') {
  const party =
    liquidity === 'M'
      ? trade.maker
      : liquidity === 'T'
        ? trade.taker
        : trade.taker.accountId === accountId
          ? trade.taker
          : trade.maker.accountId === accountId
            ? trade.maker
            : null;
  if (party === null) return null;
  const { taker: _taker, maker: _maker, ...common } = trade;
  return { ...common, ...party };
}

export type { EngineConfig } from './config.ts';
export type { VenueSnapshot } from './snapshot.ts';

/**
 * The answer to a place or edit after the reactions of the same command: a trigger order that
 * fired at once (or an order a linked rule changed) is answered in its final state, with the
 * trades it made then.
 */
function withReactions(result: CommandSuccess, from: number): CommandSuccess {
  const orderId = result.order!.orderId;
  let order = result.order!;
  const trades = [...(result.trades ?? [])];
  const events = result.events;
  for (let i = from; i < events.length; i++) {
    const event = events[i]!;
    if (event.type === 'order' && event.order.orderId === orderId) order = event.order;
    else if (
      event.type === 'trade' &&
      (event.trade.taker.orderId === orderId || event.trade.maker.orderId === orderId)
    )
      trades.push(event.trade);
  }
  return { ...result, order, trades };
}
