/**
 * Accounts: balances per currency, positions per instrument, settings.
 *
 * Invariants:
 * - balances are integer minor units; they change only by deposits, withdrawals, trade cash
 *   flows (futures realised PnL, option premium, spot delivery), fees and settlement.
 * - A deposit id names one deposit venue-wide; each account keeps the ids of its newest
 *   `DEPOSIT_IDS_PER_ACCOUNT` deposits that carried one (lifecycle.ts `moveFunds`).
 * - `Ledger.reserved` = Σ `Order.reserved` of the account's open orders in that currency.
 * - Position: `size` signed lots, `openCost` signed cost basis of the open size (same sign as
 *   size, 0 when flat), `realisedPnl` cumulative. `openBuys`/`openSells` are the remaining lots
 *   of the account's open orders on the instrument (for the reducing-order margin exemption).
 */
import type { PositionView } from '../core/events.ts';
import type { SelfTradeMode } from '../core/types.ts';
import type { Economics } from './economics.ts';
import type { Order } from './order.ts';
import type { InstrumentState } from './state.ts';

export class Ledger {
  balance = 0;
  reserved = 0;
  /** Cached position valuation (see risk.ts); valid while `cachedEpoch` = engine price epoch. */
  cachedEpoch = -1;
  cachedPositionValue = 0;
  cachedPositionMargin = 0;
  /** Long options' marked value that is no collateral (risk.ts). */
  cachedUncollateralised = 0;
  /** Of the position value, the options' (shorts negative), and their signed cost basis. */
  cachedOptionsValue = 0;
  cachedOptionsCost = 0;
  constructor(readonly currency: string) {}
}

export class Position {
  size = 0;
  openCost = 0;
  /**
   * For the displayed average price only (PnL uses `openCost`, in whole minor units): Σ lots ×
   * price of the open size, or Σ lots / price for inverse futures; NaN when unknown (a snapshot
   * from before it was kept, or a non-positive inverse price), and the average falls back to
   * `openCost`.
   */
  entryValue = 0;
  realisedPnl = 0;
  openBuys = 0;
  openSells = 0;
  /** Lots of open reduce-only orders per side (jointly capped at the position). */
  reduceOnlyBuys = 0;
  reduceOnlySells = 0;
  /** This command's pending review of the reserves of orders claiming it (claim-queues.ts), if any. */
  review: ReserveReview | null = null;
  /** The account's claim queues on this instrument (`Account.claimQueues`), once looked up. */
  claims: ClaimQueues | null = null;

  constructor(
    readonly accountId: number,
    readonly instrumentId: number,
    readonly economics: Economics,
  ) {}

  private averagePrice(): number {
    const lots = Math.abs(this.size);
    if (lots === 0) return 0;
    const entry = this.entryValue;
    if (!(entry > 0)) return this.economics.averagePrice(this.openCost, this.size);
    return this.economics.isInverseFuture ? lots / entry : entry / lots;
  }

  toView(): PositionView {
    return {
      accountId: this.accountId,
      instrumentName: this.economics.instrument.name,
      size: this.size,
      openCost: this.openCost,
      averagePrice: this.averagePrice(),
      realisedPnl: this.realisedPnl,
      settlementCurrency: this.economics.settlementCurrency,
    };
  }
}

/**
 * An account's resting orders that would trade one instrument on one side (plain orders and combo
 * orders with a leg on it), by order number: the order in which they claim the position's
 * reducible lots for the margin exemption (risk.ts, claim-queues.ts `reviewReserves`).
 */
export interface ClaimQueue {
  /**
   * By number. The entry of an order that left the book holds `LEFT` (claim-queues.ts), one shared
   * order with no `level` that claims nothing, until the order rests again or the queue is
   * compacted.
   */
  readonly orders: Order[];
  /** Their numbers, entry by entry (searched without touching the orders). */
  readonly numbers: number[];
  /** Entries whose order left the book. */
  idle: number;
  /**
   * A place kept near the position's reducible lots, where walks of the queue start: the lots the
   * resting orders numbered below `cutNumber` claim, kept by every change of their lots (counted
   * again when `stale`: a change that did not name its order). `cutIndex`: where `cutNumber` was.
   */
  cutNumber: number;
  cutAhead: number;
  cutIndex: number;
  stale: boolean;
}

export interface ClaimQueues {
  readonly buys: ClaimQueue;
  readonly sells: ClaimQueue;
}

/**
 * A position whose reducible lots changed in a command, or whose claim queues an order entered
 * out of number order: the bounds of the reducible lots (per side) seen since, so the reserves of
 * the orders whose claim on them changed are reviewed once the command's fills are over.
 */
export interface ReserveReview {
  /** The position's instrument and account: the review is its entry in the command's queue. */
  readonly instrument: InstrumentState;
  readonly account: Account;
  /** The command's queue of positions to check (state.reduceOnlyChecks): stale once replaced. */
  queue: readonly unknown[];
  buysLow: number;
  buysHigh: number;
  sellsLow: number;
  sellsHigh: number;
  /** Orders that rested again out of number order in this command (`noteClaimEntry`). */
  entered: Order[] | null;
}

/**
 * An account's open resting orders as an intrusive doubly linked list through
 * `Order.accountPrev/accountNext`: add (at the tail) and delete are O(1) without hashing, and
 * iteration follows insertion order like the Set it replaces. Iterating while deleting other
 * orders of the list is not supported (callers copy or collect first).
 */
export class OpenOrders implements Iterable<Order> {
  private head: Order | null = null;
  private tail: Order | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(order: Order): boolean {
    return order.accountPrev !== null || this.head === order;
  }

  add(order: Order): this {
    if (this.has(order)) return this;
    order.accountPrev = this.tail;
    order.accountNext = null;
    if (this.tail === null) this.head = order;
    else this.tail.accountNext = order;
    this.tail = order;
    this.count++;
    return this;
  }

  delete(order: Order): boolean {
    if (!this.has(order)) return false;
    const prev = order.accountPrev;
    const next = order.accountNext;
    if (prev === null) this.head = next;
    else prev.accountNext = next;
    if (next === null) this.tail = prev;
    else next.accountPrev = prev;
    order.accountPrev = null;
    order.accountNext = null;
    this.count--;
    return true;
  }

  *[Symbol.iterator](): Iterator<Order> {
    for (let order = this.head; order !== null; ) {
      const next = order.accountNext;
      yield order;
      order = next;
    }
  }
}

/**
 * How many deposit ids an account remembers: its newest ones, the oldest forgotten first. A
 * retry of a deposit older than that (by the account's deposits with an id) would credit again.
 */
export const DEPOSIT_IDS_PER_ACCOUNT = 1000;

export interface OpenLots {
  buys: number;
  sells: number;
}

/** What a deposit with an id credited: a retry under the same id must name the same. */
export interface DepositRecord {
  readonly currency: string;
  /** Minor units. */
  readonly amount: number;
}

export class Account {
  readonly ledgers = new Map<string, Ledger>();
  /**
   * The account's newest deposits that carried an id, by id, oldest first (at most
   * `DEPOSIT_IDS_PER_ACCOUNT`). Saved in snapshots only when there are some.
   */
  readonly depositIds = new Map<string, DepositRecord>();
  readonly positions = new Map<number, Position>();
  /** Open resting orders, in the order they (re)entered the book. */
  readonly openOrders = new OpenOrders();
  openOrderCount = 0;
  /**
   * Cancel-on-disconnect's `account` scope: WebSocket connections that authenticate for the
   * account start with it on (cod-sessions.ts). Saved only when on.
   */
  cancelOnDisconnect = false;
  /**
   * The remaining lots the account's resting combo orders would trade on each leg, by leg
   * instrument id: the legs' share of its open orders for the reducing-order exemption
   * (risk.ts). Derived from the resting orders (claim-queues.ts `changeOpenLots`), not saved.
   */
  readonly comboOpen = new Map<number, OpenLots>();
  /**
   * By instrument id (a combo order under each leg): the resting orders that claim the position's
   * reducible lots, in order (`ClaimQueue`). Derived from the resting orders, not saved.
   */
  readonly claimQueues = new Map<number, ClaimQueues>();

  constructor(
    readonly id: number,
    readonly userId: number | null,
    public selfTradeMode: SelfTradeMode,
    public maxOpenOrders: number,
  ) {}

  /** Remembers a credited deposit's id, forgetting the oldest beyond the cap. */
  rememberDeposit(depositId: string, record: DepositRecord): void {
    this.depositIds.set(depositId, record);
    if (this.depositIds.size > DEPOSIT_IDS_PER_ACCOUNT) {
      this.depositIds.delete(this.depositIds.keys().next().value!);
    }
  }

  ledger(currency: string): Ledger {
    let ledger = this.ledgers.get(currency);
    if (ledger === undefined) {
      ledger = new Ledger(currency);
      this.ledgers.set(currency, ledger);
    }
    return ledger;
  }
}

/**
 * Applies a fill of `lots` at `price` with direction `sign` (+1 buy, −1 sell) to a position.
 * Returns the realised PnL of the closed part (settlement minor units). Spot has no positions.
 * Conservation: pnl − dir × ΔopenCost = −dir × sign × value(lots, price) for every fill, flips
 * included, so the two sides of a trade move exactly opposite amounts.
 */
export function applyFill(position: Position, sign: 1 | -1, lots: number, price: number): number {
  const economics = position.economics;
  const size = position.size;
  if (size === 0 || size > 0 === sign > 0) {
    position.size = size + sign * lots;
    position.openCost += sign * economics.value(lots, price);
    position.entryValue = (size === 0 ? 0 : position.entryValue) + entryValueOf(economics, lots, price);
    return 0;
  }
  const held = Math.abs(size);
  const closed = Math.min(lots, held);
  const sigma = size > 0 ? 1 : -1;
  const removedCost = closed === held ? position.openCost : exactShare(position.openCost, closed, held);
  const exitValue = economics.value(closed, price);
  // `+ 0` turns −0 into 0 so results compare and serialise identically.
  const pnl = economics.direction * (sigma * exitValue - removedCost) + 0;
  position.openCost -= removedCost;
  position.entryValue = closed === held ? 0 : position.entryValue - (position.entryValue * closed) / held;
  position.size = size + sign * lots;
  const opened = lots - closed;
  if (opened > 0) {
    // The opened part costs what the fill is worth less the closed part's exit value, not
    // value(opened) rounded on its own: the fill then moves value(lots) in all, exactly what the
    // counterparty books in one piece, and no minor unit is made or lost in the flip.
    position.openCost = sign * (economics.value(lots, price) - exitValue) + 0;
    position.entryValue = entryValueOf(economics, opened, price);
  }
  position.realisedPnl += pnl;
  return pnl;
}

/**
 * Closes the whole position at an exit value (settlement minor units) that need not be a whole
 * number of ticks, as an exact settlement is; returns the realised PnL.
 */
export function closeAtValue(position: Position, exitValue: number): number {
  const sigma = position.size > 0 ? 1 : -1;
  const pnl = position.economics.direction * (sigma * exitValue - position.openCost) + 0;
  position.size = 0;
  position.openCost = 0;
  position.entryValue = 0;
  position.realisedPnl += pnl;
  return pnl;
}

function entryValueOf(economics: Economics, lots: number, price: number): number {
  if (!economics.isInverseFuture) return lots * price;
  return price > 0 ? lots / price : Number.NaN;
}

/** round(cost × part / whole), halves away from zero, exact (BigInt only as a last resort). */
export function exactShare(cost: number, part: number, whole: number): number {
  const product = cost * part;
  if (Math.abs(product) <= Number.MAX_SAFE_INTEGER) {
    const negative = product < 0;
    const magnitude = negative ? -product : product;
    let quotient = Math.floor(magnitude / whole);
    let remainder = magnitude - quotient * whole;
    if (remainder < 0) {
      quotient -= 1;
      remainder += whole;
    }
    if (remainder * 2 >= whole) quotient += 1;
    return negative ? -quotient : quotient;
  }
  // cost × part overflows 2^53: split cost = q·whole + r, so the share is q·part + r·part/whole
  // with r·part < whole·part (small for lot counts); exact while every term is a safe integer.
  {
    const negative = cost < 0;
    const magnitude = negative ? -cost : cost;
    let q = Math.floor(magnitude / whole);
    let r = magnitude - q * whole;
    if (r < 0) {
      q -= 1;
      r += whole;
    }
    const rest = r * part;
    if (rest <= Number.MAX_SAFE_INTEGER) {
      let quotient = Math.floor(rest / whole);
      let remainder = rest - quotient * whole;
      if (remainder < 0) {
        quotient -= 1;
        remainder += whole;
      }
      if (remainder * 2 >= whole) quotient += 1;
      const share = q * part + quotient;
      if (share <= Number.MAX_SAFE_INTEGER) return negative ? -share : share;
    }
  }
  const big = BigInt(cost) * BigInt(part);
  const negative = big < 0n;
  const magnitude = negative ? -big : big;
  let quotient = magnitude / BigInt(whole);
  if ((magnitude % BigInt(whole)) * 2n >= BigInt(whole)) quotient += 1n;
  return Number(negative ? -quotient : quotient);
}
