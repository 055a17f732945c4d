/**
 * An in-memory stand-in for the sequencer + engine behind the gateway's ports, for gateway tests.
 * Orders rest without matching (the real engine is exercised by the e2e tests); refusals follow
 * the core's result shape. Records every submitted command.
 */

import { MemoryHistory } from '../../src/api/memory-history.ts';
import type { CommandPort, CommittedBatch, EventPort, ReadPort } from '../../src/api/ports.ts';
import type { UnstampedCommand } from '../../src/core/commands.ts';
import type { CommandResult, CoreEvent, OrderView, PositionView, TradeView } from '../../src/core/events.ts';
import { VenueError } from '../../src/domain/errors.ts';
import { Instrument } from '../../src/domain/instrument.ts';
import { buildCatalogue } from '../../src/market/catalogue.ts';

export class FakeVenue implements CommandPort, ReadPort, EventPort {
  readonly submitted: UnstampedCommand[] = [];
  readonly history = new MemoryHistory((name) => this.instrumentsByName.get(name)?.kind);
  private readonly instrumentsByName = new Map<string, Instrument>();
  private readonly orders = new Map<string, OrderView>();
  private readonly balances = new Map<string, number>();
  private readonly accounts = new Set<number>();
  private readonly codAccounts = new Set<number>();
  private readonly listeners = new Set<(batch: CommittedBatch) => void>();
  private seq = 0;
  private nextOrder = 1;

  constructor(public time: number = Date.UTC(2026, 10, 20, 12)) {
    let id = 1;
    for (const spec of buildCatalogue(time, { BTC: 60_000, ETH: 3_000 })) {
      this.instrumentsByName.set(spec.name, new Instrument(id++, spec));
    }
  }

  now(): number {
    return this.time;
  }

  async submit(command: UnstampedCommand): Promise<CommandResult> {
    this.submitted.push(command);
    const result = this.apply(command);
    const batch: CommittedBatch = { seq: ++this.seq, ts: this.time, events: result.events };
    await Promise.resolve();
    this.history.record(batch);
    for (const listener of this.listeners) listener(batch);
    return result;
  }

  private refuse(name: 'order_not_found' | 'timed_out' | 'account_not_found', field: string): CommandResult {
    const error = { name, message: name, data: { field } };
    return {
      ok: false,
      error,
      events: [{ type: 'rejection', commandType: 'place_order', accountId: null, error }],
    };
  }

  private apply(command: UnstampedCommand): CommandResult {
    switch (command.type) {
      case 'create_account':
        this.accounts.add(command.accountId);
        return { ok: true, events: [{ type: 'account', accountId: command.accountId, change: 'created' }] };
      case 'deposit': {
        if (!this.accounts.has(command.accountId)) return this.refuse('account_not_found', 'accountId');
        const key = `${command.accountId}:${command.currency}`;
        const balance = (this.balances.get(key) ?? 0) + command.amount;
        this.balances.set(key, balance);
        return {
          ok: true,
          events: [
            {
              type: 'balance',
              accountId: command.accountId,
              currency: command.currency,
              balance,
              change: command.amount,
              reason: 'deposit',
            },
          ],
        };
      }
      case 'place_order': {
        if (command.validUntil !== null && this.time > command.validUntil)
          return this.refuse('timed_out', 'validUntil');
        const instrument = this.instrumentsByName.get(command.instrumentName)!;
        const order: OrderView = {
          orderId: `O-${this.nextOrder++}`,
          accountId: command.accountId,
          instrumentName: command.instrumentName,
          currency: instrument.currency,
          side: command.side,
          orderType: command.orderType,
          originalOrderType: null,
          orderState: 'open',
          price: command.price,
          amount: command.amount,
          filledAmount: 0,
          filledNotional: 0,
          averagePrice: 0,
          timeInForce: command.timeInForce,
          createdAt: this.time,
          lastUpdatedAt: this.time,
          cancelReason: null,
          label: command.label,
          owner: command.owner ?? null,
          api: true,
          web: false,
          mobile: false,
          postOnly: command.postOnly,
          rejectPostOnly: command.rejectPostOnly,
          reduceOnly: command.reduceOnly,
          replaced: false,
          autoReplaced: false,
          mmp: command.mmp ?? false,
          mmpCancelled: false,
          hidden: false,
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
          blockTrade: false,
          isLiquidation: false,
          riskReducing: false,
        };
        this.orders.set(order.orderId, order);
        return { ok: true, order, trades: [], events: [{ type: 'order', order }] };
      }
      case 'edit_order': {
        const current = this.orders.get(command.orderId);
        if (current === undefined || current.orderState !== 'open')
          return this.refuse('order_not_found', 'orderId');
        const order: OrderView = {
          ...current,
          amount: command.amount ?? current.amount,
          price: command.price ?? current.price,
          replaced: true,
          lastUpdatedAt: this.time,
        };
        this.orders.set(order.orderId, order);
        return { ok: true, order, trades: [], events: [{ type: 'order', order }] };
      }
      case 'cancel_order': {
        const current = this.orders.get(command.orderId);
        if (current === undefined || current.orderState !== 'open')
          return this.refuse('order_not_found', 'orderId');
        const order = this.close(current, 'user_request');
        return { ok: true, order, events: [{ type: 'order', order }] };
      }
      case 'cancel_all': {
        const cancelled: OrderView[] = [];
        for (const order of this.orders.values()) {
          if (order.accountId !== command.accountId || order.orderState !== 'open') continue;
          if (command.instrumentName && order.instrumentName !== command.instrumentName) continue;
          if (command.currency && order.currency !== command.currency) continue;
          cancelled.push(this.close(order, command.cancelReason ?? 'user_request'));
        }
        const events: CoreEvent[] = cancelled.map((order) => ({ type: 'order', order }));
        return { ok: true, orders: cancelled, events };
      }
      case 'set_account_cancel_on_disconnect':
        if (command.enabled) this.codAccounts.add(command.accountId);
        else this.codAccounts.delete(command.accountId);
        return { ok: true, events: [] };
      default:
        return { ok: true, events: [] };
    }
  }

  private close(order: OrderView, reason: OrderView['cancelReason']): OrderView {
    const closed: OrderView = {
      ...order,
      orderState: 'cancelled',
      cancelReason: reason,
      lastUpdatedAt: this.time,
    };
    this.orders.set(order.orderId, closed);
    return closed;
  }

  onCommitted(listener: (batch: CommittedBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Commands are published as they are applied. */
  get sequence(): number {
    return this.seq;
  }

  instrument(name: string): Instrument | undefined {
    return this.instrumentsByName.get(name);
  }
  instruments(expired: boolean): readonly Instrument[] {
    return expired ? [] : [...this.instrumentsByName.values()];
  }
  order(orderId: string): OrderView | undefined {
    return this.orders.get(orderId);
  }
  openOrders(
    accountId: number,
    filter: { instrumentName?: string; currency?: string },
  ): readonly OrderView[] {
    return [...this.orders.values()].filter(
      (order) =>
        order.accountId === accountId &&
        order.orderState === 'open' &&
        (!filter.instrumentName || order.instrumentName === filter.instrumentName) &&
        (!filter.currency || order.currency === filter.currency),
    );
  }
  positions(): readonly never[] {
    return [];
  }
  position(): undefined {
    return undefined;
  }
  /** The fake reserves nothing. */
  orderMargins(accountId: number, instrumentName: string) {
    if (!this.accounts.has(accountId) || !this.instrumentsByName.has(instrumentName))
      throw new VenueError('invalid_instrument', undefined, { field: 'instrumentName' });
    const currency = this.instrumentsByName.get(instrumentName)!.spec.settlementCurrency;
    return { buy: { currency, amount: 0 }, sell: { currency, amount: 0 }, priceBand: null };
  }
  /** The fake publishes no marks. */
  valuedPosition(position: PositionView): PositionView {
    return { ...position, markPrice: null, floatingPnl: null };
  }
  accountSummary(accountId: number, currency: string) {
    if (!this.accounts.has(accountId)) return undefined;
    const balance = this.balances.get(`${accountId}:${currency}`) ?? 0;
    return {
      accountId,
      currency,
      balance,
      equity: balance,
      marginBalance: balance,
      availableFunds: balance,
      initialMargin: 0,
      maintenanceMargin: 0,
      futuresPl: 0,
      optionsPl: 0,
      optionsValue: 0,
      selfTradeMode: 'cancel_maker' as const,
    };
  }
  orderBook(instrumentName: string) {
    if (!this.instrumentsByName.has(instrumentName)) return undefined;
    const open = [...this.orders.values()].filter(
      (o) => o.instrumentName === instrumentName && o.orderState === 'open',
    );
    const level = (side: 'buy' | 'sell') =>
      open
        .filter((o) => o.side === side && o.price !== null)
        .sort((a, b) => (side === 'buy' ? b.price! - a.price! : a.price! - b.price!))
        .map((o) => [o.price!, o.amount - o.filledAmount] as const);
    return { instrumentName, timestamp: this.time, bids: level('buy'), asks: level('sell') };
  }
  /** The fake never trades. */
  recentTrades(): readonly TradeView[] {
    return [];
  }
  ticker(instrumentName: string) {
    const book = this.orderBook(instrumentName);
    if (book === undefined) return undefined;
    return {
      instrumentName,
      timestamp: this.time,
      state: 'open' as const,
      bestBidPrice: book.bids[0]?.[0] ?? null,
      bestBidAmount: book.bids[0]?.[1] ?? 0,
      bestAskPrice: book.asks[0]?.[0] ?? null,
      bestAskAmount: book.asks[0]?.[1] ?? 0,
      lastPrice: null,
      markPrice: null,
      indexPrice: null,
    };
  }
  currencies(): readonly string[] {
    return ['BTC', 'ETH'];
  }
  /** The fake prices no index. */
  indexPrice(): number | null {
    return null;
  }
  /** Cancel-on-disconnect's `account` scope, as `set_account_cancel_on_disconnect` left it. */
  accountCancelOnDisconnect(accountId: number): boolean {
    return this.codAccounts.has(accountId);
  }
}
