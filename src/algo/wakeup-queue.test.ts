import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { WakeupQueue } from './wakeup-queue.ts';

test('the queue agrees with a plain map under any schedule/take sequence', () => {
  const op = fc.oneof(
    fc.record({
      kind: fc.constant('schedule' as const),
      id: fc.integer({ min: 1, max: 8 }),
      at: fc.option(fc.integer({ min: 0, max: 50 })),
    }),
    fc.record({ kind: fc.constant('take' as const), ts: fc.integer({ min: 0, max: 50 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const queue = new WakeupQueue();
      const model = new Map<number, number>();
      for (const o of ops) {
        if (o.kind === 'schedule') {
          queue.schedule(o.id, o.at);
          if (o.at === null) model.delete(o.id);
          else model.set(o.id, o.at);
        } else {
          const expected = [...model]
            .filter(([, at]) => at <= o.ts)
            .map(([id]) => id)
            .sort((a, b) => a - b);
          for (const id of expected) model.delete(id);
          assert.deepEqual(
            queue.takeDue(o.ts).sort((a, b) => a - b),
            expected,
          );
        }
        const min = model.size === 0 ? null : Math.min(...model.values());
        assert.equal(queue.peek(), min);
      }
    }),
  );
});
