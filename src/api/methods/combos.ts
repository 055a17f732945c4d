/**
 * Combo books as Deribit exposes them: `private/create_combo` finds (and lists) the combo a set
 * of leg trades describes; `public/get_combo_ids`, `get_combos` and `get_combo_details` read the
 * listed ones. A combo is an instrument of the venue (src/market/combos.ts): these methods are
 * another view of what `get_instruments` lists with kind `combo`.
 */
import { Type } from '@sinclair/typebox';
import { matchesInstrument } from '../../domain/currency.ts';
import { VenueError } from '../../domain/errors.ts';
import type { Instrument } from '../../domain/instrument.ts';
import { comboForLegs } from '../../market/combo-from-legs.ts';
import type { MethodRegistry } from '../registry.ts';
import { ComboIdParams, ComboIdsParams, CombosParams, CreateComboParams } from '../schemas/methods.ts';
import { ComboSchema } from '../schemas/objects.ts';
import { comboToWire } from '../wire/market.ts';
import { instrumentOrCombo, type MethodDeps } from './context.ts';
import { instrumentsCurrency } from './public.ts';

export function registerComboMethods(registry: MethodRegistry, deps: MethodDeps): void {
  const { reads } = deps;
  const isActive = (instrument: Instrument) => reads.ticker(instrument.name)?.state === 'open';
  /** The listed combos filed under a currency: active ones, or recently expired ones. */
  const combosUnder = (currencyText: string, expired: boolean) => {
    const currency = instrumentsCurrency(reads, currencyText);
    return reads
      .instruments(expired)
      .filter((instrument) => instrument.spec.legs !== null && matchesInstrument(currency, instrument.spec));
  };
  const comboNamed = async (
    name: string,
    context: Parameters<typeof instrumentOrCombo>[2],
    field: string,
  ) => {
    const instrument = await instrumentOrCombo(deps, name, context, field);
    if (instrument.spec.legs === null) {
      throw new VenueError('invalid_instrument', `${name} is not a combo`, { field, instrumentName: name });
    }
    return comboToWire(instrument, isActive(instrument));
  };

  registry.register({
    name: 'private/create_combo',
    summary:
      "The combo two leg trades describe (each leg's direction when the combo is bought, amounts equal if given), listed now if it was not: a call or put spread, a straddle or an inverse future spread. Legs that are a combo's exact opposite (a straddle's legs both sold, a perpetual bought against a future sold) give that combo, to be sold.",
    access: 'private',
    params: CreateComboParams,
    result: ComboSchema,
    handler: (params, context) => {
      const found = comboForLegs(params.trades, (name) => reads.instrument(name));
      if (!found.ok) throw new VenueError('invalid_params', found.message, { field: found.field });
      // An expired leg's combo is expired too (listed or not): nothing to create.
      for (const [index, trade] of params.trades.entries()) {
        if (!isActive(reads.instrument(trade.instrumentName)!)) {
          throw new VenueError('instrument_expired', `${trade.instrumentName} has expired`, {
            field: `trades[${index}].instrumentName`,
            instrumentName: trade.instrumentName,
          });
        }
      }
      return comboNamed(found.name, context, 'trades');
    },
  });

  registry.register({
    name: 'public/get_combo_details',
    summary:
      'One combo: its legs with their amounts per combo unit (negative: the opposite direction), its state (inactive once expired) and when it was listed. A signed call lists a combo id not listed yet, as for its ticker.',
    access: 'public',
    params: ComboIdParams,
    result: ComboSchema,
    handler: (params, context) => comboNamed(params.comboId, context, 'comboId'),
  });

  registry.register({
    name: 'public/get_combos',
    summary: 'The active combos of a currency (base or settlement, or any), with their details.',
    access: 'public',
    params: CombosParams,
    result: Type.Array(ComboSchema),
    handler: (params) =>
      combosUnder(params.currency, false).map((combo) => comboToWire(combo, isActive(combo))),
  });

  registry.register({
    name: 'public/get_combo_ids',
    summary:
      'The ids of the combos of a currency (base or settlement, or any) in a state: active, or inactive (expired in the last 3 days); both without a state.',
    access: 'public',
    params: ComboIdsParams,
    result: Type.Array(Type.String()),
    handler: (params) => {
      const states = params.state == null ? [false, true] : [params.state === 'inactive'];
      return states.flatMap((expired) => combosUnder(params.currency, expired).map((combo) => combo.name));
    },
  });
}
