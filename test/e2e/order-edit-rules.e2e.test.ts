/**
 * Edit rules (spec 4.4) through the sdk over the real engine: a refused edit changes nothing
 * (an iceberg keeps its display and its place in the queue), and an edit of an untriggered
 * trigger order refuses what placing one refuses instead of dropping it silently; a crossing
 * post-only edit with rejectPostOnly is refused and cancels the order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const PERP = 'BTC-PERPETUAL';

async function rejects(promise: Promise<unknown>, code: number, field: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.code, code, `${error.code} ${error.message}`);
    assert.equal(error.data?.field, field);
    return true;
  });
}

describe('edit rules over the real engine', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  test('a refused edit of an iceberg keeps its display and its place in the queue', async () => {
    const iceberg = harness.http(1);
    const { order: ice } = await iceberg.call('private/sell', {
      instrumentName: PERP,
      quantity: '10000',
      price: '61000',
      displayAmount: '1000',
    });
    await harness.http(2).call('private/sell', { instrumentName: PERP, quantity: '100', price: '61000' });
    await rejects(
      iceberg.call('private/edit', {
        orderId: ice.orderId,
        quantity: '10000',
        price: '61000',
        displayAmount: '2000',
        validUntil: engine.now() - 1,
      }),
      13888,
      'validUntil',
    );
    const after = await iceberg.call('private/get_order_state', { orderId: ice.orderId });
    assert.equal(after.displayAmount, '1000');
    assert.equal(after.replaced, false);
    // Still ahead of the later order at its price: a buyer of 100 trades with the iceberg.
    const bought = await harness.http(0).call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '61000',
      timeInforce: 'immediate_or_cancel',
    });
    assert.equal(bought.order.filledQuantity, '100');
    const filled = await iceberg.call('private/get_order_state', { orderId: ice.orderId });
    assert.equal(filled.filledQuantity, '100');
    assert.equal(filled.displayAmount, '900');
  });

  test('an iceberg cut below its display without displayAmount shows what is left; a sent one is checked', async () => {
    const iceberg = harness.http(1);
    const { order: ice } = await iceberg.call('private/sell', {
      instrumentName: PERP,
      quantity: '5000',
      price: '63000',
      displayAmount: '1000',
    });
    const { order: cut } = await iceberg.call('private/edit', { orderId: ice.orderId, quantity: '500' });
    assert.equal(cut.quantity, '500');
    assert.equal(cut.displayAmount, '500');
    assert.equal(cut.refreshAmount, '500');
    await rejects(
      iceberg.call('private/edit', { orderId: ice.orderId, quantity: '400', displayAmount: '500' }),
      10036,
      'displayAmount',
    );
    await iceberg.call('private/cancel', { orderId: ice.orderId });
    // Placing still refuses a display above the quantity.
    await rejects(
      iceberg.call('private/sell', {
        instrumentName: PERP,
        quantity: '500',
        price: '63000',
        displayAmount: '1000',
      }),
      10036,
      'displayAmount',
    );
  });

  test('a crossing post-only edit with rejectPostOnly is refused and cancels the order, as on Deribit', async () => {
    const maker = harness.http(1);
    await harness.http(2).call('private/buy', { instrumentName: PERP, quantity: '100', price: '59000' });
    const { order } = await maker.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price: '61500',
    });
    await assert.rejects(
      maker.call('private/edit', {
        orderId: order.orderId,
        quantity: '100',
        price: '59000',
        postOnly: true,
        rejectPostOnly: true,
      }),
      (error: unknown) => {
        assert.ok(error instanceof ApiError, String(error));
        assert.equal(error.code, 11054);
        assert.deepEqual(error.data, {
          field: 'price',
          orderId: order.orderId,
          orderState: 'cancelled',
          cancelReason: 'edit_post_only_reject',
        });
        return true;
      },
    );
    const after = await maker.call('private/get_order_state', { orderId: order.orderId });
    assert.equal(after.orderState, 'cancelled');
    assert.equal(after.cancelReason, 'edit_post_only_reject');
    // Refused: cancelled as it stood, never edited (spec 2.6 `replaced`: true if edited).
    assert.equal(after.replaced, false);
    assert.equal(after.price, '61500');
    assert.equal(after.filledQuantity, '0');
  });

  test('an untriggered stop refuses postOnly, rejectPostOnly and displayAmount on edit, as on placing', async () => {
    const client = harness.http(0);
    const stop = {
      instrumentName: PERP,
      type: 'stop_limit' as const,
      price: '58000',
      trigger: 'mark_price' as const,
    };
    await rejects(
      client.call('private/sell', { ...stop, quantity: '10', triggerPrice: '58500', postOnly: true }),
      11055,
      'postOnly',
    );
    const { order } = await client.call('private/sell', {
      ...stop,
      quantity: '10000',
      triggerPrice: '58500',
    });
    assert.equal(order.orderState, 'untriggered');
    const edit = { orderId: order.orderId, quantity: '10000' };
    await rejects(client.call('private/edit', { ...edit, postOnly: true }), 11055, 'postOnly');
    await rejects(
      client.call('private/edit', { ...edit, postOnly: true, rejectPostOnly: true }),
      11055,
      'postOnly',
    );
    await rejects(client.call('private/edit', { ...edit, rejectPostOnly: true }), -32602, 'rejectPostOnly');
    await rejects(client.call('private/edit', { ...edit, displayAmount: '1000' }), 11047, 'displayAmount');
    const unchanged = await client.call('private/get_order_state', { orderId: order.orderId });
    assert.equal(unchanged.postOnly, false);
    assert.equal(unchanged.displayAmount, undefined);
    assert.equal(unchanged.replaced, false);
  });

  test('price on a market type is refused naming price, on placing and on editing a stop_market', async () => {
    const client = harness.http(0);
    const trigger = { trigger: 'mark_price' as const };
    for (const [type, more] of [
      ['market', {}],
      ['market_limit', {}],
      ['stop_market', { ...trigger, triggerPrice: '58500' }],
      ['take_market', { ...trigger, triggerPrice: '61500' }],
      ['trailing_stop', { ...trigger, triggerOffset: '500' }],
    ] as const)
      await rejects(
        client.call('private/sell', { instrumentName: PERP, quantity: '10', price: '60000', type, ...more }),
        11047,
        'price',
      );
    const { order } = await client.call('private/sell', {
      instrumentName: PERP,
      quantity: '10',
      type: 'stop_market',
      trigger: 'mark_price',
      triggerPrice: '58500',
    });
    assert.equal(order.orderState, 'untriggered');
    await rejects(
      client.call('private/edit', { orderId: order.orderId, quantity: '20', price: '50000' }),
      11047,
      'price',
    );
    const unchanged = await client.call('private/get_order_state', { orderId: order.orderId });
    assert.equal(unchanged.quantity, '10');
    assert.equal(unchanged.price, 'market_price');
    const { order: edited } = await client.call('private/edit', { orderId: order.orderId, quantity: '20' });
    assert.equal(edited.quantity, '20');
    await client.call('private/cancel', { orderId: order.orderId });
  });
});
