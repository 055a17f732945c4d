import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UnstampedCommand } from '../../core/commands.ts';
import { Instrument } from '../../domain/instrument.ts';
import { buildCatalogue } from '../catalogue.ts';
import { createCombo, parseComboName } from '../combos.ts';
import { defaultMarketModel, priceMarket } from '../market-state.ts';
import { simulatorConfig } from './config.ts';
import { ceilToTick, floorToTick, quoteLadder } from './quoting.ts';
import { QuoteLabels, quoteLabel, requote } from './requote.ts';
import type { SimulatorOrder } from './view.ts';

const NOW = Date.UTC(2026, 10, 22, 6);
const INDEX = { BTC: 65_000, ETH: 3_200 };
const specs = buildCatalogue(NOW, INDEX);
const market = priceMarket(NOW, INDEX, specs, defaultMarketModel());
const instrument = (name: string) => new Instrument(1, specs.find((spec) => spec.name === name)!);
const config = simulatorConfig();

function width(name: string, volatility: number, position = 0): number {
  const target = instrument(name);
  const ladder = quoteLadder(target, market.mark(name)!, volatility, position, config);
  const bid = ladder.quotes.find((quote) => quote.side === 'buy' && quote.level === 0)!;
  const ask = ladder.quotes.find((quote) => quote.side === 'sell' && quote.level === 0)!;
  return ask.price - bid.price;
}

describe('quote ladders', () => {
  test('rounding respects the coarse option tick above 0.005', () => {
    const option = instrument('BTC-25DEC26-65000-C');
    assert.equal(floorToTick(option, 53.7), 50);
    assert.equal(ceilToTick(option, 50.2), 55);
    assert.equal(floorToTick(option, 49.9), 49);
    assert.equal(ceilToTick(option, 48.1), 49);
  });

  test('a price a hair under a tick from float noise rounds onto that tick', () => {
    const perp = instrument('BTC-PERPETUAL');
    assert.equal(floorToTick(perp, 2.9999999999), 3);
    assert.equal(floorToTick(perp, (0.3 / 0.1) * 1), 3);
    assert.equal(ceilToTick(perp, 3.0000000001), 3);
  });

  test('levels move outwards, sizes grow, every price is on its tick', () => {
    const option = instrument('BTC-25DEC26-70000-C');
    const ladder = quoteLadder(option, market.mark(option.name)!, 0.55, 0, config);
    const bids = ladder.quotes.filter((quote) => quote.side === 'buy');
    const asks = ladder.quotes.filter((quote) => quote.side === 'sell');
    assert.equal(bids.length, 3);
    assert.equal(asks.length, 3);
    for (let i = 1; i < 3; i++) {
      assert.ok(bids[i]!.price < bids[i - 1]!.price && asks[i]!.price > asks[i - 1]!.price);
      assert.ok(bids[i]!.amount > bids[i - 1]!.amount);
    }
    assert.ok(ladder.quotes.every((quote) => option.isOnTick(quote.price)));
  });

  test('spreads widen with volatility and with inventory', () => {
    assert.ok(width('BTC-PERPETUAL', 1.2) > width('BTC-PERPETUAL', 0.4));
    assert.ok(width('BTC-25DEC26-65000-P', 1.2) > width('BTC-25DEC26-65000-P', 0.4));
    assert.ok(width('BTC-PERPETUAL', 0.6, 200) > width('BTC-PERPETUAL', 0.6, 0));
  });

  test('an option worth less than its bid would be gets no bid, only an ask', () => {
    const far = specs
      .filter((spec) => spec.name.startsWith('BTC-22NOV26-') && spec.name.endsWith('-C'))
      .at(-1)!;
    const option = new Instrument(2, far);
    const mark = market.mark(far.name)!;
    const tick = Number(far.tickSize);
    assert.ok(mark.markPrice < tick, 'the far call is marked below one tick');
    const ladder = quoteLadder(option, mark, 0.5, 0, config);
    assert.deepEqual(
      ladder.quotes.filter((q) => q.side === 'buy'),
      [],
      'a 1-tick bid would pay a seller many times what the option is worth',
    );
    assert.ok(ladder.quotes.some((q) => q.side === 'sell' && q.price >= 1));
  });

  test('with the venue band, a future spread quotes only where orders may trade', () => {
    const listed = createCombo(
      parseComboName('BTC-FS-25DEC26_PERP')!,
      (name) => specs.find((spec) => spec.name === name),
      NOW,
    );
    assert.ok(listed.ok);
    const spread = new Instrument(3, listed.spec);
    const mark = priceMarket(NOW, INDEX, [...specs, listed.spec], defaultMarketModel()).mark(spread.name)!;
    const markTicks = Math.round(mark.markPrice / Number(spread.spec.tickSize));
    const band = { min: markTicks - 10, max: markTicks + 10 };
    // Long inventory: the maker's bids widen and skew down, past the band without it.
    const loose = quoteLadder(spread, mark, 0.6, 400, config);
    assert.ok(loose.quotes.some((q) => q.side === 'buy' && q.price < band.min));
    const kept = quoteLadder(spread, mark, 0.6, 400, config, band);
    const bids = kept.quotes.filter((q) => q.side === 'buy');
    const asks = kept.quotes.filter((q) => q.side === 'sell');
    assert.ok(bids.length >= 1 && asks.length >= 1);
    for (const quote of kept.quotes)
      assert.ok(quote.price >= band.min + 1 && quote.price <= band.max - 1, `${quote.side} ${quote.price}`);
    assert.ok(Math.max(...bids.map((q) => q.price)) < Math.min(...asks.map((q) => q.price)));
  });

  const prices = (ladder: { quotes: { side: string; price: number }[] }, side: 'buy' | 'sell') =>
    ladder.quotes.filter((quote) => quote.side === side).map((quote) => quote.price);

  test('a band edge brings the level-0 ask down to it and leaves deeper asks out', () => {
    const perp = instrument('BTC-PERPETUAL');
    const mark = market.mark(perp.name)!;
    const free = quoteLadder(perp, mark, 0.6, 0, config);
    const bid0 = prices(free, 'buy')[0]!;
    const ask0 = prices(free, 'sell')[0]!;
    const band = { min: bid0 - 100, max: ask0 + 2 };
    const kept = quoteLadder(perp, mark, 0.6, 0, config, band);
    // The usable top is a twentieth of the width inside the edge: ask0 + 2 − 7.
    const highest = floorToTick(perp, band.max - Math.floor((band.max - band.min) / 20));
    assert.equal(highest, ask0 - 5);
    assert.deepEqual(prices(kept, 'sell'), [highest], 'one ask, at the usable top');
    assert.deepEqual(prices(kept, 'buy'), prices(free, 'buy'), 'the bids are inside the band already');
    assert.ok(Math.max(...prices(kept, 'buy')) < highest, 'uncrossed');
  });

  test('a bid lifted to the band bottom pushes the asks above it, one tick apart', () => {
    const perp = instrument('BTC-PERPETUAL');
    const mark = market.mark(perp.name)!;
    const ask0 = prices(quoteLadder(perp, mark, 0.6, 0, config), 'sell')[0]!;
    const band = { min: ask0 + 50, max: ask0 + 250 };
    const kept = quoteLadder(perp, mark, 0.6, 0, config, band);
    const lowest = ceilToTick(perp, band.min + Math.floor((band.max - band.min) / 20));
    assert.equal(lowest, ask0 + 60);
    assert.deepEqual(prices(kept, 'buy'), [lowest], 'deeper bids fall below the band');
    assert.deepEqual(prices(kept, 'sell'), [lowest + 1, lowest + 2, lowest + 3]);
  });

  test('a mark above the band brings the bids under the usable top, with the ask at it', () => {
    const perp = instrument('BTC-PERPETUAL');
    const mark = market.mark(perp.name)!;
    const bid0 = prices(quoteLadder(perp, mark, 0.6, 0, config), 'buy')[0]!;
    const band = { min: bid0 - 250, max: bid0 - 50 };
    const kept = quoteLadder(perp, mark, 0.6, 0, config, band);
    const highest = floorToTick(perp, band.max - Math.floor((band.max - band.min) / 20));
    assert.equal(highest, bid0 - 60);
    assert.deepEqual(prices(kept, 'sell'), [highest], 'deeper asks fall above the band');
    assert.deepEqual(
      prices(kept, 'buy'),
      [highest - 1, highest - 2, highest - 3],
      'every bid inside the band',
    );
  });

  test('in the coarse-tick option region adjacent levels are pushed a whole coarse tick out', () => {
    const option = instrument('BTC-25DEC26-70000-C');
    const base = market.mark(option.name)!;
    const mark = { ...base, markPrice: 0.0062, greeks: { ...base.greeks!, vega: 0 } };
    const ladder = quoteLadder(option, mark, 0.6, 0, simulatorConfig({ optionHalfSpreadVolPoints: 0 }));
    assert.deepEqual(prices(ladder, 'buy'), [60, 55, 50]);
    assert.deepEqual(prices(ladder, 'sell'), [65, 70, 75]);
  });

  test('the volatility scale is clamped to [0.5, 3] of the reference', () => {
    assert.ok(
      width('BTC-PERPETUAL', 0.3) < width('BTC-PERPETUAL', 0.6),
      'the perpetual is wide enough to tell',
    );
    assert.equal(width('BTC-PERPETUAL', 0.1), width('BTC-PERPETUAL', 0.3));
    assert.ok(width('BTC-PERPETUAL', 1.8) > width('BTC-PERPETUAL', 1.2), 'still growing up to 3×');
    assert.equal(width('BTC-PERPETUAL', 6), width('BTC-PERPETUAL', 1.8));
  });

  test('inventory is clamped to ±1 of the limit', () => {
    const perp = instrument('BTC-PERPETUAL');
    const mark = market.mark(perp.name)!;
    // inventoryLimit 20 × level-0 size 5 = 100 lots.
    const atLimit = quoteLadder(perp, mark, 0.6, 100, config);
    assert.deepEqual(quoteLadder(perp, mark, 0.6, 10_000, config).quotes, atLimit.quotes);
    assert.deepEqual(
      quoteLadder(perp, mark, 0.6, -10_000, config).quotes,
      quoteLadder(perp, mark, 0.6, -100, config).quotes,
    );
    assert.ok(
      width('BTC-PERPETUAL', 0.6, 100) > width('BTC-PERPETUAL', 0.6, 50),
      'below the limit it still widens',
    );
  });

  test('the half-spread is never under minHalfSpreadTicks and the tolerance never under one tick', () => {
    const perp = instrument('BTC-PERPETUAL');
    const mark = { ...market.mark(perp.name)!, markPrice: 65_000 };
    const floored = quoteLadder(
      perp,
      mark,
      0.6,
      0,
      simulatorConfig({ futureHalfSpreadBps: 0, minHalfSpreadTicks: 3 }),
    );
    assert.deepEqual(prices(floored, 'buy'), [129_997, 129_995, 129_994]);
    assert.deepEqual(prices(floored, 'sell'), [130_003, 130_005, 130_006]);
    const tight = quoteLadder(
      perp,
      mark,
      0.6,
      0,
      simulatorConfig({ futureHalfSpreadBps: 0, minHalfSpreadTicks: 1 }),
    );
    assert.equal(tight.toleranceTicks, 1, 'half a tick of refresh still tolerates one tick');
  });

  test('an option combo marked below zero gets the same spread as one marked above', () => {
    const listed = createCombo(
      parseComboName('BTC-CS-25DEC26-65000_70000')!,
      (name) => specs.find((spec) => spec.name === name),
      NOW,
    );
    assert.ok(listed.ok);
    const combo = new Instrument(3, listed.spec);
    const base = priceMarket(NOW, INDEX, [...specs, listed.spec], defaultMarketModel()).mark(combo.name)!;
    const up = quoteLadder(combo, { ...base, markPrice: 0.01 }, 0.6, 0, config);
    const down = quoteLadder(combo, { ...base, markPrice: -0.01 }, 0.6, 0, config);
    assert.deepEqual(prices(up, 'buy'), [98, 97, 96]);
    assert.deepEqual(prices(up, 'sell'), [102, 103, 104]);
    assert.deepEqual(prices(down, 'buy'), [-102, -103, -104]);
    assert.deepEqual(prices(down, 'sell'), [-98, -97, -96]);
  });
});

describe('quote labels', () => {
  test('QuoteLabels gives the labels of a ladder in its order, made once per instrument', () => {
    const target = instrument('BTC-25DEC26-65000-C');
    const ladder = quoteLadder(target, market.mark(target.name)!, 0.6, 0, config);
    const labels = new QuoteLabels();
    const first = labels.of(target, ladder);
    assert.deepEqual(
      first,
      ladder.quotes.map((quote) => quoteLabel(target.name, quote.side, quote.level)),
    );
    const again = labels.of(target, ladder);
    assert.deepEqual(again, first);
    assert.notEqual(again, first);
  });
});

describe('requote', () => {
  const resting = (
    orderId: string,
    side: 'buy' | 'sell',
    price: number,
    filledAmount = 0,
  ): SimulatorOrder => ({
    orderId,
    instrumentName: 'X',
    side,
    price,
    amount: 5,
    filledAmount,
    label: quoteLabel('X', side, 0),
  });
  const byLabel = (...orders: SimulatorOrder[]) => new Map(orders.map((order) => [order.label, order]));

  test('a mostly filled quote at its price is refreshed: the edit keeps the filled part in the total', () => {
    const commands: UnstampedCommand[] = [];
    const ladder = { quotes: [{ side: 'buy' as const, level: 0, price: 100, amount: 5 }], toleranceTicks: 2 };
    // 5 wanted, 3 of 5 filled: 2 left, under half of the wanted size.
    requote(7, 'X', ladder, byLabel(resting('o1', 'buy', 100, 3)), commands);
    assert.deepEqual(
      commands,
      [{ type: 'edit_order', accountId: 7, orderId: 'o1', price: 100, amount: 8 }],
      'one edit to 3 filled + 5 open',
    );
  });

  test('a quote left within tolerance that would cross the new ladder forces every quote to its price', () => {
    const commands: UnstampedCommand[] = [];
    const ladder = {
      quotes: [
        { side: 'buy' as const, level: 0, price: 99, amount: 5 },
        { side: 'sell' as const, level: 0, price: 100, amount: 5 },
      ],
      toleranceTicks: 1,
    };
    // The bid at 100 is within a tick of 99, but the ask moving to 100 would meet it.
    requote(7, 'X', ladder, byLabel(resting('b0', 'buy', 100), resting('s0', 'sell', 105)), commands);
    assert.deepEqual(
      commands,
      [
        { type: 'edit_order', accountId: 7, orderId: 'b0', price: 99, amount: 5 },
        { type: 'edit_order', accountId: 7, orderId: 's0', price: 100, amount: 5 },
      ],
      'the bid steps down first, then the ask',
    );
  });

  test('a resting quote the ladder no longer has is cancelled', () => {
    const commands: UnstampedCommand[] = [];
    // The bid's mark fell below a tick: the new ladder is an ask only.
    const ladder = { quotes: [{ side: 'sell' as const, level: 0, price: 10, amount: 5 }], toleranceTicks: 1 };
    requote(1, 'X', ladder, byLabel(resting('b0', 'buy', 8), resting('s0', 'sell', 10)), commands);
    assert.deepEqual(commands, [{ type: 'cancel_order', accountId: 1, orderId: 'b0' }]);
  });

  test('a quote exactly toleranceTicks away stays; one tick more moves it', () => {
    const ladder = { quotes: [{ side: 'buy' as const, level: 0, price: 100, amount: 5 }], toleranceTicks: 3 };
    const within: UnstampedCommand[] = [];
    requote(7, 'X', ladder, byLabel(resting('b0', 'buy', 97)), within);
    assert.deepEqual(within, []);
    const beyond: UnstampedCommand[] = [];
    requote(7, 'X', ladder, byLabel(resting('b0', 'buy', 96)), beyond);
    assert.deepEqual(beyond, [{ type: 'edit_order', accountId: 7, orderId: 'b0', price: 100, amount: 5 }]);
  });

  test('a quote is resized only once less than half its wanted size is left', () => {
    const ladder = {
      quotes: [{ side: 'buy' as const, level: 0, price: 100, amount: 10 }],
      toleranceTicks: 1,
    };
    const order = (filledAmount: number): SimulatorOrder => ({
      ...resting('b0', 'buy', 100, filledAmount),
      amount: 10,
    });
    const sixLeft: UnstampedCommand[] = [];
    requote(7, 'X', ladder, byLabel(order(4)), sixLeft);
    assert.deepEqual(sixLeft, []);
    const fourLeft: UnstampedCommand[] = [];
    requote(7, 'X', ladder, byLabel(order(6)), fourLeft);
    assert.deepEqual(fourLeft, [{ type: 'edit_order', accountId: 7, orderId: 'b0', price: 100, amount: 16 }]);
  });

  test('when every quote is forced to its price, one at its price but short by a lot is resized', () => {
    const commands: UnstampedCommand[] = [];
    const ladder = {
      quotes: [
        { side: 'buy' as const, level: 0, price: 99, amount: 5 },
        { side: 'sell' as const, level: 0, price: 100, amount: 5 },
        { side: 'buy' as const, level: 1, price: 98, amount: 10 },
      ],
      toleranceTicks: 1,
    };
    // 9 of 10 left at 98: left alone normally, resized once the crossing forces every quote.
    const deep: SimulatorOrder = {
      ...resting('b1', 'buy', 98, 1),
      amount: 10,
      label: quoteLabel('X', 'buy', 1),
    };
    requote(7, 'X', ladder, byLabel(resting('b0', 'buy', 100), resting('s0', 'sell', 105), deep), commands);
    assert.deepEqual(commands, [
      { type: 'edit_order', accountId: 7, orderId: 'b0', price: 99, amount: 5 },
      { type: 'edit_order', accountId: 7, orderId: 's0', price: 100, amount: 5 },
      { type: 'edit_order', accountId: 7, orderId: 'b1', price: 98, amount: 11 },
    ]);
  });
  test('moving a two-level ladder up past the old asks: each change is the first that clears the book as it stands', () => {
    const order = (orderId: string, side: 'buy' | 'sell', level: number, price: number): SimulatorOrder => ({
      ...resting(orderId, side, price),
      label: quoteLabel('X', side, level),
    });
    const book = [
      order('b0', 'buy', 0, 99),
      order('b1', 'buy', 1, 98),
      order('s0', 'sell', 0, 100),
      order('s1', 'sell', 1, 101),
    ];
    const ladder = {
      quotes: [
        { side: 'sell' as const, level: 0, price: 102, amount: 5 },
        { side: 'buy' as const, level: 1, price: 100, amount: 5 },
        { side: 'sell' as const, level: 1, price: 103, amount: 5 },
        { side: 'buy' as const, level: 0, price: 101, amount: 5 },
      ],
      toleranceTicks: 1,
    };
    const commands: UnstampedCommand[] = [];
    requote(7, 'X', ladder, byLabel(...book), commands);
    const moves = commands.map((command) =>
      command.type === 'edit_order' ? `${command.orderId}→${command.price}` : command.type,
    );
    // After s0 leaves 100 the asks stand at 101 and 102, so the bid moving to 100 clears them.
    assert.deepEqual(moves, ['s0→102', 'b1→100', 's1→103', 'b0→101']);
    const prices = new Map(book.map((resting) => [resting.orderId, resting.price]));
    for (const command of commands) {
      if (command.type !== 'edit_order' || typeof command.price !== 'number') continue;
      prices.set(command.orderId, command.price);
      const bid = Math.max(prices.get('b0')!, prices.get('b1')!);
      const ask = Math.min(prices.get('s0')!, prices.get('s1')!);
      assert.ok(bid < ask, `crossed after ${command.orderId}: ${bid} ≥ ${ask}`);
    }
  });
});
