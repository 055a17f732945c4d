/**
 * Risk: the price band and the funds check (a simple, documented initial-margin model).
 *
 * Margin model (all in settlement-currency minor units, rounded up):
 * - futures/perpetuals: initial margin = futureInitialMarginBps × notional, for open orders
 *   (at their limit price) and for positions (at the mark, or at cost without a mark).
 * - options: a buy order reserves its premium; a sell order and a short position reserve
 *   optionShortMarginBps × underlying notional (coin amount for coin-settled options, amount ×
 *   index for stablecoin-settled ones, the premium when no index is known yet).
 * - spot: a buy reserves the quote value, a sell the base amount (in the base currency).
 * - lots of an order that only reduce the position (beyond other open orders on that side,
 *   resting combo orders' shares of the leg included) need no margin; every order also reserves
 *   its worst-case taker fee.
 * Equity = balance + unrealised futures PnL at mark + marked value of option positions (long
 * adds, short subtracts; at cost without a mark, long options at 0). Available funds =
 * equity − position margin − reserved by open orders. An order is accepted when its reserve ≤
 * available funds.
 *
 * Price band: with a mark, buys above mark × (1 + band) and sells below mark × (1 − band) are
 * refused (price_too_high / price_too_low with the limit); market orders are bounded by it.
 */
import type { Side } from '../core/types.ts';
import { type Account, Ledger, type OpenLots, type Position } from './accounts.ts';
import { type ComboBook, comboLegPrices, comboLegs, legSide } from './combo-legs.ts';
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
      const underlying =
        economics.underlyingNotional(exposed, state.indexPrice(economics.baseCurrency)) ??
        economics.value(exposed, price);
      margin = ceilBps(underlying, state.config.optionShortMarginBps);
    }
  }
  return { currency: economics.settlementCurrency, amount: margin + fee };
}

/**
 * A combo order reserves what its legs would at the prices the combo price splits into (legs at
 * their marks, one absorbing the net): a combo's trades are booked on its legs, so its margin is
 * theirs, netted against the account's leg positions.
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
  let amount = 0;
  for (let i = 0; i < combo.legs.length; i++) {
    const leg = combo.legs[i]!;
    amount += orderReserve(state, leg.instrument, account, legSide(side, leg.ratio), lots, prices[i]!).amount;
  }
  return { currency: instrument.economics.settlementCurrency, amount };
}

/** Refreshes the ledger's cached position value and margin when prices or positions changed. */
function valuePositions(state: VenueState, account: Account, ledger: Ledger): void {
  if (ledger.cachedEpoch === state.priceEpoch) return;
  let value = 0;
  let margin = 0;
  for (const position of account.positions.values()) {
    const economics = position.economics;
    if (position.size === 0 || economics.isSpot || economics.settlementCurrency !== ledger.currency) continue;
    const instrument = state.instrumentList[position.instrumentId]!;
    const mark = instrument.markPrice;
    const held = Math.abs(position.size);
    const sigma = position.size > 0 ? 1 : -1;
    if (!economics.isOption) {
      const notional = mark === null ? Math.abs(position.openCost) : economics.value(held, mark);
      if (mark !== null) value += economics.direction * (sigma * notional - position.openCost);
      margin += ceilBps(notional, state.config.futureInitialMarginBps);
    } else {
      if (mark !== null) value += sigma * economics.value(held, mark);
      else if (sigma < 0) value += position.openCost;
      if (sigma < 0) {
        const underlying =
          economics.underlyingNotional(held, state.indexPrice(economics.baseCurrency)) ??
          Math.abs(position.openCost);
        margin += ceilBps(underlying, state.config.optionShortMarginBps);
      }
    }
  }
  ledger.cachedPositionValue = value;
  ledger.cachedPositionMargin = margin;
  ledger.cachedEpoch = state.priceEpoch;
}

export interface FundsView {
  readonly balance: number;
  /** Unrealised futures PnL plus marked option value. */
  readonly positionValue: number;
  readonly equity: number;
  readonly positionMargin: number;
  readonly orderMargin: number;
  readonly availableFunds: number;
}

/** A read: a currency the account holds no ledger in reads as zero and opens none in the state. */
export function funds(state: VenueState, account: Account, currency: string): FundsView {
  const ledger = account.ledgers.get(currency) ?? new Ledger(currency);
  valuePositions(state, account, ledger);
  const equity = ledger.balance + ledger.cachedPositionValue;
  return {
    balance: ledger.balance,
    positionValue: ledger.cachedPositionValue,
    equity,
    positionMargin: ledger.cachedPositionMargin,
    orderMargin: ledger.reserved,
    availableFunds: equity - ledger.cachedPositionMargin - ledger.reserved,
  };
}

export function availableFunds(state: VenueState, account: Account, currency: string): number {
  const ledger = account.ledger(currency);
  valuePositions(state, account, ledger);
  return ledger.balance + ledger.cachedPositionValue - ledger.cachedPositionMargin - ledger.reserved;
}
