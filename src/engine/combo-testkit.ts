/**
 * Test helpers for combos: the legs of 27DEC26 (the perpetual, a dated future on the catalogue's
 * 2.5 USD tick, the 70,000 and 75,000 calls and the 70,000 put) and the combos the tests trade on
 * them. Not used by production code.
 */
import type { InstrumentSpec } from '../domain/instrument.ts';
import { type ComboRequest, createCombo } from '../market/combos.ts';
import { type Harness, optionSpec, perpetualSpec } from './testkit.ts';

export const COMBO_EXPIRY = Date.UTC(2026, 11, 27, 8);
export const PERP = 'BTC-PERPETUAL';
export const FUTURE = 'BTC-27DEC26';
export const LOW_CALL = 'BTC-27DEC26-70000-C';
export const HIGH_CALL = 'BTC-27DEC26-75000-C';
export const PUT = 'BTC-27DEC26-70000-P';
export const SPREAD = 'BTC-CS-27DEC26-70000_75000';
export const STRADDLE = 'BTC-STRD-27DEC26-70000';
export const FUTURE_SPREAD = 'BTC-FS-27DEC26_PERP';

const REQUESTS: Record<string, ComboRequest> = {
  [SPREAD]: {
    kind: 'call_spread',
    currency: 'BTC',
    linear: false,
    expiration: COMBO_EXPIRY,
    longStrike: 70_000,
    shortStrike: 75_000,
  },
  [STRADDLE]: { kind: 'straddle', currency: 'BTC', linear: false, expiration: COMBO_EXPIRY, strike: 70_000 },
  [FUTURE_SPREAD]: {
    kind: 'future_spread',
    currency: 'BTC',
    longExpiration: COMBO_EXPIRY,
    shortExpiration: null,
  },
};

/** The leg specs by name. */
export function comboLegSpecs(): Map<string, InstrumentSpec> {
  const list = [
    perpetualSpec(),
    // Dated futures tick by 2.5 USD, the perpetual by 0.5 (the catalogue's grids).
    perpetualSpec({ name: FUTURE, settlementPeriod: 'month', expiration: COMBO_EXPIRY, tickSize: '2.5' }),
    optionSpec({ name: LOW_CALL }),
    optionSpec({ name: HIGH_CALL, strike: '75000' }),
    optionSpec({ name: PUT, optionType: 'put' }),
  ];
  return new Map(list.map((spec) => [spec.name, spec]));
}

/** The spec of one of the combos above, built from `legs` as the market driver builds it. */
export function comboSpec(name: string, legs: Map<string, InstrumentSpec>, now: number): InstrumentSpec {
  const request = REQUESTS[name];
  if (request === undefined) throw new Error(`no combo ${name} in the combo testkit`);
  const created = createCombo(request, (leg) => legs.get(leg), now);
  if (!created.ok) throw new Error(created.message);
  return created.spec;
}

/** Lists every leg, then the named combos. */
export function listCombos(h: Harness, combos: readonly string[]): void {
  const legs = comboLegSpecs();
  for (const spec of legs.values()) h.list(spec);
  for (const name of combos) h.list(comboSpec(name, legs, h.ts));
}
