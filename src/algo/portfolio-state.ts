/**
 * The mutable record of one portfolio inside the algorithm layer, and fill accounting.
 *
 * Invariants:
 * - Everything here is plain JSON data (the layer's snapshot is these records as they are).
 * - A leg's `filled`/`notional` is the sum over its child orders; a child's fill is absorbed by
 *   delta against what was recorded, so seeing the same order event twice changes nothing.
 * - A combo child (COMMON, `combo` set) fills its legs from the combo trade's leg trades: each
 *   leg gets the leg trade's lots and lots × leg price, once per combo trade (`combo.tradeSeq`
 *   is the last one absorbed; trade seqs rise per instrument), so the legs' averages are the
 *   prices the legs really traded at. Its order events move only the child's own figures.
 * - `legs[i].working` names the one resting child of leg i, or null (a resting combo child is
 *   the working child of each of its legs); closed children stay in `children` for `info` and
 *   audit.
 */
import type { OrderView, TradeView } from '../core/events.ts';
import { selfTradeHoldMs } from './timing.ts';
import type { EndReason, PortfolioSpec, PortfolioStatus } from './types.ts';

export interface ChildState {
  readonly orderId: string;
  readonly leg: number;
  /** Part (BALANCE) or slice (TWAP) the child was placed in; 0 for COMMON and ICEBERG. */
  readonly part: number;
  readonly market: boolean;
  readonly placedAt: number;
  /** Total lots of the order (after edits). */
  amount: number;
  filled: number;
  /** Σ lots × ticks of its fills. */
  notional: number;
  price: number | null;
  open: boolean;
  /**
   * ICEBERG: the child is a venue iceberg order (placed with `displayAmount`); the lots its book
   * level shows now. Absent on plain children and in records written before it.
   */
  iceberg?: number;
  /**
   * COMMON: the child is one order on a combo that trades every leg (`leg` is the first of
   * them). Absent on single-leg children and in records written before it.
   */
  combo?: ComboChild;
}

export interface ComboChild {
  /** The combo instrument the order rests on. */
  readonly instrumentName: string;
  /** The portfolio legs it fills. */
  readonly legs: readonly number[];
  /** `tradeSeq` of the last combo trade absorbed (0 before the first). */
  tradeSeq: number;
}

/** The portfolio legs a child fills: its leg, or every leg of a combo child. */
export function childLegs(child: ChildState): readonly number[] {
  return child.combo?.legs ?? [child.leg];
}

/** True when the child works leg i (its own leg, or one of a combo child's legs). */
export function childCovers(child: ChildState, leg: number): boolean {
  return child.combo === undefined ? child.leg === leg : child.combo.legs.includes(leg);
}

export interface LegState {
  filled: number;
  notional: number;
  /** Ticks (may be fractional: a mid). */
  arrivalPrice: number | null;
  working: string | null;
  /** TWAP: lots of the current slice not yet placed (waiting for a price). */
  slicePending: number;
  /** Guard against re-sending a market order that found nothing within one command. */
  lastMarketSeq: number;
  lastMarketFilled: boolean;
  /**
   * Self-trade prevention cancelled this leg's child: the leg places nothing before this time
   * (ms), so two portfolios of one account cannot take each other's orders out in a loop.
   * Absent in records written before it (read as null).
   */
  selfTradeHoldUntil?: number | null;
  /**
   * DYNAMIC legs: when the resting child's price was last decided (placed or re-evaluated); the
   * next re-evaluation is due one reprice interval later, not at every fill. Null or absent: due
   * now. Optional and never filled in on restore, so a snapshot written before it keeps its hash.
   */
  repricedAt?: number | null;
}

export interface PartState {
  readonly index: number;
  readonly startedAt: number;
  endedAt: number | null;
  /** BALANCE: cumulative lots per leg due by the end of the part; TWAP: the slice's lots per leg. */
  readonly targets: number[];
  /** Lots filled per leg when the part ended. */
  filledAtEnd: number[] | null;
}

export interface PortfolioState {
  readonly id: number;
  /** The original's id for a mirror (`sendToDummyAccountIds`), else null. */
  readonly linkedTo: number | null;
  readonly spec: PortfolioSpec;
  status: PortfolioStatus;
  endReason: EndReason | null;
  endMessage: string | null;
  readonly submittedAt: number;
  /** When work starts (TWAP startTimestamp, else the submit time). */
  readonly startAt: number;
  startedAt: number | null;
  endedAt: number | null;
  updatedAt: number;
  readonly legs: LegState[];
  readonly children: ChildState[];
  /** Current part / slice, -1 before the start. */
  part: number;
  readonly parts: PartState[];
  nextSliceAt: number | null;
  endAt: number | null;
  partDeadline: number | null;
  totalDeadline: number | null;
  nextRepriceAt: number | null;
  retryAt: number | null;
  /** Mirrors created for this portfolio. */
  readonly mirrorIds: number[];
}

export function newPortfolio(
  id: number,
  spec: PortfolioSpec,
  submittedAt: number,
  startAt: number,
  linkedTo: number | null,
): PortfolioState {
  return {
    id,
    linkedTo,
    spec,
    status: 'PENDING',
    endReason: null,
    endMessage: null,
    submittedAt,
    startAt,
    startedAt: null,
    endedAt: null,
    updatedAt: submittedAt,
    legs: spec.legs.map(() => ({
      filled: 0,
      notional: 0,
      arrivalPrice: null,
      working: null,
      slicePending: 0,
      lastMarketSeq: -1,
      lastMarketFilled: false,
      selfTradeHoldUntil: null,
    })),
    children: [],
    part: -1,
    parts: [],
    nextSliceAt: null,
    endAt: null,
    partDeadline: null,
    totalDeadline: null,
    nextRepriceAt: null,
    retryAt: null,
    mirrorIds: [],
  };
}

/** Lots of leg i still to fill. */
export function remaining(portfolio: PortfolioState, leg: number): number {
  return portfolio.spec.legs[leg]!.amount - portfolio.legs[leg]!.filled;
}

export function fullyFilled(portfolio: PortfolioState): boolean {
  return portfolio.legs.every((_, i) => remaining(portfolio, i) <= 0);
}

/**
 * Lots newly filled by this view of a child, after recording it (0 when nothing new). A close by
 * self-trade prevention holds the leg (`selfTradeHoldUntil`), counted from `now`.
 */
export function absorbOrderView(
  portfolio: PortfolioState,
  child: ChildState,
  view: OrderView,
  now: number,
): number {
  const delta = view.filledAmount - child.filled;
  if (delta > 0) {
    // A combo child's legs are filled by its trades (`absorbComboTrade`), at the legs' prices.
    if (child.combo === undefined) {
      const leg = portfolio.legs[child.leg]!;
      leg.filled += delta;
      leg.notional += view.filledNotional - child.notional;
    }
    child.filled = view.filledAmount;
    child.notional = view.filledNotional;
  }
  child.amount = view.amount;
  child.price = view.price;
  if (child.iceberg !== undefined && view.displayAmount !== null) child.iceberg = view.displayAmount;
  if (child.open && view.orderState !== 'open' && view.orderState !== 'untriggered') {
    closeChild(portfolio, child);
    if (view.cancelReason === 'self_trade_prevention') {
      for (const i of childLegs(child)) {
        portfolio.legs[i]!.selfTradeHoldUntil = now + selfTradeHoldMs(portfolio.spec.legs[i]!);
      }
    }
  }
  return child.combo === undefined ? Math.max(0, delta) : 0;
}

/** Marks a child closed: it is no longer the working child of any of its legs. */
export function closeChild(portfolio: PortfolioState, child: ChildState): void {
  child.open = false;
  for (const i of childLegs(child)) {
    const leg = portfolio.legs[i]!;
    if (leg.working === child.orderId) leg.working = null;
  }
}

/** One leg's share of a combo child's trade. */
export interface LegFill {
  readonly leg: number;
  readonly instrumentName: string;
  /** Lots. */
  readonly amount: number;
  /** Σ lots × leg ticks. */
  readonly notional: number;
}

/**
 * Books a trade on a combo child's book onto its legs (lots and notional at the leg trades'
 * prices) and returns the legs' fills; nothing when the trade was absorbed before or has no legs.
 */
export function absorbComboTrade(portfolio: PortfolioState, child: ChildState, trade: TradeView): LegFill[] {
  const combo = child.combo;
  if (combo === undefined || trade.legs === undefined || trade.tradeSeq <= combo.tradeSeq) return [];
  combo.tradeSeq = trade.tradeSeq;
  const fills: LegFill[] = [];
  for (const legTrade of trade.legs) {
    const i = combo.legs.find((l) => portfolio.spec.legs[l]!.instrumentName === legTrade.instrumentName);
    if (i === undefined) continue;
    const notional = legTrade.amount * legTrade.price;
    const leg = portfolio.legs[i]!;
    leg.filled += legTrade.amount;
    leg.notional += notional;
    fills.push({ leg: i, instrumentName: legTrade.instrumentName, amount: legTrade.amount, notional });
  }
  return fills;
}

/** True while the leg's self-trade prevention hold lasts; a hold that has run out is dropped. */
export function stillHeld(leg: LegState, now: number): boolean {
  if (leg.selfTradeHoldUntil == null) return false;
  if (leg.selfTradeHoldUntil > now) return true;
  leg.selfTradeHoldUntil = null;
  return false;
}
