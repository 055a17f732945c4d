/**
 * Instruments: kinds, currencies, grids and Deribit-style names.
 *
 * Units (spec 2.6): `quantity` is in USD for inverse perpetuals and futures, and in the base
 * coin for options, linear futures/perpetuals and spot. Inside the core a quantity is a count
 * of lots (`amountGrid`), a price a count of the finest ticks (`priceGrid`).
 *
 * Option tick-size steps: above a price level a coarser tick applies (Deribit: 0.0001 below
 * 0.005 BTC, 0.0005 above). Prices are still counted in the finest tick; `isOnTick` checks the
 * coarser step where it applies.
 */
import { instrumentCurrencies } from './currency.ts';
import {
  DecimalGrid,
  formatScaled,
  parseDecimal,
  type ScaledDecimal,
  toSafeInteger,
  toScale,
} from './decimal.ts';
import { VenueError } from './errors.ts';

export type InstrumentKind = 'future' | 'option' | 'spot' | 'future_combo' | 'option_combo';
export type MarginKind = 'inverse' | 'linear';
export type SettlementPeriod = 'perpetual' | 'day' | 'week' | 'month' | 'quarter';
export type OptionType = 'call' | 'put';
export type Currency = string;

export interface TickSizeStep {
  /** Decimal price above which `tickSize` applies. */
  readonly abovePrice: string;
  readonly tickSize: string;
}

export interface ComboLeg {
  readonly instrumentName: string;
  /** Signed integer ratio: positive = same direction as the combo, negative = opposite. */
  readonly ratio: number;
}

export interface InstrumentSpec {
  readonly name: string;
  readonly kind: InstrumentKind;
  readonly baseCurrency: Currency;
  /** Currency the price is quoted in (USD for inverse futures, BTC for inverse options). */
  readonly quoteCurrency: Currency;
  /** Currency of the quantity for linear/spot (base coin), USD for inverse futures. */
  readonly counterCurrency: Currency;
  readonly settlementCurrency: Currency;
  readonly marginKind: MarginKind;
  readonly settlementPeriod: SettlementPeriod | null;
  readonly optionType: OptionType | null;
  /** Strike as a decimal string, options only. */
  readonly strike: string | null;
  /** Expiry in ms since epoch (08:00 UTC on the expiry day); null for perpetuals and spot. */
  readonly expiration: number | null;
  readonly tickSize: string;
  readonly tickSizeSteps: readonly TickSizeStep[];
  readonly minTradeAmount: string;
  readonly contractSize: string;
  /** Fee rates as decimal fractions of notional (negative = rebate). */
  readonly makerCommission: string;
  readonly takerCommission: string;
  readonly blockTradeMinTradeAmount: string;
  readonly createdAt: number;
  readonly legs: readonly ComboLeg[] | null;
}

/** An instrument with its grids resolved, as the core uses it. */
export class Instrument {
  readonly priceGrid: DecimalGrid;
  readonly amountGrid: DecimalGrid;
  /**
   * The currencies the `currency` filters file this instrument under (./currency.ts): the base
   * currency, then the settlement currency when it differs (USDC for `BTC_USDC` products).
   */
  readonly currencies: readonly string[];
  /** Per coarse-tick step: [price in finest ticks above which it applies, multiple of finest tick]. */
  private readonly tickSteps: ReadonlyArray<readonly [number, number]>;
  private readonly contractSize: ScaledDecimal;
  /** Lots per contract when that is a whole number (0 if not): contracts are then lots / it. */
  private readonly lotsPerContract: number;

  constructor(
    readonly id: number,
    readonly spec: InstrumentSpec,
  ) {
    this.priceGrid = new DecimalGrid(spec.tickSize);
    this.amountGrid = new DecimalGrid(spec.minTradeAmount);
    this.currencies = instrumentCurrencies(spec);
    this.tickSteps = spec.tickSizeSteps.map((step) => {
      const above = this.priceGrid.parse(step.abovePrice, 'tickSizeSteps.abovePrice');
      const multiple = this.priceGrid.parse(step.tickSize, 'tickSizeSteps.tickSize');
      return [above, multiple] as const;
    });
    this.contractSize = parseDecimal(spec.contractSize, 'contractSize');
    const scale = Math.max(this.amountGrid.scale, this.contractSize.scale);
    const lotUnits = this.amountGrid.stepUnits * 10n ** BigInt(scale - this.amountGrid.scale);
    const sizeUnits = this.contractSize.units * 10n ** BigInt(scale - this.contractSize.scale);
    this.lotsPerContract =
      sizeUnits > 0n && sizeUnits % lotUnits === 0n && sizeUnits / lotUnits <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(sizeUnits / lotUnits)
        : 0;
  }

  get name(): string {
    return this.spec.name;
  }
  get kind(): InstrumentKind {
    return this.spec.kind;
  }
  get isOption(): boolean {
    return this.spec.kind === 'option';
  }
  get isInverse(): boolean {
    return this.spec.marginKind === 'inverse';
  }
  /** The base currency: trade ids, index and MMP groups go by it. Filters use `filedUnder`. */
  get currency(): Currency {
    return this.spec.baseCurrency;
  }

  /** True when a `currency` filter (an upper-case symbol) finds this instrument. */
  filedUnder(currency: Currency): boolean {
    return this.currencies.includes(currency);
  }

  /** True when a price (finest ticks) sits on the tick that applies at its level. */
  isOnTick(priceTicks: number): boolean {
    const magnitude = Math.abs(priceTicks);
    for (let i = this.tickSteps.length - 1; i >= 0; i--) {
      const [above, multiple] = this.tickSteps[i]!;
      if (magnitude > above) return magnitude % multiple === 0;
    }
    return true;
  }

  /** The tick in finest units that applies at a price level (for post-only repricing). */
  tickAt(priceTicks: number): number {
    const magnitude = Math.abs(priceTicks);
    for (let i = this.tickSteps.length - 1; i >= 0; i--) {
      const [above, multiple] = this.tickSteps[i]!;
      if (magnitude > above) return multiple;
    }
    return 1;
  }

  /** Parses a wire price into finest ticks, checking the level-dependent tick. */
  parsePrice(text: string, field = 'price'): number {
    const ticks = this.priceGrid.parse(text, field);
    if (!this.isOnTick(ticks)) {
      throw new VenueError('off_grid', `${field} ${text} is not on the tick grid at that level`, {
        field,
        tickSize: this.priceGrid.format(this.tickAt(ticks)),
      });
    }
    return ticks;
  }

  formatPrice(ticks: number): string {
    return this.priceGrid.format(ticks);
  }

  /** Parses a wire quantity into lots; must be positive and on the lot grid. */
  parseQuantity(text: string, field = 'quantity'): number {
    const lots = this.amountGrid.parse(text, field);
    if (lots <= 0) throw new VenueError('invalid_amount', `${field} must be positive`, { field });
    return lots;
  }

  formatQuantity(lots: number): string {
    return this.amountGrid.format(lots);
  }

  /** Lots for a size given in contracts (quantity = contracts × contractSize). */
  parseContracts(text: string, field = 'contracts'): number {
    const contracts = parseDecimal(text, field);
    const size = this.contractSize;
    const scale = Math.max(this.amountGrid.scale, contracts.scale + size.scale);
    const quantityUnits = contracts.units * size.units * 10n ** BigInt(scale - contracts.scale - size.scale);
    const lotUnits = toScale(
      { units: this.amountGrid.stepUnits, scale: this.amountGrid.scale },
      scale,
      field,
    );
    if (quantityUnits % lotUnits !== 0n) {
      throw new VenueError('off_grid', `${field} ${text} is not a whole number of lots`, { field });
    }
    const lots = toSafeInteger(quantityUnits / lotUnits, field);
    if (lots <= 0) throw new VenueError('invalid_amount', `${field} must be positive`, { field });
    return lots;
  }

  /** Prints a lot count as contracts (quantity / contractSize), exactly. */
  formatContracts(lots: number): string {
    if (this.lotsPerContract > 0 && Number.isSafeInteger(lots) && lots % this.lotsPerContract === 0) {
      return String(lots / this.lotsPerContract + 0);
    }
    return this.formatContractsExact(lots);
  }

  /** `formatContracts` with bigints only (the fast path's reference). */
  formatContractsExact(lots: number): string {
    const size = this.contractSize;
    const scale = Math.max(this.amountGrid.scale, size.scale) + 12;
    const quantity = BigInt(lots) * this.amountGrid.stepUnits * 10n ** BigInt(scale - this.amountGrid.scale);
    const contractUnits = size.units * 10n ** BigInt(scale - size.scale);
    // Exact to 12 extra places; contract sizes are powers of ten or small integers in practice.
    const value = (quantity * 10n ** 12n) / contractUnits;
    return formatScaled(value, 12);
  }
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;

/** `DMMMYY` (e.g. 27DEC26, 3JAN27) for an expiry timestamp, as Deribit names it. */
export function formatExpiryCode(expiration: number): string {
  const date = new Date(expiration);
  const year = String(date.getUTCFullYear() % 100).padStart(2, '0');
  return `${date.getUTCDate()}${MONTHS[date.getUTCMonth()]}${year}`;
}

/** Expiry timestamp (08:00 UTC on that day) for a `DMMMYY` code; null when malformed. */
export function parseExpiryCode(code: string): number | null {
  const match = /^(\d{1,2})([A-Z]{3})(\d{2})$/.exec(code);
  if (match === null) return null;
  const [, day, month, year] = match;
  const monthIndex = MONTHS.indexOf(month as (typeof MONTHS)[number]);
  if (monthIndex < 0) return null;
  const timestamp = Date.UTC(2000 + Number(year), monthIndex, Number(day), 8);
  return formatExpiryCode(timestamp) === code ? timestamp : null;
}

/** Strike text in names: Deribit writes linear-option decimal points as `d` (0d625). */
export function formatStrikeForName(strike: string): string {
  return strike.replace('.', 'd');
}

export function parseStrikeFromName(text: string): string | null {
  return /^\d+(d\d+)?$/.test(text) ? text.replace('d', '.') : null;
}

export interface ParsedInstrumentName {
  readonly kind: 'future' | 'option' | 'spot';
  readonly baseCurrency: Currency;
  /** Set for linear products (`BTC_USDC-PERPETUAL`) and spot pairs (`BTC_USDC`). */
  readonly quoteCurrency: Currency | null;
  readonly expiration: number | null;
  readonly strike: string | null;
  readonly optionType: OptionType | null;
}

/**
 * The kind of a combo from its name alone (`BTC-FS-27DEC26_PERP` → future_combo, `BTC-CS-…`,
 * `BTC_USDC-PS-…`, `ETH-STRD-…` → option_combo); null for any other name. The read store files
 * rows by name, and combo names are not single-instrument names (market/combos.ts parses them
 * fully; its test checks the two agree).
 */
export function comboKindOfName(name: string): 'future_combo' | 'option_combo' | null {
  const match = /^[A-Z0-9]+(?:_USDC)?-(FS|CS|PS|STRD)-/.exec(name);
  if (match === null) return null;
  return match[1] === 'FS' ? 'future_combo' : 'option_combo';
}

/**
 * Parses single-instrument names: `BTC-PERPETUAL`, `BTC-27DEC26`, `BTC-27DEC26-70000-C`,
 * `BTC_USDC`, `BTC_USDC-PERPETUAL`, `BTC_USDC-27DEC26-70000-P`. Returns null when malformed.
 */
export function parseInstrumentName(name: string): ParsedInstrumentName | null {
  const parts = name.split('-');
  const [pair = '', ...rest] = parts;
  const pairMatch = /^([A-Z0-9]+)(?:_([A-Z0-9]+))?$/.exec(pair);
  if (pairMatch === null) return null;
  const baseCurrency = pairMatch[1]!;
  const quoteCurrency = pairMatch[2] ?? null;
  if (rest.length === 0) {
    return quoteCurrency === null
      ? null
      : { kind: 'spot', baseCurrency, quoteCurrency, expiration: null, strike: null, optionType: null };
  }
  if (rest.length === 1 && rest[0] === 'PERPETUAL') {
    return { kind: 'future', baseCurrency, quoteCurrency, expiration: null, strike: null, optionType: null };
  }
  const expiration = parseExpiryCode(rest[0]!);
  if (expiration === null) return null;
  if (rest.length === 1) {
    return { kind: 'future', baseCurrency, quoteCurrency, expiration, strike: null, optionType: null };
  }
  if (rest.length === 3 && (rest[2] === 'C' || rest[2] === 'P')) {
    const strike = parseStrikeFromName(rest[1]!);
    if (strike === null) return null;
    const optionType = rest[2] === 'C' ? 'call' : 'put';
    return { kind: 'option', baseCurrency, quoteCurrency, expiration, strike, optionType };
  }
  return null;
}
