import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Instrument } from '../domain/instrument.ts';
import { black76Price, MS_PER_YEAR, yearsBetween } from './black76.ts';
import { buildCatalogue } from './catalogue.ts';
import { comboLegs, createCombo, parseComboName } from './combos.ts';
import { volatilityFromQuotePrice } from './conversions.ts';
import { basisAt, defaultMarketModel, priceMarket, settlementVolatility } from './market-state.ts';
import {
  priceUpdateCommand,
  settlementCommand,
  settlementValue,
  splitPriceUpdate,
  toTicks,
} from './price-updates.ts';
import { IndexHistory, SETTLEMENT_WINDOW_MS } from './settlement.ts';
import { tickerFigures } from './ticker.ts';

const NOW = Date.UTC(2026, 10, 22, 6);
const INDEX = { BTC: 65_000, ETH: 3_200 };
const EXPIRY = Date.UTC(2026, 11, 25, 8);
const specs = buildCatalogue(NOW, INDEX);
const lookup = (name: string) => specs.find((spec) => spec.name === name);
const spread = createCombo(parseComboName('BTC-FS-25DEC26_PERP')!, lookup, NOW);
assert.ok(spread.ok);
const allSpecs = [...specs, spread.spec];
const model = defaultMarketModel();
const state = priceMarket(NOW, INDEX, allSpecs, model);

describe('MarketState', () => {
  test('forwards carry the basis; perpetual and spot sit at or near the index', () => {
    const t = yearsBetween(NOW, EXPIRY);
    const rate = basisAt(model.currencies.BTC!.basisCurve!, t);
    assert.ok(rate > 0.04 && rate < 0.07);
    assert.ok(Math.abs(state.forward('BTC', EXPIRY) - 65_000 * Math.exp(rate * t)) < 1e-9);
    const flat = priceMarket(NOW, INDEX, allSpecs, {
      currencies: { ...model.currencies, BTC: { ...model.currencies.BTC!, basisCurve: [], basisRate: 0.05 } },
    });
    assert.ok(Math.abs(flat.forward('BTC', EXPIRY) - 65_000 * Math.exp(0.05 * t)) < 1e-9);
    assert.equal(state.mark('BTC-25DEC26')!.markPrice, state.forward('BTC', EXPIRY));
    assert.equal(state.mark('BTC-PERPETUAL')!.markPrice, 65_000 * 1.0001);
    assert.equal(state.mark('BTC_USDT')!.markPrice, 65_000);
  });

  test('inverse option mark = Black-76 USD / forward; linear = USD; IV recovers the mark IV', () => {
    const forward = state.forward('BTC', EXPIRY);
    const t = yearsBetween(NOW, EXPIRY);
    const inverse = state.mark('BTC-25DEC26-70000-C')!;
    // The surface's volatility, scaled to the settlement average over the last 30 minutes.
    const window = SETTLEMENT_WINDOW_MS / MS_PER_YEAR;
    const volatility = inverse.markIv!;
    const surface = state.volatility('BTC', 70_000, EXPIRY);
    assert.ok(Math.abs(volatility - surface * Math.sqrt(1 - (2 * window) / (3 * t))) < 1e-12);
    assert.ok(volatility < surface && volatility > surface * 0.9995);
    const usd = black76Price({
      optionType: 'call',
      forward,
      strike: 70_000,
      timeToExpiry: t,
      volatility,
    });
    assert.ok(Math.abs(inverse.markPrice - usd / forward) < 1e-15);
    assert.ok(Math.abs(state.mark('BTC_USDC-25DEC26-70000-C')!.markPrice - usd) < 1e-9);
    const iv = volatilityFromQuotePrice(
      {
        optionType: 'call',
        marginKind: 'inverse',
        strike: 70_000,
        forward,
        index: 65_000,
        timeToExpiry: inverse.timeToExpiry!,
      },
      inverse.markPrice,
    );
    assert.ok(iv.ok && Math.abs(iv.volatility - volatility) < 1e-10);
  });

  test('basis curve: linear in T between points, flat outside', () => {
    const curve = [
      { timeToExpiry: 1, rate: 0.07 },
      { timeToExpiry: 0.1, rate: 0.04 },
    ];
    assert.equal(basisAt(curve, 0.01), 0.04);
    assert.equal(basisAt(curve, 2), 0.07);
    assert.ok(Math.abs(basisAt(curve, 0.55) - 0.055) < 1e-15);
  });

  test('combo marks are the ratio-weighted leg marks', () => {
    const mark = state.mark('BTC-FS-25DEC26_PERP')!;
    const legs = comboLegs(parseComboName('BTC-FS-25DEC26_PERP')!);
    const expected = legs.reduce(
      (sum, leg) => sum + leg.ratio * state.mark(leg.instrumentName)!.markPrice,
      0,
    );
    assert.ok(Math.abs(mark.markPrice - expected) < 1e-9);
  });

  test('the underlying of a dated combo is the forward of its expiry, not the index', () => {
    const callSpread = createCombo(parseComboName('BTC-CS-25DEC26-70000_65000')!, lookup, NOW);
    assert.ok(callSpread.ok, 'the call spread is created');
    const withSpread = priceMarket(NOW, INDEX, [...allSpecs, callSpread.spec], model);
    const forward = withSpread.forward('BTC', EXPIRY);
    assert.ok(forward > 65_000 + 100, `the forward ${forward} carries a basis over the index`);
    assert.equal(withSpread.mark(callSpread.spec.name)!.underlyingPrice, forward);
    assert.equal(state.mark('BTC-FS-25DEC26_PERP')!.underlyingPrice, forward);
  });

  test('a combo priced without one of its legs has no mark', () => {
    const callSpread = createCombo(parseComboName('BTC-CS-25DEC26-70000_65000')!, lookup, NOW);
    assert.ok(callSpread.ok);
    assert.equal(priceMarket(NOW, INDEX, [callSpread.spec], model).mark(callSpread.spec.name), undefined);
    const oneLeg = [callSpread.spec, lookup('BTC-25DEC26-70000-C')!];
    assert.equal(priceMarket(NOW, INDEX, oneLeg, model).mark(callSpread.spec.name), undefined);
  });

  test('without a fixing source the elapsed part of the window counts as fixed at the carry forward', () => {
    // Halfway through the settlement window: half the settlement is fixed, half still exposed.
    const halfway = priceMarket(EXPIRY - SETTLEMENT_WINDOW_MS / 2, INDEX, allSpecs, model);
    assert.equal(halfway.forwardExposure('BTC', EXPIRY), 0.5);
    // The half left moves: σ · √((½)² · τ / 3) / √τ = σ / √12 (to the index-over-forward scale).
    const ratio = halfway.mark('BTC-25DEC26-70000-C')!.markIv! / halfway.volatility('BTC', 70_000, EXPIRY);
    assert.ok(Math.abs(ratio - Math.sqrt(1 / 12)) < 0.002, `${ratio}`);
  });

  test('expired or unknown instruments have no mark', () => {
    const later = priceMarket(Date.UTC(2026, 10, 22, 8), INDEX, allSpecs, model);
    assert.equal(later.mark('BTC-22NOV26'), undefined);
    assert.equal(state.mark('BTC-NOPE'), undefined);
  });
});

describe('inside the settlement window', () => {
  const SOON = Date.UTC(2026, 10, 22, 8);
  const WINDOW_START = SOON - SETTLEMENT_WINDOW_MS;
  const CALL = 'BTC-22NOV26-65000-C';

  test('the mark IV is continuous at the window start: σ/√3 just before and just after', () => {
    const ivs = [-1, 1].map((offset) => {
      const at = priceMarket(WINDOW_START + offset, INDEX, allSpecs, model);
      const sigma = at.volatility('BTC', 65_000, SOON);
      const iv = at.mark(CALL)!.markIv!;
      assert.ok(Math.abs(iv - sigma / Math.sqrt(3)) < 1e-5 * sigma, `${iv} vs ${sigma}`);
      return iv;
    });
    assert.ok(Math.abs(ivs[0]! - ivs[1]!) < 1e-5 * ivs[0]!);
    // The same from the formula: the variance of the average over the window, σ²·W/3.
    const window = SETTLEMENT_WINDOW_MS / MS_PER_YEAR;
    assert.ok(Math.abs(settlementVolatility(0.6, window, 0, 1, 1) - 0.6 / Math.sqrt(3)) < 1e-12);
    const epsilon = window * 1e-9;
    const justBefore = settlementVolatility(0.6, window + epsilon, 0, 1, 1);
    const justAfter = settlementVolatility(0.6, window - epsilon, 1e-9, 1, 1);
    assert.ok(Math.abs(justBefore - justAfter) < 1e-8, `${justBefore} vs ${justAfter}`);
    // T → 0: no NaN, no volatility left.
    assert.equal(settlementVolatility(0.6, 0, 1, 1, 1), 0);
  });

  test('the fixed part of the average moves the forward, the future and the options', () => {
    const history = new IndexHistory();
    history.record('BTC', WINDOW_START - 60_000, 64_000);
    const halfway = WINDOW_START + SETTLEMENT_WINDOW_MS / 2;
    history.record('BTC', halfway, 65_000);
    const fixing = history.fixing('BTC', SOON, halfway)!;
    assert.deepEqual(fixing, { average: 64_000, fixedFraction: 0.5 });
    assert.equal(history.fixing('BTC', SOON, WINDOW_START), null);
    assert.equal(history.fixing('BTC', SOON, SOON), null);
    const plain = priceMarket(halfway, INDEX, allSpecs, model);
    const fixed = priceMarket(halfway, INDEX, allSpecs, model, history);
    const carry = plain.forward('BTC', SOON);
    const forward = 0.5 * 64_000 + 0.5 * carry;
    assert.ok(Math.abs(fixed.forward('BTC', SOON) - forward) < 1e-9);
    assert.equal(fixed.mark('BTC-22NOV26')!.markPrice, fixed.forward('BTC', SOON));
    assert.equal(fixed.forwardExposure('BTC', SOON), 0.5);
    assert.equal(fixed.forwardExposure('BTC', Date.UTC(2026, 11, 25, 8)), 1);
    assert.equal(fixed.forwardExposure('BTC', null), 1);
    // Later expiries and the perpetual are untouched.
    assert.equal(fixed.mark('BTC-25DEC26')!.markPrice, plain.mark('BTC-25DEC26')!.markPrice);
    assert.equal(fixed.mark('BTC-PERPETUAL')!.markPrice, plain.mark('BTC-PERPETUAL')!.markPrice);
    const call = fixed.mark(CALL)!;
    const sigma = fixed.volatility('BTC', 65_000, SOON);
    assert.equal(call.underlyingPrice, fixed.forward('BTC', SOON));
    assert.ok(Math.abs(call.markIv! - ((sigma * 0.5) / Math.sqrt(3)) * (carry / forward)) < 1e-12);
    const usd = black76Price({
      optionType: 'call',
      forward,
      strike: 65_000,
      timeToExpiry: call.timeToExpiry!,
      volatility: call.markIv!,
    });
    assert.ok(Math.abs(call.markPrice - usd / forward) < 1e-12);
    // A millisecond before expiry the mark is the payoff at the average fixed so far.
    const last = priceMarket(SOON - 1, INDEX, allSpecs, model, history);
    const average = history.fixing('BTC', SOON, SOON - 1)!.average;
    assert.ok(average > 64_000 && average < 65_000);
    assert.ok(Math.abs(last.mark('BTC-22NOV26')!.markPrice - average) < 1e-3);
    const inTheMoney = last.mark('BTC-22NOV26-64000-C')!;
    assert.ok(Math.abs(inTheMoney.markPrice - (average - 64_000) / average) < 1e-7);
    assert.ok(Number.isFinite(inTheMoney.markIv!) && inTheMoney.markIv! < 1e-3);
    assert.ok(last.mark('BTC-22NOV26-65000-C')!.markPrice < 1e-12);
  });
});

describe('price updates and settlement', () => {
  test('update_prices carries each index once and marks in ticks', () => {
    const instruments = allSpecs.slice(0, 50).map((spec, i) => new Instrument(i + 1, spec));
    const command = priceUpdateCommand(state, instruments);
    assert.equal(command.type, 'update_prices');
    if (command.type !== 'update_prices') return;
    assert.equal(new Set(command.indexPrices!.map((p) => p.currency)).size, command.indexPrices!.length);
    for (const update of command.markPrices!)
      assert.ok(Number.isSafeInteger(update.markPrice) && update.markPrice >= 0);
    // Options carry their expiry's forward over the index, for implv orders in the engine.
    const options = instruments.filter((i) => i.isOption);
    assert.ok(options.length > 0);
    for (const option of options) {
      const update = command.markPrices!.find((m) => m.instrumentName === option.name)!;
      const mark = state.mark(option.name)!;
      assert.equal(update.forwardFactor, mark.underlyingPrice / state.index(option.spec.baseCurrency));
    }
  });

  test('a big update_prices splits in order; the first command carries the indices', () => {
    const instruments = allSpecs.slice(0, 50).map((spec, i) => new Instrument(i + 1, spec));
    const whole = priceUpdateCommand(state, instruments);
    const parts = splitPriceUpdate(whole, 16);
    assert.equal(parts.length, Math.ceil(whole.markPrices!.length / 16));
    const marks = parts.flatMap((part) => (part.type === 'update_prices' ? part.markPrices! : []));
    assert.deepEqual(marks, whole.markPrices);
    assert.ok(parts.every((part) => part.type === 'update_prices' && part.markPrices!.length <= 16));
    assert.deepEqual(parts[0]!.type === 'update_prices' && parts[0]!.indexPrices, whole.indexPrices);
    assert.ok(
      parts.slice(1).every((part) => part.type === 'update_prices' && part.indexPrices!.length === 0),
    );
    // Small enough (or no marks at all): the command itself.
    assert.deepEqual(splitPriceUpdate(whole, 50), [whole]);
    const quiet = { ...whole, markPrices: [] };
    assert.deepEqual(splitPriceUpdate(quiet, 16), [quiet]);
    // A size that would split forever is refused.
    assert.throws(() => splitPriceUpdate(whole, 0), RangeError);
  });

  test('option marks carry delta per coin and vega in USD per vol point (MMP limits); others none', () => {
    const names = ['BTC-25DEC26-70000-C', 'BTC-25DEC26-60000-P', 'BTC-PERPETUAL'];
    const instruments = names.map((name, i) => new Instrument(i + 1, lookup(name)!));
    const command = priceUpdateCommand(state, instruments);
    if (command.type !== 'update_prices') return assert.fail('not update_prices');
    const [call, put, perpetual] = names.map(
      (name) => command.markPrices!.find((u) => u.instrumentName === name)!,
    );
    assert.ok(call!.delta! > 0 && call!.delta! < 1);
    assert.ok(put!.delta! < 0 && put!.delta! > -1);
    assert.equal(call!.vega, state.mark(names[0]!)!.greeks!.vega / 100);
    assert.equal(perpetual!.delta, undefined);
  });

  test('a combo whose net mark is negative keeps it in update_prices (single instruments never go below 0)', () => {
    // Bought 70000-C, sold the dearer 65000-C: the net is negative.
    const callSpread = createCombo(parseComboName('BTC-CS-25DEC26-70000_65000')!, lookup, NOW);
    assert.ok(callSpread.ok, 'the call spread is created');
    const withSpread = priceMarket(NOW, INDEX, [...allSpecs, callSpread.spec], model);
    const instrument = new Instrument(1, callSpread.spec);
    const mark = withSpread.mark(instrument.name)!.markPrice;
    assert.ok(mark < -0.01, `net mark ${mark} BTC`);
    const command = priceUpdateCommand(withSpread, [instrument]);
    const ticks = command.markPrices!.find((update) => update.instrumentName === instrument.name)!.markPrice;
    assert.equal(ticks, Math.round(mark / Number(instrument.spec.tickSize)));
    assert.ok(ticks < -100, `mark in ticks ${ticks}`);
    assert.equal(toTicks(new Instrument(2, lookup('BTC-25DEC26-70000-C')!), -0.01), 0);
  });

  test('combo ticks round halves away from zero on either side of it, and never to -0', () => {
    const spread = createCombo(parseComboName('BTC-FS-25DEC26_PERP')!, lookup, NOW);
    assert.ok(spread.ok, 'the future spread is created');
    const instrument = new Instrument(1, spread.spec);
    const tick = Number(instrument.spec.tickSize);
    assert.equal(toTicks(instrument, 1.5 * tick), 2);
    assert.equal(toTicks(instrument, -1.5 * tick), -2);
    assert.equal(toTicks(instrument, -1.4 * tick), -1);
    assert.ok(Object.is(toTicks(instrument, -0.4 * tick), 0), 'a net price just under 0 is 0 ticks, not -0');
  });

  test('settlement values: futures at the index, options at intrinsic in their currency', () => {
    const future = lookup('BTC-25DEC26')!;
    assert.equal(settlementValue(future, 66_000), 66_000);
    assert.equal(settlementValue(lookup('BTC-25DEC26-60000-C')!, 66_000), 6_000 / 66_000);
    assert.equal(settlementValue(lookup('BTC_USDC-25DEC26-70000-P')!, 66_000), 4_000);
    assert.equal(settlementValue(lookup('BTC-25DEC26-70000-C')!, 66_000), 0);
    assert.equal(settlementValue(lookup('BTC-PERPETUAL')!, 66_000), null);
    assert.equal(settlementValue(spread.spec, 66_000, lookup), 0);
    const instrument = new Instrument(1, future);
    assert.deepEqual(settlementCommand(instrument, 66_001.304), {
      type: 'settle_instrument',
      instrumentName: 'BTC-25DEC26',
      settlementPrice: toTicks(instrument, 66_001.3),
      settlementIndex: '66001.30',
    });
  });
});

describe('ticker figures', () => {
  test('options: mark/bid/ask IV in percent and display greeks', () => {
    const instrument = new Instrument(7, lookup('BTC-25DEC26-70000-C')!);
    const mark = state.mark(instrument.name)!;
    const bid = toTicks(instrument, mark.markPrice * 0.95);
    const ask = toTicks(instrument, mark.markPrice * 1.05);
    const figures = tickerFigures(instrument, state, { bestBid: bid, bestAsk: ask })!;
    assert.ok(Math.abs(figures.markIv! - mark.markIv! * 100) < 1e-12);
    assert.ok(figures.bidIv! < figures.markIv! && figures.markIv! < figures.askIv!);
    assert.equal(figures.indexPrice, 65_000);
    assert.ok(figures.greeks!.delta > 0 && figures.greeks!.delta < 1);
    assert.ok(Math.abs(figures.greeks!.vega - mark.greeks!.vega / 100) < 1e-12);
    assert.equal(figures.greeks!.gamma, mark.greeks!.gamma, 'gamma as the model gives it');
    assert.ok(figures.greeks!.theta < 0);
    assert.ok(Math.abs(figures.greeks!.theta - mark.greeks!.theta / 365) < 1e-12, 'theta per calendar day');
    // A best bid at the mark (to the tick) has the mark's IV: solved on the forward, not the index.
    const atMark = tickerFigures(instrument, state, {
      bestBid: toTicks(instrument, mark.markPrice),
      bestAsk: null,
    })!;
    assert.ok(Math.abs(atMark.bidIv! - figures.markIv!) < 0.3, `${atMark.bidIv} vs ${figures.markIv}`);
  });

  test('inverse options show the premium-adjusted delta (Black delta − mark in coin); linear the Black delta', () => {
    const book = { bestBid: null, bestAsk: null };
    const inverse = new Instrument(7, lookup('BTC-25DEC26-65000-C')!);
    const mark = state.mark(inverse.name)!;
    assert.ok(mark.markPrice > 0.05, `mark ${mark.markPrice} BTC`);
    const delta = tickerFigures(inverse, state, book)!.greeks!.delta;
    assert.ok(Math.abs(delta - (mark.greeks!.delta - mark.markPrice)) < 1e-15, `delta ${delta}`);
    const linear = new Instrument(9, lookup('BTC_USDC-25DEC26-65000-C')!);
    assert.equal(tickerFigures(linear, state, book)!.greeks!.delta, state.mark(linear.name)!.greeks!.delta);
  });

  test('a put bid at its mark has the mark IV: solved as a put, not a call', () => {
    const instrument = new Instrument(7, lookup('BTC-25DEC26-65000-P')!);
    const mark = state.mark(instrument.name)!;
    const figures = tickerFigures(instrument, state, {
      bestBid: toTicks(instrument, mark.markPrice),
      bestAsk: null,
    })!;
    assert.ok(
      Math.abs(figures.bidIv! - mark.markIv! * 100) < 0.3,
      `${figures.bidIv} vs ${mark.markIv! * 100}`,
    );
  });

  test('futures: no IV or greeks; empty book sides are null', () => {
    const instrument = new Instrument(8, lookup('BTC-PERPETUAL')!);
    const figures = tickerFigures(instrument, state, { bestBid: null, bestAsk: 130_004 })!;
    assert.equal(figures.greeks, null);
    assert.equal(figures.bestBidPrice, null);
    assert.equal(figures.bestAskPrice, 65_002);
  });
});

describe('settlement of puts and combos (mutation audit)', () => {
  test('a combo whose leg is not known does not settle', () => {
    assert.equal(
      settlementValue(spread.spec, 66_000, () => undefined),
      null,
    );
    assert.equal(
      settlementCommand(new Instrument(1, spread.spec), 66_000, () => undefined),
      null,
    );
  });

  test('an out-of-the-money put settles at 0, alone and as a put-spread leg', () => {
    assert.equal(
      settlementValue(lookup('BTC-25DEC26-60000-P')!, 66_000),
      0,
      'OTM inverse put is worth 0, never negative',
    );
    assert.equal(
      settlementValue(lookup('BTC_USDC-25DEC26-60000-P')!, 66_000),
      0,
      'OTM linear put is worth 0',
    );
    const putSpread = createCombo(parseComboName('BTC-PS-25DEC26-65000_60000')!, lookup, NOW);
    assert.ok(putSpread.ok, 'the put spread is created');
    assert.equal(
      settlementValue(putSpread.spec, 70_000, lookup),
      0,
      'both legs OTM: the put spread is worth 0',
    );
  });

  test('a combo settles at Σ ratio × leg value: the bought leg minus the sold leg', () => {
    const bull = createCombo(parseComboName('BTC-CS-25DEC26-60000_70000')!, lookup, NOW);
    assert.ok(bull.ok, 'the call spread is created');
    assert.equal(
      settlementValue(bull.spec, 66_000, lookup),
      6_000 / 66_000,
      'bull call spread at 66000: +6000/66000 BTC',
    );
  });

  test('a combo whose settlement value is negative settles at negative ticks', () => {
    const bear = createCombo(parseComboName('BTC-CS-25DEC26-70000_60000')!, lookup, NOW);
    assert.ok(bear.ok, 'the call spread is created');
    const instrument = new Instrument(3, bear.spec);
    const expected = Math.round(-6_000 / 66_000 / Number(instrument.spec.tickSize));
    assert.ok(expected < 0, `expected ticks ${expected} are negative`);
    assert.deepEqual(
      settlementCommand(instrument, 66_000, lookup),
      {
        type: 'settle_instrument',
        instrumentName: 'BTC-CS-25DEC26-70000_60000',
        settlementPrice: expected,
        settlementIndex: '66000.00',
      },
      'bought 70000-C, sold 60000-C at 66000: −6000/66000 BTC, not clamped to 0',
    );
  });

  test('the settlement price in ticks is the value at the index fixed to cents', () => {
    const instrument = new Instrument(1, lookup('BTC-25DEC26')!);
    // 66001.2499 fixes to 66001.25 = 26400.5 ticks of 2.5 → 26401; unfixed it would round to 26400.
    assert.deepEqual(
      settlementCommand(instrument, 66_001.2499),
      {
        type: 'settle_instrument',
        instrumentName: 'BTC-25DEC26',
        settlementPrice: 26_401,
        settlementIndex: '66001.25',
      },
      'ticks follow the index sent with the command',
    );
  });
});

test('a future spread settles at its front leg against the mark of the leg that trades on', () => {
  const calendar = createCombo(parseComboName('BTC-FS-26MAR27_25DEC26')!, lookup, NOW);
  assert.ok(calendar.ok, 'the calendar spread is created');
  const marks = new Map([['BTC-26MAR27', 66_778.5]]);
  assert.equal(
    settlementValue(calendar.spec, 66_000, lookup, (name) => marks.get(name)),
    778.5,
    'bought March at its mark 66778.5, sold December at the index 66000',
  );
  assert.equal(
    settlementValue(calendar.spec, 66_000, lookup),
    0,
    'without a mark the later future counts at the index',
  );
  const perpetual = createCombo(parseComboName('BTC-FS-25DEC26_PERP')!, lookup, NOW);
  assert.ok(perpetual.ok, 'the perpetual spread is created');
  assert.equal(
    settlementValue(perpetual.spec, 66_000, lookup, (name) =>
      name === 'BTC-PERPETUAL' ? 66_010 : undefined,
    ),
    -10,
    'bought December at the index 66000, sold the perpetual at its mark 66010',
  );
});
