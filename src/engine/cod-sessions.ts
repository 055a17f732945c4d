/**
 * Cancel-on-disconnect sessions: which open orders belong to the cancel-on-disconnect of which
 * WebSocket connection, kept in the core so that the orders of connections a crash ended can be
 * cancelled when the service comes back (the connections are gone; the journal is not).
 *
 * Invariants:
 * - An order belongs to at most one session (`Order.codSession`), and only while it is open or
 *   waiting (untriggered, or an OTO secondary waiting for its primary): `retire` clears it.
 * - It joins at placement (`PlaceOrder.codSession`, passed on to the orders it makes: OCO
 *   members, OTO secondaries and their released increments; a triggered order keeps its id), or
 *   when the connection turns cancel-on-disconnect on (`set_cancel_on_disconnect` with the ids it
 *   placed before). It leaves when the connection turns it off, or when it closes.
 * - Saved in the snapshot on the order record, absent when null (snapshots of older builds and of
 *   venues that never used it are unchanged). Nothing here runs for a command that does not name
 *   a session: a placement without `codSession` costs one property read.
 * - The account's default (Deribit's `account` scope, `set_account_cancel_on_disconnect`) is a
 *   flag on the account that the gateway reads when a connection authenticates; it changes no
 *   session and no order. Saved on the account's snapshot record only when on.
 */
import type {
  CancelCodSessions,
  SetAccountCancelOnDisconnect,
  SetCancelOnDisconnect,
} from '../core/commands.ts';
import type { CommandResult, OrderView } from '../core/events.ts';
import type { Account } from './accounts.ts';
import { waitingOrders } from './advanced-orders.ts';
import { cancelResting } from './matching.ts';
import { madeByAny, type Order } from './order.ts';
import { refusal, type VenueState } from './state.ts';
import { cancelUntriggered } from './triggers.ts';

/** The account's open (resting) orders and its waiting ones. */
function ordersOf(state: VenueState, account: Account): Order[] {
  const orders = [...account.openOrders];
  if (state.advanced.active) {
    for (const order of waitingOrders(state)) if (order.accountId === account.id) orders.push(order);
  }
  return orders;
}

function unknownAccount(
  state: VenueState,
  command: SetCancelOnDisconnect | SetAccountCancelOnDisconnect,
): CommandResult {
  const error = refusal('account_not_found', `account ${command.accountId} not found`, {
    field: 'accountId',
  });
  state.events.push({ type: 'rejection', commandType: command.type, accountId: command.accountId, error });
  return { ok: false, error, events: state.events };
}

export function setCancelOnDisconnect(state: VenueState, command: SetCancelOnDisconnect): CommandResult {
  const account = state.accounts.get(command.accountId);
  if (account === undefined) return unknownAccount(state, command);
  if (!command.enabled) {
    for (const order of ordersOf(state, account)) {
      if (order.codSession === command.session) order.codSession = null;
    }
  } else if (command.orderIds != null && command.orderIds.length > 0) {
    const ids = new Set(command.orderIds);
    for (const order of ordersOf(state, account)) {
      if (madeByAny(order, ids)) order.codSession = command.session;
    }
  }
  return { ok: true, events: state.events };
}

export function setAccountCancelOnDisconnect(
  state: VenueState,
  command: SetAccountCancelOnDisconnect,
): CommandResult {
  const account = state.accounts.get(command.accountId);
  if (account === undefined) return unknownAccount(state, command);
  account.cancelOnDisconnect = command.enabled;
  return { ok: true, events: state.events };
}

/** Cancels every order of every session, oldest first (resting, then waiting ones). */
export function cancelCodSessions(state: VenueState, _command: CancelCodSessions): CommandResult {
  const resting: Order[] = [];
  for (const account of state.accounts.values()) {
    for (const order of account.openOrders) if (order.codSession !== null) resting.push(order);
  }
  resting.sort((a, b) => a.number - b.number);
  const cancelled: OrderView[] = [];
  for (const order of resting) {
    cancelled.push(
      cancelResting(state, state.instrumentList[order.instrumentId]!, order, 'cancel_on_disconnect'),
    );
  }
  if (state.advanced.active) {
    const waiting = waitingOrders(state).filter((order) => order.codSession !== null);
    waiting.sort((a, b) => a.number - b.number);
    for (const order of waiting) {
      cancelUntriggered(state, order, 'cancel_on_disconnect');
      cancelled.push(order.toView());
    }
  }
  return { ok: true, events: state.events, orders: cancelled };
}

/** Open and waiting orders by session (for the start-up check and tests). */
export function codSessionOrders(state: VenueState): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (order: Order) => {
    if (order.codSession === null) return;
    const list = out.get(order.codSession);
    if (list === undefined) out.set(order.codSession, [order.id]);
    else list.push(order.id);
  };
  for (const account of state.accounts.values()) for (const order of account.openOrders) add(order);
  if (state.advanced.active) for (const order of waitingOrders(state)) add(order);
  return out;
}
