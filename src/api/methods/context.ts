/** Helpers shared by method handlers: the caller's account, owned orders, core results. */
import type { UnstampedCommand } from '../../core/commands.ts';
import type { CommandResult, CommandSuccess, OrderView } from '../../core/events.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import { parseComboName } from '../../market/combos.ts';
import type { Principal } from '../auth/authenticator.ts';
import type { ComboPort, CommandPort, HistoryPort, ReadPort } from '../ports.ts';
import type { CallContext } from '../registry.ts';

export interface MethodDeps {
  readonly commands: CommandPort;
  readonly reads: ReadPort;
  readonly history: HistoryPort;
  /** Combos listed on first use; without it only listed instruments exist. */
  readonly combos?: ComboPort;
}

export function principalOf(context: CallContext): Principal {
  if (context.principal === null) throw new VenueError('authorization_required');
  return context.principal;
}

/** Envelope methods act on the key's default account (SEMANTICS.md, Authentication). */
export function accountOf(context: CallContext): number {
  return principalOf(context).defaultAccountId;
}

export function instrumentOf(reads: ReadPort, name: string, field = 'instrumentName'): Instrument {
  const instrument = reads.instrument(name);
  if (instrument === undefined) {
    throw new VenueError('invalid_instrument', `unknown instrument ${name}`, { field, instrumentName: name });
  }
  return instrument;
}

/**
 * The instrument, or for a combo id not listed yet the combo, listed now (the ways into a new
 * combo: placing an order on it, reading its book or ticker). Only a signed call lists one: a
 * listing is journaled and the market prices the combo from then on, so anonymous reads (which
 * only the per-address limit bounds) could otherwise grow the venue without end.
 */
export async function instrumentOrCombo(
  deps: MethodDeps,
  name: string,
  context: CallContext,
  field = 'instrumentName',
): Promise<Instrument> {
  if (
    deps.reads.instrument(name) === undefined &&
    deps.combos !== undefined &&
    parseComboName(name) !== null
  ) {
    if (context.principal === null) {
      throw new VenueError(
        'invalid_instrument',
        `combo ${name} is not listed yet: a signed request (its book, its ticker or an order) lists it`,
        { field, instrumentName: name },
      );
    }
    try {
      await deps.combos.list(name);
    } catch (error) {
      // The listing names the combo as `instrumentName`; the caller's request may call it otherwise.
      if (
        error instanceof VenueError &&
        error.errorName === 'invalid_instrument' &&
        field !== 'instrumentName'
      ) {
        throw new VenueError(error.errorName, error.message, { ...error.data, field });
      }
      throw error;
    }
  }
  return instrumentOf(deps.reads, name, field);
}

/**
 * A currency the venue files instruments under (upper-cased; base or settlement currency, so
 * USDC finds the BTC_USDC products, see src/domain/currency.ts), or an error naming the field.
 */
export function currencyOf(reads: ReadPort, text: string, field = 'currency'): string {
  const currency = text.toUpperCase();
  const known = reads.currencies();
  if (!known.includes(currency)) {
    throw new VenueError('invalid_params', `unknown currency ${text}; the venue lists ${known.join(', ')}`, {
      field,
    });
  }
  return currency;
}

/** An order of one of the caller's user's accounts; others are indistinguishable from missing. */
export function ownedOrder(reads: ReadPort, context: CallContext, orderId: string): OrderView {
  return owned(reads.order(orderId), context, orderId);
}

/**
 * Like `ownedOrder`, but an order the engine no longer keeps in memory (it keeps open orders and
 * the most recently closed ones) is looked up in the order history.
 */
export async function ownedOrderAnywhere(
  reads: ReadPort,
  history: HistoryPort,
  context: CallContext,
  orderId: string,
): Promise<OrderView> {
  const live = reads.order(orderId);
  return owned(live ?? (await history.order(orderId)) ?? undefined, context, orderId);
}

function owned(order: OrderView | undefined, context: CallContext, orderId: string): OrderView {
  if (order === undefined || !principalOf(context).accountIds.has(order.accountId)) {
    throw new VenueError('order_not_found', undefined, { field: 'orderId', orderId });
  }
  return order;
}

export function submitOrThrow(commands: CommandPort, command: UnstampedCommand): Promise<CommandSuccess> {
  return commands.submit(command).then(successOrThrow);
}

function successOrThrow(result: CommandResult): CommandSuccess {
  if (!result.ok) throw new VenueError(result.error.name, result.error.message, result.error.data);
  return result;
}

/** Normalises a kind filter: 'any' and absent mean every kind; 'combo' means both combo kinds. */
export function kindMatches(kind: string | null | undefined, instrumentKind: string): boolean {
  if (kind == null || kind === 'any') return true;
  if (kind === 'combo') return instrumentKind === 'future_combo' || instrumentKind === 'option_combo';
  return kind === instrumentKind;
}
