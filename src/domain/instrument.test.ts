import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { VenueError } from './errors.ts';
import {
  formatExpiryCode,
  Instrument,
  type InstrumentSpec,
  parseExpiryCode,
  parseInstrumentName,
} from './instrument.ts';

const expiry = Date.UTC(2026, 11, 27, 8);

function optionSpec(overrides: Partial<InstrumentSpec> = {}): InstrumentSpec {
  return {
    name: 'BTC-27DEC26-70000-C',
    kind: 'option',
    baseCurrency: 'BTC',
    quoteCurrency: 'BTC',
    counterCurrency: 'USD',
    settlementCurrency: 'BTC',
    marginKind: 'inverse',
    settlementPeriod: 'month',
    optionType: 'call',
    strike: '70000',
    expiration: expiry,
    tickSize: '0.0001',
    tickSizeSteps: [{ abovePrice: '0.005', tickSize: '0.0005' }],
    minTradeAmount: '0.1',
    contractSize: '1',
    makerCommission: '0.0003',
    takerCommission: '0.0003',
    blockTradeMinTradeAmount: '25',
    createdAt: 0,
    legs: null,
    ...overrides,
  };
}

describe('instrument names', () => {
  test('expiry codes round-trip and land at 08:00 UTC', () => {
    assert.equal(formatExpiryCode(expiry), '27DEC26');
    assert.equal(parseExpiryCode('27DEC26'), expiry);
    assert.equal(parseExpiryCode('3JAN27'), Date.UTC(2027, 0, 3, 8));
    assert.equal(parseExpiryCode('31FEB27'), null);
    assert.equal(parseExpiryCode('03JAN27'), null);
  });

  test('parses every single-instrument naming style', () => {
    assert.deepEqual(parseInstrumentName('BTC-PERPETUAL'), {
      kind: 'future',
      baseCurrency: 'BTC',
      quoteCurrency: null,
      expiration: null,
      strike: null,
      optionType: null,
    });
    assert.equal(parseInstrumentName('BTC-27DEC26')?.expiration, expiry);
    assert.equal(parseInstrumentName('BTC-27DEC26-70000-C')?.optionType, 'call');
    assert.equal(parseInstrumentName('BTC_USDC')?.kind, 'spot');
    assert.equal(parseInstrumentName('BTC_USDC-PERPETUAL')?.quoteCurrency, 'USDC');
    assert.equal(parseInstrumentName('XRP_USDC-27DEC26-0d625-P')?.strike, '0.625');
    assert.equal(parseInstrumentName('BTC'), null);
    assert.equal(parseInstrumentName('BTC-27DEC26-70000-X'), null);
    assert.equal(parseInstrumentName('btc-perpetual'), null);
  });

  test('malformed names parse to null: an empty strike decimal, extra parts after an option or perpetual', () => {
    assert.equal(parseInstrumentName('BTC-27DEC26-1d-C'), null);
    assert.equal(parseInstrumentName('BTC-27DEC26-70000-C-X'), null);
    assert.equal(parseInstrumentName('BTC-PERPETUAL-X'), null);
  });
});

describe('Instrument grids', () => {
  const option = new Instrument(1, optionSpec());

  test('applies the coarser option tick above the step level', () => {
    assert.equal(option.parsePrice('0.0049'), 49);
    assert.equal(option.parsePrice('0.0055'), 55);
    assert.throws(() => option.parsePrice('0.0051'), VenueError);
    assert.equal(option.tickAt(49), 1);
    assert.equal(option.tickAt(60), 5);
  });

  test('at exactly the step level the finer tick still applies', () => {
    assert.equal(option.isOnTick(50), true);
    assert.equal(option.tickAt(50), 1);
    assert.equal(option.tickAt(51), 5);
  });

  test('quantities are lots of the minimum amount; contracts convert exactly', () => {
    assert.equal(option.parseQuantity('1.5'), 15);
    assert.throws(() => option.parseQuantity('0.15'), VenueError);
    assert.throws(() => option.parseQuantity('0'), VenueError);
    assert.equal(option.parseContracts('1.5'), 15);
    assert.equal(option.formatContracts(15), '1.5');
    const perpetual = new Instrument(
      2,
      optionSpec({
        name: 'BTC-PERPETUAL',
        kind: 'future',
        tickSize: '0.5',
        tickSizeSteps: [],
        minTradeAmount: '10',
        contractSize: '10',
      }),
    );
    assert.equal(perpetual.parseQuantity('250'), 25);
    assert.equal(perpetual.parseContracts('25'), 25);
    assert.equal(perpetual.formatContracts(25), '25');
    assert.equal(perpetual.formatQuantity(25), '250');
  });

  test('property: formatContracts agrees with the exact bigint path', () => {
    const sizes = fc.constantFrom(
      ['10', '10'],
      ['0.1', '1'],
      ['1', '1'],
      ['0.0001', '0.01'],
      ['10', '1'],
      ['1', '3'],
      ['0.01', '100'],
    );
    fc.assert(
      fc.property(
        sizes,
        fc.oneof(fc.nat(), fc.integer({ min: 0, max: 10_000 })),
        ([minTradeAmount, contractSize], lots) => {
          const instrument = new Instrument(3, optionSpec({ minTradeAmount, contractSize }));
          assert.equal(instrument.formatContracts(lots), instrument.formatContractsExact(lots));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
