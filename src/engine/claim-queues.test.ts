/**
 * The claim queues' bookkeeping (claim-queues.ts): an order that left the book keeps no entry alive
 * in its queue (a finished order must not outlive its command there: with many orders per account
 * the queues held thousands of them until a compaction, and the engine spent its time in the GC),
 * and a future's reserve computed from the exposed lots (`futureReserve`, the reviews' shortcut)
 * is `orderReserve`'s.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { claimIndex } from './claim-queues.ts';
import type { Order } from './order.ts';
import { futureReserve, orderReserve } from './risk.ts';
import type { VenueState } from './state.ts';
import { Harness, orderCommand, perpetualSpec } from './testkit.ts';
import { Venue } from './venue.ts';

const PERP = 'BTC-PERPETUAL';

function stateOf(h: Harness): VenueState {
  return (h.venue as unknown as { state: VenueState }).state;
}

/** Account 1 long 50 lots of the perpetual (marked at 100,000 ticks), with resting sells. */
function longWithSells(sells: number): Harness {
  const h = new Harness();
  h.list(perpetualSpec({ takerCommission: '0.0005' }));
  h.account(1);
  h.account(2);
  h.markPerpetual();
  h.ok(orderCommand(2, 'sell', 50, 100_000));
  h.ok(orderCommand(1, 'buy', 50, 100_000));
  for (let i = 0; i < sells; i++) h.ok(orderCommand(1, 'sell', 10, 101_000 + i));
  return h;
}

function sellQueue(h: Harness): readonly Order[] {
  const state = stateOf(h);
  const instrument = state.instruments.get(PERP)!;
  return state.accounts.get(1)!.claimQueues.get(instrument.id)!.sells.orders;
}

describe('claim queues', () => {
  test('an order that left the book is not kept by its claim queue', () => {
    const h = longWithSells(20);
    const ids = sellQueue(h).map((order) => order.id);
    assert.equal(ids.length, 20);
    // Cancelled (old and newest), filled, edited away and back: none stays referenced once gone.
    h.ok({ type: 'cancel_order', accountId: 1, orderId: ids[3]! });
    h.ok({ type: 'cancel_order', accountId: 1, orderId: ids[19]! });
    h.ok(orderCommand(2, 'buy', 10, 101_000));
    h.ok({ type: 'edit_order', accountId: 1, orderId: ids[7]!, amount: 10, price: 101_500 });
    const queue = sellQueue(h);
    for (const gone of [ids[0]!, ids[3]!, ids[19]!]) {
      assert.equal(
        queue.some((order) => order.id === gone),
        false,
        `${gone} is still in the queue`,
      );
    }
    // The edited order is back at its place (its number), and every resting sell is there once.
    const resting = queue.filter((order) => order.level !== null).map((order) => order.id);
    assert.deepEqual(
      resting,
      ids.filter((id) => ![ids[0], ids[3], ids[19]].includes(id)),
    );
    assert.equal(Venue.restore(h.venue.snapshot()).stateHash(), h.venue.stateHash());
  });

  test('a cancelled order rests again in its place after a compaction', () => {
    const h = longWithSells(80);
    const ids = sellQueue(h).map((order) => order.id);
    for (const id of ids.slice(0, 75)) h.ok({ type: 'cancel_order', accountId: 1, orderId: id });
    h.ok(orderCommand(1, 'sell', 10, 102_000));
    const queue = sellQueue(h);
    assert.ok(queue.length <= 6 + 64, `queue of ${queue.length} entries was not compacted`);
    assert.equal(queue.filter((order) => order.level !== null).length, 6);
  });

  test("a future's reserve from its exposed lots is orderReserve's", () => {
    const h = longWithSells(3);
    const state = stateOf(h);
    const instrument = state.instruments.get(PERP)!;
    const account = state.accounts.get(1)!;
    for (const side of ['buy', 'sell'] as const) {
      for (const price of [90_000, 100_000, 110_000]) {
        for (let claimed = 0; claimed <= 60; claimed += 5) {
          const lots = 12;
          const reducible = side === 'sell' ? 50 : 0;
          const exposed = Math.min(lots, Math.max(0, claimed + lots - reducible));
          const expected = orderReserve(state, instrument, account, side, lots, price, 0, {
            instrumentId: instrument.id,
            lots: claimed,
          });
          assert.equal(futureReserve(state, instrument, side, lots, price, exposed), expected.amount);
        }
      }
    }
  });

  test('claimIndex finds the first entry numbered at least the number, however the numbers spread', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let round = 0; round < 400; round++) {
      const length = Math.floor(random() * 200);
      const numbers: number[] = [];
      let next = 1 + Math.floor(random() * 1000);
      // Even gaps, clusters and one far outlier.
      const skew = round % 3;
      for (let i = 0; i < length; i++) {
        numbers.push(next);
        next += skew === 0 ? 1 + Math.floor(random() * 5) : skew === 1 ? (random() < 0.1 ? 5000 : 1) : 1;
      }
      if (skew === 2 && length > 0) numbers[length - 1] = numbers[length - 1]! + 1_000_000;
      const last = numbers[length - 1] ?? 0;
      for (let probe = 0; probe < 60; probe++) {
        const number = Math.floor(random() * (last + 10));
        const expected = numbers.findIndex((n) => n >= number);
        assert.equal(
          claimIndex(numbers, number),
          expected === -1 ? length : expected,
          `${number} in ${numbers}`,
        );
      }
      for (const number of numbers) assert.equal(numbers[claimIndex(numbers, number)], number);
    }
  });
});
