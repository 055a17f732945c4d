import assert from 'node:assert/strict';
import { test } from 'node:test';
import { comboKindOfName } from '../domain/instrument.ts';
import { type ComboRequest, comboName, parseComboName } from './combos.ts';

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
