/**
 * Combo trades through the whole service (real SQLite read store, engine, gateway, typed sdk):
 * two accounts cross on a call spread's book. The positions go to the two legs (none on the
 * combo); user trades list the combo trade with its `legs` under the combo kinds and the leg
 * trades (with `comboId`/`comboTradeId`) under `option`, both under `any`; `user.trades` pushes
 * follow the same kinds. See docs/decisions.md, "Combo trades" and "Combo trades in user trades".
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { SubscriptionPush, Trade } from '../../sdk/types.ts';
import { callSpread } from '../support/combo-picks.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const TICK = 0.0001;

async function markOf(client: HttpClient, instrumentName: string): Promise<number> {
  return Number((await client.call('public/ticker', { instrumentName })).markPrice);
}

describe('combo trades: booked on the legs, listed and pushed as the combo trade and its leg trades', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService({ config: { simulator: false } });
  });
  after(() => running.close());

  test('two accounts cross on a call spread', async () => {
    const taker = running.http(0);
    const maker = running.http(1);
    const { combo, long, short } = await callSpread(taker);
    const socket = running.ws(0);
    await socket.connect();
    await socket.auth();
    const pushes: SubscriptionPush[] = [];
    const channels = ['user.trades.option.BTC', 'user.trades.option_combo.BTC', 'user.trades.any.any'];
    await socket.subscribe(channels, (push) => pushes.push(push));

    // The spread at its legs' marks' difference, on the tick.
    const net = (await markOf(taker, long)) - (await markOf(taker, short));
    const price = (Math.max(1, Math.round(net / TICK)) * TICK).toFixed(4);
    const resting = await maker.call('private/sell', { instrumentName: combo, quantity: '1', price });
    assert.equal(resting.order.orderState, 'open');
    const taken = await taker.call('private/buy', { instrumentName: combo, quantity: '1', price });
    assert.equal(taken.order.orderState, 'filled');

    // The order's answer: the combo trade, with its two leg trades.
    assert.equal(taken.trades.length, 1);
    const comboTrade = taken.trades[0]!;
    assert.equal(comboTrade.instrumentName, combo);
    assert.equal(comboTrade.side, 'buy');
    assert.equal(comboTrade.liquidity, 'T');
    assert.equal(comboTrade.comboId, undefined);
    assert.equal(comboTrade.comboTradeId, undefined);
    const legs = comboTrade.legs ?? [];
    assert.deepEqual(
      legs.map((leg) => [leg.instrumentName, leg.side, leg.quantity, leg.orderId, leg.liquidity]),
      [
        [long, 'buy', '1', taken.order.orderId, 'T'],
        [short, 'sell', '1', taken.order.orderId, 'T'],
      ],
    );
    for (const leg of legs) {
      assert.equal(leg.comboId, combo);
      assert.equal(leg.comboTradeId, comboTrade.tradeId);
      assert.notEqual(leg.tradeId, comboTrade.tradeId);
    }
    const sum = (values: string[]) => values.reduce((total, value) => total + Number(value), 0);
    assert.ok(
      Math.abs(sum(legs.map((leg) => leg.fee)) - Number(comboTrade.fee)) < 1e-12,
      'the combo fee is the legs',
    );
    assert.ok(Math.abs(Number(legs[0]!.price) - Number(legs[1]!.price) - Number(price)) < 1e-12);

    // Positions on the legs, none on the combo.
    const positions = async (client: HttpClient) =>
      Object.fromEntries(
        (await client.call('private/get_positions', { currency: 'BTC' }))
          .filter((p) => p.size !== '0')
          .map((p) => [p.instrumentName, p.size]),
      );
    assert.deepEqual(await positions(taker), { [long]: '1', [short]: '-1' });
    assert.deepEqual(await positions(maker), { [long]: '-1', [short]: '1' });
    assert.equal((await taker.call('private/get_position', { instrumentName: long })).size, '1');
    const comboCalls = [
      ['private/get_position', { instrumentName: combo }],
      ['private/close_position', { instrumentName: combo, type: 'market' }],
    ] as const;
    for (const [method, params] of comboCalls) {
      await assert.rejects(
        taker.call(method, params as never),
        (error: unknown) =>
          error instanceof ApiError &&
          error.errorName === 'invalid_instrument' &&
          (error.data as { field?: string }).field === 'instrumentName',
        `${method} of the combo`,
      );
    }

    // Margined as the spreads they are (docs/decisions.md, "Option spread offsets"): the bought
    // spread needs none; the sold one needs its width at the higher strike, in coin, not 15%.
    const [low, high] = [long, short].map((name) => Number(name.split('-')[2]));
    const summary = (client: HttpClient) => client.call('private/get_account_summary', { currency: 'BTC' });
    const bought = await summary(taker);
    const sold = await summary(maker);
    assert.equal(bought.maintenanceMargin, '0');
    assert.equal(Number(sold.maintenanceMargin), Math.ceil((1e8 * (high! - low!)) / high!) / 1e8);
    for (const account of [bought, sold]) {
      assert.ok(Number(account.marginBalance) <= Number(account.equity));
      assert.ok(
        Math.abs(
          Number(account.availableFunds) - (Number(account.marginBalance) - Number(account.initialMargin)),
        ) < 1e-9,
      );
    }

    // User trades: which kind finds which.
    const listed = async (client: HttpClient, kind?: 'option' | 'option_combo' | 'combo' | 'any') =>
      (
        await client.call('private/get_user_trades_by_currency', {
          currency: 'BTC',
          ...(kind === undefined ? {} : { kind }),
        })
      ).trades;
    const ids = (trades: Trade[]) => trades.map((trade) => trade.tradeId).sort();
    const legIds = legs.map((leg) => leg.tradeId);
    const everything = [comboTrade.tradeId, ...legIds].sort();
    assert.deepEqual(ids(await listed(taker)), everything);
    assert.deepEqual(ids(await listed(taker, 'any')), everything);
    assert.deepEqual(ids(await listed(taker, 'option')), [...legIds].sort());
    for (const kind of ['option_combo', 'combo'] as const) {
      const [found, ...rest] = await listed(taker, kind);
      assert.deepEqual(rest, []);
      assert.deepEqual(found, comboTrade, `${kind}: the combo trade as the order's answer showed it`);
    }
    const legTrades = await listed(taker, 'option');
    for (const leg of legs) {
      assert.deepEqual(
        legTrades.find((trade) => trade.tradeId === leg.tradeId),
        leg,
      );
    }
    const makerCombo = (await listed(maker, 'combo'))[0]!;
    assert.deepEqual(
      makerCombo.legs?.map((leg) => [leg.instrumentName, leg.side, leg.liquidity]),
      [
        [long, 'sell', 'M'],
        [short, 'buy', 'M'],
      ],
    );

    // The pushes: the combo trade (with legs) on the combo kinds, the leg trades on the legs'.
    const pushed = (channel: string) =>
      pushes
        .filter((push) => push.channel === channel && !push.snapshot)
        .flatMap((push) => push.data as Trade[]);
    await until(() => pushed('user.trades.any.any').length === 3);
    assert.deepEqual(pushed('user.trades.option_combo.BTC'), [comboTrade]);
    assert.deepEqual(ids(pushed('user.trades.option.BTC')), [...legIds].sort());
    assert.deepEqual(pushed('user.trades.option.BTC'), legs);
    assert.deepEqual(ids(pushed('user.trades.any.any')), everything);
    socket.close();
  });
});
