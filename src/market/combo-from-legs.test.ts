import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Instrument } from '../domain/instrument.ts';
import { buildCatalogue } from './catalogue.ts';
import { comboForLegs, type LegTrade } from './combo-from-legs.ts';
import { comboLegs, parseComboName } from './combos.ts';

const NOW = Date.UTC(2026, 10, 22, 6);
const instruments = buildCatalogue(NOW, { BTC: 65_000, ETH: 3_200 }).map(
  (spec, id) => new Instrument(id + 1, spec),
);
const byName = new Map(instruments.map((instrument) => [instrument.name, instrument]));
const lookup = (name: string) => byName.get(name);
const firstExpiry = Math.min(
  ...instruments.filter((i) => i.kind === 'option').map((instrument) => instrument.spec.expiration!),
);
/**
 * Legs drawn so that pairs often form a combo (about 5% of pairs): the options of one expiry (both
 * underlyings, both margin kinds), every future and perpetual, and a spot pair (never a leg).
 */
const legNames = instruments
  .filter(
    (instrument) =>
      instrument.kind === 'future' ||
      instrument.name === 'BTC_USDC' ||
      (instrument.kind === 'option' && instrument.spec.expiration === firstExpiry),
  )
  .map((instrument) => instrument.name);

const signed = (trades: readonly LegTrade[]) =>
  trades.map((trade) => `${trade.direction === 'buy' ? '+' : '-'}${trade.instrumentName}`).sort();

test('any two legs: a combo whose legs are exactly the trades, or exactly their opposite when sold', () => {
  const trade = fc.record({
    instrumentName: fc.constantFrom(...legNames),
    direction: fc.constantFrom<'buy' | 'sell'>('buy', 'sell'),
  });
  fc.assert(
    fc.property(trade, trade, (a, b) => {
      const found = comboForLegs([a, b], lookup);
      if (!found.ok) return;
      const legs = comboLegs(parseComboName(found.name)!).map((leg) => ({
        instrumentName: leg.instrumentName,
        direction: leg.ratio > 0 !== found.sold ? ('buy' as const) : ('sell' as const),
      }));
      assert.deepEqual(signed(legs), signed([a, b]), found.name);
      // Sold only when no combo buys the legs as given: the combo bought would be the answer.
      if (found.sold) {
        const reversed = [a, b].map(
          (t) => ({ ...t, direction: t.direction === 'buy' ? 'sell' : 'buy' }) as const,
        );
        const mirror = comboForLegs(reversed, lookup);
        assert.ok(mirror.ok && mirror.name === found.name && !mirror.sold, found.name);
      }
    }),
    { numRuns: 5_000 },
  );
});

test('every combo the catalogue can form is found from its own legs, in either order, not sold', () => {
  const options = instruments.filter(
    (instrument) => instrument.kind === 'option' && instrument.spec.baseCurrency === 'BTC',
  );
  const [call, otherCall] = options.filter(
    (o) => o.spec.optionType === 'call' && o.spec.expiration === options[0]!.spec.expiration,
  );
  const put = options.find(
    (o) =>
      o.spec.optionType === 'put' &&
      o.spec.strike === call!.spec.strike &&
      o.spec.expiration === call!.spec.expiration,
  )!;
  for (const name of [
    `BTC-CS-${call!.name.split('-')[1]}-${call!.spec.strike}_${otherCall!.spec.strike}`,
    `BTC-STRD-${call!.name.split('-')[1]}-${call!.spec.strike}`,
    `BTC-FS-${instruments.find((i) => i.kind === 'future' && i.spec.expiration !== null && i.spec.marginKind === 'inverse')!.name.split('-')[1]}_PERP`,
  ]) {
    const trades = comboLegs(parseComboName(name)!).map((leg) => ({
      instrumentName: leg.instrumentName,
      direction: leg.ratio > 0 ? ('buy' as const) : ('sell' as const),
    }));
    assert.deepEqual(comboForLegs(trades, lookup), { ok: true, name, sold: false });
    assert.deepEqual(comboForLegs([...trades].reverse(), lookup), { ok: true, name, sold: false });
  }
  assert.ok(put, 'the catalogue lists the put of the straddle');
});

test('refusals name the field: count, unknown leg, a combo as leg, unequal or non-positive amounts', () => {
  const [low, high] = instruments.filter(
    (i) => i.kind === 'option' && i.spec.optionType === 'call' && i.spec.baseCurrency === 'BTC',
  );
  const spread = [
    { instrumentName: low!.name, direction: 'buy' as const },
    { instrumentName: high!.name, direction: 'sell' as const },
  ];
  const field = (trades: LegTrade[]) => {
    const found = comboForLegs(trades, lookup);
    return found.ok ? null : found.field;
  };
  assert.equal(field(spread.slice(0, 1)), 'trades');
  assert.equal(field([...spread, spread[0]!]), 'trades');
  assert.equal(
    field([{ ...spread[0]!, instrumentName: 'BTC-NOPE' }, spread[1]!]),
    'trades[0].instrumentName',
  );
  assert.equal(
    field([
      { ...spread[0]!, amount: '2' },
      { ...spread[1]!, amount: '2.5' },
    ]),
    'trades[1].amount',
  );
  assert.equal(field([{ ...spread[0]!, amount: '0' }, spread[1]!]), 'trades[0].amount');
  assert.equal(
    field([
      { ...spread[0]!, amount: '2.50' },
      { ...spread[1]!, amount: '2.5' },
    ]),
    null,
    'equal amounts',
  );
  assert.equal(field([spread[0]!, { ...spread[1]!, direction: 'buy' }]), 'trades', 'two calls bought');
  // One instrument bought and sold is no combo, whatever its kind (a dated future named one).
  const future = instruments.find((i) => i.kind === 'future' && i.spec.expiration !== null)!;
  for (const name of [future.name, low!.name]) {
    assert.equal(
      field([
        { instrumentName: name, direction: 'buy' },
        { instrumentName: name, direction: 'sell' },
      ]),
      'trades[1].instrumentName',
      name,
    );
  }
  const withCombo = new Map(byName);
  const combo = new Instrument(10_000, { ...low!.spec, name: 'BTC-CS-X', legs: [] });
  withCombo.set(combo.name, combo);
  const found = comboForLegs([{ instrumentName: combo.name, direction: 'buy' }, spread[1]!], (n) =>
    withCombo.get(n),
  );
  assert.deepEqual(found.ok ? null : found.field, 'trades[0].instrumentName');
});
