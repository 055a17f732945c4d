/**
 * The engine's mutable order record, and its immutable view for events.
 *
 * Invariants:
 * - 0 ≤ filled ≤ amount; remaining = amount − filled; a resting order has remaining > 0.
 * - `prev`/`next`/`level` are the intrusive links of the price level the order rests in; all
 *   null when the order is not in a book. Removing an order is O(1).
 * - Boolean attributes live in one bit field (`flags`) and rarely used attributes in `extras`,
 *   to keep a resting order small.
 */
import type { OrderView } from '../core/events.ts';
import {
  type AdvancedKind,
  type CancelReason,
  isMarketLike,
  type LinkedOrderType,
  type OrderState,
  type OrderType,
  type Side,
  type TimeInForce,
  type TriggerFillCondition,
  type TriggerKind,
} from '../core/types.ts';
import type { PriceLevel } from './price-level.ts';

export const FLAG_POST_ONLY = 1;
export const FLAG_REJECT_POST_ONLY = 2;
export const FLAG_REDUCE_ONLY = 4;
export const FLAG_REPLACED = 8;
export const FLAG_AUTO_REPLACED = 16;
export const FLAG_MMP = 32;
export const FLAG_MMP_CANCELLED = 64;
export const FLAG_HIDDEN = 128;
export const FLAG_API = 256;
export const FLAG_WEB = 512;
export const FLAG_MOBILE = 1024;
export const FLAG_BLOCK_TRADE = 2048;
export const FLAG_LIQUIDATION = 4096;
export const FLAG_RISK_REDUCING = 8192;
/** A resting iceberg: its level counts `extras.displayAmount` as visible (see iceberg.ts). */
export const FLAG_ICEBERG = 16384;

/** Attributes most orders do not have. */
export interface OrderExtras {
  originalOrderType: OrderType | null;
  displayAmount: number | null;
  refreshAmount: number | null;
  advanced: AdvancedKind | null;
  trigger: TriggerKind | null;
  triggerPrice: number | null;
  triggerOffset: number | null;
  triggerReferencePrice: number | null;
  triggered: boolean | null;
  triggerOrderId: string | null;
  triggerFillCondition: TriggerFillCondition | null;
  otoOrderIds: string[] | null;
  primaryOrderId: string | null;
  ocoRef: string | null;
  /** Advanced option orders: the USD price (usd) or IV percent (implv) asked for. */
  advancedValue?: number | null;
  /** Linked orders: the primary's link type (isPrimaryOtoco / isSecondaryOto on the view). */
  linkedOrderType?: LinkedOrderType | null;
}

export class Order {
  prev: Order | null = null;
  next: Order | null = null;
  level: PriceLevel | null = null;
  /** Links of its account's open-order list (`OpenOrders` in accounts.ts); null when not in it. */
  accountPrev: Order | null = null;
  accountNext: Order | null = null;
  filled = 0;
  /** Σ lots × price ticks of fills. */
  filledNotional = 0;
  state: OrderState = 'open';
  cancelReason: CancelReason | null = null;
  lastUpdatedAt: number;
  /** Margin reserved for the open remainder, minor units of `reserveCurrency`. */
  reserved = 0;
  reserveCurrency = '';
  /** Good-til-day expiry (ms) or 0. */
  expiresAt = 0;
  extras: OrderExtras | null = null;
  /**
   * The cancel-on-disconnect session of the WebSocket connection that placed it (cod-sessions.ts),
   * while the order is open or waiting; null otherwise (and for every order when none is on).
   */
  codSession: string | null = null;

  constructor(
    readonly id: string,
    /** Engine-wide arrival number: deterministic tie-break and snapshot order. */
    readonly number: number,
    readonly accountId: number,
    readonly instrumentId: number,
    readonly instrumentName: string,
    readonly currency: string,
    readonly side: Side,
    readonly orderType: OrderType,
    public price: number,
    public amount: number,
    readonly timeInForce: TimeInForce,
    readonly createdAt: number,
    public label: string,
    readonly owner: string | null,
    public flags: number,
  ) {
    this.lastUpdatedAt = createdAt;
  }

  get remaining(): number {
    return this.amount - this.filled;
  }

  has(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  set(flag: number, on: boolean): void {
    this.flags = on ? this.flags | flag : this.flags & ~flag;
  }

  toView(): OrderView {
    const x = this.extras;
    if (x !== null) return this.fullView(x);
    // Fast path (most orders): no extras, so every extras-derived field is null/false. Same
    // fields in the same order as `fullView`, so both literals share one hidden class.
    const f = this.flags;
    const type = this.orderType;
    return {
      orderId: this.id,
      accountId: this.accountId,
      instrumentName: this.instrumentName,
      currency: this.currency,
      side: this.side,
      orderType: type,
      originalOrderType: null,
      orderState: this.state,
      price: type === 'limit' || this.price !== 0 || !isMarketLike(type) ? this.price : null,
      amount: this.amount,
      filledAmount: this.filled,
      filledNotional: this.filledNotional,
      averagePrice: this.filled === 0 ? 0 : this.filledNotional / this.filled,
      timeInForce: this.timeInForce,
      createdAt: this.createdAt,
      lastUpdatedAt: this.lastUpdatedAt,
      cancelReason: this.cancelReason,
      label: this.label,
      owner: this.owner,
      api: (f & FLAG_API) !== 0,
      web: (f & FLAG_WEB) !== 0,
      mobile: (f & FLAG_MOBILE) !== 0,
      postOnly: (f & FLAG_POST_ONLY) !== 0,
      rejectPostOnly: (f & FLAG_REJECT_POST_ONLY) !== 0,
      reduceOnly: (f & FLAG_REDUCE_ONLY) !== 0,
      replaced: (f & FLAG_REPLACED) !== 0,
      autoReplaced: (f & FLAG_AUTO_REPLACED) !== 0,
      mmp: (f & FLAG_MMP) !== 0,
      mmpCancelled: (f & FLAG_MMP_CANCELLED) !== 0,
      hidden: (f & FLAG_HIDDEN) !== 0,
      displayAmount: null,
      refreshAmount: null,
      advanced: null,
      trigger: null,
      triggerPrice: null,
      triggerOffset: null,
      triggerReferencePrice: null,
      triggered: null,
      triggerOrderId: null,
      triggerFillCondition: null,
      otoOrderIds: null,
      primaryOrderId: null,
      ocoRef: null,
      usd: null,
      implv: null,
      isPrimaryOtoco: false,
      isSecondaryOto: false,
      blockTrade: (f & FLAG_BLOCK_TRADE) !== 0,
      isLiquidation: (f & FLAG_LIQUIDATION) !== 0,
      riskReducing: (f & FLAG_RISK_REDUCING) !== 0,
    };
  }

  private fullView(x: OrderExtras): OrderView {
    const f = this.flags;
    return {
      orderId: this.id,
      accountId: this.accountId,
      instrumentName: this.instrumentName,
      currency: this.currency,
      side: this.side,
      orderType: this.orderType,
      originalOrderType: x.originalOrderType ?? null,
      orderState: this.state,
      price: this.price === 0 && isMarketLike(this.orderType) ? null : this.price,
      amount: this.amount,
      filledAmount: this.filled,
      filledNotional: this.filledNotional,
      averagePrice: this.filled === 0 ? 0 : this.filledNotional / this.filled,
      timeInForce: this.timeInForce,
      createdAt: this.createdAt,
      lastUpdatedAt: this.lastUpdatedAt,
      cancelReason: this.cancelReason,
      label: this.label,
      owner: this.owner,
      api: (f & FLAG_API) !== 0,
      web: (f & FLAG_WEB) !== 0,
      mobile: (f & FLAG_MOBILE) !== 0,
      postOnly: (f & FLAG_POST_ONLY) !== 0,
      rejectPostOnly: (f & FLAG_REJECT_POST_ONLY) !== 0,
      reduceOnly: (f & FLAG_REDUCE_ONLY) !== 0,
      replaced: (f & FLAG_REPLACED) !== 0,
      autoReplaced: (f & FLAG_AUTO_REPLACED) !== 0,
      mmp: (f & FLAG_MMP) !== 0,
      mmpCancelled: (f & FLAG_MMP_CANCELLED) !== 0,
      hidden: (f & FLAG_HIDDEN) !== 0,
      displayAmount: x.displayAmount ?? null,
      refreshAmount: x.refreshAmount ?? null,
      advanced: x.advanced ?? null,
      trigger: x.trigger ?? null,
      triggerPrice: x.triggerPrice ?? null,
      triggerOffset: x.triggerOffset ?? null,
      triggerReferencePrice: x.triggerReferencePrice ?? null,
      triggered: x.triggered ?? null,
      triggerOrderId: x.triggerOrderId ?? null,
      triggerFillCondition: x.triggerFillCondition ?? null,
      otoOrderIds: x.otoOrderIds ? [...x.otoOrderIds] : null,
      primaryOrderId: x.primaryOrderId ?? null,
      ocoRef: x.ocoRef ?? null,
      usd: x.advanced === 'usd' ? (x.advancedValue ?? null) : null,
      implv: x.advanced === 'implv' ? (x.advancedValue ?? null) : null,
      isPrimaryOtoco: x.linkedOrderType === 'one_triggers_one_cancels_other',
      isSecondaryOto: (x.primaryOrderId ?? null) !== null,
      blockTrade: (f & FLAG_BLOCK_TRADE) !== 0,
      isLiquidation: (f & FLAG_LIQUIDATION) !== 0,
      riskReducing: (f & FLAG_RISK_REDUCING) !== 0,
    };
  }
}

/** Whether `order` is one of `ids` or was made by one of them (triggered from it, or its OTO secondary). */
export function madeByAny(order: Order, ids: ReadonlySet<string>): boolean {
  if (ids.has(order.id)) return true;
  const x = order.extras;
  if (x === null) return false;
  return (
    (x.triggerOrderId !== null && ids.has(x.triggerOrderId)) ||
    (x.primaryOrderId !== null && ids.has(x.primaryOrderId))
  );
}
