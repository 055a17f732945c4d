/**
 * Risk: the price band and the funds check (a simple, documented initial-margin model).
 *
 * Margin model (all in settlement-currency minor units, rounded up):
 * - futures/perpetuals: initial margin = futureInitialMarginBps × notional, for open orders
 *   (at their limit price) and for positions (at the mark, or at cost without a mark).
 * - options: a buy order reserves its premium; a sell order and a short position reserve
 *   optionShortMarginBps × underlying notional (coin amount for coin-settled options, amount ×
 *   index for stablecoin-settled ones, the premium when no index is known yet). A short covered
 *   by a long position, or by a long leg traded with it (combo, block trade), needs only the
 *   pair's spread loss (option-offsets.ts).
 * - spot: a buy reserves the quote value, a sell the base amount (in the base currency).
 * - lots of an order that only reduce the position (beyond other open orders on that side,
 *   resting combo orders' shares of the leg included) need no margin; every order also reserves
 *   its worst-case taker fee.
 * Equity = balance + unrealised futures PnL at mark + marked value of option positions (long
 * adds, short subtracts; at cost without a mark, long options at 0). Long options are no
 * collateral: margin balance = equity − their value, except the part that offsets the liability
 * of shorts they cover. Available funds = margin balance − position margin − reserved by open
 * orders. An order is accepted when its reserve ≤ available funds.
 *
 * Price band: with a mark, buys above mark × (1 + band) and sells below mark × (1 − band) are
 * refused (price_too_high / price_too_low with the limit); market orders are bounded by it.
 */
import type { Side } from '../core/types.ts';
import { type Account, Ledger, type OpenLots, type Position } from './accounts.ts';
import { type ComboBook, comboLegPrices, comboLegs, legSide } from './combo-legs.ts';
import type { Economics } from './economics.ts';
import { type OptionHolding, offsetGroup } from './option-offsets.ts';
import type { InstrumentState, VenueState } from './state.ts';

export interface PriceBand {
  readonly min: number;
  readonly max: number;
}

export function priceBand(state: VenueState, instrument: InstrumentState): PriceBand | null {
  const mark = instrument.markPrice;
  if (mark === null) return null;
  // An option combo takes the options' band (its net moves with option prices), a future spread the futures'.
  const optionLike = instrument.economics.isOption || instrument.instrument.kind === 'option_combo';
  const bps = optionLike ? state.config.optionBandBps : state.config.futureBandBps;
  const width = Math.max(Math.floor((Math.abs(mark) * bps) / 10_000), state.config.minBandTicks);
  return { min: mark - width, max: mark + width };
}

function ceilBps(amount: number, bps: number): number {
  return Math.ceil((amount * bps) / 10_000);
}

/**
 * Lots of `lots` that would increase exposure (the rest only reduce the position). `pendingLots`
 * on the same side, not yet booked (earlier blocks of one atomic batch), use up the reducible
 * part first, as open orders on that side do.
 */
function exposureLots(
  position: Position | undefined,
  comboOpen: OpenLots | undefined,
  side: Side,
  lots: number,
  pendingLots: number,
): number {
  if (position === undefined) return lots;
  const reducible =
    side === 'buy'
      ? Math.max(0, -position.size - position.openBuys - (comboOpen?.buys ?? 0) - pendingLots)
      : Math.max(0, position.size - position.openSells - (comboOpen?.sells ?? 0) - pendingLots);
  return lots > reducible ? lots - reducible : 0;
}

/** Naked margin of `lots` of a short option (the premium's value when no index is known yet). */
function nakedMargin(state: VenueState, economics: Economics, lots: number, fallback: number): number {
  const underlying = economics.underlyingNotional(lots, state.indexPrice(economics.baseCurrency)) ?? fallback;
  return ceilBps(underlying, state.config.optionShortMarginBps);
}

/** The currency and amount an order of `lots` at `price` must reserve. */
export function orderReserve(
  state: VenueState,
  instrument: InstrumentState,
  account: Account,
  side: Side,
  lots: number,
  price: number,
  pendingLots = 0,
): { currency: string; amount: number } {
  const combo = comboLegs(state, instrument);
  if (combo !== null) return comboReserve(state, instrument, combo, account, side, lots, price);
  const economics = instrument.economics;
  const fee = Math.max(0, economics.fee(lots, price, 'T', state.indexPrice(economics.baseCurrency)));
  if (economics.isSpot) {
    if (side === 'buy')
      return { currency: economics.settlementCurrency, amount: economics.value(lots, price) + fee };
    return { currency: economics.baseCurrency, amount: economics.baseAmount(lots) };
  }
  const exposed = exposureLots(
    account.positions.get(instrument.id),
    account.comboOpen.get(instrument.id),
    side,
    lots,
    pendingLots,
  );
  let margin = 0;
  if (exposed > 0) {
    if (!economics.isOption) {
      margin = ceilBps(economics.value(exposed, price), state.config.futureInitialMarginBps);
    } else if (side === 'buy') {
      margin = economics.value(exposed, price);
    } else {
      margin = nakedMargin(state, economics, exposed, economics.value(exposed, price));
    }
  }
  return { currency: economics.settlementCurrency, amount: margin + fee };
}

/** One leg of a trade that books several at once (a combo's legs, a block trade's). */
export interface ReserveLeg {
  readonly instrument: InstrumentState;
  readonly side: Side;
  readonly lots: number;
  readonly price: number;
  /** Lots of earlier legs on the same instrument and side, not yet booked. */
  readonly pendingLots: number;
}

/**
 * What legs traded together must reserve, per currency: each leg's own reserve, except that
 * their short options covered by their long options (option-offsets.ts) need only the pair's
 * spread loss, less the long premium that offsets the short's. The legs fill together, so each
 * covers the other from the start; positions already held are netted as for one order.
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
  for (const leg of legs) {
    const { instrument, side, lots, price, pendingLots } = leg;
    const economics = instrument.economics;
    if (!economics.isOption) {
      const reserve = orderReserve(state, instrument, account, side, lots, price, pendingLots);
      add(reserve.currency, reserve.amount);
      continue;
    }
    add(
      economics.settlementCurrency,
      Math.max(0, economics.fee(lots, price, 'T', state.indexPrice(economics.baseCurrency))),
    );
    const exposed = exposureLots(
      account.positions.get(instrument.id),
      account.comboOpen.get(instrument.id),
      side,
      lots,
      pendingLots,
    );
    if (exposed === 0) continue;
    const value = economics.value(exposed, price);
    let group = groups.get(economics.coverGroup!);
    if (group === undefined) {
      group = { shorts: [], longs: [] };
      groups.set(economics.coverGroup!, group);
    }
    if (side === 'buy') {
      add(economics.settlementCurrency, value);
      group.longs.push({ economics, lots: exposed, value, naked: 0 });
    } else {
      group.shorts.push({
        economics,
        lots: exposed,
        value,
        naked: nakedMargin(state, economics, exposed, value),
      });
    }
  }
  for (const { shorts, longs } of groups.values()) {
    if (shorts.length === 0) continue;
    const covered = offsetGroup(shorts, longs);
    add(shorts[0]!.economics.settlementCurrency, covered.margin - covered.offset);
  }
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
): { currency: string; amount: number } {
  const prices =
    comboLegPrices(combo, price) ??
    combo.legs.map((leg) => Math.max(1, leg.instrument.markPrice ?? leg.instrument.lastPrice ?? 1));
  const legs = combo.legs.map((leg, i) => ({
    instrument: leg.instrument,
    side: legSide(side, leg.ratio),
    lots,
    price: prices[i]!,
    pendingLots: 0,
  }));
  const currency = instrument.economics.settlementCurrency;
  return { currency, amount: legsReserve(state, account, legs).get(currency) ?? 0 };
}

/** Refreshes the ledger's cached position value and margin when prices or positions changed. */
function valuePositions(state: VenueState, account: Account, ledger: Ledger): void {
  if (ledger.cachedEpoch === state.priceEpoch) return;
  let value = 0;
  let margin = 0;
  let longOptionValue = 0;
  let options: Map<string, { shorts: OptionHolding[]; longs: OptionHolding[] }> | null = null;
  for (const position of account.positions.values()) {
    const economics = position.economics;
    if (position.size === 0 || economics.isSpot || economics.settlementCurrency !== ledger.currency) continue;
    const instrument = state.instrumentList[position.instrumentId]!;
    const mark = instrument.markPrice;
    const held = Math.abs(position.size);
    if (!economics.isOption) {
      const sigma = position.size > 0 ? 1 : -1;
      const notional = mark === null ? Math.abs(position.openCost) : economics.value(held, mark);
      if (mark !== null) value += economics.direction * (sigma * notional - position.openCost);
      margin += ceilBps(notional, state.config.futureInitialMarginBps);
      continue;
    }
    options ??= new Map();
    const group = economics.coverGroup!;
    let holdings = options.get(group);
    if (holdings === undefined) {
      holdings = { shorts: [], longs: [] };
      options.set(group, holdings);
    }
    if (position.size > 0) {
      const worth = mark === null ? 0 : economics.value(held, mark);
      value += worth;
      longOptionValue += worth;
      holdings.longs.push({ economics, lots: held, value: worth, naked: 0 });
    } else {
      const liability = mark === null ? -position.openCost : economics.value(held, mark);
      value -= liability;
      const naked = nakedMargin(state, economics, held, Math.abs(position.openCost));
      holdings.shorts.push({ economics, lots: held, value: liability, naked });
    }
  }
  let offset = 0;
  if (options !== null) {
    for (const { shorts, longs } of options.values()) {
      if (shorts.length === 0) continue;
      const covered = offsetGroup(shorts, longs);
      margin += covered.margin;
      offset += covered.offset;
    }
  }
  ledger.cachedPositionValue = value;
  ledger.cachedPositionMargin = margin;
  ledger.cachedUncollateralised = longOptionValue - offset;
  ledger.cachedEpoch = state.priceEpoch;
}

export interface FundsView {
  readonly balance: number;
  /** Unrealised futures PnL plus marked option value. */
  readonly positionValue: number;
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
