/**
 * Turning a wanted quote ladder into commands for one instrument, and the order commands the
 * simulator sends.
 *
 * Quotes are identified by label `lp|<instrument>|b|s|<level>`, so the maker keeps no order
 * ids. For one instrument: resting quotes no longer wanted are cancelled first; then missing
 * quotes are placed and quotes off their wanted price by more than the tolerance (or mostly
 * filled) are edited, in an order that never crosses the maker's own quotes on the way (the
 * engine's self-trade prevention would cancel them). A quote left alone within tolerance that
 * would cross the new ladder forces every quote to its wanted price.
 *
 * Hot path (runs for every listed instrument every step): plain loops, no closures.
 */
import type { UnstampedCommand } from '../../core/commands.ts';
import type { Side } from '../../core/types.ts';
import type { Quote, QuoteLadder } from './quoting.ts';
import type { SimulatorOrder } from './view.ts';

export const QUOTE_LABEL_PREFIX = 'lp|';
const SOURCE = { api: true } as const;

export function quoteLabel(instrumentName: string, side: Side, level: number): string {
  return `${QUOTE_LABEL_PREFIX}${instrumentName}|${side === 'buy' ? 'b' : 's'}|${level}`;
}

export function limitOrder(
  accountId: number,
  instrumentName: string,
  side: Side,
  price: number,
  amount: number,
  label: string,
  timeInForce: 'good_til_cancelled' | 'immediate_or_cancel',
): UnstampedCommand {
  return {
    type: 'place_order',
    accountId,
    instrumentName,
    side,
    orderType: 'limit',
    amount,
    price,
    timeInForce,
    postOnly: false,
    rejectPostOnly: false,
    reduceOnly: false,
    label,
    validUntil: null,
    source: SOURCE,
  };
}

interface QuoteChange {
  readonly side: Side;
  /** Current price of the edited order; null for a new order. */
  readonly from: number | null;
  readonly to: number;
  readonly command: UnstampedCommand;
}

interface Plan {
  readonly changes: QuoteChange[];
  /** Resting quotes left where they are. */
  readonly stale: { side: Side; price: number }[];
}

/** Whether a resting quote is moved (or resized) to the wanted one. */
function moves(existing: SimulatorOrder, quote: Quote, toleranceTicks: number, force: boolean): boolean {
  const remaining = existing.amount - existing.filledAmount;
  return force
    ? existing.price !== quote.price || remaining !== quote.amount
    : Math.abs(existing.price - quote.price) > toleranceTicks || remaining * 2 < quote.amount;
}

const NO_CHANGE: Plan = { changes: [], stale: [] };

function plan(
  accountId: number,
  instrumentName: string,
  ladder: QuoteLadder,
  labels: readonly string[],
  orders: ReadonlyMap<string, SimulatorOrder>,
  force: boolean,
): Plan {
  const changes: QuoteChange[] = [];
  for (let i = 0; i < ladder.quotes.length; i++) {
    const quote = ladder.quotes[i]!;
    const label = labels[i]!;
    const existing = orders.get(label);
    if (existing === undefined) {
      const command = limitOrder(
        accountId,
        instrumentName,
        quote.side,
        quote.price,
        quote.amount,
        label,
        'good_til_cancelled',
      );
      changes.push({ side: quote.side, from: null, to: quote.price, command });
    } else if (moves(existing, quote, ladder.toleranceTicks, force)) {
      const command: UnstampedCommand = {
        type: 'edit_order',
        accountId,
        orderId: existing.orderId,
        price: quote.price,
        amount: existing.filledAmount + quote.amount,
      };
      changes.push({ side: quote.side, from: existing.price, to: quote.price, command });
    }
  }
  // Most instruments need nothing on most steps: the quotes left alone only matter otherwise.
  if (changes.length === 0) return NO_CHANGE;
  const stale: { side: Side; price: number }[] = [];
  for (let i = 0; i < ladder.quotes.length; i++) {
    const quote = ladder.quotes[i]!;
    const existing = orders.get(labels[i]!);
    if (existing !== undefined && !moves(existing, quote, ladder.toleranceTicks, force))
      stale.push({ side: quote.side, price: existing.price });
  }
  return { changes, stale };
}

function crossesAfter(result: Plan): boolean {
  let maxBid = Number.NEGATIVE_INFINITY;
  let minAsk = Number.POSITIVE_INFINITY;
  for (const quote of result.stale) {
    if (quote.side === 'buy') maxBid = Math.max(maxBid, quote.price);
    else minAsk = Math.min(minAsk, quote.price);
  }
  for (const change of result.changes) {
    if (change.side === 'buy') maxBid = Math.max(maxBid, change.to);
    else minAsk = Math.min(minAsk, change.to);
  }
  return maxBid >= minAsk;
}

function extreme(prices: readonly number[], wantMax: boolean): number {
  let value = wantMax ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  for (const price of prices) value = wantMax ? Math.max(value, price) : Math.min(value, price);
  return value;
}

/**
 * Emits changes so that after each one the maker's quotes are uncrossed: repeatedly the first
 * change whose new price clears the other side as it stands. If none does (not expected for
 * an uncrossed target), the next change goes anyway.
 */
function emitWithoutSelfCross(result: Plan, commands: UnstampedCommand[]): void {
  const bids: number[] = [];
  const asks: number[] = [];
  for (const quote of result.stale) (quote.side === 'buy' ? bids : asks).push(quote.price);
  for (const change of result.changes)
    if (change.from !== null) (change.side === 'buy' ? bids : asks).push(change.from);
  const pending = result.changes.slice();
  while (pending.length > 0) {
    const maxBid = extreme(bids, true);
    const minAsk = extreme(asks, false);
    let pick = 0;
    for (let i = 0; i < pending.length; i++) {
      const change = pending[i]!;
      if (change.side === 'buy' ? change.to < minAsk : change.to > maxBid) {
        pick = i;
        break;
      }
    }
    const change = pending.splice(pick, 1)[0]!;
    const prices = change.side === 'buy' ? bids : asks;
    if (change.from !== null) prices.splice(prices.indexOf(change.from), 1);
    prices.push(change.to);
    commands.push(change.command);
  }
}

/**
 * Quote labels of one instrument by side and level, made once: the simulator asks for
 * thousands every step. Keyed by the instrument object, so expired instruments drop out.
 */
export class QuoteLabels {
  private readonly byInstrument = new WeakMap<object, { buy: string[]; sell: string[] }>();

  /** The labels of `ladder`'s quotes, in its order. */
  of(instrument: { readonly name: string }, ladder: QuoteLadder): string[] {
    let cached = this.byInstrument.get(instrument);
    if (cached === undefined) {
      cached = { buy: [], sell: [] };
      this.byInstrument.set(instrument, cached);
    }
    const labels: string[] = [];
    for (const quote of ladder.quotes) {
      const bySide = quote.side === 'buy' ? cached.buy : cached.sell;
      let label = bySide[quote.level];
      if (label === undefined) {
        label = quoteLabel(instrument.name, quote.side, quote.level);
        bySide[quote.level] = label;
      }
      labels.push(label);
    }
    return labels;
  }
}

/**
 * Appends the commands that move one instrument's quotes to `ladder`. `labels`: the quotes'
 * labels in ladder order (QuoteLabels), made here when not given.
 */
export function requote(
  accountId: number,
  instrumentName: string,
  ladder: QuoteLadder,
  orders: ReadonlyMap<string, SimulatorOrder>,
  commands: UnstampedCommand[],
  labels: readonly string[] = ladder.quotes.map((quote) =>
    quoteLabel(instrumentName, quote.side, quote.level),
  ),
): void {
  if (orders.size > 0) {
    for (const [label, order] of orders) {
      if (!labels.includes(label)) commands.push({ type: 'cancel_order', accountId, orderId: order.orderId });
    }
  }
  let result = plan(accountId, instrumentName, ladder, labels, orders, false);
  if (result.changes.length === 0) return;
  if (crossesAfter(result)) result = plan(accountId, instrumentName, ladder, labels, orders, true);
  emitWithoutSelfCross(result, commands);
}
