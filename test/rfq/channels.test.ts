/**
 * The block_rfq push channels over the desk's real events: a party is pushed only when its own
 * view changed, an RFQ is filed under the currencies get_instruments files its instruments
 * under (base and quote), and unknown currencies are refused at subscription.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Principal } from '../../src/api/auth/authenticator.ts';
import { ChannelRegistry, Fanout, type Subscriber } from '../../src/api/channels.ts';
import { registerRfqChannels } from '../../src/api/methods/rfq.ts';
import type { ReadPort } from '../../src/api/ports.ts';
import { VenueError } from '../../src/domain/errors.ts';
import { optionSpec } from '../../src/engine/testkit.ts';
import { pageTrades } from '../../src/rfq/trades.ts';
import type { RfqRecord } from '../../src/rfq/types.ts';
import {
  DESK_A,
  DESK_B,
  MAKER_A,
  MAKER_B,
  quoteIdOf,
  RfqHarness,
  spreadLegs,
  TAKER,
  TAKER_2,
} from './harness.ts';

const LINEAR_CALL = 'BTC_USDC-27DEC26-70000-C';

function principal(userId: number, roles: string[], deskName: string | null): Principal {
  return {
    apiKey: `key-${userId}`,
    userId,
    accountIds: new Set([userId]),
    defaultAccountId: userId,
    roles: new Set(roles) as Principal['roles'],
    deskName,
    rateLimits: null,
  };
}

const TAKER_KEY = principal(TAKER, ['taker'], null);
const DESK_A_KEY = principal(MAKER_A, ['maker'], DESK_A);
const DESK_B_KEY = principal(MAKER_B, ['maker'], DESK_B);

interface Recorder extends Subscriber {
  readonly pushes: { channel: string; data: { blockRfqId: string; status: string } }[];
}

/** The harness behind the gateway's channels: each `publish` pushes the events since the last. */
function pushHarness() {
  const h = new RfqHarness();
  const channels = new ChannelRegistry();
  const reads = { instrument: (name: string) => h.venue.instrument(name)?.instrument } as unknown as ReadPort;
  registerRfqChannels(channels, reads);
  const fanout = new Fanout(channels);
  let published = 0;
  const publish = () => {
    const events = h.deskEvents.slice(published);
    published = h.deskEvents.length;
    fanout.publish({ seq: 0, ts: h.now, events: [], subEvents: new Map([['rfq', events]]) });
  };
  const subscribe = (key: Principal, name: string): Recorder => {
    const pushes: Recorder['pushes'] = [];
    const subscriber: Recorder = {
      pushes,
      push: (channel, _seq, data) =>
        pushes.push({ channel, data: data as Recorder['pushes'][number]['data'] }),
    };
    fanout.subscribe(subscriber, name, channels.resolve(name, key)!.resolved);
    return subscriber;
  };
  return { h, channels, publish, subscribe };
}

describe('block_rfq pushes go to the parties whose view changed', () => {
  test("a desk never hears of another desk's quotes; the taker not of quotes hidden in the grace period", () => {
    const { h, publish, subscribe } = pushHarness();
    const taker = subscribe(TAKER_KEY, 'block_rfq.taker.any');
    const deskA = subscribe(DESK_A_KEY, 'block_rfq.maker.any');
    const deskB = subscribe(DESK_B_KEY, 'block_rfq.maker.any');
    const counts = () => [taker.pushes.length, deskA.pushes.length, deskB.pushes.length];
    const step = (run: () => unknown, expected: number[], why: string) => {
      const before = counts();
      run();
      publish();
      assert.deepEqual(
        counts().map((n, i) => n - before[i]!),
        expected,
        why,
      );
    };
    let rfq: RfqRecord | undefined;
    step(() => (rfq = h.callSpread()), [1, 1, 1], 'a new RFQ concerns everyone');
    let quoteA = '';
    step(
      () => (quoteA = quoteIdOf(h.quote(rfq!, DESK_A, MAKER_A, 'sell', 10, 520, 300))),
      [0, 1, 0],
      'grace',
    );
    step(() => h.at(h.now + 5_000), [1, 1, 1], 'open: everyone');
    step(() => h.quote(rfq!, DESK_B, MAKER_B, 'sell', 10, 510, 300), [1, 0, 1], "B's quote");
    step(
      () =>
        h.ok({
          ...h.quoteCommand(rfq!),
          type: 'rfq_quote_edit',
          quoteId: quoteA,
          legs: spreadLegs(515, 300),
        } as never),
      [1, 1, 0],
      "A's edit",
    );
    step(
      () =>
        h.run({
          type: 'rfq_accept',
          accountId: TAKER,
          blockRfqId: rfq!.blockRfqId,
          side: 'buy',
          price: 100,
          quantity: null,
          timeInForce: 'good_til_cancelled',
        }),
      [1, 0, 0],
      'a trigger is the taker’s alone',
    );
    step(
      () =>
        h.run({
          type: 'rfq_accept',
          accountId: TAKER,
          blockRfqId: rfq!.blockRfqId,
          side: 'buy',
          price: 210,
          quantity: null,
          timeInForce: 'fill_or_kill',
        }),
      [1, 1, 1],
      'traded: everyone',
    );
    assert.equal(taker.pushes.at(-1)!.data.status, 'filled');
    // Each desk's pushes carry its own id of the RFQ.
    assert.ok(deskA.pushes.every((p) => p.data.blockRfqId === h.makerId(rfq!, DESK_A)));
    assert.ok(deskB.pushes.every((p) => p.data.blockRfqId === h.makerId(rfq!, DESK_B)));
  });
});

describe('USDC means one thing: base or quote currency, as get_instruments lists instruments', () => {
  test('a BTC_USDC option RFQ is pushed and listed under USDC and BTC, an inverse one under BTC only', () => {
    const { h, publish, subscribe } = pushHarness();
    h.engine.list(
      optionSpec({
        name: LINEAR_CALL,
        quoteCurrency: 'USDC',
        counterCurrency: 'BTC',
        settlementCurrency: 'USDC',
        marginKind: 'linear',
        tickSize: '5',
        tickSizeSteps: [],
        minTradeAmount: '0.01',
        blockTradeMinTradeAmount: '0.01',
      }),
    );
    for (const accountId of [TAKER, MAKER_A]) {
      h.engine.ok({ type: 'deposit', accountId, currency: 'USDC', amount: 1_000_000_000_000 });
    }
    const takerUsdc = subscribe(TAKER_KEY, 'block_rfq.taker.usdc');
    const takerBtc = subscribe(TAKER_KEY, 'block_rfq.taker.BTC');
    const makerUsdc = subscribe(DESK_A_KEY, 'block_rfq.maker.USDC');
    const linear = h.callSpread({ legs: [{ instrumentName: LINEAR_CALL, side: 'buy', amount: 10 }] });
    publish();
    const inverse = h.callSpread();
    publish();
    assert.deepEqual(
      takerUsdc.pushes.map((p) => [p.channel, p.data.blockRfqId]),
      [['block_rfq.taker.usdc', linear.blockRfqId]],
    );
    assert.deepEqual(
      takerBtc.pushes.map((p) => p.data.blockRfqId),
      [linear.blockRfqId, inverse.blockRfqId],
    );
    assert.deepEqual(
      makerUsdc.pushes.map((p) => p.data.blockRfqId),
      [h.makerId(linear, DESK_A)],
    );

    h.at(h.now + 5_000);
    const legs = [{ instrumentName: LINEAR_CALL, side: 'buy' as const, ratio: 1, price: 600 }];
    quoteIdOf(h.run({ ...h.quoteCommand(linear), legs }));
    const accepted = h.run({
      type: 'rfq_accept',
      accountId: TAKER,
      blockRfqId: linear.blockRfqId,
      side: 'buy',
      // 600 ticks of 5 USDC: the strategy price counts whole USDC.
      price: 3000,
      quantity: null,
      timeInForce: 'fill_or_kill',
    });
    assert.ok(accepted.ok);
    const listed = (currency: string) =>
      pageTrades(h.desk.trades(), { currency, now: h.now, continuation: null, count: 10 }).results.map(
        (t) => t.blockRfqId,
      );
    assert.deepEqual(listed('USDC'), [linear.blockRfqId]);
    assert.deepEqual(listed('usdc'), [linear.blockRfqId]);
    assert.deepEqual(listed('BTC'), [linear.blockRfqId]);
    assert.deepEqual(listed('ETH'), []);
  });
});

describe("the taker channel covers every account of the key's user", () => {
  test("an RFQ of the user's second account is pushed, as get_rfqs lists it", () => {
    const { h, publish, subscribe } = pushHarness();
    const key = { ...TAKER_KEY, accountIds: new Set([TAKER, TAKER_2]) };
    const taker = subscribe(key, 'block_rfq.taker.any');
    const first = h.callSpread();
    const second = h.callSpread({ accountId: TAKER_2 });
    publish();
    assert.deepEqual(
      taker.pushes.map((p) => p.data.blockRfqId),
      [first.blockRfqId, second.blockRfqId],
    );
  });
});

describe('subscriptions', () => {
  test('an unknown currency is refused with a clear error; case does not matter', () => {
    const { channels } = pushHarness();
    for (const name of ['block_rfq.taker.XYZ', 'block_rfq.taker.', 'block_rfq.maker.usd']) {
      const key = name.includes('maker') ? DESK_A_KEY : TAKER_KEY;
      assert.throws(
        () => channels.resolve(name, key),
        (error: unknown) =>
          error instanceof VenueError &&
          error.errorName === 'invalid_arguments' &&
          error.data?.field === 'channels' &&
          /unknown currency/.test(error.message),
      );
    }
    assert.ok(channels.resolve('block_rfq.taker.eth', TAKER_KEY));
    assert.ok(channels.resolve('block_rfq.maker.Any', DESK_A_KEY));
  });

  test('the spellings of a currency are one channel (one subscription per connection)', () => {
    const { channels } = pushHarness();
    const canonical = (name: string, key: Principal) => channels.resolve(name, key)!.resolved.channel;
    assert.equal(canonical('block_rfq.taker.btc', TAKER_KEY), 'block_rfq.taker.BTC');
    assert.equal(canonical('block_rfq.taker.ANY', TAKER_KEY), 'block_rfq.taker.any');
    assert.equal(canonical('block_rfq.maker.Eth', DESK_A_KEY), 'block_rfq.maker.ETH');
  });

  test('each block_rfq channel needs its role: a maker key no taker channel, a taker key no maker channel', () => {
    const { channels } = pushHarness();
    const refused = (name: string, key: Principal) =>
      assert.throws(
        () => channels.resolve(name, key),
        (error: unknown) => error instanceof VenueError && error.errorName === 'permission_denied',
        `${name} is refused permission_denied to a key with roles [${[...key.roles].join(', ')}]`,
      );
    refused('block_rfq.taker.BTC', DESK_A_KEY);
    refused('block_rfq.taker.any', principal(TAKER, ['trade'], null));
    refused('block_rfq.maker.BTC', TAKER_KEY);
    refused('block_rfq.maker.any', principal(MAKER_A, ['trade'], DESK_A));
    refused('block_rfq.maker.any', principal(MAKER_A, ['maker'], null));
  });
});
