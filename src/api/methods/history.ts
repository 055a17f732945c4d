/**
 * Order-history and user-trade windows and paging (spec 4.2, 8), pure over the read port's lists.
 *
 * - Recent (historical=false): orders updated in the last 30 minutes, trades of the last 24 hours.
 * - Historical (historical=true): older than the recent window; orders older than 2 days only
 *   with includeOld.
 * - includeUnfilled=false drops closed orders that never filled (cancelled/rejected, filled 0).
 * - Order: newest first by (lastUpdatedAt, orderId). The continuation token is
 *   `<lastUpdatedAt>:<orderId>` of the last order returned; the next page starts after it.
 */
import type { OrderView, TradeView } from '../../core/events.ts';
import { VenueError } from '../../domain/errors.ts';
import type { OrderHistoryParams, UserTradesParams } from '../schemas/methods.ts';

export const RECENT_ORDERS_MS = 30 * 60_000;
export const RECENT_TRADES_MS = 24 * 60 * 60_000;
export const OLD_ORDERS_MS = 2 * 24 * 60 * 60_000;

export interface OrderPage {
  readonly orders: OrderView[];
  readonly continuation: string | null;
}

function compareNewestFirst(a: OrderView, b: OrderView): number {
  if (a.lastUpdatedAt !== b.lastUpdatedAt) return b.lastUpdatedAt - a.lastUpdatedAt;
  return a.orderId < b.orderId ? 1 : a.orderId > b.orderId ? -1 : 0;
}

function parseContinuation(token: string): { at: number; orderId: string } {
  const match = /^(\d{1,16}):(.+)$/.exec(token);
  if (match === null)
    throw new VenueError('invalid_params', 'continuation is not a valid token', { field: 'continuation' });
  return { at: Number(match[1]), orderId: match[2]! };
}

export function pageOrderHistory(
  all: readonly OrderView[],
  params: OrderHistoryParams,
  now: number,
): OrderPage {
  const historical = params.historical ?? false;
  const includeOld = params.includeOld ?? false;
  const includeUnfilled = params.includeUnfilled ?? false;
  const count = params.count ?? 20;
  const offset = params.offset ?? 0;
  const recentFrom = now - RECENT_ORDERS_MS;
  const oldBefore = now - OLD_ORDERS_MS;
  let orders = all.filter((order) => {
    if (historical ? order.lastUpdatedAt >= recentFrom : order.lastUpdatedAt < recentFrom) return false;
    if (historical && !includeOld && order.lastUpdatedAt < oldBefore) return false;
    const closedUnfilled =
      order.orderState !== 'open' && order.orderState !== 'untriggered' && order.filledAmount === 0;
    return includeUnfilled || !closedUnfilled;
  });
  orders.sort(compareNewestFirst);
  if (params.continuation != null) {
    const after = parseContinuation(params.continuation);
    orders = orders.filter(
      (order) =>
        order.lastUpdatedAt < after.at || (order.lastUpdatedAt === after.at && order.orderId < after.orderId),
    );
  }
  const page = orders.slice(offset, offset + count);
  const more = orders.length > offset + count;
  const last = page[page.length - 1];
  return { orders: page, continuation: more && last ? `${last.lastUpdatedAt}:${last.orderId}` : null };
}

export interface TradePage {
  readonly trades: TradeView[];
  readonly hasMore: boolean;
}

export function pageUserTrades(all: readonly TradeView[], params: UserTradesParams, now: number): TradePage {
  const historical = params.historical ?? false;
  const recentFrom = now - RECENT_TRADES_MS;
  const start = params.startTimestamp ?? 0;
  const end = params.endTimestamp ?? Number.MAX_SAFE_INTEGER;
  const count = params.count ?? 10;
  const trades = all.filter((trade) => {
    if (historical ? trade.timestamp >= recentFrom : trade.timestamp < recentFrom) return false;
    return trade.timestamp >= start && trade.timestamp <= end;
  });
  const ascending = params.sorting === 'asc';
  trades.sort((a, b) =>
    ascending
      ? a.timestamp - b.timestamp || a.tradeSeq - b.tradeSeq
      : b.timestamp - a.timestamp || b.tradeSeq - a.tradeSeq,
  );
  return { trades: trades.slice(0, count), hasMore: trades.length > count };
}
