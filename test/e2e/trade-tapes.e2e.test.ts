/**
 * Trade reads over a window through the sdk over the real engine: public/get_last_trades_by_currency
 * (the trades of every instrument filed under the currency, in time order, with the by-instrument
 * tape's window, count, sorting and hasMore) and Deribit's `*_and_time` user-trade methods.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { refusal } from '../support/refusal.ts';

const TAKER = 0;
const MAKER = 1;

describe('public/get_last_trades_by_currency over the real engine', () => {
  let harness: Harness;
  let engine: EngineVenue;
  /** The trades made, oldest first: [instrument, timestamp]. */
  const made: Array<[string, number]> = [];
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
    const future = (
      await harness.http(TAKER).call('public/get_instruments', { currency: 'BTC', kind: 'future' })
    )
      .map((instrument) => instrument.instrumentName)
      .find((name) => /^BTC-\d/.test(name))!;
    // Trades on two BTC instruments and one ETH one, alternating, one a second apart.
    const plan: Array<[string, string]> = [];
    for (let i = 0; i < 6; i++)
      plan.push(['BTC-PERPETUAL', '60000'], [future, '60000'], ['ETH-PERPETUAL', '3000']);
    for (const [instrumentName, price] of plan) {
      engine.clock.advance(1_000);
      await harness
        .http(MAKER)
        .call('private/sell', { instrumentName, quantity: '10', price, postOnly: true });
      await harness.http(TAKER).call('private/buy', { instrumentName, quantity: '10', type: 'market' });
      made.push([instrumentName, engine.now()]);
    }
  });
  after(() => harness.close());

  test('the newest trades of every instrument of the currency, newest first', async () => {
    const client = harness.http(TAKER);
    const btc = made.filter(([name]) => name.startsWith('BTC-'));
    const all = await client.call('public/get_last_trades_by_currency', { currency: 'BTC', count: 100 });
    assert.deepEqual(
      all.trades.map((trade) => [trade.instrumentName, trade.timestamp]),
      [...btc].reverse(),
    );
    assert.equal(all.hasMore, false);
    const page = await client.call('public/get_last_trades_by_currency', { currency: 'BTC' });
    assert.deepEqual(page.trades, all.trades.slice(0, 10));
    assert.equal(page.hasMore, true);
    // hasMore is exact at the edge: 12 BTC trades, 6 on each instrument.
    for (const [count, hasMore] of [
      [11, true],
      [12, false],
      [1000, false],
    ] as const) {
      const edge = await client.call('public/get_last_trades_by_currency', { currency: 'BTC', count });
      assert.deepEqual([edge.trades.length, edge.hasMore], [Math.min(count, 12), hasMore], String(count));
    }
    const any = await client.call('public/get_last_trades_by_currency', { currency: 'any', count: 100 });
    assert.deepEqual(
      any.trades.map((trade) => [trade.instrumentName, trade.timestamp]),
      [...made].reverse(),
    );
  });

  test('kind, time window and ascending order select as the by-instrument tape does', async () => {
    const client = harness.http(TAKER);
    const perps = await client.call('public/get_last_trades_by_currency', {
      currency: 'BTC',
      kind: 'future',
      count: 100,
    });
    assert.equal(perps.trades.length, 12, 'the perpetual and the dated future are both futures');
    const options = await client.call('public/get_last_trades_by_currency', {
      currency: 'BTC',
      kind: 'option',
    });
    assert.deepEqual(options, { trades: [], hasMore: false });
    const [start, end] = [made[3]![1], made[8]![1]];
    const window = await client.call('public/get_last_trades_by_currency', {
      currency: 'any',
      startTimestamp: start,
      endTimestamp: end,
      sorting: 'asc',
      count: 4,
    });
    assert.deepEqual(
      window.trades.map((trade) => [trade.instrumentName, trade.timestamp]),
      made.slice(3, 7),
      'the oldest four of the window, oldest first',
    );
    assert.equal(window.hasMore, true, 'six trades are in the window');
    await assert.rejects(
      client.call('public/get_last_trades_by_currency', { currency: 'XYZ' }),
      (error: unknown) => error instanceof ApiError && error.data?.field === 'currency',
    );
  });

  test('the _and_time user-trade methods are the user-trade reads with the window required', async () => {
    const client = harness.http(TAKER);
    const window = { startTimestamp: made[2]![1], endTimestamp: made[7]![1], sorting: 'asc' as const };
    const byTime = await client.call('private/get_user_trades_by_currency_and_time', {
      currency: 'BTC',
      ...window,
    });
    assert.deepEqual(
      byTime,
      await client.call('private/get_user_trades_by_currency', { currency: 'BTC', ...window }),
    );
    assert.deepEqual(
      byTime.trades.map((trade) => [trade.instrumentName, trade.timestamp]),
      made.slice(2, 8).filter(([name]) => name.startsWith('BTC-')),
    );
    const perp = await client.call('private/get_user_trades_by_instrument_and_time', {
      instrumentName: 'ETH-PERPETUAL',
      ...window,
    });
    assert.deepEqual(
      perp.trades.map((trade) => trade.timestamp),
      made
        .slice(2, 8)
        .filter(([name]) => name === 'ETH-PERPETUAL')
        .map(([, at]) => at),
    );
    const missing = await refusal(
      client.call('private/get_user_trades_by_currency_and_time', {
        currency: 'BTC',
        startTimestamp: 0,
      } as never),
    );
    assert.equal(missing.data?.field, 'endTimestamp', missing.message);
  });
});
