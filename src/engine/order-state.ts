/**
 * The order state machine: the one table of allowed transitions.
 *
 * Rows are (state, event) → next state. Anything not in the table is a programming error
 * (`transition` throws): refusals of user requests are checked before a transition is taken.
 *
 * Notes on rows:
 * - accept: a new order enters as `open` (or `untriggered` for trigger orders, reserved).
 * - fill_partial keeps `open`; fill_complete ends in `filled`.
 * - An IOC/market/FOK remainder and every other removal is `cancel` → `cancelled`.
 * - reject only happens to a new order before it rests (never after a fill).
 * - edit keeps `open` (replaced = true); an edit that fills the rest ends via fill_complete.
 */
import type { OrderState } from '../core/types.ts';

export type OrderStateEvent = 'fill_partial' | 'fill_complete' | 'cancel' | 'edit' | 'trigger' | 'reject';

/** The state a new order starts in. */
export type InitialOrderState = Extract<OrderState, 'open' | 'untriggered'>;

const TABLE: Readonly<Record<OrderState, Partial<Record<OrderStateEvent, OrderState>>>> = {
  open: {
    fill_partial: 'open',
    fill_complete: 'filled',
    cancel: 'cancelled',
    edit: 'open',
    reject: 'rejected',
  },
  untriggered: {
    trigger: 'open',
    cancel: 'cancelled',
    edit: 'untriggered',
    reject: 'rejected',
  },
  filled: {},
  cancelled: {},
  rejected: {},
};

export function transition(from: OrderState, event: OrderStateEvent): OrderState {
  const next = TABLE[from][event];
  if (next === undefined) throw new Error(`invalid order transition: ${from} --${event}-->`);
  return next;
}

export function canTransition(from: OrderState, event: OrderStateEvent): boolean {
  return TABLE[from][event] !== undefined;
}

export function isClosedState(state: OrderState): boolean {
  return state === 'filled' || state === 'cancelled' || state === 'rejected';
}
