import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Instrument } from '../../domain/instrument.ts';
import { DEFAULT_PRODUCTS, inverseOptionSpec } from '../../market/products.ts';
import { decimalText, tickerToWire } from './market.ts';

const EXPIRY = Date.UTC(2026, 10, 21, 8);
const OPTION = new Instrument(1, inverseOptionSpec(DEFAULT_PRODUCTS.BTC!, EXPIRY, 'day', 61_000, 'call', 0));

test('decimal text is never in exponent form', () => {
  assert.equal(decimalText(1.9777185663055924e-8), '0.00000001977718566306');
  assert.equal(decimalText(-1e-7), '-0.0000001');
  assert.equal(decimalText(1e-30), '0');
  assert.equal(decimalText(-1e-30), '0');
  assert.equal(decimalText(64985.88093446307), '64985.88093446307');
  assert.equal(decimalText(0.313107062692502), '0.313107062692502');
  // From 1e21 up, toFixed writes exponent form too: such a double is an integer, written out.
  assert.equal(decimalText(1e21), '1000000000000000000000');
  assert.equal(decimalText(-2.5e22), '-25000000000000000000000');
});

test('near-expiry greeks go out as plain decimals', () => {
  const wire = tickerToWire(
    {
      instrumentName: OPTION.name,
      timestamp: EXPIRY - 60_000,
      state: 'open',
      bestBidPrice: 465,
      bestBidAmount: 5,
      bestAskPrice: 500,
      bestAskAmount: 5,
      lastPrice: null,
      markPrice: 482,
      indexPrice: 64090.24033749619,
      markIv: 102.22189599515681,
      bidIv: null,
      askIv: 360.91856631319723,
      underlyingPrice: 64090.5328250798,
      greeks: {
        delta: 0.9517757079835687,
        gamma: 1.9777185663055924e-8,
        vega: 9.4e-7,
        theta: -0.116,
        rho: 0,
      },
    },
    OPTION,
  ) as Record<string, unknown>;
  assert.deepEqual(wire.greeks, {
    delta: '0.9517757079835687',
    gamma: '0.00000001977718566306',
    vega: '0.00000094',
    theta: '-0.116',
    rho: '0',
  });
  assert.equal(wire.markPrice, '0.0482');
});
