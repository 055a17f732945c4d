/**
 * Test helpers for advanced orders: a harness with one BTC perpetual (tick 0.5 USD, so
 * 100_000 ticks = 50,000 USD), three funded accounts and a command log for replay checks.
 * Not used by production code.
 */
import type { CoreCommand } from '../core/commands.ts';
import type { CommandResult, OrderView } from '../core/events.ts';
import { Harness, orderCommand, perpetualSpec } from './testkit.ts';
import { Venue } from './venue.ts';

export const PERP = 'BTC-PERPETUAL';

export class AdvancedHarness extends Harness {
  readonly log: CoreCommand[] = [];

  constructor() {
    super();
    const original = this.venue.execute.bind(this.venue);
    this.venue.execute = (command) => {
      this.log.push(structuredClone(command));
      return original(command);
    };
    this.list(perpetualSpec());
    for (const a of [1, 2, 3, 4]) this.account(a);
  }

  /** Publishes an index (USD) and/or a mark (ticks) for the perpetual. */
  prices(index: number | null, mark: number | null = null): CommandResult {
    this.ts += 1000;
    return this.ok({
      type: 'update_prices',
      ...(index === null ? {} : { indexPrices: [{ currency: 'BTC', price: index }] }),
      ...(mark === null ? {} : { markPrices: [{ instrumentName: PERP, markPrice: mark }] }),
    });
  }

  /** A trade between accounts 3 (seller) and 4 (buyer) at `price`: sets last_price. */
  print(price: number, lots = 1): CommandResult {
    this.ts += 1000;
    this.ok(this.orderCommand(3, 'sell', lots, price));
    return this.ok(this.orderCommand(4, 'buy', lots, price, { timeInForce: 'immediate_or_cancel' }));
  }

  orderCommand(
    accountId: number,
    side: 'buy' | 'sell',
    amount: number,
    price: number | null,
    more: Record<string, unknown> = {},
  ) {
    return { ...orderCommand(accountId, side, amount, price, { instrumentName: PERP }), ...more };
  }

  /** Places an order that must be accepted (`more` adds or overrides fields) and returns it. */
  place(
    accountId: number,
    side: 'buy' | 'sell',
    amount: number,
    price: number | null,
    more: Record<string, unknown> = {},
  ): OrderView {
    return orderOf(this.ok(this.orderCommand(accountId, side, amount, price, more)));
  }

  /** Places a stop on the mark (`stop_limit` at `price`, `stop_market` when null) firing at `triggerPrice`. */
  markStop(
    accountId: number,
    side: 'buy' | 'sell',
    amount: number,
    price: number | null,
    triggerPrice: number,
    more: Record<string, unknown> = {},
  ): OrderView {
    const orderType = price === null ? 'stop_market' : 'stop_limit';
    return this.place(accountId, side, amount, price, {
      orderType,
      trigger: 'mark_price',
      triggerPrice,
      ...more,
    });
  }

  get(orderId: string): OrderView {
    const view = this.venue.getOrder(orderId);
    if (view === null) throw new Error(`no order ${orderId}`);
    return view;
  }

  /** Replays the log into a fresh venue and checks it ends in the same state. */
  replayHash(): string {
    const replay = Venue.create();
    for (const command of this.log) replay.execute(command);
    return replay.stateHash();
  }
}

export function orderOf(result: CommandResult): OrderView {
  if (!result.ok || result.order === undefined)
    throw new Error(`no order in result: ${JSON.stringify(result)}`);
  return result.order;
}

export function errorOf(result: CommandResult): string | null {
  return result.ok ? null : result.error.name;
}
