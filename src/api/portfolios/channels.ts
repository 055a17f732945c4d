/**
 * Portfolio push channels (SEMANTICS, Portfolios), for every account of the subscribing key's user:
 * - `trade-news`: the lifecycle messages of the algorithm layer (sub-machine events named
 *   `portfolios` in the committed batch), each with `portfolioId`;
 * - `order.change.any`: each changed order of those accounts (with `portfolioId`, null for an order
 *   no portfolio owns); the first push is a snapshot of their open orders.
 * Sequence numbers per (connection, channel) come from the fan-out (src/api/channels.ts).
 */

import { Type } from '@sinclair/typebox';
import type { PortfolioEvent } from '../../algo/types.ts';
import type { OrderView } from '../../core/events.ts';
import type { Instrument } from '../../domain/instrument.ts';
import { type ChannelFamily, type ChannelRegistry, requirePrincipal, topicFor } from '../channels.ts';
import type { ReadPort } from '../ports.ts';
import { OrderSchema } from '../schemas/objects.ts';
import { orderToWire, portfolioIdOf } from '../wire/orders.ts';
import { TradeNewsMessage } from './answer-schemas.ts';
import { tradeNewsToWire } from './wire.ts';

export const TRADE_NEWS = 'trade-news';
export const ORDER_CHANGE = 'order.change.any';
/** The sub-machine name the core factory registers the algorithm layer under. */
export const PORTFOLIO_SUB_MACHINE = 'portfolios';

/** An order as `order.change.any` shows it: the order object with the portfolio owning it. */
const OrderChangeSchema = Type.Composite([
  OrderSchema,
  Type.Object({ portfolioId: Type.Union([Type.Integer(), Type.Null()]) }),
]);

function orderChange(order: OrderView, instrument: Instrument): unknown {
  return { ...orderToWire(order, instrument), portfolioId: portfolioIdOf(order.owner) };
}

export function tradeNewsChannel(reads: ReadPort): ChannelFamily {
  return {
    pattern: TRADE_NEWS,
    summary: 'Portfolio lifecycle messages (PORTFOLIO_SUBMITTED … PORTFOLIO_FAILED), each with portfolioId.',
    access: 'private',
    payload: TradeNewsMessage,
    resolve(name, principal) {
      if (name !== TRADE_NEWS) return null;
      const user = requirePrincipal(principal, name);
      return { topics: [...user.accountIds].map((accountId) => topicFor(TRADE_NEWS, accountId)) };
    },
    produce(batch, emit) {
      const events = batch.subEvents?.get(PORTFOLIO_SUB_MACHINE) ?? [];
      for (const event of events as readonly PortfolioEvent[]) {
        if (event.type !== 'portfolio') continue;
        emit(TRADE_NEWS, event.accountId, () => tradeNewsToWire(event, (n) => reads.instrument(n)));
      }
    },
  };
}

export function orderChangeChannel(reads: ReadPort): ChannelFamily {
  return {
    pattern: ORDER_CHANGE,
    summary: "Every changed order of the user's accounts with its portfolioId; open orders on subscribe.",
    access: 'private',
    payload: OrderChangeSchema,
    snapshotPayload: Type.Object({ openOrders: Type.Array(OrderChangeSchema) }),
    resolve(name, principal) {
      if (name !== ORDER_CHANGE) return null;
      const user = requirePrincipal(principal, name);
      const accounts = [...user.accountIds].sort((a, b) => a - b);
      return {
        topics: accounts.map((accountId) => topicFor(ORDER_CHANGE, accountId)),
        snapshot: () => ({
          openOrders: accounts.flatMap((accountId) =>
            reads.openOrders(accountId, {}).flatMap((order) => {
              const instrument = reads.instrument(order.instrumentName);
              return instrument === undefined ? [] : [orderChange(order, instrument)];
            }),
          ),
        }),
      };
    },
    produce(batch, emit) {
      for (const event of batch.events) {
        if (event.type !== 'order') continue;
        const order = event.order;
        // An order on an instrument the venue no longer lists is not pushed (as user.orders).
        const instrument = reads.instrument(order.instrumentName);
        if (instrument === undefined) continue;
        emit(ORDER_CHANGE, order.accountId, () => orderChange(order, instrument));
      }
    },
  };
}

/**
 * Order changes go out before trade-news within a command (families publish in registration
 * order): a portfolio's news sums up what its child orders did, so a client told
 * PORTFOLIO_CANCELLED or COMPLETED has already been told of the child cancels and fills behind it,
 * as `user.orders` (registered earlier still) tells them first too.
 */
export function registerPortfolioChannels(channels: ChannelRegistry, reads: ReadPort): void {
  channels.register(orderChangeChannel(reads));
  channels.register(tradeNewsChannel(reads));
}
