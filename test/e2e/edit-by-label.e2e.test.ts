/**
 * private/edit_by_label through the sdk over the real engine: it edits the one open order of the
 * key's account on the instrument that carries the label, as private/edit would; none is
 * order_not_found and several are non_unique_order_label, both naming `label`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { type EngineVenue, startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { refusal } from '../support/refusal.ts';

const PERP = 'BTC-PERPETUAL';
const FUTURE_OF_ANOTHER_CURRENCY = 'ETH-PERPETUAL';

describe('private/edit_by_label over the real engine', () => {
  let harness: Harness;
  let engine: EngineVenue;
  before(async () => {
    engine = await startEngineVenue();
    harness = await startHarness({ venue: engine });
  });
  after(() => harness.close());

  test('edits the one labelled order on the instrument, as private/edit would', async () => {
    const client = harness.http(0);
    const { order } = await client.call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '50000',
      label: 'grid-a',
    });
    const edited = await client.call('private/edit_by_label', {
      label: 'grid-a',
      instrumentName: PERP,
      quantity: '200',
      price: '50500',
    });
    assert.equal(edited.order.orderId, order.orderId);
    assert.deepEqual(
      [edited.order.price, edited.order.quantity, edited.order.replaced],
      ['50500', '200', true],
    );
    assert.deepEqual(edited.trades, []);
    const state = await client.call('private/get_order_state', { orderId: order.orderId });
    assert.deepEqual([state.price, state.quantity, state.label], ['50500', '200', 'grid-a']);
  });

  test('an untriggered stop is found by its label too', async () => {
    const client = harness.http(0);
    const { order } = await client.call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      type: 'stop_market',
      triggerPrice: '50000',
      trigger: 'mark_price',
      label: 'stop-a',
    });
    assert.equal(order.orderState, 'untriggered');
    const edited = await client.call('private/edit_by_label', {
      label: 'stop-a',
      instrumentName: PERP,
      quantity: '100',
      triggerPrice: '49000',
    });
    assert.equal(edited.order.orderId, order.orderId);
    assert.equal(edited.order.triggerPrice, '49000');
  });

  test('no labelled order, or one of another user or instrument, is order_not_found naming label', async () => {
    const mine = harness.http(0);
    await harness.http(1).call('private/buy', {
      instrumentName: PERP,
      quantity: '100',
      price: '50000',
      label: 'theirs',
    });
    await mine.call('private/buy', {
      instrumentName: FUTURE_OF_ANOTHER_CURRENCY,
      quantity: '10',
      price: '2000',
      label: 'eth-only',
    });
    for (const label of ['nobody', 'theirs', 'eth-only']) {
      const refused = await refusal(
        mine.call('private/edit_by_label', { label, instrumentName: PERP, quantity: '100', price: '50100' }),
      );
      assert.equal(refused.code, ERROR_CATALOGUE.order_not_found.code, refused.message);
      assert.equal(refused.data?.field, 'label');
    }
    const unknown = await refusal(
      mine.call('private/edit_by_label', {
        label: 'x',
        instrumentName: 'BTC-NOPE',
        quantity: '1',
        price: '1',
      }),
    );
    assert.deepEqual([unknown.errorName, unknown.data?.field], ['invalid_instrument', 'instrumentName']);
    const empty = await refusal(
      mine.call('private/edit_by_label', {
        label: '',
        instrumentName: PERP,
        quantity: '100',
        price: '50100',
      }),
    );
    assert.equal(empty.data?.field, 'label', empty.message);
  });

  test('two open orders with the label are non_unique_order_label, listing both; edits nothing', async () => {
    const client = harness.http(0);
    const placed = await Promise.all(
      ['49000', '49500'].map((price) =>
        client.call('private/buy', { instrumentName: PERP, quantity: '100', price, label: 'twice' }),
      ),
    );
    const refused = await refusal(
      client.call('private/edit_by_label', {
        label: 'twice',
        instrumentName: PERP,
        quantity: '100',
        price: '48000',
      }),
    );
    assert.equal(refused.code, ERROR_CATALOGUE.non_unique_order_label.code, refused.message);
    assert.equal(refused.data?.field, 'label');
    assert.deepEqual(
      [...((refused.data?.orderIds ?? []) as string[])].sort(),
      placed.map((p) => p.order.orderId).sort(),
    );
    for (const { order } of placed) {
      const state = await client.call('private/get_order_state', { orderId: order.orderId });
      assert.equal(state.replaced, false);
    }
    // Once one is gone, the label is unique again.
    await client.call('private/cancel', { orderId: placed[0]!.order.orderId });
    const edited = await client.call('private/edit_by_label', {
      label: 'twice',
      instrumentName: PERP,
      quantity: '100',
      price: '48000',
    });
    assert.equal(edited.order.orderId, placed[1]!.order.orderId);
  });
});
