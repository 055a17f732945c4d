/**
 * Risk: the price band and the funds check (a simple, documented initial-margin model).
 *
 * Margin model (all in settlement-currency minor units, rounded up):
 * - futures/perpetuals: initial margin = futureInitialMarginBps × notional, for positions at
 *   the mark (at cost without a mark), and for open orders at their limit price or at the mark,
 *   whichever notional is the larger (the position their lots become is margined at the mark).
 * - options: a buy order reserves its premium; a sell order and a short position reserve
 *   optionShortMarginBps × underlying notional (coin amount for coin-settled options, amount ×
 *   index for stablecoin-settled ones, the premium when no index is known yet). A short covered
 *   by a long position, or by a long leg traded with it (combo, block trade), needs only the
 *   pair's spread loss (option-offsets.ts). Lots of a long that open orders would sell cover
 *   nothing; an order that commits more of them is checked for what it uncovers (`coverRelease`).
 * - spot: a buy reserves the quote value, a sell the base amount (in the base currency).
 * - lots of an order that only reduce the position (beyond other open orders on that side,
 *   resting combo orders' shares of the leg included) need no margin, but option lots that only
 *   reduce are valued exactly (`reductionNeed`): a short bought back loses its long's offset.
 *   Resting orders claim the reducible lots oldest first; when the position changes, the reserves
 *   of the orders whose claim changed follow it (claim-queues.ts `reviewReserves`), and an order that
 *   would close lots older orders claimed is checked for what they then need (`closingExtra`).
 *   Lots that open a position at a loss against the mark reserve that loss (`markLoss`); lots
 *   that close one reserve what their loss against the mark exceeds the margin they free
 *   (`closingLoss`); every order also reserves its worst-case taker fee.
 * Equity = balance + unrealised futures PnL at mark + marked value of option positions (long
 * adds, short subtracts; at cost without a mark, long options at 0). Long options are no
 * collateral: margin balance = equity − their value, except the part that offsets the liability
 * of shorts they cover. Available funds = margin balance − position margin − reserved by open
 * orders. An order is accepted when its reserve ≤ available funds.
 *
 * Price band: with a mark, buys above mark × (1 + band) and sells below mark × (1 − band) are
 * refused (price_too_high / price_too_low with the limit); market orders are bounded by it. A
 * combo not yet marked takes its legs' net mark. Its edges are on the tick grid, and positive for
 * a single instrument (`bandOnGrid`).
 */
import type { Side } from '../core/types.ts';
import { type Account, Ledger, type OpenLots, type Position } from './accounts.ts';
import { type ComboBook, comboLegPrices, comboLegs, comboMarkFromLegs, legSide } from './combo-legs.ts';
import type { Economics } from './economics.ts';
import { type OptionHolding, offsetGroup, prorata } from './option-offsets.ts';
import type { InstrumentState, VenueState } from './state.ts';

export interface PriceBand {
  readonly min: number;
  readonly max: number;
}

/**
 * The band around the instrument's mark; null when it has none. A combo with no mark of its own
 * yet (listed on first use, marked from the next market tick) is banded around its legs' net
 * mark (`comboMarkFromLegs`), so its trades, and the leg prices they print, stay near the marks.
 * Its edges are prices an order may have (`bandOnGrid`), as `minPrice`/`maxPrice` show them.
 */
export function priceBand(state: VenueState, instrument: InstrumentState): PriceBand | null {
  let mark = instrument.markPrice;
  if (mark === null) {
    const combo = comboLegs(state, instrument);
    mark = combo === null ? null : comboMarkFromLegs(combo);
    if (mark === null) return null;
  }
  // An option combo takes the options' band (its net moves with option prices), a future spread the futures'.
  const optionLike = instrument.economics.isOption || instrument.instrument.kind === 'option_combo';
  const bps = optionLike ? state.config.optionBandBps : state.config.futureBandBps;
  const width = Math.max(Math.floor((Math.abs(mark) * bps) / 10_000), state.config.minBandTicks);
  return bandOnGrid(instrument, mark - width, mark + width);
}

/**
 * mark ± width made prices an order may have: the max down and the min up onto the tick grid at
 * their level (an option's tick is coarser above 0.005), and the min at least one tick where a
 * price must be positive (every single instrument; a combo's may be zero or negative). Only
 * prices no order could have are cut off, so the band lets through the same orders as mark ±
 * width, and a market order bounded by it reaches the same (on-grid) levels. Before, an option
 * marked at 0.0004 showed a minimum of -0.0006, and a maximum of 0.3027 that a buy sent at was
 * refused off the 0.0005 grid (an audit).
 */
function bandOnGrid(instrument: InstrumentState, low: number, high: number): PriceBand {
  const tool = instrument.instrument;
  const combo = tool.kind === 'future_combo' || tool.kind === 'option_combo';
  let min = combo ? low : Math.max(low, 1);
  while (!tool.isOnTick(min)) min++;
  let max = high;
  while (!tool.isOnTick(max)) max--;
  return { min, max };
}

function ceilBps(amount: number, bps: number): number {
  return Math.ceil((amount * bps) / 10_000);
}

/**
 * Lots of `lots` that would increase exposure (the rest only reduce the position). `pendingLots`
 * on the same side, not yet booked (earlier blocks of one atomic batch), use up the reducible
 * part first, as open orders on that side do. `claimed`: the lots open orders on that side claim
 * first, when not all of them do (a resting order's reserve reviewed against the orders older than
 * it, claim-queues.ts `reviewReserves`); by default every open order on the side, combos' shares too.
 */
function exposureLots(
  position: Position | undefined,
  comboOpen: OpenLots | undefined,
  side: Side,
  lots: number,
  pendingLots: number,
  claimed?: number,
): number {
  if (position === undefined) return lots;
  const reducible =
    side === 'buy'
      ? Math.max(0, -position.size - (claimed ?? position.openBuys + (comboOpen?.buys ?? 0)) - pendingLots)
      : Math.max(0, position.size - (claimed ?? position.openSells + (comboOpen?.sells ?? 0)) - pendingLots);
  return lots > reducible ? lots - reducible : 0;
}

/** Open orders' claim on one instrument's position, in place of all of them (`exposureLots`). */
export interface Claim {
  readonly instrumentId: number;
  readonly lots: number;
}

/**
 * Lots of a long option position (of `size` lots, the position's by default) free to cover
 * shorts: those no open order would sell.
 */
function coverCapacity(
  account: Account,
  instrumentId: number,
  position: Position | undefined,
  size = position?.size ?? 0,
): number {
  const selling = (position?.openSells ?? 0) + (account.comboOpen.get(instrumentId)?.sells ?? 0);
  return Math.max(0, size - selling);
}

/** Naked margin of `lots` of a short option (the premium's value when no index is known yet). */
function nakedMargin(state: VenueState, economics: Economics, lots: number, fallback: number): number {
  const underlying = economics.underlyingNotional(lots, state.indexPrice(economics.baseCurrency)) ?? fallback;
  return ceilBps(underlying, state.config.optionShortMarginBps);
}

/**
 * The currency and amount an order of `lots` at `price` must reserve. `claim`: the lots of one
 * instrument (this one, or a combo's leg) other open orders claim first, instead of all of them.
 */
export function orderReserve(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  lots: number,
  price: number,
  pendingLots = 0,
  claim: Claim | null = null,
): { currency: string; amount: number } {
  const combo = comboLegs(state, instrument);
  if (combo !== null) return comboReserve(state, instrument, combo, account, side, lots, price, claim);
  const economics = instrument.economics;
  if (economics.isSpot) {
    const fee = Math.max(0, economics.fee(lots, price, 'T', state.indexPrice(economics.baseCurrency)));
    if (side === 'buy')
      return { currency: economics.settlementCurrency, amount: economics.value(lots, price) + fee };
    return { currency: economics.baseCurrency, amount: economics.baseAmount(lots) };
  }
  const claimed = claim !== null && claim.instrumentId === instrument.id ? claim.lots : undefined;
  return {
    currency: economics.settlementCurrency,
    amount: plainReserve(state, instrument, account, side, lots, price, pendingLots, claimed),
  };
}

/**
 * `orderReserve`'s amount for an instrument that is neither a combo nor spot (in its settlement
 * currency), without allocating: `claimed` as in `exposureLots`. Reviews of resting orders'
 * reserves (claim-queues.ts) call it once per order whose claim moved.
 */
export function plainReserve(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  lots: number,
  price: number,
  pendingLots: number,
  claimed: number | undefined,
): number {
  const economics = instrument.economics;
  const position = account.positions.get(instrument.id);
  const comboOpen = account.comboOpen.get(instrument.id);
  const exposed = exposureLots(position, comboOpen, side, lots, pendingLots, claimed);
  if (!economics.isOption) {
    const reserve = futureReserve(state, instrument, side, lots, price, exposed);
    if (instrument.markPrice !== null || position === undefined) return reserve;
    // With no mark, the lots an order closes realise their loss against the position's cost.
    // Its claim decides which of its lots close only while fills follow the claims' order: one at
    // a better price than the older orders (or left first by their cancels) fills first and
    // closes the position's lots itself. It reserves for the worse of the two.
    const claimOrder = reserve + costLoss(position, side, lots - exposed, price);
    const first = exposureLots(position, comboOpen, side, lots, pendingLots, 0);
    if (first >= exposed) return claimOrder;
    const firstFill =
      futureReserve(state, instrument, side, lots, price, first) +
      costLoss(position, side, lots - first, price);
    return Math.max(claimOrder, firstFill);
  }
  // An option.
  const fee = Math.max(0, economics.fee(lots, price, 'T', state.indexPrice(economics.baseCurrency)));
  let margin = 0;
  if (exposed > 0) {
    if (side === 'buy') margin = economics.value(exposed, price);
    else margin = nakedMargin(state, economics, exposed, economics.value(exposed, price));
    margin += markLoss(instrument, side, exposed, price);
  }
  const buyingBack = side === 'buy' ? lots - exposed : 0;
  if (buyingBack > 0) {
    const change = new Map([[instrument.id, buyingBack]]);
    margin += reductionNeed(
      state,
      account,
      economics.settlementCurrency,
      change,
      -economics.value(buyingBack, price),
    );
  }
  return margin + fee;
}

/**
 * A future order's reserve (`plainReserve`) when `exposed` of its `lots` open a position: its
 * worst-case taker fee, and the initial margin and mark loss of the exposed lots. Reviews of
 * resting orders (claim-queues.ts) that know the exposed lots call it directly.
 */
export function futureReserve(
  state: VenueState,
  instrument: InstrumentState,
  side: Side,
  lots: number,
  price: number,
  exposed: number,
): number {
  const economics = instrument.economics;
  // A future's fee does not depend on the index (economics.ts `fee`).
  const fee = Math.max(0, economics.fee(lots, price, 'T', null));
  const closing = closingLoss(state, instrument, side, lots - exposed, price);
  if (exposed === 0) return fee + closing;
  // Once booked, the lots are margined at the mark (`valuePositions`): where that notional is the
  // larger (a linear future sold below its mark, an inverse one bought above it), the price's
  // would fall short of it by the margin on the mark loss.
  const mark = instrument.markPrice;
  const atPrice = economics.value(exposed, price);
  const notional = mark === null ? atPrice : Math.max(atPrice, economics.value(exposed, mark));
  const margin = ceilBps(notional, state.config.futureInitialMarginBps);
  return margin + markLoss(instrument, side, exposed, price) + fee + closing;
}

/**
 * What `reducing` lots that close part of a marked future's position at `price` lose against the
 * mark beyond the initial margin they free (its lower bound: the position's margin is rounded up
 * on its whole size). The band does not bound it: an inverse long sold at the band's low edge
 * loses b/(1 − b) of its marked notional against the b it frees, and a Block RFQ quote's price
 * is checked against the band when quoted, not when accepted after the mark moved.
 */
function closingLoss(
  state: VenueState,
  instrument: InstrumentState,
  side: Side,
  reducing: number,
  price: number,
): number {
  if (instrument.markPrice === null || reducing <= 0) return 0;
  const loss = markLoss(instrument, side, reducing, price);
  if (loss === 0) return 0;
  const notional = instrument.economics.value(reducing, instrument.markPrice);
  const freed = Math.max(0, Math.floor((notional * state.config.futureInitialMarginBps) / 10_000) - 1);
  return Math.max(0, loss - freed);
}

/**
 * What `lots` opened at `price` lose at once against the mark: a future bought above it or sold
 * below it, an option sold below it (its liability is marked). 0 without a mark, on a gain, and
 * for a bought option, which is paid in full and no collateral anyway.
 */
function markLoss(instrument: InstrumentState, side: Side, lots: number, price: number): number {
  const mark = instrument.markPrice;
  const economics = instrument.economics;
  if (mark === null || mark === price || (economics.isOption && side === 'buy')) return 0;
  const sigma = side === 'buy' ? 1 : -1;
  const change = economics.direction * sigma * (economics.value(lots, mark) - economics.value(lots, price));
  return change < 0 ? -change : 0;
}

/**
 * A single future (not an option, spot or a combo) with no mark: its positions are carried at cost,
 * so the lots an order closes reserve their loss against it (`costLoss`).
 */
export function carriedAtCost(instrument: InstrumentState): boolean {
  const economics = instrument.economics;
  return (
    instrument.markPrice === null &&
    !economics.isOption &&
    !economics.isSpot &&
    instrument.instrument.spec.legs === null
  );
}

/**
 * What `lots` that close part of a future `position` at `price` realise at a loss against its cost
 * (the average price of the lots they close), 0 on a gain. Without a mark a position is carried at
 * its cost, so this loss is not in the available funds until the fill books it: the reducing lots
 * of an order reserve it then (`plainReserve`). With a mark, the position is valued there, and
 * what closing lots lose against the mark beyond the margin they free is reserved instead
 * (`closingLoss`). Rounded up.
 */
function costLoss(position: Position, side: Side, lots: number, price: number): number {
  const held = Math.abs(position.size);
  if (lots <= 0 || held === 0) return 0;
  const economics = position.economics;
  const closed = Math.min(lots, held);
  const cost = Math.ceil((Math.abs(position.openCost) * closed) / held);
  const sigma = side === 'buy' ? 1 : -1;
  // Closing a long sells (sigma −1): the loss is the cost less what the lots sell for (linear).
  const change = economics.direction * sigma * (cost - economics.value(closed, price));
  return change < 0 ? -change + 1 : 0;
}

/** One leg of a trade that books several at once (a combo's legs, a block trade's). */
export interface ReserveLeg {
  readonly instrument: InstrumentState;
  readonly side: Side;
  readonly lots: number;
  readonly price: number;
  /** Lots of earlier legs on the same instrument and side, not yet booked. */
  readonly pendingLots: number;
  /** Lots open orders on this side claim first, when not all of them (`exposureLots`). */
  readonly claimed?: number;
}

/**
 * What legs traded together must reserve, per currency. The lots of option legs that only reduce
 * positions are valued exactly (`reductionChange`): a short bought back frees its margin but also
 * the cover its long gave, a covering long sold leaves its short to be margined, and what they
 * free (a held long's sale) pays toward the other legs, never below a zero total. The lots that
 * open positions reserve as one order would, except that their short options covered by their
 * long options (option-offsets.ts) need only the pair's spread loss, less the long's value that
 * offsets the short's liability: the legs fill together, so each covers the other from the start.
 * A long offsets by the lower of its price and its mark (nothing without a mark): once booked it is
 * marked, and a long bought above its mark (a block's price, a combo leg split to one tick above a
 * mark below it) would otherwise leave the account below zero by the difference.
 */
export function legsReserve(
  state: VenueState,
  account: Account,
  legs: readonly ReserveLeg[],
): Map<string, number> {
  const totals = new Map<string, number>();
  const add = (currency: string, amount: number) =>
    totals.set(currency, (totals.get(currency) ?? 0) + amount);
  const groups = new Map<string, { shorts: OptionHolding[]; longs: OptionHolding[] }>();
  const reductions = new Map<string, { lots: Map<number, number>; cash: number }>();
  for (const leg of legs) {
    const { instrument, side, lots, price, pendingLots, claimed } = leg;
    const economics = instrument.economics;
    if (!economics.isOption) {
      const claim = claimed === undefined ? null : { instrumentId: instrument.id, lots: claimed };
      const reserve = orderReserve(state, instrument, account, side, lots, price, pendingLots, claim);
      add(reserve.currency, reserve.amount);
      continue;
    }
    const currency = economics.settlementCurrency;
    add(currency, Math.max(0, economics.fee(lots, price, 'T', state.indexPrice(economics.baseCurrency))));
    const position = account.positions.get(instrument.id);
    const comboOpen = account.comboOpen.get(instrument.id);
    const exposed = exposureLots(position, comboOpen, side, lots, pendingLots, claimed);
    const reducing = lots - exposed;
    if (reducing > 0) {
      let reduction = reductions.get(currency);
      if (reduction === undefined) {
        reduction = { lots: new Map(), cash: 0 };
        reductions.set(currency, reduction);
      }
      const signed = side === 'buy' ? reducing : -reducing;
      reduction.lots.set(instrument.id, (reduction.lots.get(instrument.id) ?? 0) + signed);
      // Cash paid for what is bought back, got for what is sold.
      reduction.cash -= Math.sign(signed) * economics.value(reducing, price);
    }
    if (exposed === 0) continue;
    const value = economics.value(exposed, price);
    let group = groups.get(economics.coverGroup!);
    if (group === undefined) {
      group = { shorts: [], longs: [] };
      groups.set(economics.coverGroup!, group);
    }
    if (side === 'buy') {
      add(currency, value);
      // Open orders that sell this long take the bought lots first (coverCapacity).
      const held = Math.max(0, position?.size ?? 0) + pendingLots;
      const cover =
        coverCapacity(account, instrument.id, position, held + exposed) -
        coverCapacity(account, instrument.id, position, held);
      if (cover > 0) {
        // Once booked, the long is marked (worth nothing without a mark, as `optionBook` values it),
        // and offsets the short's liability by that value only: a long bought above its mark, or
        // before it has one, covers no more than it will.
        const mark = instrument.markPrice;
        const worth = mark === null ? 0 : economics.value(exposed, Math.min(price, mark));
        group.longs.push({ economics, lots: cover, value: prorata(worth, cover, exposed, false), naked: 0 });
      }
    } else {
      add(currency, markLoss(instrument, side, exposed, price));
      group.shorts.push({
        economics,
        lots: exposed,
        value,
        naked: nakedMargin(state, economics, exposed, value),
      });
    }
  }
  for (const [currency, reduction] of reductions) {
    add(currency, reductionChange(state, account, currency, reduction.lots, reduction.cash));
  }
  for (const { shorts, longs } of groups.values()) {
    if (shorts.length === 0) continue;
    const covered = offsetGroup(shorts, longs);
    add(shorts[0]!.economics.settlementCurrency, covered.margin - covered.offset);
  }
  for (const [currency, amount] of totals) if (amount < 0) totals.set(currency, 0);
  return totals;
}

/**
 * A combo order reserves what its legs would at the prices the combo price splits into (legs at
 * their marks, one absorbing the net): a combo's trades are booked on its legs, so its margin is
 * theirs, netted against the account's leg positions, with the offsets of legs covering each other.
 */
function comboReserve(
  state: VenueState,
  instrument: InstrumentState,
  combo: ComboBook,
  account: Account,
  side: Side,
  lots: number,
  price: number,
  claim: Claim | null,
): { currency: string; amount: number } {
  const prices =
    comboLegPrices(combo, price) ??
    combo.legs.map((leg) => Math.max(1, leg.instrument.markPrice ?? leg.instrument.lastPrice ?? 1));
  const legs = combo.legs.map(
    (leg, i): ReserveLeg => ({
      instrument: leg.instrument,
      side: legSide(side, leg.ratio),
      lots,
      price: prices[i]!,
      pendingLots: 0,
      ...(claim !== null && claim.instrumentId === leg.instrument.id ? { claimed: claim.lots } : {}),
    }),
  );
  const currency = instrument.economics.settlementCurrency;
  return { currency, amount: legsReserve(state, account, legs).get(currency) ?? 0 };
}

/** A hypothetical change to an account's option book, and which of it to value. */
interface OptionChange {
  /** Just these cover groups. */
  readonly only?: ReadonlySet<string>;
  /** As if open orders would also sell these lots (instrument id → lots) of longs. */
  readonly extraSells?: ReadonlyMap<number, number>;
  /** As if positions had moved toward zero by these signed lots (instrument id → bought). */
  readonly reductions?: ReadonlyMap<number, number>;
}

interface OptionBook {
  /** Marked value of the option positions: longs add, shorts subtract. */
  readonly value: number;
  readonly longValue: number;
  readonly margin: number;
  /** Liability of covered shorts that their covering longs' value offsets. */
  readonly offset: number;
  readonly shorts: boolean;
}

const NO_CHANGE: OptionChange = {};

const NO_OPTIONS: OptionBook = { value: 0, longValue: 0, margin: 0, offset: 0, shorts: false };

/**
 * The option positions settled in `currency`, valued and margined with their spread offsets.
 * A long's lots that open orders would sell cover nothing.
 */
function optionBook(
  state: VenueState,
  account: Account,
  currency: string,
  what: OptionChange = NO_CHANGE,
): OptionBook {
  const { only, extraSells, reductions } = what;
  let value = 0;
  let longValue = 0;
  let groups: Map<string, { shorts: OptionHolding[]; longs: OptionHolding[] }> | null = null;
  for (const position of account.positions.values()) {
    const economics = position.economics;
    if (position.size === 0 || !economics.isOption || economics.settlementCurrency !== currency) continue;
    if (only !== undefined && !only.has(economics.coverGroup!)) continue;
    const mark = state.instrumentList[position.instrumentId]!.markPrice;
    const size = position.size + (reductions?.get(position.instrumentId) ?? 0);
    if (size === 0 || size > 0 !== position.size > 0) continue;
    const held = Math.abs(size);
    groups ??= new Map();
    const group = economics.coverGroup!;
    let holdings = groups.get(group);
    if (holdings === undefined) {
      holdings = { shorts: [], longs: [] };
      groups.set(group, holdings);
    }
    if (size > 0) {
      const worth = mark === null ? 0 : economics.value(held, mark);
      value += worth;
      longValue += worth;
      const cover = Math.max(
        0,
        coverCapacity(account, position.instrumentId, position, size) -
          (extraSells?.get(position.instrumentId) ?? 0),
      );
      if (cover > 0) {
        holdings.longs.push({ economics, lots: cover, value: prorata(worth, cover, held, false), naked: 0 });
      }
    } else {
      const whole = -position.size;
      // Without a mark a short is valued at its cost basis, pro rata for what is left of it.
      const cost = prorata(-position.openCost, held, whole, true);
      const liability = mark === null ? cost : economics.value(held, mark);
      value -= liability;
      holdings.shorts.push({
        economics,
        lots: held,
        value: liability,
        naked: nakedMargin(state, economics, held, Math.abs(cost)),
      });
    }
  }
  if (groups === null) return NO_OPTIONS;
  let margin = 0;
  let offset = 0;
  let anyShorts = false;
  for (const { shorts, longs } of groups.values()) {
    if (shorts.length === 0) continue;
    anyShorts = true;
    const covered = offsetGroup(shorts, longs);
    margin += covered.margin;
    offset += covered.offset;
  }
  return { value, longValue, margin, offset, shorts: anyShorts };
}

/**
 * What committing `lots` more sells of `instrument` (of a combo: its sold legs) takes from the
 * available funds by leaving shorts uncovered: the position margin they gain and the offset they
 * lose. 0 when it sells no long option. A funds check adds it to the order's reserve; it is not
 * reserved, since the position margin carries it from then on.
 */
export function coverRelease(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  lots: number,
): number {
  // The hot path (futures, spot, buys of an option) allocates nothing.
  const combo = comboLegs(state, instrument);
  if (lots <= 0 || (combo === null && (side === 'buy' || !instrument.economics.isOption))) return 0;
  let sells: Map<number, number> | null = null;
  const groups = new Set<string>();
  const sell = (leg: InstrumentState) => {
    const position = account.positions.get(leg.id);
    if (!leg.economics.isOption || position === undefined || position.size <= 0) return;
    sells ??= new Map();
    sells.set(leg.id, (sells.get(leg.id) ?? 0) + lots);
    groups.add(leg.economics.coverGroup!);
  };
  if (combo === null) sell(instrument);
  else for (const leg of combo.legs) if (legSide(side, leg.ratio) === 'sell') sell(leg.instrument);
  if (sells === null) return 0;
  return Math.max(
    0,
    fundsDrop(state, account, instrument.economics.settlementCurrency, { only: groups, extraSells: sells }),
  );
}

/** The available funds the option book gives: its value that counts as collateral, less its margin. */
function optionFunds(book: OptionBook): number {
  return book.value - book.longValue + book.offset - book.margin;
}

/**
 * How much less the option book in `currency` gives to the available funds after `change` (of the
 * cover groups in `change.only`); 0 at once when those groups hold no short, since then only
 * reductions of longs move it, by value that was no collateral.
 */
function fundsDrop(
  state: VenueState,
  account: Account,
  currency: string,
  change: OptionChange & { readonly only: ReadonlySet<string> },
): number {
  const before = optionBook(state, account, currency, { only: change.only });
  if (!before.shorts) return 0;
  return optionFunds(before) - optionFunds(optionBook(state, account, currency, change));
}

/**
 * What trading lots that only reduce option positions (instrument id → signed lots, bought
 * positive) takes from the available funds in `currency`, exactly: `cash` paid (negative) or got,
 * and how the option book's collateral value and margin move. A short bought back frees its margin
 * but also the cover its long gave; a covering long sold leaves its short to be margined. 0 when
 * the trade frees funds.
 */
function reductionNeed(
  state: VenueState,
  account: Account,
  currency: string,
  reductions: ReadonlyMap<number, number>,
  cash: number,
): number {
  return Math.max(0, reductionChange(state, account, currency, reductions, cash));
}

/**
 * `reductionNeed` before it is floored at 0: negative when the trade frees funds. Legs that fill
 * together (`legsReserve`) count what they free against what the others need: a held long a combo
 * sells pays toward the leg it buys.
 */
function reductionChange(
  state: VenueState,
  account: Account,
  currency: string,
  reductions: ReadonlyMap<number, number>,
  cash: number,
): number {
  const only = new Set<string>();
  for (const id of reductions.keys()) only.add(state.instrumentList[id]!.economics.coverGroup!);
  return fundsDrop(state, account, currency, { only, reductions }) - cash;
}

/** Refreshes the ledger's cached position value and margin when prices or positions changed. */
function valuePositions(state: VenueState, account: Account, ledger: Ledger): void {
  if (ledger.cachedEpoch === state.priceEpoch) return;
  let value = 0;
  let margin = 0;
  let options = false;
  let optionsCost = 0;
  for (const position of account.positions.values()) {
    const economics = position.economics;
    if (position.size === 0 || economics.isSpot || economics.settlementCurrency !== ledger.currency) continue;
    if (economics.isOption) {
      options = true;
      optionsCost += position.openCost;
      continue;
    }
    const mark = state.instrumentList[position.instrumentId]!.markPrice;
    const held = Math.abs(position.size);
    const sigma = position.size > 0 ? 1 : -1;
    const notional = mark === null ? Math.abs(position.openCost) : economics.value(held, mark);
    if (mark !== null) value += economics.direction * (sigma * notional - position.openCost);
    margin += ceilBps(notional, state.config.futureInitialMarginBps);
  }
  const book = options ? optionBook(state, account, ledger.currency) : NO_OPTIONS;
  ledger.cachedPositionValue = value + book.value;
  ledger.cachedOptionsValue = book.value;
  ledger.cachedOptionsCost = optionsCost;
  ledger.cachedPositionMargin = margin + book.margin;
  ledger.cachedUncollateralised = book.longValue - book.offset;
  ledger.cachedEpoch = state.priceEpoch;
}

/** PnL of a position's open size at `mark`, in settlement minor units (as equity counts it). */
export function floatingPnl(
  position: Pick<Position, 'economics' | 'size' | 'openCost'>,
  mark: number,
): number {
  const economics = position.economics;
  const sigma = position.size > 0 ? 1 : -1;
  return economics.direction * (sigma * economics.value(Math.abs(position.size), mark) - position.openCost);
}

export interface FundsView {
  readonly balance: number;
  /** Unrealised futures PnL plus marked option value. */
  readonly positionValue: number;
  /** Of it: the futures' and perpetuals' unrealised PnL (those without a mark count 0). */
  readonly futuresPl: number;
  /** Of it: the options' value (shorts negative; without a mark a long counts 0, a short its cost). */
  readonly optionsValue: number;
  /** The options' value less their cost basis. */
  readonly optionsPl: number;
  readonly equity: number;
  /** Equity less the long options' value, bar what offsets covered shorts' liability. */
  readonly marginBalance: number;
  readonly positionMargin: number;
  readonly orderMargin: number;
  readonly availableFunds: number;
}

/** A read: a currency the account holds no ledger in reads as zero and opens none in the state. */
export function funds(state: VenueState, account: Account, currency: string): FundsView {
  const ledger = account.ledgers.get(currency) ?? new Ledger(currency);
  valuePositions(state, account, ledger);
  const equity = ledger.balance + ledger.cachedPositionValue;
  const marginBalance = equity - ledger.cachedUncollateralised;
  return {
    balance: ledger.balance,
    positionValue: ledger.cachedPositionValue,
    futuresPl: ledger.cachedPositionValue - ledger.cachedOptionsValue,
    optionsValue: ledger.cachedOptionsValue,
    optionsPl: ledger.cachedOptionsValue - ledger.cachedOptionsCost,
    equity,
    marginBalance,
    positionMargin: ledger.cachedPositionMargin,
    orderMargin: ledger.reserved,
    availableFunds: marginBalance - ledger.cachedPositionMargin - ledger.reserved,
  };
}

export function availableFunds(state: VenueState, account: Account, currency: string): number {
  const ledger = account.ledger(currency);
  valuePositions(state, account, ledger);
  return (
    ledger.balance +
    ledger.cachedPositionValue -
    ledger.cachedUncollateralised -
    ledger.cachedPositionMargin -
    ledger.reserved
  );
}
