/**
 * Combos created on demand, with Deribit-style ids. The first leg named is the one bought when
 * the combo is bought (ratio +1); a ratio −1 leg is sold. Prices are the net of the legs in the
 * legs' quote currency (a future spread may be negative).
 *
 *   BTC-CS-27DEC26-70000_75000    call spread: +1 70000-C, −1 75000-C
 *   BTC-PS-27DEC26-70000_65000    put spread:  +1 70000-P, −1 65000-P
 *   BTC-STRD-27DEC26-70000        straddle:    +1 70000-C, +1 70000-P
 *   BTC-FS-27DEC26_PERP           future spread: +1 BTC-27DEC26, −1 BTC-PERPETUAL
 *   BTC-FS-27MAR27_27DEC26        future spread: +1 BTC-27MAR27, −1 BTC-27DEC26
 *
 * Option combos on linear USDC options use the pair prefix: `BTC_USDC-CS-…`. Every leg must be
 * listed (and not expired); the combo inherits the legs' grids and expires with its earliest
 * dated leg.
 */
import type { Side } from '../core/types.ts';
import {
  formatExpiryCode,
  formatStrikeForName,
  type Instrument,
  type InstrumentSpec,
  parseExpiryCode,
  parseStrikeFromName,
} from '../domain/instrument.ts';
import { optionName } from './products.ts';

export type ComboRequest =
  | {
      readonly kind: 'call_spread' | 'put_spread';
      readonly currency: string;
      readonly linear: boolean;
      readonly expiration: number;
      readonly longStrike: number;
      readonly shortStrike: number;
    }
  | {
      readonly kind: 'straddle';
      readonly currency: string;
      readonly linear: boolean;
      readonly expiration: number;
      readonly strike: number;
    }
  | {
      readonly kind: 'future_spread';
      readonly currency: string;
      /** Bought leg; `shortExpiration` null = the perpetual. */
      readonly longExpiration: number;
      readonly shortExpiration: number | null;
    };

const CODES = { call_spread: 'CS', put_spread: 'PS', straddle: 'STRD', future_spread: 'FS' } as const;

function strikePart(strike: number): string {
  return formatStrikeForName(String(Number(strike.toFixed(6))));
}

export function comboName(request: ComboRequest): string {
  switch (request.kind) {
    case 'call_spread':
    case 'put_spread': {
      const pair = request.linear ? `${request.currency}_USDC` : request.currency;
      return `${pair}-${CODES[request.kind]}-${formatExpiryCode(request.expiration)}-${strikePart(request.longStrike)}_${strikePart(request.shortStrike)}`;
    }
    case 'straddle': {
      const pair = request.linear ? `${request.currency}_USDC` : request.currency;
      return `${pair}-STRD-${formatExpiryCode(request.expiration)}-${strikePart(request.strike)}`;
    }
    case 'future_spread': {
      const short = request.shortExpiration === null ? 'PERP' : formatExpiryCode(request.shortExpiration);
      return `${request.currency}-FS-${formatExpiryCode(request.longExpiration)}_${short}`;
    }
    default: {
      const _exhaustive: never = request;
      return _exhaustive;
    }
  }
}

/**
 * Parses a combo id; null when it is not one. Only the canonical spelling (`comboName` of the
 * result) is one: `048000` or `50000d0` for a strike would otherwise list the canonical combo
 * under another name than the one asked for, so they are invalid instrument names as any other.
 */
export function parseComboName(name: string): ComboRequest | null {
  const request = parseComboParts(name);
  return request !== null && comboName(request) === name ? request : null;
}

function parseComboParts(name: string): ComboRequest | null {
  const parts = name.split('-');
  if (parts.length < 3) return null;
  const pairMatch = /^([A-Z0-9]+)(_USDC)?$/.exec(parts[0]!);
  if (pairMatch === null) return null;
  const currency = pairMatch[1]!;
  const linear = pairMatch[2] !== undefined;
  const code = parts[1];
  if (code === 'FS' && parts.length === 3 && !linear) {
    const [long, short] = parts[2]!.split('_');
    const longExpiration = parseExpiryCode(long ?? '');
    const shortExpiration = short === 'PERP' ? null : parseExpiryCode(short ?? '');
    if (longExpiration === null || shortExpiration === undefined) return null;
    if (short !== 'PERP' && shortExpiration === null) return null;
    return { kind: 'future_spread', currency, longExpiration, shortExpiration };
  }
  if (parts.length !== 4) return null;
  const expiration = parseExpiryCode(parts[2]!);
  if (expiration === null) return null;
  if (code === 'STRD') {
    const strike = parseStrikeFromName(parts[3]!);
    return strike === null
      ? null
      : { kind: 'straddle', currency, linear, expiration, strike: Number(strike) };
  }
  if (code === 'CS' || code === 'PS') {
    const [long, short] = parts[3]!.split('_').map((text) => parseStrikeFromName(text ?? ''));
    if (long == null || short == null || long === short) return null;
    return {
      kind: code === 'CS' ? 'call_spread' : 'put_spread',
      currency,
      linear,
      expiration,
      longStrike: Number(long),
      shortStrike: Number(short),
    };
  }
  return null;
}

/** Leg names and ratios of a combo. */
export function comboLegs(request: ComboRequest): { instrumentName: string; ratio: number }[] {
  switch (request.kind) {
    case 'call_spread':
    case 'put_spread': {
      const type = request.kind === 'call_spread' ? 'call' : 'put';
      return [
        {
          instrumentName: optionName(
            request.currency,
            request.linear,
            request.expiration,
            request.longStrike,
            type,
          ),
          ratio: 1,
        },
        {
          instrumentName: optionName(
            request.currency,
            request.linear,
            request.expiration,
            request.shortStrike,
            type,
          ),
          ratio: -1,
        },
      ];
    }
    case 'straddle':
      return [
        {
          instrumentName: optionName(
            request.currency,
            request.linear,
            request.expiration,
            request.strike,
            'call',
          ),
          ratio: 1,
        },
        {
          instrumentName: optionName(
            request.currency,
            request.linear,
            request.expiration,
            request.strike,
            'put',
          ),
          ratio: 1,
        },
      ];
    case 'future_spread': {
      const c = request.currency;
      const short =
        request.shortExpiration === null
          ? `${c}-PERPETUAL`
          : `${c}-${formatExpiryCode(request.shortExpiration)}`;
      return [
        { instrumentName: `${c}-${formatExpiryCode(request.longExpiration)}`, ratio: 1 },
        { instrumentName: short, ratio: -1 },
      ];
    }
    default: {
      const _exhaustive: never = request;
      return _exhaustive;
    }
  }
}

export type ComboResult =
  | { readonly ok: true; readonly spec: InstrumentSpec }
  | { readonly ok: false; readonly message: string };

/** Builds the combo's spec from its listed legs (`lookup` by name), at `now`. */
export function createCombo(
  request: ComboRequest,
  lookup: (name: string) => InstrumentSpec | undefined,
  now: number,
): ComboResult {
  const legs = comboLegs(request);
  const specs: InstrumentSpec[] = [];
  for (const leg of legs) {
    const spec = lookup(leg.instrumentName);
    if (spec === undefined) return { ok: false, message: `combo leg ${leg.instrumentName} is not listed` };
    if (spec.expiration !== null && spec.expiration <= now) {
      return { ok: false, message: `combo leg ${leg.instrumentName} has expired` };
    }
    specs.push(spec);
  }
  if (legs[0]!.instrumentName === legs[1]!.instrumentName)
    return { ok: false, message: 'combo legs must differ' };
  const first = specs[0]!;
  const expirations = specs.map((spec) => spec.expiration).filter((value): value is number => value !== null);
  const expiration = expirations.length > 0 ? Math.min(...expirations) : null;
  const dated = specs.find((spec) => spec.expiration === expiration) ?? first;
  return {
    ok: true,
    spec: {
      ...first,
      name: comboName(request),
      kind: request.kind === 'future_spread' ? 'future_combo' : 'option_combo',
      settlementPeriod: dated.settlementPeriod,
      optionType: null,
      strike: null,
      expiration,
      // A net price can be small or negative: the finest leg tick applies everywhere.
      tickSizeSteps: [],
      createdAt: now,
      legs,
    },
  };
}

/** A leg as `comboIdOf` reads it: its side and its (positive) ratio in the structure. */
export interface ComboLegSide {
  readonly side: Side;
  readonly ratio: number;
}

/**
 * The combo id when the legs are a call/put spread, straddle or future spread at 1:1 (named
 * after the market's combo naming, the bought leg first; a structure that sells a straddle
 * or a spread whose bought leg is the perpetual carries the id of its mirror combo). Shared by
 * Block RFQs (src/rfq/structure.ts) and COMMON portfolios (src/algo/combo.ts).
 */
export function comboIdOf(legs: readonly ComboLegSide[], instruments: readonly Instrument[]): string | null {
  if (legs.length !== 2 || legs[0]!.ratio !== legs[1]!.ratio) return null;
  const [a, b] = instruments as [Instrument, Instrument];
  const [legA, legB] = legs as [ComboLegSide, ComboLegSide];
  const currency = a.spec.baseCurrency;
  // A combo's legs are on one underlying: BTC against ETH is no spread.
  if (b.spec.baseCurrency !== currency) return null;
  const linear = a.spec.marginKind === 'linear';
  if (a.kind === 'option' && b.kind === 'option') {
    if (a.spec.expiration !== b.spec.expiration || a.spec.expiration === null) return null;
    if (a.spec.marginKind !== b.spec.marginKind) return null;
    const strikeA = Number(a.spec.strike);
    const strikeB = Number(b.spec.strike);
    if (a.spec.optionType === b.spec.optionType && legA.side !== legB.side && strikeA !== strikeB) {
      const [long, short] = legA.side === 'buy' ? [strikeA, strikeB] : [strikeB, strikeA];
      const kind = a.spec.optionType === 'call' ? 'call_spread' : 'put_spread';
      return comboName({
        kind,
        currency,
        linear,
        expiration: a.spec.expiration,
        longStrike: long,
        shortStrike: short,
      });
    }
    if (a.spec.optionType !== b.spec.optionType && legA.side === legB.side && strikeA === strikeB) {
      return comboName({
        kind: 'straddle',
        currency,
        linear,
        expiration: a.spec.expiration,
        strike: strikeA,
      });
    }
    return null;
  }
  if (
    a.kind === 'future' &&
    b.kind === 'future' &&
    legA.side !== legB.side &&
    a.spec.marginKind === 'inverse'
  ) {
    if (b.spec.marginKind !== 'inverse') return null;
    const [long, short] = legA.side === 'buy' ? [a, b] : [b, a];
    const dated = long.spec.expiration !== null ? [long, short] : [short, long];
    const [first, second] = dated as [Instrument, Instrument];
    if (first.spec.expiration === null) return null;
    return comboName({
      kind: 'future_spread',
      currency,
      longExpiration: first.spec.expiration,
      shortExpiration: second.spec.expiration,
    });
  }
  return null;
}
