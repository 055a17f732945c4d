/**
 * One position (private/get_position), closing it (private/close_position) and the book summary of
 * a currency (public/get_book_summary_by_currency), through the typed client over the real engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { refusalParts as refusal } from '../support/refusal.ts';

const PERP = 'BTC-PERPETUAL';
const TAKER = 0;
const MAKER = 1;

describe('positions: get_position, close_position; the book summary; account summaries', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  const rest = (side: 'buy' | 'sell', quantity: string, price: string) =>
    harness.http(MAKER).call(`private/${side}`, { instrumentName: PERP, quantity, price, postOnly: true });

  test('a position never held is flat, at the mark; a held one is the one get_positions lists', async () => {
    const taker = harness.http(TAKER);
    const flat = await taker.call('private/get_position', { instrumentName: PERP });
    assert.deepEqual(
      {
        direction: flat.direction,
        size: flat.size,
        averagePrice: flat.averagePrice,
        markPrice: flat.markPrice,
      },
      { direction: 'zero', size: '0', averagePrice: '0', markPrice: '60000' },
    );
    assert.equal(flat.floatingProfitLoss, '0');

    await rest('sell', '100', '60000');
    await taker.call('private/buy', { instrumentName: PERP, quantity: '100', type: 'market' });
    const held = await taker.call('private/get_position', { instrumentName: PERP });
    assert.equal(held.direction, 'buy');
    assert.equal(held.size, '100');
    const listed = (await taker.call('private/get_positions', {})).find((p) => p.instrumentName === PERP);
    assert.deepEqual(held, listed);
  });

  test('close_position refuses what it cannot close, naming the field', async () => {
    const taker = harness.http(TAKER);
    assert.deepEqual(
      await refusal(taker.call('private/close_position', { instrumentName: PERP, type: 'limit' })),
      {
        name: 'value_required',
        field: 'price',
        message: 'price is required with type limit',
      },
    );
    const priced = await refusal(
      taker.call('private/close_position', { instrumentName: PERP, type: 'market', price: '60000' }),
    );
    assert.deepEqual([priced.name, priced.field], ['invalid_params', 'price']);
    const unknown = await refusal(
      taker.call('private/close_position', { instrumentName: 'BTC-NOPE', type: 'market' }),
    );
    assert.deepEqual([unknown.name, unknown.field], ['invalid_instrument', 'instrumentName']);
    const type = await refusal(
      taker.call('private/close_position', { instrumentName: PERP, type: 'stop_market' } as never),
    );
    assert.equal(type.field, 'type');
    // A maker with no ETH position has nothing to close there.
    const none = await refusal(
      harness.http(3).call('private/close_position', { instrumentName: 'ETH-PERPETUAL', type: 'market' }),
    );
    assert.deepEqual([none.name, none.field], ['not_found', 'instrumentName']);
  });

  test('a market close sells a long away with a reduce-only order; the position is flat after', async () => {
    const taker = harness.http(TAKER);
    const before = await taker.call('private/get_position', { instrumentName: PERP });
    assert.equal(before.size, '100');
    await rest('buy', '300', '59990');
    const closed = await taker.call('private/close_position', { instrumentName: PERP, type: 'market' });
    assert.equal(closed.order.side, 'sell');
    assert.equal(closed.order.reduceOnly, true);
    assert.equal(closed.order.orderType, 'market');
    assert.equal(closed.order.quantity, '100');
    assert.equal(closed.order.filledQuantity, '100');
    assert.deepEqual(
      closed.trades.map((t) => [t.side, t.price, t.quantity]),
      [['sell', '59990', '100']],
    );
    const after = await taker.call('private/get_position', { instrumentName: PERP });
    assert.equal(after.direction, 'zero');
    assert.equal(after.size, '0');
    // A closed position keeps what it realised (bought at 60000, sold at 59990: a loss).
    assert.equal(after.realizedProfitLoss, closed.trades[0]!.profitLoss);
    assert.match(after.realizedProfitLoss, /^-0\.0000/);
    assert.equal(after.floatingProfitLoss, '0');
    const again = await refusal(
      taker.call('private/close_position', { instrumentName: PERP, type: 'market' }),
    );
    assert.deepEqual([again.name, again.field], ['not_found', 'instrumentName']);
  });

  test('a limit close of a short buys it back at the price, resting until it fills', async () => {
    const taker = harness.http(TAKER);
    // The bid left resting above takes the taker short.
    await taker.call('private/sell', { instrumentName: PERP, quantity: '50', type: 'market' });
    assert.equal((await taker.call('private/get_position', { instrumentName: PERP })).size, '-50');
    const closing = await taker.call('private/close_position', {
      instrumentName: PERP,
      type: 'limit',
      price: '59980',
    });
    assert.deepEqual(
      [closing.order.side, closing.order.orderState, closing.order.reduceOnly, closing.order.price],
      ['buy', 'open', true, '59980'],
    );
    assert.equal((await taker.call('private/get_position', { instrumentName: PERP })).size, '-50');
    // The maker's bids out of the way, its sell at the price fills the close.
    await harness.http(MAKER).call('private/cancel_all', {});
    await harness.http(MAKER).call('private/sell', { instrumentName: PERP, quantity: '50', price: '59980' });
    assert.equal(
      (await taker.call('private/get_order_state', { orderId: closing.order.orderId })).orderState,
      'filled',
    );
    assert.equal((await taker.call('private/get_position', { instrumentName: PERP })).direction, 'zero');
  });

  test('the book summary lists every instrument of the currency, with the book’s best prices and an exact mid', async () => {
    const client = harness.http(TAKER);
    await harness.http(MAKER).call('private/cancel_all', {});
    await rest('buy', '10', '59990');
    await rest('sell', '10', '59990.5');
    const lines = await client.call('public/get_book_summary_by_currency', { currency: 'BTC' });
    const listed = await client.call('public/get_instruments', { currency: 'BTC' });
    assert.deepEqual(lines.map((l) => l.instrumentName).sort(), listed.map((i) => i.instrumentName).sort());
    const perp = lines.find((l) => l.instrumentName === PERP)!;
    const book = await client.call('public/get_order_book', { instrumentName: PERP });
    assert.deepEqual(
      [perp.bidPrice, perp.askPrice, perp.midPrice, perp.markPrice],
      [book.bestBidPrice, book.bestAskPrice, '59990.25', '60000'],
    );
    assert.equal(perp.baseCurrency, 'BTC');
    assert.equal(perp.estimatedDeliveryPrice, '60000');
    assert.equal(perp.last, '59980');
    assert.equal(perp.markIv, undefined, 'a future has no IV');
    const option = lines.find((l) => /-[CP]$/.test(l.instrumentName))!;
    assert.ok('markIv' in option && 'underlyingPrice' in option, 'an option line has its IV and underlying');
    assert.equal(option.midPrice, null, 'no bid and ask: no mid');

    const futures = await client.call('public/get_book_summary_by_currency', {
      currency: 'btc',
      kind: 'future',
    });
    assert.ok(futures.length > 0 && futures.every((l) => !/-[CP]$/.test(l.instrumentName)));
    const unknown = await refusal(client.call('public/get_book_summary_by_currency', { currency: 'XYZ' }));
    assert.deepEqual([unknown.name, unknown.field], ['invalid_params', 'currency']);
  });

  test("the account summary's parts: equity = balance + futuresPl + optionsValue, each side of an option trade", async () => {
    const option = engine.venue
      .listedInstruments(false)
      .find((i) => i.kind === 'option' && i.spec.settlementCurrency === 'BTC')!;
    const maker = harness.http(MAKER);
    await maker.call('private/sell', {
      instrumentName: option.name,
      quantity: '1',
      price: '0.05',
      postOnly: true,
    });
    await harness
      .http(TAKER)
      .call('private/buy', { instrumentName: option.name, quantity: '1', type: 'market' });
    const mark = option.parsePrice('0.07');
    assert.ok(
      (
        await engine.submit({
          type: 'update_prices',
          markPrices: [{ instrumentName: option.name, markPrice: mark }],
        })
      ).ok,
    );
    // Exact decimal sums: scaled to integers of the finest place any field shows.
    const scaled = (text: string) =>
      BigInt(text.replace('.', '').replace(/^(-?)0+(?=\d)/, '$1')) *
      10n ** BigInt(12 - (text.split('.')[1]?.length ?? 0));
    for (const [who, client] of [
      ['taker', harness.http(TAKER)],
      ['maker', maker],
    ] as const) {
      const summary = await client.call('private/get_account_summary', { currency: 'BTC' });
      assert.equal(
        scaled(summary.equity),
        scaled(summary.balance) + scaled(summary.futuresPl) + scaled(summary.optionsValue),
        `${who}: ${JSON.stringify(summary)}`,
      );
      assert.equal(scaled(summary.totalPl), scaled(summary.futuresPl) + scaled(summary.optionsPl));
      const positions = await client.call('private/get_positions', { currency: 'BTC' });
      const sum = (kind: 'option' | 'future') =>
        positions
          .filter((p) => p.kind === kind)
          .reduce((total, p) => total + scaled(p.floatingProfitLoss ?? '0'), 0n);
      assert.equal(scaled(summary.optionsPl), sum('option'), who);
      assert.equal(scaled(summary.futuresPl), sum('future'), who);
    }
    // 1 BTC of the option at 0.07: the long holds 0.07 BTC of it, up 0.02; the short owes it.
    const taker = await harness.http(TAKER).call('private/get_account_summary', { currency: 'BTC' });
    assert.deepEqual([taker.optionsValue, taker.optionsPl], ['0.07', '0.02']);
    const short = await maker.call('private/get_account_summary', { currency: 'BTC' });
    assert.deepEqual([short.optionsValue, short.optionsPl], ['-0.07', '-0.02']);
  });

  test('get_margins: what each side would reserve, which placing the order then takes; the band', async () => {
    const client = harness.http(2);
    await client.call('private/cancel_all', {});
    const margins = await client.call('private/get_margins', {
      instrumentName: PERP,
      quantity: '1000',
      price: '59500',
    });
    assert.deepEqual([margins.buyCurrency, margins.sellCurrency], ['BTC', 'BTC']);
    assert.ok(Number(margins.buy) > 0 && Number(margins.sell) > 0);
    assert.ok(
      Number(margins.minPrice) < 59_500 && Number(margins.maxPrice) > 60_000,
      JSON.stringify(margins),
    );
    const summary = () => client.call('private/get_account_summary', { currency: 'BTC' });
    const before = await summary();
    const placed = await client.call('private/buy', {
      instrumentName: PERP,
      quantity: '1000',
      price: '59500',
    });
    const after = await summary();
    const reserved = (Number(after.initialMargin) * 1e8 - Number(before.initialMargin) * 1e8).toFixed(0);
    assert.equal(reserved, (Number(margins.buy) * 1e8).toFixed(0));
    await client.call('private/cancel', { orderId: placed.order.orderId });
    // The size in contracts is the same order; a size off the grid, or a missing price, is refused.
    const inContracts = await client.call('private/get_margins', {
      instrumentName: PERP,
      contracts: '100',
      price: '59500',
    });
    assert.deepEqual(inContracts, margins);
    const offGrid = await refusal(
      client.call('private/get_margins', { instrumentName: PERP, quantity: '15', price: '59500' }),
    );
    assert.equal(offGrid.field, 'quantity');
    const noPrice = await refusal(
      client.call('private/get_margins', { instrumentName: PERP, quantity: '10' } as never),
    );
    assert.equal(noPrice.field, 'price');
    // A price no order could have is refused as placing refuses it.
    for (const price of ['0', '-60000', '59500.3']) {
      const refused = await refusal(
        client.call('private/get_margins', { instrumentName: PERP, quantity: '10', price }),
      );
      const placed = await refusal(
        client.call('private/buy', { instrumentName: PERP, quantity: '10', price }),
      );
      assert.deepEqual([refused.name, refused.field], [placed.name, 'price'], price);
    }
  });

  test('one instrument: its book summary line and its get_instruments entry; the index names', async () => {
    const client = harness.http(TAKER);
    const [line] = await client.call('public/get_book_summary_by_instrument', { instrumentName: PERP });
    const lines = await client.call('public/get_book_summary_by_currency', { currency: 'BTC' });
    assert.deepEqual(
      line,
      lines.find((l) => l.instrumentName === PERP),
    );
    const instrument = await client.call('public/get_instrument', { instrumentName: PERP });
    const listed = await client.call('public/get_instruments', { currency: 'any' });
    assert.deepEqual(
      instrument,
      listed.find((i) => i.instrumentName === PERP),
    );
    assert.equal(instrument.isActive, true);
    for (const method of ['public/get_instrument', 'public/get_book_summary_by_instrument'] as const) {
      const unknownInstrument = await refusal(client.call(method, { instrumentName: 'BTC-NOPE' }));
      assert.deepEqual(
        [unknownInstrument.name, unknownInstrument.field],
        ['invalid_instrument', 'instrumentName'],
      );
    }
    const names = await client.call('public/get_index_price_names', {});
    assert.ok(names.includes('btc_usd'), names.join());
    for (const indexName of names) await client.call('public/get_index_price', { indexName });
  });

  test('get_account_summaries: the account in every currency, each as get_account_summary answers', async () => {
    const client = harness.http(TAKER);
    const all = await client.call('private/get_account_summaries', {});
    const currencies = all.summaries.map((summary) => summary.currency);
    assert.ok(
      ['BTC', 'ETH', 'USDC'].every((currency) => currencies.includes(currency)),
      currencies.join(),
    );
    for (const summary of all.summaries) {
      assert.equal(summary.accountId, all.accountId);
      assert.deepEqual(
        summary,
        await client.call('private/get_account_summary', { currency: summary.currency }),
      );
    }
    const other = await harness.http(MAKER).call('private/get_account_summaries', {});
    assert.notEqual(other.accountId, all.accountId, "each key reads its own user's account");
  });
});
