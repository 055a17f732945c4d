import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { orderCommand } from '../../src/engine/testkit.ts';
import { AlgoHarness, leg, MAKER, PERP_60K, portfolio, T0 } from './harness.ts';

const crossing = {
  priceType: 'DYNAMIC' as const,
  price: null,
  priceIn: 'USD',
  dynamicStrategy: 'ASK' as const,
  dynamicOffset: 1000,
  dynamicMs: 100,
};

describe('a post-only child against a hidden order at the touch', () => {
  test('rests one tick inside the hidden order and is not amended again until that order leaves', () => {
    const h = AlgoHarness.withMarket();
    const hidden = h.core(
      orderCommand(MAKER, 'sell', 10, PERP_60K + 15, {
        instrumentName: 'BTC-PERPETUAL',
        label: 'maker',
        hidden: true,
      }),
    );
    h.maker('sell', 10, PERP_60K + 20);
    const edits: number[] = [];
    const execute = h.venue.execute.bind(h.venue);
    h.venue.execute = (command) => {
      if (command.type === 'edit_order') edits.push(command.ts);
      return execute(command);
    };
    const id = h.submit(
      portfolio({
        portfolioType: 'TWAP',
        twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 60_000 },
        legs: [leg({ amount: 5, postOnly: true, pricing: crossing })],
      }),
    );
    const child = h.childOrders(id)[0]!;
    assert.equal(child.price, PERP_60K + 14, 'the engine rests it one tick below the hidden ask');
    h.runUntil(T0 + 5_000);
    assert.deepEqual(edits, [], 'fifty reprices found it where the engine would put it again');
    h.core({ type: 'cancel_order', accountId: MAKER, orderId: hidden.order!.orderId });
    h.runUntil(T0 + 5_100);
    assert.equal(edits.length, 1, 'the hidden order left: one amend');
    assert.equal(h.venue.getOrder(child.orderId)!.price, PERP_60K + 19, 'one tick below the visible ask');
    h.runUntil(T0 + 10_000);
    assert.equal(edits.length, 1, 'and none after it');
  });
});
