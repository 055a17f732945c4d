/**
 * A deliberately small venue for simulator tests: it applies place/edit/cancel commands to
 * per-instrument order lists, fills immediate-or-cancel orders against resting orders at
 * their prices (price-time priority), and keeps signed positions. Not the engine: only what
 * the simulator's read interface needs, so these tests do not depend on the engine's progress.
 */
import type { UnstampedCommand } from '../../src/core/commands.ts';
import type { Instrument } from '../../src/domain/instrument.ts';
import type { SimulatorOrder, SimulatorPosition, SimulatorView } from '../../src/market/simulator/view.ts';

interface RestingOrder extends SimulatorOrder {
  accountId: number;
  sequence: number;
}

export class FakeVenue implements SimulatorView {
  private nextId = 1;
  readonly orders = new Map<string, RestingOrder>();
  /** Order ids per instrument and per account, so reads stay cheap for the benchmark. */
  private readonly byInstrument = new Map<string, Set<string>>();
  private readonly byAccount = new Map<number, Set<string>>();
  readonly positions_ = new Map<number, Map<string, number>>();
  trades = 0;
  refused: string[] = [];

  constructor(private readonly listed: Instrument[]) {}

  instruments(): Iterable<Instrument> {
    return this.listed;
  }

  openOrders(accountId: number): Iterable<SimulatorOrder> {
    return [...(this.byAccount.get(accountId) ?? [])].map((id) => this.orders.get(id)!);
  }

  private instrumentOrders(instrumentName: string): RestingOrder[] {
    return [...(this.byInstrument.get(instrumentName) ?? [])].map((id) => this.orders.get(id)!);
  }

  private index(order: RestingOrder): void {
    this.orders.set(order.orderId, order);
    for (const [map, key] of [
      [this.byInstrument, order.instrumentName],
      [this.byAccount, order.accountId],
    ] as const) {
      let set = (map as Map<string | number, Set<string>>).get(key);
      if (set === undefined) {
        set = new Set();
        (map as Map<string | number, Set<string>>).set(key, set);
      }
      set.add(order.orderId);
    }
  }

  private remove(orderId: string): boolean {
    const order = this.orders.get(orderId);
    if (order === undefined) return false;
    this.orders.delete(orderId);
    this.byInstrument.get(order.instrumentName)?.delete(orderId);
    this.byAccount.get(order.accountId)?.delete(orderId);
    return true;
  }

  positions(accountId: number): Iterable<SimulatorPosition> {
    return [...(this.positions_.get(accountId) ?? new Map()).entries()].map(([instrumentName, size]) => ({
      instrumentName,
      size,
    }));
  }

  bestPrices(instrumentName: string): { bestBid: number | null; bestAsk: number | null } {
    let bestBid: number | null = null;
    let bestAsk: number | null = null;
    for (const order of this.instrumentOrders(instrumentName)) {
      if (order.side === 'buy' && (bestBid === null || order.price > bestBid)) bestBid = order.price;
      if (order.side === 'sell' && (bestAsk === null || order.price < bestAsk)) bestAsk = order.price;
    }
    return { bestBid, bestAsk };
  }

  setPosition(accountId: number, instrumentName: string, size: number): void {
    let map = this.positions_.get(accountId);
    if (map === undefined) {
      map = new Map();
      this.positions_.set(accountId, map);
    }
    map.set(instrumentName, size);
  }

  private addPosition(accountId: number, instrumentName: string, size: number): void {
    const current = this.positions_.get(accountId)?.get(instrumentName) ?? 0;
    this.setPosition(accountId, instrumentName, current + size);
  }

  apply(commands: readonly UnstampedCommand[]): void {
    for (const command of commands) {
      switch (command.type) {
        case 'place_order': {
          if (command.price === null) throw new Error('fake venue takes limit orders only');
          if (command.timeInForce === 'immediate_or_cancel') {
            this.take(command.accountId, command.instrumentName, command.side, command.price, command.amount);
            break;
          }
          const orderId = `O${this.nextId++}`;
          this.index({
            orderId,
            accountId: command.accountId,
            instrumentName: command.instrumentName,
            side: command.side,
            price: command.price,
            amount: command.amount,
            filledAmount: 0,
            label: command.label,
            sequence: this.nextId,
          });
          break;
        }
        case 'edit_order': {
          const order = this.orders.get(command.orderId);
          if (order === undefined) {
            this.refused.push(`edit ${command.orderId}`);
            break;
          }
          this.orders.set(order.orderId, {
            ...order,
            price: command.price ?? order.price,
            amount: command.amount ?? order.amount,
            sequence: this.nextId++,
          });
          break;
        }
        case 'cancel_order':
          if (!this.remove(command.orderId)) this.refused.push(`cancel ${command.orderId}`);
          break;
        default:
          break;
      }
    }
  }

  private take(
    accountId: number,
    instrumentName: string,
    side: 'buy' | 'sell',
    limit: number,
    amount: number,
  ): void {
    let left = amount;
    const candidates = [...this.orders.values()]
      .filter(
        (order) =>
          order.instrumentName === instrumentName && order.side !== side && order.accountId !== accountId,
      )
      .filter((order) => (side === 'buy' ? order.price <= limit : order.price >= limit))
      .sort((a, b) => (side === 'buy' ? a.price - b.price : b.price - a.price) || a.sequence - b.sequence);
    for (const order of candidates) {
      if (left === 0) break;
      const fill = Math.min(left, order.amount - order.filledAmount);
      left -= fill;
      this.trades++;
      const sign = side === 'buy' ? 1 : -1;
      this.addPosition(accountId, instrumentName, sign * fill);
      this.addPosition(order.accountId, instrumentName, -sign * fill);
      const filled = order.filledAmount + fill;
      if (filled === order.amount) this.remove(order.orderId);
      else this.orders.set(order.orderId, { ...order, filledAmount: filled });
    }
  }
}
