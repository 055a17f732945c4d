/**
 * Pushes while the journal stalls, on the whole service with its journal on PostgreSQL (stop 45):
 * the server stops answering (SIGSTOP, as service-pg-hang does) while commands wait for their
 * group commit. Nothing is pushed or answered meanwhile; once the server answers again, every
 * push arrives, each command's before its answer, with each channel's seq gap-free.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { freezePostgres } from '../support/pg-freeze.ts';
import { startPostgres } from '../support/postgres.ts';
import { startTestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const postgres = await startPostgres();
after(() => postgres?.stop());

const PERP = 'BTC-PERPETUAL';
const CHANNELS = ['user.orders.any.BTC', 'user.trades.future.BTC', 'user.changes.future.BTC'];

test('journal on PostgreSQL, server hung for a moment: pushes wait for durability, then all come in order', {
  skip: postgres === null && 'PostgreSQL is not installed',
}, async () => {
  const databaseUrl = await postgres!.createDatabase(`stall_pushes_${process.pid}`);
  const running = await startTestService({ config: { databaseUrl, simulator: false } });
  let frozen: { resume(): void } | null = null;
  try {
    running.clock.advance(1_000);
    const log: string[] = [];
    const pushes: SubscriptionPush[] = [];
    const taker = running.ws(0);
    await taker.connect();
    await taker.auth();
    await taker.subscribe(CHANNELS, (push) => {
      pushes.push(push);
      log.push(`${push.channel} #${push.seq}`);
    });
    const ticker = await running.http(1).call('public/ticker', { instrumentName: PERP });
    const ask = String(Math.round(Number(ticker.markPrice)));
    const bid = String(Math.round(Number(ticker.markPrice) * 0.98));
    await running
      .http(1)
      .call('private/sell', { instrumentName: PERP, quantity: '20', price: ask, postOnly: true });
    await taker.call('public/test', {});
    const before = log.length;

    frozen = await freezePostgres(databaseUrl);
    const answered = (name: string) => (answer: unknown) => {
      log.push(`answer ${name}`);
      return answer;
    };
    const accountId = running.credentials[0]!.accountIds[0]!;
    const open = () => running.service.core.openOrders(accountId, { instrumentName: PERP }).length;
    // One at a time, each applied in the core (reads see it) before the next is sent, so each
    // waits in a group commit of its own.
    const limit = taker
      .call('private/buy', { instrumentName: PERP, quantity: '10', price: bid })
      .then(answered('limit'));
    await until(() => open() === 1);
    const position = () => running.service.core.position(accountId, PERP)?.size;
    const sizeBefore = position();
    const market = taker
      .call('private/buy', { instrumentName: PERP, quantity: '20', type: 'market' })
      .then(answered('market'));
    await until(() => position() !== sizeBefore);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.deepEqual(log.slice(before), [], 'nothing pushed or answered while the journal is stalled');

    frozen.resume();
    frozen = null;
    const [placed, taken] = await Promise.all([limit, market]);
    await taker.call('public/test', {});
    const after = log.slice(before);
    // The pushes, in command order (the limit's, then the market buy's)…
    assert.deepEqual(
      after.filter((line) => !line.startsWith('answer')),
      [
        'user.orders.any.BTC #2',
        'user.changes.future.BTC #1',
        'user.orders.any.BTC #3',
        'user.trades.future.BTC #1',
        'user.changes.future.BTC #2',
      ],
    );
    // …each command's before its answer. (The sdk resolves answers a microtask after it hands
    // pushes to listeners, so frames read together log the answers last: only this order holds.)
    assert.ok(after.indexOf('answer limit') > after.indexOf('user.changes.future.BTC #1'), after.join(', '));
    assert.ok(after.indexOf('answer market') > after.indexOf('user.changes.future.BTC #2'), after.join(', '));
    for (const channel of CHANNELS) {
      const seqs = pushes.filter((p) => p.channel === channel).map((p) => p.seq);
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => i + 1),
        channel,
      );
    }
    const trades = pushes.find((p) => p.channel === 'user.trades.future.BTC')!.data;
    assert.deepEqual(trades, (taken as { trades: unknown }).trades);
    assert.deepEqual(
      pushes.filter((p) => p.channel === 'user.orders.any.BTC').at(-2)!.data,
      (placed as { order: unknown }).order,
    );
  } finally {
    frozen?.resume();
    await running.close();
  }
});
