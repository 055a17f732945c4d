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

describe('Instrument grids: levels, signs and contracts (mutation audit)', () => {
  const option = new Instrument(1, optionSpec());
  const venueError = (name: string, field: string) => (error: unknown) =>
    error instanceof VenueError && error.errorName === name && error.data?.field === field;

  test('a negative price takes the tick of its magnitude', () => {
    assert.equal(option.isOnTick(-51), false, '-0.0051 is above the 0.005 level: off the 0.0005 tick');
    assert.equal(option.isOnTick(-55), true, '-0.0055 is on the 0.0005 tick');
    assert.equal(option.tickAt(-60), 5, 'tick at -0.006 is 0.0005');
    assert.equal(option.tickAt(-49), 1, 'tick at -0.0049 is 0.0001');
  });

  test('with several tick steps the highest level that applies wins', () => {
    const stepped = new Instrument(
      4,
      optionSpec({
        tickSizeSteps: [
          { abovePrice: '0.005', tickSize: '0.0005' },
          { abovePrice: '0.1', tickSize: '0.001' },
        ],
      }),
    );
    assert.equal(stepped.isOnTick(2005), false, '0.2005 is above 0.1: off the 0.001 tick');
    assert.equal(stepped.isOnTick(2010), true, '0.201 is on the 0.001 tick');
    assert.equal(stepped.isOnTick(55), true, '0.0055 is on the 0.0005 tick');
    assert.equal(stepped.tickAt(2005), 10, 'tick above 0.1 is 0.001');
    assert.throws(
      () => stepped.parsePrice('0.2005'),
      venueError('off_grid', 'price'),
      "parsePrice('0.2005')",
    );
  });

  test('exactly at a level that is not on the coarse tick, the finer tick applies', () => {
    const odd = new Instrument(
      5,
      optionSpec({ tickSizeSteps: [{ abovePrice: '0.0052', tickSize: '0.0005' }] }),
    );
    assert.equal(odd.isOnTick(52), true, '0.0052 is the level itself: 0.0001 tick');
    assert.equal(odd.isOnTick(53), false, '0.0053 is above the level: off the 0.0005 tick');
  });

  test('contracts: zero and part-lot sizes are refused', () => {
    assert.throws(
      () => option.parseContracts('0'),
      venueError('invalid_amount', 'contracts'),
      "parseContracts('0')",
    );
    assert.throws(
      () => option.parseContracts('0.15'),
      venueError('off_grid', 'contracts'),
      "parseContracts('0.15')",
    );
  });

  test('contracts: a contract size finer than the lot converts exactly', () => {
    const fine = new Instrument(6, optionSpec({ minTradeAmount: '0.01', contractSize: '0.001' }));
    assert.equal(fine.parseContracts('10'), 1, '10 contracts of 0.001 are 1 lot of 0.01');
    assert.throws(
      () => fine.parseContracts('15'),
      venueError('off_grid', 'contracts'),
      "parseContracts('15')",
    );
  });

  test('contracts: a contract size that is not a whole number of lots formats exactly', () => {
    const odd = new Instrument(7, optionSpec({ minTradeAmount: '2', contractSize: '5' }));
    assert.equal(odd.formatContracts(2), '0.8', '2 lots of 2 are 0.8 contracts of 5');
    assert.equal(odd.formatContracts(5), '2', '5 lots of 2 are 2 contracts of 5');
  });
});

test('formatContracts prints a negative amount under one contract with its sign in front', () => {
  const option = new Instrument(8, optionSpec({ minTradeAmount: '0.1', contractSize: '1' }));
  assert.equal(option.formatContracts(-5), '-0.5', '-5 lots of 0.1 are -0.5 contracts');
  assert.equal(option.formatContracts(-1), '-0.1', '-1 lot of 0.1 is -0.1 contracts');
  assert.equal(option.formatContracts(-15), '-1.5', '-15 lots of 0.1 are -1.5 contracts');
  const fine = new Instrument(9, optionSpec({ minTradeAmount: '0.01', contractSize: '1' }));
  assert.equal(fine.formatContracts(-5), '-0.05', 'under a tenth of a contract too');
});
