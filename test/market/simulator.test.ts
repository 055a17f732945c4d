import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { currencyDecimals } from '../../src/core/types.ts';
import { Instrument } from '../../src/domain/instrument.ts';
import { buildCatalogue } from '../../src/market/catalogue.ts';
import { createCombo, parseComboName } from '../../src/market/combos.ts';
import { defaultMarketModel, priceMarket } from '../../src/market/market-state.ts';
import { simulatorConfig } from '../../src/market/simulator/config.ts';
import { quoteLadder } from '../../src/market/simulator/quoting.ts';
import { LiquiditySimulator } from '../../src/market/simulator/simulator.ts';
import { FakeVenue } from './fake-venue.ts';

const NOW = Date.UTC(2026, 10, 22, 6);
const INDEX = { BTC: 65_000, ETH: 3_200 };
const specs = buildCatalogue(NOW, INDEX);
const instruments = specs.map((spec, i) => new Instrument(i + 1, spec));
const model = defaultMarketModel();

function setup(overrides = {}) {
  const simulator = new LiquiditySimulator(simulatorConfig(overrides));
  const venue = new FakeVenue(instruments);
  return { simulator, venue };
}

describe('liquidity simulator', () => {
  test('every listed instrument has a two-sided book after the first step (an option worth under a few ticks: an ask), on valid ticks', () => {
    const { simulator, venue } = setup();
    const market = priceMarket(NOW, INDEX, specs, model);
    const commands = simulator.step(NOW, market, venue);
    venue.apply(commands);
    for (const instrument of instruments) {
      const { bestBid, bestAsk } = venue.bestPrices(instrument.name);
      assert.ok(
        bestAsk !== null && instrument.isOnTick(bestAsk),
        `${instrument.name} has no ask on its ticks`,
      );
      if (bestBid === null) {
        // No bid below one tick (docs/decisions.md): only for an option worth a few ticks at most.
        const markTicks = market.mark(instrument.name)!.markPrice / Number(instrument.spec.tickSize);
        assert.ok(instrument.isOption && markTicks < 5, `${instrument.name} is not two-sided`);
        continue;
      }
      assert.ok(bestBid < bestAsk, `${instrument.name} is crossed`);
      assert.ok(instrument.isOnTick(bestBid), `${instrument.name} off tick`);
    }
    for (const order of venue.orders.values()) {
      const instrument = instruments.find((x) => x.name === order.instrumentName)!;
      assert.ok(instrument.isOnTick(order.price) && order.price > 0);
    }
  });

  test('quotes stay near the mark (inside a 50% option band or 10 ticks; 5% for futures)', () => {
    const { simulator, venue } = setup();
    const market = priceMarket(NOW, INDEX, specs, model);
    venue.apply(simulator.step(NOW, market, venue));
    for (const instrument of instruments) {
      const mark = market.mark(instrument.name)!.markPrice / Number(instrument.spec.tickSize);
      const { bestBid, bestAsk } = venue.bestPrices(instrument.name);
      const band = instrument.isOption ? Math.max(10, mark * 0.5) : mark * 0.05;
      assert.ok(Math.abs(bestBid! - mark) <= band && Math.abs(bestAsk! - mark) <= band, instrument.name);
    }
  });

  test('quiet market: no churn; index move: quotes are refreshed by edits', () => {
    const { simulator, venue } = setup({ takerAccountId: null });
    venue.apply(simulator.step(NOW, priceMarket(NOW, INDEX, specs, model), venue));
    assert.deepEqual(simulator.step(NOW + 1000, priceMarket(NOW + 1000, INDEX, specs, model), venue), []);
    const moved = { BTC: 65_000 * 1.01, ETH: 3_200 };
    const commands = simulator.step(NOW + 2000, priceMarket(NOW + 2000, moved, specs, model), venue);
    assert.ok(commands.length > 0);
    // Mostly edits; a level can appear or collapse at the 1-tick floor of cheap options.
    const edits = commands.filter((command) => command.type === 'edit_order').length;
    assert.ok(edits > commands.length * 0.95, `${edits} edits of ${commands.length}`);
    venue.apply(commands);
    assert.deepEqual(venue.refused, []);
    const perpetual = venue.bestPrices('BTC-PERPETUAL');
    assert.ok(perpetual.bestBid! * 0.5 > 65_000 * 1.0095);
  });

  test('deterministic given the seed; takers trade at about the configured rate', () => {
    const run = (seed: number) => {
      const { simulator, venue } = setup({ seed, takerOrdersPerMinute: 120 });
      const all: unknown[] = [];
      for (let i = 0; i <= 60; i++) {
        const now = NOW + i * 1000;
        const level = { BTC: 65_000 * (1 + 0.001 * Math.sin(i)), ETH: 3_200 };
        const commands = simulator.step(now, priceMarket(now, level, specs, model), venue);
        venue.apply(commands);
        all.push(commands);
      }
      return { all, trades: venue.trades };
    };
    const a = run(5);
    assert.deepEqual(run(5).all, a.all);
    assert.notDeepEqual(run(6).all, a.all);
    assert.ok(a.trades > 60 && a.trades < 400, `trades ${a.trades}`);
  });

  test('inventory shifts quotes against the position', () => {
    const market = priceMarket(NOW, INDEX, specs, model);
    const flat = setup({ takerAccountId: null });
    flat.venue.apply(flat.simulator.step(NOW, market, flat.venue));
    const long = setup({ takerAccountId: null });
    long.venue.setPosition(900_001, 'BTC-25DEC26-65000-C', 200);
    long.venue.apply(long.simulator.step(NOW, market, long.venue));
    const a = flat.venue.bestPrices('BTC-25DEC26-65000-C');
    const b = long.venue.bestPrices('BTC-25DEC26-65000-C');
    assert.ok(b.bestBid! < a.bestBid! && b.bestAsk! < a.bestAsk!);
  });

  test('an options maker hedges its delta on the perpetual', () => {
    const { simulator, venue } = setup({ takerAccountId: null });
    const market = priceMarket(NOW, INDEX, specs, model);
    venue.apply(simulator.step(NOW, market, venue));
    venue.setPosition(900_001, 'BTC-25DEC26-65000-C', 500); // 50 BTC of calls, delta ≈ 27 BTC
    const commands = simulator.step(NOW + 1000, market, venue);
    const hedge = commands.find((command) => command.type === 'place_order' && command.label === 'lp-hedge');
    assert.ok(hedge !== undefined && hedge.type === 'place_order');
    assert.equal(hedge.instrumentName, 'BTC-PERPETUAL');
    assert.equal(hedge.side, 'sell');
    assert.equal(hedge.timeInForce, 'immediate_or_cancel');
  });

  test('a short perpetual counts as its USD lots over the mark in coin: a matching hedge sends no more', () => {
    const market = priceMarket(NOW, INDEX, specs, model);
    const option = 'BTC-25DEC26-65000-C';
    const optionLot = Number(specs.find((spec) => spec.name === option)!.minTradeAmount);
    const perpetualLot = Number(specs.find((spec) => spec.name === 'BTC-PERPETUAL')!.minTradeAmount);
    const perpetualMark = market.mark('BTC-PERPETUAL')!.markPrice;
    const deltaCoins = 500 * optionLot * market.mark(option)!.greeks!.delta; // ≈ 27 BTC
    assert.ok(deltaCoins > 20 && deltaCoins < 35, `option delta ${deltaCoins} BTC`);
    // The perpetual is inverse: a lot is `perpetualLot` USD, worth that over its mark in BTC.
    const hedgeLots = Math.round((deltaCoins * perpetualMark) / perpetualLot);
    const hedgeFor = (perpetualLots: number) => {
      const { simulator, venue } = setup({ takerAccountId: null });
      venue.apply(simulator.step(NOW, market, venue));
      venue.setPosition(900_001, option, 500);
      venue.setPosition(900_001, 'BTC-PERPETUAL', perpetualLots);
      const commands = simulator.step(NOW + 1000, market, venue);
      return commands.find((command) => command.type === 'place_order' && command.label === 'lp-hedge');
    };
    assert.equal(
      hedgeFor(-hedgeLots),
      undefined,
      `short ${hedgeLots} perpetual lots already hedge the delta`,
    );
    // Half hedged: the other half (about 13.5 BTC) is sold.
    const half = hedgeFor(-Math.round(hedgeLots / 2));
    assert.ok(half !== undefined && half.type === 'place_order', 'the unhedged half is hedged');
    assert.equal(half.side, 'sell');
    const expected = hedgeLots / 2;
    assert.ok(
      Math.abs(half.amount - expected) < expected * 0.001,
      `hedge of ${half.amount} lots, about ${expected} expected`,
    );
  });

  test('inside the settlement window only the unfixed part of an expiring delta is hedged', () => {
    const expiry = Date.UTC(2026, 10, 22, 8);
    const call = specs.find(
      (spec) =>
        spec.kind === 'option' &&
        spec.expiration === expiry &&
        spec.optionType === 'call' &&
        spec.baseCurrency === 'BTC' &&
        spec.marginKind === 'inverse' &&
        Number(spec.strike) <= 63_000,
    )!;
    const name = instruments[specs.indexOf(call)]!.name;
    const hedges = (at: number) => {
      const { simulator, venue } = setup({ takerAccountId: null });
      const market = priceMarket(at, INDEX, specs, model);
      venue.apply(simulator.step(at, market, venue));
      venue.setPosition(900_001, name, 200); // 20 BTC of in-the-money calls, delta ≈ 0.9
      const commands = simulator.step(at + 1000, market, venue);
      return { market, hedge: commands.find((c) => c.type === 'place_order' && c.label === 'lp-hedge') };
    };
    assert.ok(hedges(NOW).hedge !== undefined);
    // At 07:57 nine tenths of the average is fixed: about 2 BTC of index exposure, under the threshold.
    const late = hedges(expiry - 3 * 60_000);
    assert.ok(Math.abs(late.market.forwardExposure('BTC', expiry) - 0.1) < 1e-12);
    assert.equal(late.hedge, undefined);
  });

  test('switched off: no accounts, no commands', () => {
    const { simulator, venue } = setup({ enabled: false });
    assert.deepEqual(simulator.setupCommands(), []);
    assert.deepEqual(simulator.step(NOW, priceMarket(NOW, INDEX, specs, model), venue), []);
  });

  test('set-up creates and funds every simulated account', () => {
    const { simulator } = setup();
    const commands = simulator.setupCommands();
    const created = commands.filter((command) => command.type === 'create_account').map((c) => c.accountId);
    assert.deepEqual(created, [900_001, 900_002, 900_003, 900_010]);
    assert.ok(commands.some((command) => command.type === 'deposit' && command.currency === 'BTC'));
  });

  test('set-up deposits each currency in its own integer units', () => {
    const { simulator } = setup();
    const deposits = simulator.setupCommands().filter((command) => command.type === 'deposit');
    const of = (currency: string) =>
      deposits.find((command) => command.accountId === 900_001 && command.currency === currency)?.amount;
    assert.equal(of('USDC'), 1e9 * 10 ** currencyDecimals('USDC'));
    assert.equal(of('BTC'), 1e4 * 10 ** currencyDecimals('BTC'));
    assert.notEqual(currencyDecimals('USDC'), 8, 'the check tells the decimals apart');
  });

  test('option combos are quoted by the options makers, not the delta-one maker', () => {
    const listed = createCombo(
      parseComboName('BTC-CS-25DEC26-65000_70000')!,
      (name) => specs.find((spec) => spec.name === name),
      NOW,
    );
    assert.ok(listed.ok);
    const combo = new Instrument(instruments.length + 1, listed.spec);
    const simulator = new LiquiditySimulator(simulatorConfig({ takerAccountId: null }));
    const venue = new FakeVenue([...instruments, combo]);
    const market = priceMarket(NOW, INDEX, [...specs, listed.spec], model);
    const makers = simulator
      .step(NOW, market, venue)
      .flatMap((command) =>
        command.type === 'place_order' && command.instrumentName === combo.name ? [command.accountId] : [],
      );
    assert.ok(makers.length > 0, 'the combo is quoted');
    const optionsMakers = simulator.config.makers
      .filter((maker) => maker.products === 'options' && maker.currencies.includes('BTC'))
      .map((maker) => maker.accountId);
    assert.ok(!optionsMakers.includes(900_003));
    assert.deepEqual([...new Set(makers)].sort(), optionsMakers.sort());
  });

  test('quotes are scaled by the option mark IV, and by the 30-day ATM vol for delta-one', () => {
    const { simulator, venue } = setup({ takerAccountId: null });
    const market = priceMarket(NOW, INDEX, specs, model);
    const commands = simulator.step(NOW, market, venue);
    const level0 = (name: string) =>
      commands
        .filter(
          (command) =>
            command.type === 'place_order' &&
            command.accountId !== 900_002 &&
            command.instrumentName === name &&
            command.label.endsWith('|0'),
        )
        .map((command) => (command.type === 'place_order' ? command.price : null));
    const expected = (name: string, volatility: number) => {
      const ladder = quoteLadder(
        instruments.find((instrument) => instrument.name === name)!,
        market.mark(name)!,
        volatility,
        0,
        simulator.config,
      );
      return ladder.quotes.filter((quote) => quote.level === 0).map((quote) => quote.price);
    };
    const atm = model.currencies.BTC!.surface.volatility(INDEX.BTC, INDEX.BTC, 30 / 365);
    const option = 'BTC-25DEC26-45000-P';
    const markIv = market.mark(option)!.markIv!;
    assert.notDeepEqual(
      expected(option, markIv),
      expected(option, atm),
      'the wing is priced off the ATM vol',
    );
    assert.deepEqual(level0(option), expected(option, markIv));
    assert.notDeepEqual(
      expected('BTC-PERPETUAL', atm),
      expected('BTC-PERPETUAL', simulator.config.referenceVolatility),
    );
    assert.deepEqual(level0('BTC-PERPETUAL'), expected('BTC-PERPETUAL', atm));
  });

  test('takers: none on the first step, at most a minute of them after a gap, sizes 1 to takerMaxSizeMultiple', () => {
    const market = priceMarket(NOW, INDEX, specs, model);
    const books = setup({ takerAccountId: null });
    books.venue.apply(books.simulator.step(NOW, market, books.venue));
    const simulator = new LiquiditySimulator(simulatorConfig());
    const takers = (now: number) =>
      simulator
        .step(now, market, books.venue)
        .filter((command) => command.type === 'place_order' && command.label === 'sim-taker');
    assert.deepEqual(takers(NOW), [], 'no takers before a previous step');
    const afterHour = takers(NOW + 3_600_000).length;
    assert.ok(
      afterHour > 0 && afterHour < 80,
      `${afterHour} takers after an hour: about 30 (one minute's worth)`,
    );
    const sizes = new Set<number>();
    for (let i = 1; i <= 20; i++)
      for (const command of takers(NOW + 3_600_000 + i * 60_000))
        if (command.type === 'place_order') sizes.add(command.amount);
    assert.deepEqual([...sizes].sort(), [1, 2, 3]);
  });

  test('snapshot/restore resumes the same sequence', () => {
    const { simulator, venue } = setup();
    const market = priceMarket(NOW, INDEX, specs, model);
    venue.apply(simulator.step(NOW, market, venue));
    const copy = new LiquiditySimulator(simulator.config);
    copy.restore(simulator.snapshot());
    assert.deepEqual(copy.step(NOW + 30_000, market, venue), simulator.step(NOW + 30_000, market, venue));
  });
});
