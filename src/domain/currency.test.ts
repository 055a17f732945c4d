import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildCatalogue } from '../market/catalogue.ts';
import { comboName, createCombo, parseComboName } from '../market/combos.ts';
import {
  instrumentCurrencies,
  matchesCurrency,
  matchesInstrument,
  nameCurrencies,
  pairQuoteCurrency,
  venueCurrencies,
} from './currency.ts';
import type { InstrumentSpec } from './instrument.ts';
import { Instrument } from './instrument.ts';

const NOW = Date.UTC(2026, 10, 22, 6);

/** The default catalogue and a combo of each form, inverse and linear. */
function everyProduct(): InstrumentSpec[] {
  const specs = buildCatalogue(NOW, { BTC: 65_000, ETH: 3_200 });
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const calls = specs.filter((s) => s.optionType === 'call' && s.baseCurrency === 'BTC');
  const inverse = calls.filter((s) => s.settlementCurrency === 'BTC');
  const linear = calls.filter((s) => s.settlementCurrency === 'USDC');
  const combos: InstrumentSpec[] = [];
  for (const [a, b] of [
    [inverse[0]!, inverse.find((s) => s.expiration === inverse[0]!.expiration && s !== inverse[0])!],
    [linear[0]!, linear.find((s) => s.expiration === linear[0]!.expiration && s !== linear[0])!],
  ] as const) {
    const [pair, expiry, strikeA] = a.name.split('-');
    const strikeB = b.name.split('-')[2];
    for (const name of [`${pair}-CS-${expiry}-${strikeA}_${strikeB}`, `${pair}-STRD-${expiry}-${strikeA}`]) {
      const request = parseComboName(name)!;
      assert.equal(comboName(request), name);
      const combo = createCombo(request, (leg) => byName.get(leg), NOW);
      assert.ok(combo.ok);
      combos.push(combo.spec);
    }
  }
  const future = specs.find((s) => s.kind === 'future' && s.expiration !== null && s.baseCurrency === 'BTC')!;
  const spread = createCombo(
    parseComboName(`BTC-FS-${future.name.split('-')[1]}_PERP`)!,
    (n) => byName.get(n),
    NOW,
  );
  assert.ok(spread.ok);
  combos.push(spread.spec);
  return [...specs, ...combos];
}

describe('currency classification', () => {
  const products = everyProduct();

  test('linear and spot products under their base and USDC/USDT; inverse ones under the coin only', () => {
    const of = (name: string) => instrumentCurrencies(products.find((s) => s.name === name)!);
    assert.deepEqual(of('BTC-PERPETUAL'), ['BTC']);
    assert.deepEqual(of('BTC_USDC-PERPETUAL'), ['BTC', 'USDC']);
    assert.deepEqual(of('ETH_USDT'), ['ETH', 'USDT']);
    const linearOption = products.find((s) => s.kind === 'option' && s.name.startsWith('BTC_USDC-'))!;
    assert.deepEqual(instrumentCurrencies(linearOption), ['BTC', 'USDC']);
    const inverseOption = products.find((s) => s.kind === 'option' && s.name.startsWith('BTC-'))!;
    assert.deepEqual(instrumentCurrencies(inverseOption), ['BTC']);
    const linearCombo = products.find((s) => s.kind === 'option_combo' && s.name.startsWith('BTC_USDC-'))!;
    assert.deepEqual(instrumentCurrencies(linearCombo), ['BTC', 'USDC']);
    assert.deepEqual(venueCurrencies(products), ['BTC', 'ETH', 'USDC', 'USDT']);
    assert.ok(matchesInstrument('usdc', linearOption) && matchesInstrument('any', inverseOption));
    assert.ok(!matchesInstrument('USDC', inverseOption) && !matchesInstrument('USD', products[0]!));
    assert.ok(new Instrument(0, linearOption).filedUnder('USDC'));
    assert.ok(!new Instrument(0, inverseOption).filedUnder('USDC'));
  });

  test('the name alone (what stored rows keep) files every product as its spec does', () => {
    for (const spec of products) {
      assert.deepEqual(nameCurrencies(spec.name), instrumentCurrencies(spec), spec.name);
      assert.equal(pairQuoteCurrency(spec.name), instrumentCurrencies(spec)[1] ?? null, spec.name);
    }
    assert.equal(nameCurrencies('not a name'), null);
  });
});

test('matchesCurrency matches the quote currency of a pair, in any case; a missing quote matches nothing', () => {
  assert.equal(matchesCurrency('usdc', 'BTC', 'USDC'), true);
  assert.equal(matchesCurrency('USDC', 'BTC', null), false);
});
