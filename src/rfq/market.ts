/** The desk's read view of the engine (`Venue`), as `RfqMarket`. */
import type { Instrument } from '../domain/instrument.ts';
import type { RfqMarket } from './structure.ts';

/** The part of the engine's query API the desk reads. */
export interface InstrumentQueries {
  instrument(name: string): {
    readonly instrument: Instrument;
    readonly status: 'open' | 'expired';
    readonly markPrice: number | null;
    readonly priceBand: { readonly min: number; readonly max: number } | null;
  } | null;
}

export function marketOf(engine: InstrumentQueries): RfqMarket {
  return {
    instrument: (name) => engine.instrument(name)?.instrument,
    isActive: (name) => engine.instrument(name)?.status === 'open',
    markPrice: (name) => engine.instrument(name)?.markPrice ?? null,
    priceBand: (name) => engine.instrument(name)?.priceBand ?? null,
  };
}
