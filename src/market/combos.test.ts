import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { comboKindOfName, Instrument } from '../domain/instrument.ts';
import { buildCatalogue } from './catalogue.ts';
import { type ComboRequest, comboIdOf, comboName, createCombo, parseComboName } from './combos.ts';

const EXPIRY = Date.UTC(2026, 11, 25, 8);
const LATER = Date.UTC(2027, 2, 26, 8);

test('the name-only combo kind agrees with the full parse of every combo shape', () => {
  const requests: ComboRequest[] = [];
  for (const currency of ['BTC', 'ETH']) {
    for (const linear of [false, true]) {
      requests.push(
        {
          kind: 'call_spread',
          currency,
          linear,
          expiration: EXPIRY,
          longStrike: 70_000,
          shortStrike: 75_000,
        },
        { kind: 'put_spread', currency, linear, expiration: EXPIRY, longStrike: 3_200.5, shortStrike: 3_000 },
        { kind: 'straddle', currency, linear, expiration: EXPIRY, strike: 65_000 },
      );
    }
    requests.push(
      { kind: 'future_spread', currency, longExpiration: LATER, shortExpiration: EXPIRY },
      { kind: 'future_spread', currency, longExpiration: EXPIRY, shortExpiration: null },
    );
  }
  for (const request of requests) {
    const name = comboName(request);
    assert.deepEqual(parseComboName(name), request, name);
    assert.equal(
      comboKindOfName(name),
      request.kind === 'future_spread' ? 'future_combo' : 'option_combo',
      name,
    );
  }
  for (const single of [
    'BTC-PERPETUAL',
    'BTC-25DEC26',
    'BTC-25DEC26-70000-C',
    'BTC_USDC',
    'ETH_USDC-PERPETUAL',
  ]) {
    assert.equal(comboKindOfName(single), null, single);
    assert.equal(parseComboName(single), null, single);
  }
});

test('only the canonical spelling of a combo id parses; other spellings are no combo ids', () => {
  const canonical = comboName({
    kind: 'call_spread',
    currency: 'BTC',
    linear: false,
    expiration: EXPIRY,
    longStrike: 48_000,
    shortStrike: 50_000,
  });
  assert.equal(canonical, 'BTC-CS-25DEC26-48000_50000');
  assert.notEqual(parseComboName(canonical), null);
  for (const other of [
    'BTC-CS-25DEC26-048000_50000',
    'BTC-CS-25DEC26-48000_50000d0',
    'BTC-STRD-25DEC26-065000',
    'BTC-STRD-25DEC26-65000d0',
    'BTC-PS-25DEC26-3200d50_3000',
    'BTC-FS-025DEC26_PERP',
  ]) {
    // Before, these listed the canonical combo and then failed under the other name.
    assert.equal(parseComboName(other), null, other);
  }
});

describe('combos from listed legs', () => {
  const NOW = Date.UTC(2026, 10, 22, 6);
  const specs = buildCatalogue(NOW, { BTC: 65_000, ETH: 3_200 });
  const lookup = (name: string) => specs.find((spec) => spec.name === name);

  test('a future spread expires with its earliest leg', () => {
    const spread = createCombo(parseComboName('BTC-FS-26MAR27_25DEC26')!, lookup, NOW);
    assert.ok(spread.ok, 'the future spread is created');
    assert.equal(spread.spec.expiration, EXPIRY);
  });

  test('a leg expiring at this very instant is expired: the combo is refused', () => {
    const name = 'BTC-CS-25DEC26-65000_70000';
    const atExpiry = createCombo(parseComboName(name)!, lookup, EXPIRY);
    assert.deepEqual(atExpiry, { ok: false, message: 'combo leg BTC-25DEC26-65000-C has expired' });
    assert.ok(createCombo(parseComboName(name)!, lookup, EXPIRY - 1).ok, 'a millisecond before it is listed');
  });

  test('comboIdOf names a spread after its bought leg first, whichever leg is given first', () => {
    const low = new Instrument(1, lookup('BTC-25DEC26-65000-C')!);
    const high = new Instrument(2, lookup('BTC-25DEC26-70000-C')!);
    const legs = (first: 'buy' | 'sell', second: 'buy' | 'sell') => [
      { side: first, ratio: 1 },
      { side: second, ratio: 1 },
    ];
    assert.equal(comboIdOf(legs('sell', 'buy'), [low, high]), 'BTC-CS-25DEC26-70000_65000');
    assert.equal(comboIdOf(legs('buy', 'sell'), [low, high]), 'BTC-CS-25DEC26-65000_70000');
    assert.equal(comboIdOf(legs('buy', 'sell'), [high, low]), 'BTC-CS-25DEC26-70000_65000');
  });
});

describe('combo ids only for the structures the combos are (mutation audit)', () => {
  const NOW = Date.UTC(2026, 10, 22, 6);
  const specs = buildCatalogue(NOW, { BTC: 65_000, ETH: 3_200 });
  const lookup = (name: string) => specs.find((spec) => spec.name === name);
  const instrument = (id: number, name: string) => {
    const spec = lookup(name);
    assert.ok(spec !== undefined, `${name} is listed`);
    return new Instrument(id, spec);
  };
  const legs = (first: 'buy' | 'sell', second: 'buy' | 'sell') => [
    { side: first, ratio: 1 },
    { side: second, ratio: 1 },
  ];

  test('legs on two underlyings are no combo', () => {
    const btc = instrument(1, 'BTC-25DEC26');
    const eth = instrument(2, 'ETH-PERPETUAL');
    assert.equal(comboIdOf(legs('buy', 'sell'), [btc, eth]), null, 'a BTC future against the ETH perpetual');
    const btcCall = instrument(3, 'BTC-25DEC26-65000-C');
    const ethCall = instrument(4, 'ETH-25DEC26-3200-C');
    assert.equal(comboIdOf(legs('buy', 'sell'), [btcCall, ethCall]), null, 'a BTC call against an ETH call');
  });

  test('a future spread of one expiry against itself is refused', () => {
    const request = parseComboName('BTC-FS-25DEC26_25DEC26');
    assert.notEqual(request, null, 'the name parses');
    assert.deepEqual(
      createCombo(request!, lookup, NOW),
      { ok: false, message: 'combo legs must differ' },
      'both legs would be BTC-25DEC26',
    );
  });

  test('two bought calls, or a call and a put on opposite sides, are no combo', () => {
    const low = instrument(1, 'BTC-25DEC26-65000-C');
    const high = instrument(2, 'BTC-25DEC26-70000-C');
    assert.equal(comboIdOf(legs('buy', 'buy'), [low, high]), null, 'two bought calls are not a call spread');
    assert.equal(comboIdOf(legs('sell', 'sell'), [low, high]), null, 'two sold calls are not a call spread');
    const put = instrument(3, 'BTC-25DEC26-65000-P');
    assert.equal(
      comboIdOf(legs('buy', 'sell'), [low, put]),
      null,
      'long call + short put (synthetic) is not a straddle',
    );
  });

  test('options of different expiries or margin kinds are no spread', () => {
    const dec = instrument(1, 'BTC-25DEC26-65000-C');
    const mar = instrument(2, 'BTC-26MAR27-70000-C');
    assert.equal(
      comboIdOf(legs('buy', 'sell'), [dec, mar]),
      null,
      'a calendar is not a vertical call spread',
    );
    const linear = instrument(3, 'BTC_USDC-25DEC26-70000-C');
    assert.equal(comboIdOf(legs('buy', 'sell'), [dec, linear]), null, 'inverse against linear is no combo');
  });

  test('a dated future spread is named after its bought leg; a linear perpetual is no leg of one', () => {
    const dec = instrument(1, 'BTC-25DEC26');
    const mar = instrument(2, 'BTC-26MAR27');
    assert.equal(comboIdOf(legs('buy', 'sell'), [mar, dec]), 'BTC-FS-26MAR27_25DEC26', 'bought March first');
    assert.equal(
      comboIdOf(legs('sell', 'buy'), [dec, mar]),
      'BTC-FS-26MAR27_25DEC26',
      'whichever leg is given first',
    );
    assert.equal(
      comboIdOf(legs('buy', 'sell'), [dec, mar]),
      'BTC-FS-25DEC26_26MAR27',
      'bought December first',
    );
    const linearPerpetual = instrument(3, 'BTC_USDC-PERPETUAL');
    assert.equal(
      comboIdOf(legs('buy', 'sell'), [dec, linearPerpetual]),
      null,
      'BTC-FS-…_PERP is the inverse perpetual',
    );
  });
});
