/**
 * Validation of the flat portfolio body (spec 2.1–2.5, 4.1, 8; issue 6 "Validation") into the
 * core's `PortfolioSpec` (lots, resolved hedge flags, derived forCcy).
 *
 * Every failure is a `VenueError` whose message and `data.field` name the field at fault
 * (dotted path, e.g. `legs[1].priceOptions.priceIn`):
 * - missing required value → `value_required`; wrong type, out-of-range or unknown enum →
 *   `invalid_params`; a rule across fields (priority, hedge, forCcy, missing trade block) →
 *   `invalid_portfolio`; unknown instrument or a type mismatch → `invalid_instrument`; an account
 *   that is not the key's user's → `account_not_owned`; quantities off the lot grid keep the
 *   grid's own error (`off_grid`, `invalid_amount`) with the leg's field.
 * Numbers arrive as JSON numbers (longs, TWAP prices) or decimal strings (Balance prices);
 * quantities may be either. Null and omitted optional fields are the same.
 *
 * Bounds (spec 8 gives none for these; docs/decisions.md, "Portfolio bounds"): a BALANCE has at
 * most MAX_BALANCE_PARTS parts and no more than the lots of its smallest non-hedge leg (every part
 * trades at least one lot of every leg); a TWAP has at most MAX_TWAP_SLICES slices; every duration
 * and interval, the planned run time and a TWAP's start lie within PORTFOLIO_HORIZON_MS of now;
 * dynamicMs is at least MIN_DYNAMIC_MS. Text lengths count characters (code points).
 */
import { START_TOLERANCE_MS } from '../../algo/machine.ts';
import type {
  BalanceSpec,
  DynamicStrategy,
  IcebergSpec,
  InstrumentTypeName,
  LegPricing,
  LegSpec,
  PortfolioSpec,
  PortfolioType,
  PositionSide,
  PriceSnapshotEntry,
  PriceType,
  TradeMode,
  TwapSpec,
} from '../../algo/types.ts';
import { longerThan, type Side, type TimeInForce } from '../../core/types.ts';
import { type ErrorName, VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';

export const CUSTOMIZED_NOTE_MAX = 100;
/** Legs per portfolio: every step of a BALANCE weighs each leg against the others. */
export const MAX_PORTFOLIO_LEGS = 20;
/** Audit reference prices kept per leg (stored with the portfolio). */
export const MAX_PRICE_SNAPSHOT = 20;
/** A label such as Custom or Straddle; kept short because every info and push repeats it. */
export const STRATEGY_MAX = 64;
/** How far ahead a portfolio may plan: its longest run, and its latest TWAP start (30 days). */
export const PORTFOLIO_HORIZON_MS = 30 * 24 * 60 * 60 * 1000;
export const MAX_BALANCE_PARTS = 1000;
export const MAX_TWAP_SLICES = 10_000;
/** Each reprice is a journaled timer command: faster than this is load, not execution quality. */
export const MIN_DYNAMIC_MS = 100;

export interface PortfolioValidationContext {
  /** Accounts of the key's user. */
  readonly accountIds: ReadonlySet<number>;
  instrument(name: string): Instrument | undefined;
  /** Server time, for the TWAP start check. */
  readonly now: number;
}

type Json = Record<string, unknown>;

function fail(name: ErrorName, field: string, message: string): never {
  throw new VenueError(name, message, { field });
}

function isMissing(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

function object(value: unknown, field: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail('invalid_params', field, `${field} must be an object`);
  }
  return value as Json;
}

function requireValue(value: unknown, field: string): unknown {
  if (isMissing(value)) fail('value_required', field, `${field} is required`);
  return value;
}

/** A long: a JSON integer (or an integer string, as large ids travel), within [min, max]. */
function long(
  value: unknown,
  field: string,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n))
    fail(
      'invalid_params',
      field,
      `${field} must be an integer of at most 16 digits (a safe integer, |n| < 2^53)`,
    );
  if (n < min) fail('invalid_params', field, `${field} must be at least ${min}`);
  if (n > max) fail('invalid_params', field, `${field} must be at most ${max}`);
  return n;
}

function optionalLong(value: unknown, field: string, min?: number, max?: number): number | null {
  return isMissing(value) ? null : long(value, field, min, max);
}

function bool(value: unknown, field: string): boolean {
  if (isMissing(value)) return false;
  if (typeof value !== 'boolean') fail('invalid_params', field, `${field} must be a boolean`);
  return value;
}

function string(value: unknown, field: string): string {
  if (typeof value !== 'string') fail('invalid_params', field, `${field} must be a string`);
  return value;
}

/** Free text kept in the read store: no control characters (PostgreSQL refuses a NUL in text). */
function plainText(value: unknown, field: string): string {
  const text = string(value, field);
  if (CONTROL.test(text)) fail('invalid_params', field, `${field} must not contain control characters`);
  return text;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;

function oneOf<T extends string | number>(value: unknown, field: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T))
    fail('invalid_params', field, `${field} must be one of ${allowed.join(', ')}`);
  return value as T;
}

const DECIMAL = /^-?\d{1,20}(\.\d{1,20})?$/;
/**
 * Bound of a leg's price and dynamic offset in any `priceIn` unit: far above any real price, and
 * low enough that every conversion to the instrument's ticks stays an exact integer (beyond it a
 * portfolio was accepted and then failed with "price must be an integer tick count").
 */
const PRICE_LIMIT = 1e9;

/** A decimal as number or string (a number in plain notation, as JSON writes it below 1e21); returns its canonical text. */
function decimalText(value: unknown, field: string, as: 'number' | 'string' | 'either'): string {
  if (typeof value === 'number' && as !== 'string' && DECIMAL.test(String(value))) return String(value);
  if (typeof value === 'string' && as !== 'number' && DECIMAL.test(value)) return value;
  const kind =
    as === 'either' ? 'a decimal (number or string)' : as === 'string' ? 'a decimal string' : 'a number';
  // A number JSON can only write in exponent form (below 1e-6, from 1e21) is one, but not usable.
  const plain =
    typeof value === 'number' && as !== 'string'
      ? ' in plain notation, at most 20 digits each side of the point'
      : '';
  return fail('invalid_params', field, `${field} must be ${kind}${plain}`);
}

/** The currencies a leg's `forCcy` may name: its instrument's base, quote and settlement currencies. */
function legCurrencies(instrument: Instrument): string[] {
  const spec = instrument.spec;
  return [...new Set([spec.baseCurrency, spec.quoteCurrency, spec.settlementCurrency])];
}

function lots(instrument: Instrument, value: unknown, field: string): number {
  const text = decimalText(requireValue(value, field), field, 'either');
  try {
    return instrument.parseQuantity(text, field);
  } catch (error) {
    if (error instanceof VenueError)
      throw new VenueError(error.errorName, error.message, { ...error.data, field });
    throw error;
  }
}

const PORTFOLIO_TYPES: readonly PortfolioType[] = ['BALANCE', 'TWAP', 'COMMON', 'ICEBERG'];
const INSTRUMENT_TYPES: readonly InstrumentTypeName[] = ['OPTION', 'PERPETUAL', 'DELIVERY_FUTURES', 'SPOT'];
const PRICE_TYPES: readonly PriceType[] = ['LIMIT', 'MARKET', 'DYNAMIC'];
const STRATEGIES: readonly DynamicStrategy[] = ['MID', 'MARK', 'MODEL', 'BID', 'ASK'];
const SIDES: Readonly<Record<number, Side>> = { 1: 'buy', 2: 'sell' };
/** The spec's integer codes of leg enums (2.4); `info` answers with the same codes. */
export const TIME_IN_FORCE: Readonly<Record<number, TimeInForce>> = {
  1: 'good_til_cancelled',
  2: 'immediate_or_cancel',
  3: 'fill_or_kill',
  4: 'good_til_day',
};
export const TRADE_MODES: Readonly<Record<number, TradeMode>> = { 1: 'CASH', 2: 'CROSS', 3: 'ISOLATED' };
export const POSITION_SIDES: Readonly<Record<number, PositionSide>> = { 1: 'LONG', 2: 'SHORT', 3: 'NET' };

function enumCode<T>(value: unknown, field: string, table: Readonly<Record<number, T>>): T | null {
  if (isMissing(value)) return null;
  const codes = Object.keys(table).map(Number);
  return table[oneOf(value, field, codes)]!;
}

function instrumentTypeOf(instrument: Instrument): InstrumentTypeName | null {
  switch (instrument.kind) {
    case 'option':
      return 'OPTION';
    case 'future':
      return instrument.spec.settlementPeriod === 'perpetual' ? 'PERPETUAL' : 'DELIVERY_FUTURES';
    case 'spot':
      return 'SPOT';
    default:
      return null;
  }
}

/**
 * priceIn units a leg may use: spec 2.5's USD, USDT, USDC and BTC (on any leg: BTC on an ETH leg
 * goes through USD at the two indices), the leg's base coin and quote currency, IV (options).
 */
export function allowedPriceIn(instrument: Instrument): string[] {
  const units = new Set([
    'USD',
    'USDT',
    'USDC',
    'BTC',
    instrument.spec.baseCurrency,
    instrument.spec.quoteCurrency,
  ]);
  if (instrument.isOption) units.add('IV');
  return [...units];
}

/** A `priceIn` unit the leg allows (any case, kept upper-case): a leg's price or a snapshot's. */
function priceUnit(value: unknown, field: string, instrument: Instrument): string {
  const unit = string(value, field).toUpperCase();
  if (unit === 'IV' && !instrument.isOption) fail('invalid_params', field, `${field} IV is for options only`);
  const allowed = allowedPriceIn(instrument);
  if (!allowed.includes(unit)) fail('invalid_params', field, `${field} must be one of ${allowed.join(', ')}`);
  return unit;
}

/**
 * A price in `unit` (null: the quote currency): positive and below PRICE_LIMIT; in IV a volatility
 * in percent, in (0, 1000].
 */
function checkPrice(price: number, unit: string | null, field: string): void {
  if (unit !== 'IV' && price <= 0) fail('invalid_params', field, `${field} must be positive`);
  if (price >= PRICE_LIMIT) fail('invalid_params', field, `${field} must be below ${PRICE_LIMIT}`);
  if (unit === 'IV' && (price <= 0 || price > 1000)) {
    fail('invalid_params', field, `${field} in IV must be a volatility in percent (0, 1000]`);
  }
}

function pricing(raw: unknown, field: string, type: PortfolioType, instrument: Instrument): LegPricing {
  const options = object(requireValue(raw, field), field);
  const priceType = oneOf(
    requireValue(options.priceType, `${field}.priceType`),
    `${field}.priceType`,
    PRICE_TYPES,
  );
  const market = priceType === 'MARKET';
  const priceField = `${field}.price`;
  const priceInField = `${field}.priceIn`;
  let price: number | null = null;
  if (!isMissing(options.price)) {
    const as = type === 'BALANCE' ? 'string' : type === 'TWAP' ? 'number' : 'either';
    price = Number(decimalText(options.price, priceField, as));
  } else if (!market && (type === 'BALANCE' || type === 'TWAP' || priceType === 'LIMIT')) {
    fail('value_required', priceField, `${priceField} is required for ${priceType} ${type} legs`);
  }
  let priceIn: string | null = null;
  if (!isMissing(options.priceIn)) {
    priceIn = priceUnit(options.priceIn, priceInField, instrument);
  } else if (!market && (type === 'BALANCE' || type === 'TWAP')) {
    fail('value_required', priceInField, `${priceInField} is required for ${priceType} ${type} legs`);
  }
  if (price !== null) checkPrice(price, priceIn, priceField);
  const strategyField = `${field}.dynamicPriceStrategy`;
  let dynamicStrategy: DynamicStrategy | null = null;
  if (!isMissing(options.dynamicPriceStrategy)) {
    dynamicStrategy = oneOf(options.dynamicPriceStrategy, strategyField, STRATEGIES);
  } else if (priceType === 'DYNAMIC') {
    fail('value_required', strategyField, `${strategyField} is required when priceType is DYNAMIC`);
  }
  const offsetField = `${field}.dynamicPriceOffset`;
  const dynamicOffset = isMissing(options.dynamicPriceOffset)
    ? 0
    : Number(decimalText(options.dynamicPriceOffset, offsetField, 'either'));
  if (Math.abs(dynamicOffset) >= PRICE_LIMIT)
    fail('invalid_params', offsetField, `${offsetField} must be between -${PRICE_LIMIT} and ${PRICE_LIMIT}`);
  const msField = `${field}.dynamicMs`;
  const dynamicMs = optionalLong(options.dynamicMs, msField, MIN_DYNAMIC_MS, PORTFOLIO_HORIZON_MS);
  if (type === 'TWAP' && dynamicStrategy !== null && dynamicMs === null) {
    fail('value_required', msField, `${msField} is required for TWAP legs with a dynamicPriceStrategy`);
  }
  const offsetAsSent = priceType === 'DYNAMIC' ? asSent(options.dynamicPriceOffset) : null;
  return {
    priceType,
    price,
    priceIn,
    dynamicStrategy: priceType === 'DYNAMIC' ? dynamicStrategy : null,
    dynamicOffset: priceType === 'DYNAMIC' ? dynamicOffset : 0,
    dynamicMs: priceType === 'DYNAMIC' ? dynamicMs : null,
    priceAsSent: asSent(options.price),
    ...(offsetAsSent === null ? {} : { dynamicOffsetAsSent: offsetAsSent }),
  };
}

/**
 * A buy whose price is already in the instrument's quote currency and below its smallest tick
 * can never be placed (the algorithm never raises a buy's price): refused naming the price
 * rather than accepted to wait for good. A price in another unit converts at the market of each
 * moment and may reach a tick later, so it waits (docs/decisions.md).
 */
function buyableAt(pricing: LegPricing, side: Side, instrument: Instrument, field: string): LegPricing {
  if (side !== 'buy' || pricing.priceType === 'MARKET' || pricing.price === null) return pricing;
  // priceIn is kept upper-case (priceUnit); without one the price is in the quote currency.
  if ((pricing.priceIn ?? instrument.spec.quoteCurrency) !== instrument.spec.quoteCurrency) return pricing;
  const tick = Number(instrument.spec.tickSize);
  if (pricing.price >= tick) return pricing;
  return fail(
    'invalid_params',
    `${field}.priceOptions.price`,
    `${field}.priceOptions.price is below one tick (${instrument.spec.tickSize} ${instrument.spec.quoteCurrency}): a buy can never be placed there`,
  );
}

/** A validated decimal (or null) as the client wrote it: a string stays a string, a number a number. */
function asSent(value: unknown): string | number | null {
  return isMissing(value) ? null : typeof value === 'string' ? value : Number(value);
}

/**
 * The leg's audit prices (spec 2.4): every entry has all four fields (value_required naming e.g.
 * `legs[0].priceSnapshot[1].priceIn`); `placePriceIn` and `priceIn` are units the leg's own
 * `priceIn` may take (any case, kept upper-case), and each price is valid in its unit as the leg's
 * price is (positive, below the bound; IV in (0, 1000]). The arrival price reads the first entry
 * in its `priceIn` (src/algo/steps.ts `captureArrival`).
 */
function snapshot(raw: unknown, field: string, instrument: Instrument): PriceSnapshotEntry[] {
  if (isMissing(raw)) return [];
  if (!Array.isArray(raw)) fail('invalid_params', field, `${field} must be an array`);
  if (raw.length > MAX_PRICE_SNAPSHOT)
    fail('invalid_params', field, `${field} must hold at most ${MAX_PRICE_SNAPSHOT} entries`);
  return raw.map((entry, i) => {
    const f = `${field}[${i}]`;
    const item = object(entry, f);
    const unit = (key: string) =>
      priceUnit(requireValue(item[key], `${f}.${key}`), `${f}.${key}`, instrument);
    const price = (key: string, inUnit: string) => {
      const value = requireValue(item[key], `${f}.${key}`);
      if (typeof value !== 'number' || !Number.isFinite(value))
        fail('invalid_params', `${f}.${key}`, `${f}.${key} must be a number`);
      checkPrice(value, inUnit, `${f}.${key}`);
      return value;
    };
    const placePriceIn = unit('placePriceIn');
    const placePrice = price('placePrice', placePriceIn);
    const priceIn = unit('priceIn');
    return { placePriceIn, placePrice, price: price('price', priceIn), priceIn };
  });
}

function leg(raw: unknown, i: number, type: PortfolioType, context: PortfolioValidationContext) {
  const field = `legs[${i}]`;
  const body = object(raw, field);
  const name = string(requireValue(body.instrument, `${field}.instrument`), `${field}.instrument`);
  const declared = oneOf(
    requireValue(body.instrumentType, `${field}.instrumentType`),
    `${field}.instrumentType`,
    INSTRUMENT_TYPES,
  );
  const instrument = context.instrument(name);
  if (instrument === undefined)
    fail('invalid_instrument', `${field}.instrument`, `${field}.instrument ${name} does not exist`);
  const actual = instrumentTypeOf(instrument);
  if (actual !== declared) {
    fail(
      'invalid_instrument',
      `${field}.instrumentType`,
      `${field}.instrumentType ${declared} does not match ${name} (${actual ?? instrument.kind})`,
    );
  }
  const side = SIDES[oneOf(requireValue(body.side, `${field}.side`), `${field}.side`, [1, 2])]!;
  const priority = bool(body.priority, `${field}.priority`);
  if (priority && type !== 'BALANCE')
    fail('invalid_portfolio', `${field}.priority`, `${field}.priority is for BALANCE portfolios only`);
  const forCcy = isMissing(body.forCcy)
    ? instrument.spec.baseCurrency
    : string(body.forCcy, `${field}.forCcy`).toUpperCase();
  const reduceOnly = bool(body.reduceOnly, `${field}.reduceOnly`);
  // As placing refuses it (engine reduceOnlyUnavailable): such a leg would fail at its first child.
  if (reduceOnly && (instrument.kind === 'spot' || instrument.spec.legs !== null)) {
    fail(
      'invalid_arguments',
      `${field}.reduceOnly`,
      `${field}.reduceOnly is not available for ${instrument.kind === 'spot' ? 'spot' : 'combos'} (${name})`,
    );
  }
  const currencies = legCurrencies(instrument);
  if (!currencies.includes(forCcy))
    fail('invalid_params', `${field}.forCcy`, `${field}.forCcy must be one of ${currencies.join(', ')}`);
  return {
    instrument,
    spec: {
      instrumentName: name,
      instrumentType: declared,
      side,
      amount: lots(instrument, body.quantity, `${field}.quantity`),
      pricing: buyableAt(
        pricing(body.priceOptions, `${field}.priceOptions`, type, instrument),
        side,
        instrument,
        field,
      ),
      timeInForce: enumCode(body.timeInForce, `${field}.timeInForce`, TIME_IN_FORCE),
      postOnly: bool(body.postOnly, `${field}.postOnly`),
      reduceOnly,
      hidden: bool(body.hidden, `${field}.hidden`),
      tradeMode: enumCode(body.tradeMode, `${field}.tradeMode`, TRADE_MODES),
      positionSide: enumCode(body.positionSide, `${field}.positionSide`, POSITION_SIDES),
      hedge: bool(body.hedge, `${field}.hedge`),
      priority,
      forCcy,
      priceSnapshot: snapshot(body.priceSnapshot, `${field}.priceSnapshot`, instrument),
    } satisfies LegSpec,
  };
}

const HORIZON_TEXT = `${PORTFOLIO_HORIZON_MS / 86_400_000} days`;

function balanceBlock(raw: unknown): BalanceSpec {
  const body = object(raw, 'balanceTrade');
  const need = (key: string) => requireValue(body[key], `balanceTrade.${key}`);
  const parts = long(need('parts'), 'balanceTrade.parts', 1, MAX_BALANCE_PARTS);
  const eachLimitMs = long(need('eachLimitMs'), 'balanceTrade.eachLimitMs', 1, PORTFOLIO_HORIZON_MS);
  const totalLimitMs = long(need('totalLimitMs'), 'balanceTrade.totalLimitMs', 0, PORTFOLIO_HORIZON_MS);
  if (totalLimitMs === 0 && parts * eachLimitMs > PORTFOLIO_HORIZON_MS) {
    fail(
      'invalid_params',
      'balanceTrade.eachLimitMs',
      `balanceTrade.eachLimitMs × parts must be at most ${PORTFOLIO_HORIZON_MS} ms (${HORIZON_TEXT}) without a totalLimitMs`,
    );
  }
  return {
    parts,
    eachLimitMs,
    totalLimitMs,
    totalEndAction:
      oneOf(need('totalEndAction'), 'balanceTrade.totalEndAction', [1, 2]) === 1
        ? 'CANCEL_REMAINING'
        : 'FILL_BY_MARKET',
  };
}

/** Every part of a BALANCE trades at least one lot of every leg it splits (the non-hedge legs). */
function checkPartsFitLegs(balance: BalanceSpec, legs: readonly LegSpec[]): void {
  const anyMain = legs.some((l) => !l.hedge);
  legs.forEach((l, i) => {
    if (anyMain && l.hedge) return;
    if (balance.parts > l.amount) {
      fail(
        'invalid_params',
        'balanceTrade.parts',
        `balanceTrade.parts must be at most ${l.amount}, the lots of legs[${i}].quantity (every part trades at least one lot of each leg)`,
      );
    }
  });
}

function twapBlock(raw: unknown, now: number): TwapSpec {
  const body = object(raw, 'twapTrade');
  const startTimestamp = optionalLong(body.startTimestamp, 'twapTrade.startTimestamp', 0);
  if (startTimestamp !== null && startTimestamp > now + PORTFOLIO_HORIZON_MS) {
    fail(
      'invalid_params',
      'twapTrade.startTimestamp',
      `twapTrade.startTimestamp must be at most ${HORIZON_TEXT} ahead of the server time`,
    );
  }
  if (startTimestamp !== null && startTimestamp < now - START_TOLERANCE_MS) {
    fail(
      'invalid_portfolio',
      'twapTrade.startTimestamp',
      `twapTrade.startTimestamp is more than ${START_TOLERANCE_MS} ms in the past`,
    );
  }
  const maxSeconds = PORTFOLIO_HORIZON_MS / 1000;
  const durationSec = long(
    requireValue(body.durationSec, 'twapTrade.durationSec'),
    'twapTrade.durationSec',
    1,
    maxSeconds,
  );
  const frequencySec = long(
    requireValue(body.frequencySec, 'twapTrade.frequencySec'),
    'twapTrade.frequencySec',
    1,
    maxSeconds,
  );
  if (Math.ceil(durationSec / frequencySec) > MAX_TWAP_SLICES) {
    fail(
      'invalid_params',
      'twapTrade.frequencySec',
      `twapTrade.frequencySec must be at least ${Math.ceil(durationSec / MAX_TWAP_SLICES)}: at most ${MAX_TWAP_SLICES} slices (durationSec / frequencySec)`,
    );
  }
  return { startTimestamp, durationMs: durationSec * 1000, frequencyMs: frequencySec * 1000 };
}

/** Each algorithm's own block of the body. */
const TRADE_BLOCKS: readonly (readonly [string, PortfolioType])[] = [
  ['balanceTrade', 'BALANCE'],
  ['twapTrade', 'TWAP'],
  ['icebergTrade', 'ICEBERG'],
];

function icebergBlock(raw: unknown, instrument: Instrument): IcebergSpec {
  const body = object(raw, 'icebergTrade');
  const displayAmount = lots(instrument, body.displayQuantity, 'icebergTrade.displayQuantity');
  const refreshAmount = isMissing(body.refreshQuantity)
    ? null
    : lots(instrument, body.refreshQuantity, 'icebergTrade.refreshQuantity');
  return { displayAmount, refreshAmount };
}

export function validatePortfolioBody(raw: unknown, context: PortfolioValidationContext): PortfolioSpec {
  const body = object(raw, 'body');
  const accountId = long(requireValue(body.accountId, 'accountId'), 'accountId', 1);
  if (!context.accountIds.has(accountId))
    fail('account_not_owned', 'accountId', `accountId ${accountId} does not belong to this key`);
  const type = oneOf(requireValue(body.portfolioType, 'portfolioType'), 'portfolioType', PORTFOLIO_TYPES);
  const strategy = isMissing(body.strategy) ? null : plainText(body.strategy, 'strategy');
  if (strategy !== null && longerThan(strategy, STRATEGY_MAX))
    fail('invalid_params', 'strategy', `strategy is longer than ${STRATEGY_MAX} characters`);
  const customizedNote = isMissing(body.customizedNote)
    ? null
    : plainText(body.customizedNote, 'customizedNote');
  if (customizedNote !== null && longerThan(customizedNote, CUSTOMIZED_NOTE_MAX)) {
    fail(
      'invalid_params',
      'customizedNote',
      `customizedNote is longer than ${CUSTOMIZED_NOTE_MAX} characters`,
    );
  }
  const rawLegs = requireValue(body.legs, 'legs');
  if (!Array.isArray(rawLegs)) fail('invalid_params', 'legs', 'legs must be an array');
  if (rawLegs.length === 0) fail('invalid_portfolio', 'legs', 'legs must hold at least 1 leg');
  if (rawLegs.length > MAX_PORTFOLIO_LEGS)
    fail('invalid_params', 'legs', `legs must hold at most ${MAX_PORTFOLIO_LEGS} legs`);
  const parsed = rawLegs.map((entry, i) => leg(entry, i, type, context));

  const hasOption = parsed.some((p) => p.instrument.isOption);
  const hasLinear = parsed.some((p) => !p.instrument.isOption);
  // SEMANTICS marks the non-option legs of a mixed BALANCE as hedges; a TWAP's default is false.
  const autoHedge = type === 'BALANCE' && hasOption && hasLinear;
  const legs: LegSpec[] = parsed.map((p) =>
    autoHedge && !p.instrument.isOption ? { ...p.spec, hedge: true } : p.spec,
  );
  const priorities = legs.flatMap((l, i) => (l.priority ? [i] : []));
  if (priorities.length > 1)
    fail(
      'invalid_portfolio',
      `legs[${priorities[1]}].priority`,
      `legs[${priorities[1]}].priority: at most 1 priority leg per portfolio`,
    );
  for (const i of priorities) {
    if (legs[i]!.hedge)
      fail(
        'invalid_portfolio',
        `legs[${i}].priority`,
        `legs[${i}] is a hedge leg and cannot be the priority leg`,
      );
  }

  // A block of another algorithm contradicts the type (e.g. a TWAP's schedule on a BALANCE): it
  // would be ignored, so the client's intent is refused rather than guessed.
  for (const [block, owner] of TRADE_BLOCKS) {
    if (owner !== type && !isMissing(body[block]))
      fail('invalid_portfolio', block, `${block} is for ${owner} portfolios, not ${type}`);
  }
  let balance: BalanceSpec | null = null;
  let twap: TwapSpec | null = null;
  let iceberg: IcebergSpec | null = null;
  switch (type) {
    case 'BALANCE':
      if (isMissing(body.balanceTrade))
        fail('invalid_portfolio', 'balanceTrade', 'balanceTrade is required for BALANCE');
      balance = balanceBlock(body.balanceTrade);
      checkPartsFitLegs(balance, legs);
      break;
    case 'TWAP': {
      if (isMissing(body.twapTrade)) fail('invalid_portfolio', 'twapTrade', 'twapTrade is required for TWAP');
      twap = twapBlock(body.twapTrade, context.now);
      const currencies = new Set(legs.map((l) => l.forCcy));
      if (currencies.size > 1) {
        const i = legs.findIndex((l) => l.forCcy !== legs[0]!.forCcy);
        fail(
          'invalid_portfolio',
          `legs[${i}].forCcy`,
          `legs[${i}].forCcy: every TWAP leg must share one forCcy (${[...currencies].join(' ≠ ')})`,
        );
      }
      break;
    }
    case 'ICEBERG':
      if (isMissing(body.icebergTrade))
        fail('invalid_portfolio', 'icebergTrade', 'icebergTrade is required for ICEBERG');
      if (legs.length !== 1)
        fail('invalid_portfolio', 'legs', 'legs: an ICEBERG portfolio has exactly 1 leg');
      iceberg = icebergBlock(body.icebergTrade, parsed[0]!.instrument);
      if (iceberg.displayAmount > legs[0]!.amount)
        fail(
          'invalid_portfolio',
          'icebergTrade.displayQuantity',
          'icebergTrade.displayQuantity is larger than the leg quantity: nothing would stay hidden',
        );
      break;
    case 'COMMON':
      break;
    default: {
      const _exhaustive: never = type;
      return _exhaustive;
    }
  }

  const mirrors = isMissing(body.sendToDummyAccountIds) ? [] : body.sendToDummyAccountIds;
  if (!Array.isArray(mirrors))
    fail('invalid_params', 'sendToDummyAccountIds', 'sendToDummyAccountIds must be an array');
  const mirrorAccountIds: number[] = [];
  mirrors.forEach((value, i) => {
    const field = `sendToDummyAccountIds[${i}]`;
    const id = long(value, field, 1);
    if (!context.accountIds.has(id))
      fail('account_not_owned', field, `${field} ${id} does not belong to this key`);
    if (id === accountId || mirrorAccountIds.includes(id))
      fail('invalid_portfolio', field, `${field} ${id} is repeated`);
    mirrorAccountIds.push(id);
  });

  return {
    accountId,
    portfolioType: type,
    strategy,
    customizedNote,
    legs,
    balance,
    twap,
    iceberg,
    mirrorAccountIds,
  };
}
