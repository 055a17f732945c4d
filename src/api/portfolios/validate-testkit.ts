/**
 * The validation context the portfolio body tests share (validate.test.ts, the property test):
 * a perpetual, an option, an ETH perpetual, a dated future and a spot pair, accounts 7, 8, 9.
 */
import { Instrument, type InstrumentSpec } from '../../domain/instrument.ts';
import { optionSpec, perpetualSpec, spotSpec } from '../../engine/testkit.ts';
import type { PortfolioValidationContext } from './validate.ts';

export const NOW = Date.UTC(2026, 0, 5, 12);
export const ACCOUNTS = [7, 8, 9] as const;
const specs: InstrumentSpec[] = [
  perpetualSpec(),
  optionSpec(),
  perpetualSpec({ name: 'ETH-PERPETUAL', baseCurrency: 'ETH' }),
  perpetualSpec({ name: 'BTC-27DEC26', settlementPeriod: 'month', expiration: Date.UTC(2026, 11, 27, 8) }),
  spotSpec(),
];
export const instruments = new Map(specs.map((spec, i) => [spec.name, new Instrument(i, spec)]));
export const context: PortfolioValidationContext = {
  accountIds: new Set(ACCOUNTS),
  instrument: (name) => instruments.get(name),
  now: NOW,
};
