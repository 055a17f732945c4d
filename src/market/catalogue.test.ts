import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Instrument, parseInstrumentName } from '../domain/instrument.ts';
import { yearsBetween } from './black76.ts';
import { buildCatalogue, DEFAULT_CATALOGUE, rollCatalogue } from './catalogue.ts';
import { comboLegs, comboName, createCombo, parseComboName } from './combos.ts';
import { lastFridayOfMonth, listedExpiries } from './expiries.ts';
import { strikeText } from './products.ts';
import { niceStep, strikeGrid, strikeStep } from './strikes.ts';

// Sunday 22 Nov 2026, 06:00 UTC.
const NOW = Date.UTC(2026, 10, 22, 6);
const INDEX = { BTC: 65_000, ETH: 3_200 };

describe('expiry calendar', () => {
  test('dailies, Friday weeklies, last-Friday monthlies and quarterlies at 08:00 UTC', () => {
    const expiries = listedExpiries(NOW);
    const byPeriod = (period: string) =>
      expiries.filter((e) => e.period === period).map((e) => new Date(e.expiration).toISOString());
    assert.deepEqual(byPeriod('day'), [
      '2026-11-22T08:00:00.000Z',
      '2026-11-23T08:00:00.000Z',
      '2026-11-24T08:00:00.000Z',
    ]);
    assert.deepEqual(byPeriod('week'), ['2026-12-04T08:00:00.000Z', '2026-12-11T08:00:00.000Z']);
    assert.deepEqual(byPeriod('month'), ['2026-11-27T08:00:00.000Z', '2027-01-29T08:00:00.000Z']);
    assert.deepEqual(byPeriod('quarter'), [
      '2026-12-25T08:00:00.000Z',
      '2027-03-26T08:00:00.000Z',
      '2027-06-25T08:00:00.000Z',
    ]);
    assert.equal(lastFridayOfMonth(2026, 11), Date.UTC(2026, 11, 25, 8));
  });

  test('at 08:00 on an expiry day that expiry is gone and the next one is due', () => {
    const atExpiry = Date.UTC(2026, 10, 22, 8);
    const expiries = listedExpiries(atExpiry).map((e) => e.expiration);
    assert.ok(!expiries.includes(atExpiry));
    assert.ok(expiries.includes(Date.UTC(2026, 10, 25, 8)));
  });
});

describe('strike grids', () => {
  test('nice steps, finer for short expiries, centred on the index', () => {
    const daily = strikeGrid(65_000, 1 / 365, 0.55);
    const quarterly = strikeGrid(65_000, 0.25, 0.55);
    assert.ok(daily.includes(65_000) && quarterly.includes(65_000));
    assert.ok(daily[1]! - daily[0]! < quarterly[1]! - quarterly[0]!);
    assert.ok(daily.every((strike) => strike % 500 === 0));
  });

  test('never finer than 0.5% of the index, even when a finer nice step is nearer the target', () => {
    // Half a day at 55%: a quarter sigma is about 268, nearest nice 250, under the 325 floor.
    const grid = strikeGrid(65_000, 0.5 / 365, 0.55);
    const steps = grid.slice(1).map((strike, i) => strike - grid[i]!);
    assert.ok(
      steps.every((step) => step >= 325),
      steps.join(','),
    );
  });

  test('a nice number exactly at the 0.5% floor is allowed', () => {
    assert.equal(niceStep(100, 500), 500);
    // Index 100,000 with an expiry hours away: the step is the floor itself, not the next one up.
    assert.equal(strikeStep(100_000, 1 / 8760, 0.5), 500);
  });
});

describe('catalogue', () => {
  const specs = buildCatalogue(NOW, INDEX);
  const byName = new Map(specs.map((spec) => [spec.name, spec]));

  test('deterministic given now and index levels', () => {
    assert.deepEqual(buildCatalogue(NOW, INDEX), specs);
  });

  test('lists every product family with Deribit grids', () => {
    const perpetual = byName.get('BTC-PERPETUAL')!;
    assert.equal(perpetual.tickSize, '0.5');
    assert.equal(perpetual.minTradeAmount, '10');
    assert.equal(perpetual.contractSize, '10');
    assert.equal(byName.get('ETH-PERPETUAL')!.tickSize, '0.05');
    assert.equal(byName.get('ETH-PERPETUAL')!.minTradeAmount, '1');
    for (const name of [
      'BTC_USDC-PERPETUAL',
      'ETH_USDC-PERPETUAL',
      'BTC_USDC',
      'ETH_USDC',
      'BTC_USDT',
      'ETH_USDT',
      'BTC-25DEC26',
    ]) {
      assert.ok(byName.has(name), name);
    }
    const option = byName.get('BTC-25DEC26-65000-C')!;
    assert.equal(option.tickSize, '0.0001');
    assert.deepEqual(option.tickSizeSteps, [{ abovePrice: '0.005', tickSize: '0.0005' }]);
    assert.equal(option.minTradeAmount, '0.1');
    assert.equal(byName.get('ETH-25DEC26-3200-P')!.minTradeAmount, '1');
    assert.equal(byName.get('BTC_USDC-25DEC26-65000-P')!.quoteCurrency, 'USDC');
  });

  test('every name parses back and every spec builds an Instrument', () => {
    specs.forEach((spec, i) => {
      const parsed = parseInstrumentName(spec.name);
      assert.ok(parsed !== null, spec.name);
      assert.equal(parsed.expiration, spec.expiration, spec.name);
      assert.equal(parsed.strike, spec.strike, spec.name);
      new Instrument(i + 1, spec);
    });
  });

  test('roll: expiring instruments settle, the next expiry and new strikes are listed', () => {
    const atExpiry = Date.UTC(2026, 10, 22, 8);
    const plan = rollCatalogue(atExpiry, specs, INDEX);
    assert.ok(plan.expire.length > 0);
    assert.ok(plan.expire.every((spec) => spec.expiration === atExpiry));
    assert.ok(plan.expire.some((spec) => spec.name === 'BTC-22NOV26'));
    assert.ok(plan.list.some((spec) => spec.name === 'BTC-25NOV26'));
    assert.ok(plan.list.every((spec) => spec.createdAt === atExpiry));
    const idle = rollCatalogue(NOW, specs, INDEX);
    assert.deepEqual(idle, { list: [], expire: [] });
  });

  test('listNew: false skips the listing check, except at an expiry instant: the next expiry is listed at once', () => {
    const atExpiry = Date.UTC(2026, 10, 22, 8);
    const plan = rollCatalogue(atExpiry, specs, INDEX, undefined, { listNew: false });
    assert.ok(
      plan.expire.some((spec) => spec.name === 'BTC-22NOV26'),
      'the expiring future settles',
    );
    assert.ok(
      plan.list.some((spec) => spec.name === 'BTC-25NOV26'),
      'the expiry due from 08:00 is listed with the expiry, not up to a minute later',
    );
    assert.deepEqual(
      plan.list.map((spec) => spec.name),
      rollCatalogue(atExpiry, specs, INDEX).list.map((spec) => spec.name),
    );
    // Nothing expiring: no listing check, even with new strikes due after a big index move.
    const moved = { BTC: 80_000, ETH: 3_200 };
    assert.ok(rollCatalogue(NOW, specs, moved).list.length > 0, 'new strikes are due at 80000');
    assert.deepEqual(rollCatalogue(NOW, specs, moved, undefined, { listNew: false }), {
      list: [],
      expire: [],
    });
  });
});

describe('combos', () => {
  const specs = buildCatalogue(NOW, INDEX);
  const lookup = (name: string) => specs.find((spec) => spec.name === name);
  const expiration = Date.UTC(2026, 11, 25, 8);

  test('Deribit-style ids round-trip through the parser', () => {
    for (const name of [
      'BTC-CS-25DEC26-65000_70000',
      'BTC-PS-25DEC26-65000_60000',
      'BTC-STRD-25DEC26-65000',
      'BTC-FS-25DEC26_PERP',
      'BTC-FS-26MAR27_25DEC26',
      'ETH_USDC-CS-25DEC26-3200_3400',
    ]) {
      const request = parseComboName(name);
      assert.ok(request !== null, name);
      assert.equal(comboName(request), name);
    }
    assert.equal(parseComboName('BTC-XX-25DEC26-1'), null);
    assert.equal(parseComboName('BTC-CS-25DEC26-65000_65000'), null);
  });

  test('legs and ratios', () => {
    assert.deepEqual(comboLegs(parseComboName('BTC-FS-25DEC26_PERP')!), [
      { instrumentName: 'BTC-25DEC26', ratio: 1 },
      { instrumentName: 'BTC-PERPETUAL', ratio: -1 },
    ]);
    assert.deepEqual(
      comboLegs({ kind: 'straddle', currency: 'BTC', linear: false, expiration, strike: 65_000 }),
      [
        { instrumentName: 'BTC-25DEC26-65000-C', ratio: 1 },
        { instrumentName: 'BTC-25DEC26-65000-P', ratio: 1 },
      ],
    );
  });

  test('created from listed legs only', () => {
    const spread = createCombo(parseComboName('BTC-CS-25DEC26-65000_70000')!, lookup, NOW);
    assert.ok(spread.ok);
    assert.equal(spread.spec.kind, 'option_combo');
    assert.equal(spread.spec.expiration, expiration);
    const future = createCombo(parseComboName('BTC-FS-25DEC26_PERP')!, lookup, NOW);
    assert.ok(future.ok && future.spec.kind === 'future_combo' && future.spec.tickSize === '2.5');
    const missing = createCombo(parseComboName('BTC-CS-25DEC26-65001_70000')!, lookup, NOW);
    assert.ok(!missing.ok && missing.message.includes('not listed'));
  });
});

describe('catalogue configuration and grids (mutation audit)', () => {
  test("each currency's strike grid is sized with its own grid volatility", () => {
    const specs = buildCatalogue(NOW, INDEX);
    const expiry = Date.UTC(2026, 11, 25, 8);
    const strikes = specs
      .filter((spec) => spec.name.startsWith('BTC-25DEC26-') && spec.optionType === 'call')
      .map((spec) => Number(spec.strike))
      .sort((a, b) => a - b);
    assert.deepEqual(
      strikes,
      strikeGrid(65_000, yearsBetween(NOW, expiry), 0.55),
      'BTC strikes follow σ = 0.55',
    );
  });

  test('linearOptions: false and spot: false leave those products out', () => {
    const specs = buildCatalogue(NOW, INDEX, { ...DEFAULT_CATALOGUE, linearOptions: false, spot: false });
    assert.equal(
      specs.filter((s) => s.kind === 'option' && s.marginKind === 'linear').length,
      0,
      'no linear options',
    );
    assert.equal(specs.filter((s) => s.kind === 'spot').length, 0, 'no spot pairs');
    assert.ok(
      specs.some((s) => s.kind === 'option' && s.marginKind === 'inverse'),
      'inverse options stay',
    );
  });

  test('options charge 0.03% maker and taker', () => {
    const option = buildCatalogue(NOW, INDEX).find((spec) => spec.name === 'BTC-25DEC26-65000-C');
    assert.equal(option?.makerCommission, '0.0003', 'option maker fee');
    assert.equal(option?.takerCommission, '0.0003', 'option taker fee');
  });

  test('a grid covers ±width beyond the minimum strikes each side', () => {
    const grid = strikeGrid(65_000, 0.5, 0.55);
    assert.equal(grid.filter((strike) => strike > 65_000).length, 10, `ten strikes above the money: ${grid}`);
  });

  test('a grid is centred on the strike nearest the index', () => {
    const narrow = { standardDeviations: 0, minEachSide: 1, maxEachSide: 1 };
    assert.deepEqual(
      strikeGrid(66_600, 0.09, 0.55, narrow),
      [65_000, 67_500, 70_000],
      'nearest multiple of 2500 is 67500',
    );
  });

  test('a wide grid never lists a zero strike', () => {
    const grid = strikeGrid(100, 4, 0.7);
    assert.ok(
      grid.every((strike) => strike > 0),
      `strikes ${grid}`,
    );
  });

  test('at 08:00 on a last Friday that monthly is gone', () => {
    const now = lastFridayOfMonth(2026, 10);
    const expiries = listedExpiries(now);
    assert.ok(
      expiries.every((e) => e.expiration > now),
      'nothing listed expires at or before now',
    );
  });
  test('one spec per family pinned field by field (ticks, fees, contract sizes, currencies)', () => {
    const specs = buildCatalogue(NOW, INDEX);
    const spec = (name: string) => specs.find((candidate) => candidate.name === name);
    const DEC25 = Date.UTC(2026, 11, 25, 8);
    assert.deepEqual(spec('BTC_USDC-25DEC26-65000-C'), {
      name: 'BTC_USDC-25DEC26-65000-C',
      kind: 'option',
      baseCurrency: 'BTC',
      quoteCurrency: 'USDC',
      counterCurrency: 'BTC',
      settlementCurrency: 'USDC',
      marginKind: 'linear',
      settlementPeriod: 'quarter',
      optionType: 'call',
      strike: '65000',
      expiration: DEC25,
      tickSize: '5',
      tickSizeSteps: [],
      minTradeAmount: '0.01',
      contractSize: '1',
      makerCommission: '0.0003',
      takerCommission: '0.0003',
      blockTradeMinTradeAmount: '25',
      createdAt: NOW,
      legs: null,
    });
    const perpetual = {
      name: 'BTC-PERPETUAL',
      kind: 'future',
      baseCurrency: 'BTC',
      quoteCurrency: 'USD',
      counterCurrency: 'USD',
      settlementCurrency: 'BTC',
      marginKind: 'inverse',
      settlementPeriod: 'perpetual',
      optionType: null,
      strike: null,
      expiration: null,
      tickSize: '0.5',
      tickSizeSteps: [],
      minTradeAmount: '10',
      contractSize: '10',
      makerCommission: '0',
      takerCommission: '0.0005',
      blockTradeMinTradeAmount: '200000',
      createdAt: NOW,
      legs: null,
    };
    assert.deepEqual(spec('BTC-PERPETUAL'), perpetual);
    // The dated future differs from the perpetual only in these.
    assert.deepEqual(spec('BTC-25DEC26'), {
      ...perpetual,
      name: 'BTC-25DEC26',
      settlementPeriod: 'quarter',
      expiration: DEC25,
      tickSize: '2.5',
    });
    assert.deepEqual(spec('BTC_USDC-PERPETUAL'), {
      name: 'BTC_USDC-PERPETUAL',
      kind: 'future',
      baseCurrency: 'BTC',
      quoteCurrency: 'USDC',
      counterCurrency: 'BTC',
      settlementCurrency: 'USDC',
      marginKind: 'linear',
      settlementPeriod: 'perpetual',
      optionType: null,
      strike: null,
      expiration: null,
      tickSize: '1',
      tickSizeSteps: [],
      minTradeAmount: '0.001',
      contractSize: '0.001',
      makerCommission: '0',
      takerCommission: '0.0005',
      blockTradeMinTradeAmount: '5',
      createdAt: NOW,
      legs: null,
    });
    assert.deepEqual(spec('ETH_USDC'), {
      name: 'ETH_USDC',
      kind: 'spot',
      baseCurrency: 'ETH',
      quoteCurrency: 'USDC',
      counterCurrency: 'ETH',
      settlementCurrency: 'USDC',
      marginKind: 'linear',
      settlementPeriod: null,
      optionType: null,
      strike: null,
      expiration: null,
      tickSize: '0.05',
      tickSizeSteps: [],
      minTradeAmount: '0.001',
      contractSize: '0.001',
      makerCommission: '0',
      takerCommission: '0',
      blockTradeMinTradeAmount: '0.001',
      createdAt: NOW,
      legs: null,
    });
  });

  test('a fractional strike keeps its decimals in the name', () => {
    assert.equal(strikeText(1550.5), '1550.5');
    assert.equal(strikeText(0.1 + 0.2), '0.3');
  });

  test('when the next 08:00 is a Friday it is the first weekly', () => {
    const thursdayNoon = Date.UTC(2026, 11, 3, 12);
    const weeklies = listedExpiries(thursdayNoon)
      .filter((e) => e.period === 'week')
      .map((e) => new Date(e.expiration).toISOString().slice(0, 10));
    assert.deepEqual(weeklies, ['2026-12-04', '2026-12-11', '2026-12-18'], 'Dec 25 is the quarterly');
  });

  test('more monthlies than quarters: only the configured number of quarterlies', () => {
    const expiries = listedExpiries(NOW, { daily: 0, weekly: 0, monthly: 12, quarterly: 1 });
    assert.deepEqual(
      expiries.filter((e) => e.period === 'quarter').map((e) => e.expiration),
      [Date.UTC(2026, 11, 25, 8)],
    );
  });
});
