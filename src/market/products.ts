/**
 * Product parameters per currency and the `InstrumentSpec` builders (Deribit grids/units,
 * reference §7).
 *
 * Units (instrument.ts): inverse futures/perpetuals are sized in USD (contract 10 USD BTC,
 * 1 USD ETH) and priced in USD; inverse options are sized and priced in the coin (multiplier
 * 1, tick 0.0001 with 0.0005 above 0.005); linear USDC options, linear perpetuals and spot are
 * sized in the coin and priced in USDC/USDT. `counterCurrency` is the quantity's currency.
 * Fees are decimal fractions of notional (options: of the underlying; the engine caps them).
 */
import {
  formatExpiryCode,
  formatStrikeForName,
  type InstrumentSpec,
  type OptionType,
  type SettlementPeriod,
} from '../domain/instrument.ts';

export interface CurrencyProducts {
  readonly currency: string;
  readonly inverseOption: { readonly minTradeAmount: string; readonly blockMin: string };
  readonly linearOption: {
    readonly tickSize: string;
    readonly minTradeAmount: string;
    readonly blockMin: string;
  };
  readonly inverseFuture: {
    readonly perpetualTick: string;
    readonly datedTick: string;
    readonly contractSize: string;
    readonly blockMin: string;
  };
  readonly linearPerpetual: {
    readonly tickSize: string;
    readonly minTradeAmount: string;
    readonly blockMin: string;
  };
  readonly spot: { readonly tickSize: string; readonly minTradeAmount: string };
  /** Spot quote currencies listed against this coin. */
  readonly spotQuotes: readonly string[];
}

export const DEFAULT_PRODUCTS: Readonly<Record<string, CurrencyProducts>> = {
  BTC: {
    currency: 'BTC',
    inverseOption: { minTradeAmount: '0.1', blockMin: '25' },
    linearOption: { tickSize: '5', minTradeAmount: '0.01', blockMin: '25' },
    inverseFuture: { perpetualTick: '0.5', datedTick: '2.5', contractSize: '10', blockMin: '200000' },
    linearPerpetual: { tickSize: '1', minTradeAmount: '0.001', blockMin: '5' },
    spot: { tickSize: '1', minTradeAmount: '0.0001' },
    spotQuotes: ['USDC', 'USDT'],
  },
  ETH: {
    currency: 'ETH',
    inverseOption: { minTradeAmount: '1', blockMin: '250' },
    linearOption: { tickSize: '0.5', minTradeAmount: '0.1', blockMin: '250' },
    inverseFuture: { perpetualTick: '0.05', datedTick: '0.25', contractSize: '1', blockMin: '100000' },
    linearPerpetual: { tickSize: '0.1', minTradeAmount: '0.01', blockMin: '50' },
    spot: { tickSize: '0.05', minTradeAmount: '0.001' },
    spotQuotes: ['USDC', 'USDT'],
  },
};

const OPTION_FEE = '0.0003';
const FUTURE_MAKER_FEE = '0';
const FUTURE_TAKER_FEE = '0.0005';

type Period = Exclude<SettlementPeriod, 'perpetual'>;

/** Strike as the decimal string used in specs and names (no float noise, no trailing zeros). */
export function strikeText(strike: number): string {
  return String(Number(strike.toFixed(6)));
}

export function optionName(
  currency: string,
  linear: boolean,
  expiration: number,
  strike: number,
  type: OptionType,
): string {
  const pair = linear ? `${currency}_USDC` : currency;
  return `${pair}-${formatExpiryCode(expiration)}-${formatStrikeForName(strikeText(strike))}-${type === 'call' ? 'C' : 'P'}`;
}

export function inverseOptionSpec(
  products: CurrencyProducts,
  expiration: number,
  period: Period,
  strike: number,
  optionType: OptionType,
  createdAt: number,
): InstrumentSpec {
  const c = products.currency;
  return {
    name: optionName(c, false, expiration, strike, optionType),
    kind: 'option',
    baseCurrency: c,
    quoteCurrency: c,
    counterCurrency: c,
    settlementCurrency: c,
    marginKind: 'inverse',
    settlementPeriod: period,
    optionType,
    strike: strikeText(strike),
    expiration,
    tickSize: '0.0001',
    tickSizeSteps: [{ abovePrice: '0.005', tickSize: '0.0005' }],
    minTradeAmount: products.inverseOption.minTradeAmount,
    contractSize: '1',
    makerCommission: OPTION_FEE,
    takerCommission: OPTION_FEE,
    blockTradeMinTradeAmount: products.inverseOption.blockMin,
    createdAt,
    legs: null,
  };
}

export function linearOptionSpec(
  products: CurrencyProducts,
  expiration: number,
  period: Period,
  strike: number,
  optionType: OptionType,
  createdAt: number,
): InstrumentSpec {
  const c = products.currency;
  return {
    name: optionName(c, true, expiration, strike, optionType),
    kind: 'option',
    baseCurrency: c,
    quoteCurrency: 'USDC',
    counterCurrency: c,
    settlementCurrency: 'USDC',
    marginKind: 'linear',
    settlementPeriod: period,
    optionType,
    strike: strikeText(strike),
    expiration,
    tickSize: products.linearOption.tickSize,
    tickSizeSteps: [],
    minTradeAmount: products.linearOption.minTradeAmount,
    contractSize: '1',
    makerCommission: OPTION_FEE,
    takerCommission: OPTION_FEE,
    blockTradeMinTradeAmount: products.linearOption.blockMin,
    createdAt,
    legs: null,
  };
}

/** Inverse future: `expiration` null = the perpetual. */
export function inverseFutureSpec(
  products: CurrencyProducts,
  expiration: number | null,
  period: SettlementPeriod,
  createdAt: number,
): InstrumentSpec {
  const c = products.currency;
  const future = products.inverseFuture;
  return {
    name: expiration === null ? `${c}-PERPETUAL` : `${c}-${formatExpiryCode(expiration)}`,
    kind: 'future',
    baseCurrency: c,
    quoteCurrency: 'USD',
    counterCurrency: 'USD',
    settlementCurrency: c,
    marginKind: 'inverse',
    settlementPeriod: period,
    optionType: null,
    strike: null,
    expiration,
    tickSize: expiration === null ? future.perpetualTick : future.datedTick,
    tickSizeSteps: [],
    minTradeAmount: future.contractSize,
    contractSize: future.contractSize,
    makerCommission: FUTURE_MAKER_FEE,
    takerCommission: FUTURE_TAKER_FEE,
    blockTradeMinTradeAmount: future.blockMin,
    createdAt,
    legs: null,
  };
}

export function linearPerpetualSpec(products: CurrencyProducts, createdAt: number): InstrumentSpec {
  const c = products.currency;
  const perpetual = products.linearPerpetual;
  return {
    name: `${c}_USDC-PERPETUAL`,
    kind: 'future',
    baseCurrency: c,
    quoteCurrency: 'USDC',
    counterCurrency: c,
    settlementCurrency: 'USDC',
    marginKind: 'linear',
    settlementPeriod: 'perpetual',
    optionType: null,
    strike: null,
    expiration: null,
    tickSize: perpetual.tickSize,
    tickSizeSteps: [],
    minTradeAmount: perpetual.minTradeAmount,
    contractSize: perpetual.minTradeAmount,
    makerCommission: FUTURE_MAKER_FEE,
    takerCommission: FUTURE_TAKER_FEE,
    blockTradeMinTradeAmount: perpetual.blockMin,
    createdAt,
    legs: null,
  };
}

export function spotSpec(products: CurrencyProducts, quote: string, createdAt: number): InstrumentSpec {
  const c = products.currency;
  return {
    name: `${c}_${quote}`,
    kind: 'spot',
    baseCurrency: c,
    quoteCurrency: quote,
    counterCurrency: c,
    settlementCurrency: quote,
    marginKind: 'linear',
    settlementPeriod: null,
    optionType: null,
    strike: null,
    expiration: null,
    tickSize: products.spot.tickSize,
    tickSizeSteps: [],
    minTradeAmount: products.spot.minTradeAmount,
    contractSize: products.spot.minTradeAmount,
    makerCommission: '0',
    takerCommission: '0',
    blockTradeMinTradeAmount: products.spot.minTradeAmount,
    createdAt,
    legs: null,
  };
}
