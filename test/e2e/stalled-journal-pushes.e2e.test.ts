/**
 * Pushes while the journal stalls (stop 45), through the sdk over the real engine and sequencer:
 * a command is applied at once but published only once durable ("acknowledge after durability",
 * docs/decisions.md). While its journal append waits, none of its pushes goes out; once the
 * journal resumes, every push arrives, in command order, before the command's answer, with each
 * channel's `seq` gap-free. A subscriber that joined during the stall gets a snapshot showing the
 * applied commands and then only later changes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import type { WsClient } from '../../sdk/ws-client.ts';
import type { UnstampedCommand } from '../../src/core/commands.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';
const TAKER_CHANNELS = [
  'user.orders.any.BTC',
  'user.trades.future.BTC',
  'user.changes.future.BTC',
  `user.changes.${PERP}`,
  `trades.${PERP}`,
];
const MAKER_CHANNELS = ['user.orders.any.BTC', 'user.trades.any.any', 'user.changes.any.any'];

/** A few turns of the event loop and a round trip: what was sent by now has arrived. */
async function quiet(...sockets: WsClient[]): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  for (const ws of sockets) await ws.call('public/test', {});
}

describe('pushes while the journal stalls', () => {
  let harness: Harness;
  let engine: EngineVenue;
  const held: Array<{ command: UnstampedCommand; release: () => void }> = [];
  let holding = false;
  before(async () => {
    engine = await startEngineVenue(undefined, {}, (entry) =>
      holding
        ? new Promise<void>((release) => held.push({ command: entry.command, release }))
        : Promise.resolve(),
    );
    harness = await startHarness({ venue: engine, clock: engine.clock });
  });
  after(async () => {
    holding = false;
    for (const { release } of held.splice(0)) release();
    await harness.close();
  });

  test('no push before its command is durable; all of them, in order and before each answer, once it is', async () => {
    // What each connection receives, answers and pushes, in the order they arrive.
    const log: string[] = [];
    const pushes = new Map<string, SubscriptionPush[]>();
    const record = (who: string) => (push: SubscriptionPush) => {
      const key = `${who} ${push.channel}`;
      if (!pushes.has(key)) pushes.set(key, []);
      pushes.get(key)!.push(push);
      log.push(`${key} #${push.seq}${push.snapshot ? ' snapshot' : ''}`);
    };
    const taker = harness.ws(2);
    const maker = harness.ws(3);
    for (const ws of [taker, maker]) {
      await ws.connect();
      await ws.auth();
    }
    const sockets = [taker, maker];
    await taker.subscribe(TAKER_CHANNELS, record('taker'));
    await maker.subscribe(MAKER_CHANNELS, record('maker'));
    const resting = await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '50',
      price: '60100',
      postOnly: true,
    });
    await quiet(...sockets);
    const before = log.length;

    holding = true;
    // Four commands of the taker's, each applied and left waiting for the journal.
    const answered = (name: string) => (answer: unknown) => {
      log.push(`taker answer ${name}`);
      return answer;
    };
    const limit = taker
      .call('private/buy', { instrumentName: PERP, quantity: '10', price: '59000', label: 'rest' })
      .then(answered('limit'));
    await until(() => held.length === 1);
    const market = taker
      .call('private/buy', { instrumentName: PERP, quantity: '20', type: 'market' })
      .then(answered('market'));
    await until(() => held.length === 2);
    const restingId = engine.reads
      .openOrders(harness.credentials[2]!.accountIds[0]!, {})
      .find((o) => o.label === 'rest')!.orderId;
    const edit = taker
      .call('private/edit', { orderId: restingId, quantity: '10', price: '59010' })
      .then(answered('edit'));
    await until(() => held.length === 3);
    // And the maker cancels the rest of its order.
    const cancel = maker.call('private/cancel', { orderId: resting.order.orderId });
    await until(() => held.length === 4);

    await quiet(...sockets);
    assert.deepEqual(log.slice(before), [], 'nothing is pushed or answered while the journal holds them');
    // The core has applied them: reads see them (as documented), pushes do not.
    assert.equal(
      engine.reads.openOrders(harness.credentials[3]!.accountIds[0]!, {}).length,
      0,
      'the maker’s cancel is applied',
    );

    // A subscriber joining now: its snapshot shows the applied state; those commands' pushes skip it.
    const late = harness.ws(2);
    await late.connect();
    await late.auth();
    await late.subscribe(['user.orders.any.BTC'], record('late'));
    sockets.push(late);
    const snapshot = pushes.get('late user.orders.any.BTC')![0]!;
    assert.equal(snapshot.snapshot, true);
    assert.deepEqual(
      (snapshot.data as Array<{ orderId: string; price: string }>).map((o) => [o.orderId, o.price]),
      [[restingId, '59010']],
      'the snapshot shows the edit already applied',
    );
    const mark = log.length;

    // The journal resumes one command at a time: each one's pushes, then its answer.
    const step = async (expectAnswer: string | null) => {
      held.shift()!.release();
      if (expectAnswer !== null) await until(() => log.includes(`taker answer ${expectAnswer}`));
      await quiet(...sockets);
    };
    await step('limit');
    const afterLimit = log.slice(mark);
    assert.deepEqual(afterLimit, [
      'taker user.orders.any.BTC #2',
      `taker user.changes.${PERP} #1`,
      'taker user.changes.future.BTC #1',
      'taker answer limit',
    ]);
    await step('market');
    await step('edit');
    await step(null);
    await cancel;
    await Promise.all([limit, market, edit]);
    await quiet(...sockets);
    assert.deepEqual(log.slice(mark), [
      ...afterLimit,
      // The market buy: the maker's side first (its order filled in part), then the taker's.
      'maker user.orders.any.BTC #3',
      'maker user.trades.any.any #1',
      'maker user.changes.any.any #2',
      'taker user.orders.any.BTC #3',
      'taker user.trades.future.BTC #1',
      `taker user.changes.${PERP} #2`,
      'taker user.changes.future.BTC #2',
      `taker trades.${PERP} #1`,
      'taker answer market',
      'taker user.orders.any.BTC #4',
      `taker user.changes.${PERP} #3`,
      'taker user.changes.future.BTC #3',
      'taker answer edit',
      'maker user.orders.any.BTC #4',
      'maker user.changes.any.any #3',
    ]);
    for (const [key, list] of pushes) {
      const seqs = list.map((p) => p.seq);
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => i + 1),
        `${key}: seq gap-free`,
      );
    }
    assert.equal(
      pushes.get('late user.orders.any.BTC')!.length,
      1,
      'the late subscriber got no push older than its snapshot',
    );
  });

  test('book, ticker and user.portfolio render the state as published: it may show a command still waiting for the journal', async () => {
    type Book = { bids: Array<[string, string]> };
    const pushes: SubscriptionPush[] = [];
    const ws = harness.ws(2);
    await ws.connect();
    await ws.auth();
    await ws.subscribe([`book.${PERP}`, 'user.portfolio.btc'], (push) => pushes.push(push));
    await quiet(ws);
    const bids = () =>
      (pushes.filter((p) => p.channel === `book.${PERP}`).at(-1)!.data as Book).bids.map(([price]) => price);
    const before = pushes.length;
    assert.ok(!bids().includes('59100'));
    holding = true;
    const first = ws.call('private/buy', { instrumentName: PERP, quantity: '10', price: '58900' });
    await until(() => held.length === 1);
    const second = ws.call('private/buy', { instrumentName: PERP, quantity: '10', price: '59100' });
    await until(() => held.length === 2);
    holding = false;
    await quiet(ws);
    assert.equal(pushes.length, before, 'nothing while both wait');
    // The first becomes durable: its book push is rendered from the state as it is now, which
    // already holds the second (docs/decisions.md, "Current-state pushes and durability").
    held.shift()!.release();
    await first;
    await quiet(ws);
    assert.ok(bids().includes('58900'), 'the first order is shown');
    assert.ok(bids().includes('59100'), 'so is the second, not yet durable');
    const shown = pushes.length;
    // The second becomes durable: the book and summary already show it, so nothing new is pushed.
    held.shift()!.release();
    await second;
    await quiet(ws);
    assert.equal(pushes.length, shown);
    for (const channel of [`book.${PERP}`, 'user.portfolio.BTC']) {
      const seqs = pushes.filter((p) => p.channel.toUpperCase() === channel.toUpperCase()).map((p) => p.seq);
      assert.ok(seqs.length > 1, channel);
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => i + 1),
        `${channel}: seq gap-free`,
      );
    }
    await ws.call('private/cancel_all', {});
  });
});
