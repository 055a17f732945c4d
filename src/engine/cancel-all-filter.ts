/**
 * Which of an account's orders a `cancel_all` command matches: one predicate for resting orders
 * (trading.ts) and for untriggered or waiting ones (advanced-orders.ts), so both read the filters
 * alike.
 */
import type { CancelAll } from '../core/commands.ts';
import { ORDER_TYPE_FILTERS } from '../core/order-type-filter.ts';
import { madeByAny, type Order } from './order.ts';
import type { VenueState } from './state.ts';

function kindMatches(filter: string | null | undefined, kind: string): boolean {
  if (filter == null || filter === 'any') return true;
  if (filter === 'combo') return kind === 'future_combo' || kind === 'option_combo';
  return kind === filter;
}

export function cancelAllFilter(state: VenueState, command: CancelAll): (order: Order) => boolean {
  const ids = command.orderIds == null ? null : new Set(command.orderIds);
  const typeMatches = ORDER_TYPE_FILTERS[command.orderType ?? 'all'];
  return (order) => {
    if (order.accountId !== command.accountId) return false;
    if (ids !== null && !madeByAny(order, ids)) return false;
    if (command.codSession != null && order.codSession !== command.codSession) return false;
    const instrument = state.instrumentList[order.instrumentId]!.instrument;
    if (command.instrumentName != null && instrument.name !== command.instrumentName) return false;
    if (command.currency != null && !instrument.filedUnder(command.currency)) return false;
    if (!kindMatches(command.kind, instrument.kind)) return false;
    if (command.label != null && order.label !== command.label) return false;
    if (command.owner != null && order.owner !== command.owner) return false;
    return typeMatches(order.orderType);
  };
}
