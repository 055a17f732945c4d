/**
 * The settlement history through the whole service (real SQLite read store, engine, market on a
 * virtual clock, typed sdk): an option traded between two accounts is held to its expiry, the
 * market settles it, and each side's settlement entry explains its balance change exactly, in
 * exact decimals: the payoff at the settlement index, rounded against the holder. See
 * docs/decisions.md, "Settlement history".
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { InstrumentInfo, Transaction, TransactionLog } from '../../sdk/types.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';

/** Satoshi (BTC minor units) of a decimal string, exactly; refuses finer decimals. */
function sat(text: string): bigint {
  const [whole, fraction = ''] = text.replace(/^-/, '').split('.');
  assert.ok(fraction.length <= 8, `${text} has at most 8 decimals`);
  const units = BigInt(whole!) * 100_000_000n + BigInt(fraction.padEnd(8, '0'));
  return text.startsWith('-') ? -units : units;
}

/** A decimal string as units × 10^-scale. */
function scaled(text: string): { units: bigint; scale: number } {
  const [whole, fraction = ''] = text.split('.');
  return { units: BigInt(`${whole}${fraction}`), scale: fraction.length };
}

/** The price on the tick grid of the instrument nearest `price`. */
function onGrid(instrument: InstrumentInfo, price: number): string {
  let tick = Number(instrument.tickSize);
  for (const step of instrument.tickSizeSteps)
    if (price > Number(step.abovePrice)) tick = Number(step.tickSize);
  const decimals = instrument.tickSize.split('.')[1]?.length ?? 0;
  return (Math.max(1, Math.round(price / tick)) * tick).toFixed(decimals);
}

async function btcBalance(client: HttpClient): Promise<bigint> {
  return sat((await client.call('private/get_account_summary', { currency: 'BTC' })).balance);
}

/** Moves the virtual clock a market tick at a time past `to`, each tick's commands durable. */
async function advanceTo(running: TestService, to: number): Promise<void> {
  const settle = async () => {
    await running.service.market.idle();
    await running.service.core.drain();
  };
  // One jump to just before, then seconds: the tick after the expiry settles it.
  const now = running.service.core.now();
  if (to - now > 2_000) {
    running.clock.advance(to - now - 1_000);
    await settle();
  }
  while (running.service.core.now() <= to + 1_000) {
    running.clock.advance(1_000);
    await settle();
  }
}

describe('settlement history and transaction log: what an expiry booked, through the typed client', () => {
  let running: TestService;
  before(async () => {
    running = await startTestService({ config: { simulator: false } });
  });
  after(() => running.close());

  test('a long and a short inverse call held to expiry: each entry is the balance change, to the satoshi', async () => {
    const taker = running.http(0);
    const maker = running.http(1);
    const options = (await taker.call('public/get_instruments', { currency: 'BTC', kind: 'option' })).filter(
      (i) => i.instrumentName.startsWith('BTC-') && i.optionType === 'call' && i.settlementCurrency === 'BTC',
    );
    const expiry = Math.min(...options.map((i) => i.expiration!));
    // The lowest strike of the nearest expiry: deep in the money, so the settlement pays.
    const call = options
      .filter((i) => i.expiration === expiry)
      .sort((a, b) => Number(a.strike) - Number(b.strike))[0]!;
    const name = call.instrumentName;
    const mark = Number((await taker.call('public/ticker', { instrumentName: name })).markPrice);
    const price = onGrid(call, mark);
    await maker.call('private/sell', { instrumentName: name, quantity: '1', price, postOnly: true });
    const bought = await taker.call('private/buy', { instrumentName: name, quantity: '1', price });
    assert.equal(bought.order.orderState, 'filled');
    assert.equal(sat(bought.trades[0]!.price), sat(price));

    const before = { taker: await btcBalance(taker), maker: await btcBalance(maker) };
    assert.deepEqual(
      (await taker.call('private/get_settlement_history_by_instrument', { instrumentName: name }))
        .settlements,
      [],
      'nothing settled yet',
    );

    await advanceTo(running, expiry);
    const expired = await taker.call('public/get_instruments', {
      currency: 'BTC',
      kind: 'option',
      expired: true,
    });
    assert.ok(
      expired.some((i) => i.instrumentName === name),
      'the option expired',
    );

    const premium = sat(price);
    for (const [who, client, sign] of [
      ['taker', taker, 1n],
      ['maker', maker, -1n],
    ] as const) {
      const page = await client.call('private/get_settlement_history_by_currency', { currency: 'BTC' });
      assert.equal(page.continuation, null);
      assert.equal(page.settlements.length, 1, `${who}: ${JSON.stringify(page)}`);
      const entry = page.settlements[0]!;
      assert.equal(entry.type, 'delivery');
      assert.equal(entry.instrumentName, name);
      assert.equal(entry.position, sign > 0n ? '1' : '-1');
      assert.equal(entry.currency, 'BTC');
      assert.ok(entry.timestamp >= expiry, 'settled at or after the expiry');
      assert.ok(entry.indexPrice !== null, 'settled against the settlement index');

      // The balance moved by the entry's cashflow, exactly: no other change since the trade.
      const after = await btcBalance(client);
      assert.equal(after - before[who], sat(entry.cashflow), `${who}: the balance change is the cashflow`);

      // The cashflow is the payoff at the index, (S − K) / S of 1 BTC, rounded against the holder:
      // the long receives it rounded down, the short pays it rounded up.
      const index = scaled(entry.indexPrice);
      const strike = BigInt(call.strike!) * 10n ** BigInt(index.scale);
      const numerator = (index.units - strike) * 100_000_000n;
      assert.ok(numerator > 0n, 'in the money');
      const floor = numerator / index.units;
      const ceil = floor + (numerator % index.units === 0n ? 0n : 1n);
      assert.equal(sat(entry.cashflow), sign > 0n ? floor : -ceil, `${who}: the payoff`);
      // Realised: the payoff less the premium paid (long), the premium received less it (short).
      assert.equal(sat(entry.profitLoss), sat(entry.cashflow) - sign * premium, `${who}: profitLoss`);

      // By instrument the same entry; the filters that find none.
      const byInstrument = await client.call('private/get_settlement_history_by_instrument', {
        instrumentName: name,
      });
      assert.deepEqual(byInstrument.settlements, [entry]);
      for (const params of [
        { currency: 'BTC', type: 'settlement' as const },
        { currency: 'ETH' },
        { currency: 'BTC', searchStartTimestamp: entry.timestamp - 1 },
      ]) {
        const none = await client.call('private/get_settlement_history_by_currency', params);
        assert.deepEqual(none.settlements, [], JSON.stringify(params));
      }
    }
    // Each key sees its own account's entry only: the taker's is long, the maker's short.
    const third = await running
      .http(2)
      .call('private/get_settlement_history_by_currency', { currency: 'BTC' });
    assert.deepEqual(third.settlements, []);

    // The transaction log explains every change of each BTC balance: walked oldest first, each
    // balance is the one before plus the change, from the first deposit to the balance now.
    const now = running.service.core.now();
    for (const [who, client, sign] of [
      ['taker', taker, 1n],
      ['maker', maker, -1n],
    ] as const) {
      const logs: Transaction[] = [];
      let continuation: string | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const page: TransactionLog = await client.call('private/get_transaction_log', {
          currency: 'BTC',
          startTimestamp: 0,
          endTimestamp: now,
          count: 2,
          continuation,
        });
        logs.push(...page.logs);
        continuation = page.continuation;
        if (continuation === null) break;
      }
      logs.reverse();
      assert.equal(logs[0]!.type, 'deposit', `${who}: the account starts with its deposit`);
      let balance = 0n;
      for (const log of logs) {
        balance += sat(log.change);
        assert.equal(sat(log.balance), balance, `${who}: ${JSON.stringify(log)}`);
        assert.equal(
          sat(log.change),
          sat(log.cashflow) - sat(log.commission),
          `${who}: change = cashflow − fee`,
        );
      }
      assert.equal(balance, await btcBalance(client), `${who}: the log ends at the balance`);

      // The option's trade: the premium paid (received) less the fee the trade shows.
      const traded = logs.filter((log) => log.type === 'trade' && log.instrumentName === name);
      assert.equal(traded.length, 1, who);
      const tradeLog = traded[0]!;
      const ownTrade = (
        await client.call('private/get_user_trades_by_instrument', { instrumentName: name, historical: true })
      ).trades[0]!;
      assert.equal(tradeLog.tradeId, ownTrade.tradeId);
      assert.equal(tradeLog.orderId, ownTrade.orderId);
      assert.equal(tradeLog.side, sign > 0n ? 'buy' : 'sell');
      assert.equal(sat(tradeLog.commission), sat(ownTrade.fee));
      assert.equal(sat(tradeLog.cashflow), -sign * premium);
      // The delivery: the settlement history's cashflow, the last change.
      const delivery = logs.at(-1)!;
      assert.equal(delivery.type, 'delivery');
      const [settled] = (
        await client.call('private/get_settlement_history_by_instrument', { instrumentName: name })
      ).settlements;
      assert.deepEqual(
        [
          delivery.instrumentName,
          delivery.change,
          delivery.position,
          delivery.indexPrice,
          delivery.profitLoss,
        ],
        [name, settled!.cashflow, settled!.position, settled!.indexPrice, settled!.profitLoss],
      );
      assert.equal(sat(delivery.commission), 0n);
      const only = await client.call('private/get_transaction_log', {
        currency: 'BTC',
        startTimestamp: 0,
        endTimestamp: now,
        query: 'delivery option',
      });
      assert.deepEqual(only.logs, [delivery]);
    }
  });

  test('bad paging is refused as invalid_params naming the field', async () => {
    const client = running.http(0);
    await assert.rejects(
      client.call('private/get_settlement_history_by_currency', { currency: 'BTC', continuation: 'nope' }),
      (error: unknown) =>
        error instanceof Error &&
        'errorName' in error &&
        (error as { errorName: string }).errorName === 'invalid_params',
    );
    await assert.rejects(
      client.call('private/get_settlement_history_by_currency', { currency: 'BTC', count: 1001 }),
      (error: unknown) => error instanceof Error && /count/.test(error.message),
    );
    const log = { currency: 'BTC', startTimestamp: 0, endTimestamp: 1 };
    for (const [params, field] of [
      [{ ...log, query: 'funding' }, 'query'],
      [{ ...log, continuation: '1:x' }, 'continuation'],
    ] as const) {
      await assert.rejects(client.call('private/get_transaction_log', params), (error: unknown) => {
        const data = (error as { data?: { field?: unknown } }).data;
        return (error as { errorName?: string }).errorName === 'invalid_params' && data?.field === field;
      });
    }
    await assert.rejects(
      client.call('private/get_settlement_history_by_instrument', { instrumentName: 'BTC-NOPE' }),
      (error: unknown) => error instanceof Error && /unknown instrument/.test(error.message),
    );
  });
});
