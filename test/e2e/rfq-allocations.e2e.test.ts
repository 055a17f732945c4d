/**
 * A Block RFQ's allocations on the trades it books, through the whole service (real SQLite read
 * store, engine, RFQ desk, gateway, typed sdk): the taker's trades carry the RFQ's
 * `tradeAllocations` (as the RFQ shows them) in get_user_trades_by_currency / _by_instrument,
 * in `user.trades` pushes and after a restart; the maker's never do, nor do other trades.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SubscriptionPush, Trade } from '../../sdk/types.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

describe('Block RFQ allocations on the trades', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService({ config: { simulator: false } });
  });
  after(() => running.close());

  test("the taker's trades carry the RFQ's allocations; the maker's do not", async () => {
    const taker = running.http(0);
    const maker = running.http(1);
    assert.equal(running.credentials[1]!.deskName, 'MAKER1');
    const takerUser = running.credentials[0]!.userId;
    const calls = (await taker.call('public/get_instruments', { currency: 'BTC', kind: 'option' }))
      .filter((i) => i.optionType === 'call' && i.instrumentName.startsWith('BTC-'))
      .sort((a, b) => a.expiration! - b.expiration! || Number(a.strike) - Number(b.strike));
    const [low, high] = calls.filter((i) => i.expiration === calls.at(-1)!.expiration);
    const call70 = low!.instrumentName;
    const call75 = high!.instrumentName;

    const sockets = [running.ws(0), running.ws(1)];
    const pushes: SubscriptionPush[][] = [[], []];
    for (const [i, socket] of sockets.entries()) {
      await socket.connect();
      await socket.auth();
      await socket.subscribe(['user.trades.option.BTC'], (push) => pushes[i]!.push(push));
    }

    // A plain trade between the two first: it carries no allocations.
    const perpetual = 'BTC-PERPETUAL';
    const mark = Number((await taker.call('public/ticker', { instrumentName: perpetual })).markPrice);
    const price = String(Math.round(mark));
    await maker.call('private/sell', { instrumentName: perpetual, quantity: '10', price });
    const plain = await taker.call('private/buy', { instrumentName: perpetual, quantity: '10', price });
    assert.equal(plain.trades.length, 1);
    assert.equal('tradeAllocations' in plain.trades[0]!, false);

    const clientInfo = { clientId: 7, clientLinkId: 8, name: 9 };
    const allocations = [
      { amount: '10', userId: takerUser },
      { amount: '5', clientInfo },
    ];
    const rfq = (await taker.call('block/rfqs/create_rfq', {
      legs: [
        { instrumentName: call70, quantity: '25', side: 'buy' },
        { instrumentName: call75, quantity: '25', side: 'sell' },
      ],
      makers: ['MAKER1'],
      tradeAllocations: allocations,
    })) as { blockRfqId: string; tradeAllocations: unknown[] };
    assert.deepEqual(rfq.tradeAllocations, allocations);
    running.clock.advance(5_000);
    let makerRfqId = '';
    for (let i = 0; i < 100 && makerRfqId === ''; i++) {
      const open = (await maker.call('block/rfqs/get_rfqs', { status: 'open' })) as {
        results: { blockRfqId: string }[];
      };
      makerRfqId = open.results[0]?.blockRfqId ?? '';
    }
    assert.notEqual(makerRfqId, '', 'the RFQ opened');
    await maker.call('block/rfqs/create_quote', {
      blockRfqId: makerRfqId,
      executionInstruction: 'any_part_of',
      side: 'sell',
      quantity: '25',
      legs: [
        { instrumentName: call70, price: '0.05', ratio: '1', side: 'buy' },
        { instrumentName: call75, price: '0.03', ratio: '1', side: 'sell' },
      ],
    });
    const accepted = (await taker.call('block/rfqs/accept', {
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: '0.02',
    })) as { blockTrades: { tradeIds: string[] }[] };
    const rfqTradeIds = accepted.blockTrades.flatMap((b) => b.tradeIds).sort();
    // The allocation to the taker's own user and the rest are two blocks of two legs each.
    assert.equal(rfqTradeIds.length, 4);

    const own = async (client: typeof taker, params: { currency: 'BTC' } | { instrumentName: string }) => {
      const page =
        'currency' in params
          ? await client.call('private/get_user_trades_by_currency', { ...params, count: 100 })
          : await client.call('private/get_user_trades_by_instrument', { ...params, count: 100 });
      return (page.trades as Trade[]).sort((a, b) => a.tradeId.localeCompare(b.tradeId));
    };
    const fromRfq = (trades: Trade[]) => trades.filter((t) => rfqTradeIds.includes(t.tradeId));
    let takerTrades: Trade[] = [];
    for (let i = 0; i < 200 && fromRfq(takerTrades).length < 4; i++) {
      takerTrades = await own(taker, { currency: 'BTC' });
    }
    assert.deepEqual(
      fromRfq(takerTrades).map((t) => t.tradeId),
      rfqTradeIds,
    );
    for (const trade of takerTrades) {
      if (rfqTradeIds.includes(trade.tradeId)) {
        assert.equal(trade.blockRfqId, rfq.blockRfqId);
        assert.deepEqual(trade.tradeAllocations, allocations, trade.tradeId);
      } else {
        assert.equal('tradeAllocations' in trade, false, `${trade.tradeId} is not from the RFQ`);
      }
    }
    const byInstrument = fromRfq(await own(taker, { instrumentName: call75 }));
    assert.equal(byInstrument.length, 2);
    for (const trade of byInstrument) assert.deepEqual(trade.tradeAllocations, allocations);

    // The maker's view of the same trades: never the allocations.
    const makerTrades = fromRfq(await own(maker, { currency: 'BTC' }));
    assert.deepEqual(
      makerTrades.map((t) => t.tradeId),
      rfqTradeIds,
    );
    for (const trade of makerTrades) {
      assert.equal(trade.blockRfqId, makerRfqId);
      assert.equal('tradeAllocations' in trade, false);
    }

    // The pushes: the taker's carry them, the maker's do not.
    const pushed = (i: number) =>
      pushes[i]!.flatMap((push) => push.data as Trade[]).filter((t) => rfqTradeIds.includes(t.tradeId));
    await until(() => pushed(0).length === 4 && pushed(1).length === 4);
    for (const trade of pushed(0)) assert.deepEqual(trade.tradeAllocations, allocations);
    for (const trade of pushed(1)) assert.equal('tradeAllocations' in trade, false);

    // After a restart (the RFQ's trades from the read store, the core from its snapshot).
    for (const socket of sockets) socket.close();
    running = await running.restart();
    const again = await own(running.http(0), { currency: 'BTC' });
    assert.deepEqual(again, takerTrades);
    for (const trade of fromRfq(await own(running.http(1), { currency: 'BTC' })))
      assert.equal('tradeAllocations' in trade, false);
  });
});
