import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { ChannelRegistry, Fanout, type Subscriber, topicFor } from './channels.ts';

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
  const batch = (accountId: number) => ({
    seq: 1,
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
