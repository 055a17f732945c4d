import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { VenueError } from '../domain/errors.ts';
import { ChannelRegistry, type Emit, Fanout, type Subscriber, topicFor } from './channels.ts';
import { registerMmpChannels } from './methods/mmp.ts';
import type { CommittedBatch, ReadPort } from './ports.ts';

function recorder(): Subscriber & { pushes: Array<[string, number, unknown, boolean]> } {
  const pushes: Array<[string, number, unknown, boolean]> = [];
  return { pushes, push: (channel, seq, data, snapshot) => pushes.push([channel, seq, data, snapshot]) };
}

test('snapshot is seq 1, changes count on per (subscriber, channel); producers run only for subscribed topics', () => {
  const channels = new ChannelRegistry();
  let built = 0;
  channels.register({
    pattern: 'demo.{account}',
    summary: 'demo',
    access: 'private',
    payload: Type.Unknown(),
    resolve: (name) =>
      name.startsWith('demo.') ? { topics: [topicFor(name, 1)], snapshot: () => 'snap' } : null,
    produce: (batch, emit) => {
      for (const event of batch.events) {
        if (event.type === 'account') {
          emit('demo.x', event.accountId, () => {
            built++;
            return event.accountId;
          });
        }
      }
    },
  });
  assert.throws(() => channels.register({ ...channels.list()[0]! }), /already registered/);
  const fanout = new Fanout(channels);
  const a = recorder();
  const b = recorder();
  const resolved = channels.resolve('demo.x', null)!.resolved;
  assert.ok(fanout.subscribe(a, 'demo.x', resolved));
  assert.ok(!fanout.subscribe(a, 'demo.x', resolved));
  let seq = 0;
  const batch = (accountId: number) => ({
    seq: ++seq,
    ts: 0,
    events: [{ type: 'account' as const, accountId, change: 'created' as const }],
  });
  fanout.publish(batch(1));
  fanout.subscribe(b, 'demo.x', resolved);
  fanout.publish(batch(1));
  fanout.publish(batch(2));
  assert.deepEqual(a.pushes, [
    ['demo.x', 1, 'snap', true],
    ['demo.x', 2, 1, false],
    ['demo.x', 3, 1, false],
  ]);
  assert.deepEqual(b.pushes, [
    ['demo.x', 1, 'snap', true],
    ['demo.x', 2, 1, false],
  ]);
  assert.equal(built, 2);
  fanout.unsubscribeAll(a);
  fanout.unsubscribe(b, 'demo.x');
  assert.equal(fanout.topicCount, 0);
});

test('after a snapshot of the applied state, the pushes of commands it shows are dropped, and seq stays gap-free', () => {
  const channels = new ChannelRegistry();
  // Each pushed change shows the account id of its command; the snapshot the ones applied so far.
  let applied = 0;
  const family = (pattern: string, pushesCurrentState: boolean) => ({
    pattern,
    summary: pattern,
    access: 'private' as const,
    payload: Type.Unknown(),
    resolve: (name: string) =>
      name === pattern ? { topics: [topicFor(name, 1)], snapshot: () => applied, pushesCurrentState } : null,
    produce: (batch: CommittedBatch, emit: Emit) => {
      for (const event of batch.events) if (event.type === 'account') emit(pattern, 1, () => batch.seq);
    },
  });
  channels.register(family('orders', false));
  channels.register(family('book', true));
  const fanout = new Fanout(channels, () => applied);
  const batch = (seq: number) => ({
    seq,
    ts: 0,
    events: [{ type: 'account' as const, accountId: 1, change: 'created' as const }],
  });
  // Commands 1-3 applied, only 1 published when the subscriptions are made.
  applied = 3;
  fanout.publish(batch(1));
  const a = recorder();
  fanout.subscribe(a, 'orders', channels.resolve('orders', null)!.resolved);
  fanout.subscribe(a, 'book', channels.resolve('book', null)!.resolved);
  applied = 4;
  for (const seq of [2, 3, 4]) fanout.publish(batch(seq));
  assert.deepEqual(
    a.pushes.filter(([channel]) => channel === 'orders'),
    [
      ['orders', 1, 3, true],
      ['orders', 2, 4, false],
    ],
  );
  // Pushes that render the state when published are never older than the snapshot: all kept.
  assert.deepEqual(
    a.pushes.filter(([channel]) => channel === 'book'),
    [
      ['book', 1, 3, true],
      ['book', 2, 2, false],
      ['book', 3, 3, false],
      ['book', 4, 4, false],
    ],
  );
  // Without the applied seq, the state read is the published one: nothing is dropped.
  const published = new Fanout(channels);
  published.publish(batch(4));
  const b = recorder();
  published.subscribe(b, 'orders', channels.resolve('orders', null)!.resolved);
  published.publish(batch(5));
  assert.deepEqual(b.pushes, [
    ['orders', 1, 4, true],
    ['orders', 2, 5, false],
  ]);
});

test('names with one canonical name are one subscription, held under the name first subscribed', () => {
  const channels = new ChannelRegistry();
  // `demo.<word>` in any letter case; its canonical name is lower case.
  channels.register({
    pattern: 'demo.{word}',
    summary: 'demo',
    access: 'public',
    payload: Type.Unknown(),
    resolve: (name) => {
      if (!/^demo\.[a-z]+$/i.test(name)) return null;
      const channel = name.toLowerCase();
      return { channel, topics: [topicFor(channel, null)], snapshot: () => 'snap' };
    },
    produce: (batch, emit) => {
      for (const event of batch.events) if (event.type === 'account') emit('demo.x', null, () => batch.seq);
    },
  });
  const fanout = new Fanout(channels);
  const a = recorder();
  const subscribe = (name: string) => fanout.subscribe(a, name, channels.resolve(name, null)!.resolved);
  assert.equal(subscribe('demo.X'), true);
  assert.equal(subscribe('demo.x'), false);
  assert.equal(subscribe('DEMO.x'), false);
  assert.equal(fanout.heldName(a, 'demo.x'), 'demo.X');
  assert.equal(fanout.subscriptionCount(a), 1);
  assert.deepEqual(fanout.channelsOf(a), ['demo.X']);
  fanout.publish({ seq: 1, ts: 0, events: [{ type: 'account', accountId: 1, change: 'created' }] });
  assert.deepEqual(a.pushes, [
    ['demo.X', 1, 'snap', true],
    ['demo.X', 2, 1, false],
  ]);
  // Unsubscribed by its canonical name or by the name it is held under; answered with the latter.
  assert.equal(fanout.unsubscribe(a, 'demo.x'), 'demo.X');
  assert.equal(fanout.subscriptionCount(a), 0);
  subscribe('demo.X');
  assert.equal(fanout.unsubscribe(a, 'demo.X'), 'demo.X');
  assert.equal(fanout.unsubscribe(a, 'demo.X'), undefined);
  assert.equal(fanout.topicCount, 0);
});

/** Reads listing one BTC instrument: btc_usd is the only index followed. */
const BTC_ONLY = {
  instruments: () => [{ spec: { baseCurrency: 'BTC' } }],
} as unknown as Pick<ReadPort, 'instruments'>;

test('user.mmp_trigger.{index}: an index no listed instrument follows is refused, naming channels', () => {
  const channels = new ChannelRegistry();
  registerMmpChannels(channels, BTC_ONLY);
  const key = { defaultAccountId: 1 } as Parameters<ChannelRegistry['resolve']>[1];
  assert.ok(channels.resolve('user.mmp_trigger.btc_usd', key));
  for (const name of ['user.mmp_trigger.eth_usd', 'user.mmp_trigger.doge_usd', 'user.mmp_trigger.btcusd_x']) {
    assert.throws(
      () => channels.resolve(name, key),
      (error: unknown) =>
        error instanceof VenueError &&
        error.errorName === 'invalid_params' &&
        error.data?.field === 'channels' &&
        error.message.includes(name),
      name,
    );
  }
});

test("user.mmp_trigger.{index}: the trigger of the key's default account is pushed, another account's is not", () => {
  const channels = new ChannelRegistry();
  registerMmpChannels(channels, BTC_ONLY);
  const fanout = new Fanout(channels);
  const mine = recorder();
  const theirs = recorder();
  const key = (accountId: number) =>
    ({ defaultAccountId: accountId }) as Parameters<ChannelRegistry['resolve']>[1];
  for (const [subscriber, accountId] of [
    [mine, 1],
    [theirs, 2],
  ] as const) {
    const name = 'user.mmp_trigger.btc_usd';
    assert.ok(
      fanout.subscribe(subscriber, name, channels.resolve(name, key(accountId))!.resolved),
      'subscribed',
    );
  }
  fanout.publish({
    seq: 1,
    ts: 1,
    events: [{ type: 'mmp_trigger', accountId: 1, indexName: 'btc_usd', frozenUntil: 0 }],
  } as unknown as CommittedBatch);
  assert.deepEqual(mine.pushes, [
    ['user.mmp_trigger.btc_usd', 1, { indexName: 'btc_usd', frozenUntil: 0 }, false],
  ]);
  assert.deepEqual(theirs.pushes, [], "account 2's connection hears nothing of account 1's trigger");
});

test('an interval suffix is a spelling only for a family that lists it; another family sees the whole name', () => {
  const channels = new ChannelRegistry();
  const seen: string[] = [];
  const family = (prefix: string, intervals?: ['raw']) => ({
    pattern: `${prefix}.{x}`,
    summary: prefix,
    access: 'public' as const,
    payload: Type.Unknown(),
    ...(intervals === undefined ? {} : { intervals }),
    resolve: (name: string) => {
      seen.push(`${prefix}: ${name}`);
      return name.startsWith(`${prefix}.`) ? { topics: [topicFor(name, null)] } : null;
    },
    produce: () => {},
  });
  channels.register(family('plain'));
  channels.register(family('timed', ['raw']));
  assert.equal(channels.resolve('timed.a.raw', null)?.resolved.channel, 'timed.a');
  // The plain family is asked only for the whole name, which it takes as its own (the timed one
  // is asked for the name without the suffix, which it does not take).
  seen.length = 0;
  assert.equal(channels.resolve('plain.a.raw', null)?.resolved.channel, undefined);
  assert.deepEqual(seen, ['timed: plain.a', 'plain: plain.a.raw']);
  assert.throws(
    () => channels.resolve('timed.a.100ms', null),
    (error: unknown) =>
      error instanceof VenueError &&
      error.data?.field === 'channels' &&
      error.data?.channel === 'timed.a.100ms' &&
      /subscribe timed\.a\.raw$/.test(error.message),
  );
});
