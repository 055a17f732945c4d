/**
 * Text the read store keeps as text (labels, instrument and desk names) refuses control
 * characters, naming the field: PostgreSQL refuses a NUL in a text value, and an RFQ label with
 * one wedged the read store (every history read `history_behind`, across restarts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../../domain/errors.ts';
import { compileValidator } from '../validation.ts';
import { PlaceOrderParams } from './methods.ts';
import { CreateRfqParams } from './rfq.ts';

function fieldRefused(validate: (value: unknown) => void, params: unknown): unknown {
  try {
    validate(params);
  } catch (error) {
    assert.ok(error instanceof VenueError);
    return error.data?.field;
  }
  return null;
}

test('an RFQ label, leg instrument or maker name with a control character is refused naming it', () => {
  const validate = compileValidator(CreateRfqParams);
  const legs = [{ instrumentName: 'BTC-PERPETUAL', quantity: '10', side: 'buy' }];
  assert.equal(fieldRefused(validate, { legs }), null);
  assert.equal(fieldRefused(validate, { legs, label: 'r\u0000q' }), 'label');
  assert.equal(fieldRefused(validate, { legs, makers: ['A\nB'] }), 'makers[0]');
  assert.equal(
    fieldRefused(validate, { legs: [{ ...legs[0], instrumentName: 'BTC\u0000' }] }),
    'legs[0].instrumentName',
  );
});

test('an order label with a control character is refused naming it', () => {
  const validate = compileValidator(PlaceOrderParams);
  const order = { instrumentName: 'BTC-PERPETUAL', quantity: '10', type: 'limit', price: '65000' };
  assert.equal(fieldRefused(validate, order), null);
  assert.equal(fieldRefused(validate, { ...order, label: 'a\u0000' }), 'label');
});

test('cancel_by_label and get_open_orders_by_label refuse an empty label, naming it', async () => {
  const { CancelByLabelParams, OpenOrdersByLabelParams } = await import('./methods.ts');
  // Orders placed without a label carry '': an empty label would select (and cancel) all of them.
  assert.equal(fieldRefused(compileValidator(CancelByLabelParams), { label: '' }), 'label');
  assert.equal(fieldRefused(compileValidator(CancelByLabelParams), { label: 'a' }), null);
  assert.equal(
    fieldRefused(compileValidator(OpenOrdersByLabelParams), { currency: 'BTC', label: '' }),
    'label',
  );
});

test('schema limits on order params are exact and name their field', async () => {
  const { EditOrderParams } = await import('./methods.ts');
  const place = compileValidator(PlaceOrderParams);
  const edit = compileValidator(EditOrderParams);
  const order = { instrumentName: 'BTC-PERPETUAL', quantity: '10', type: 'limit', price: '65000' };
  // Every control character, the edges of the range included, is refused.
  for (const label of ['a\u001f', 'a\u007f', '\u0001'])
    assert.equal(fieldRefused(place, { ...order, label }), 'label', JSON.stringify(label));
  // A decimal has at most 20 integer digits.
  assert.equal(fieldRefused(place, { ...order, quantity: '1'.repeat(20) }), null);
  assert.equal(fieldRefused(place, { ...order, quantity: '1'.repeat(21) }), 'quantity');
  // At most 10 linked orders.
  const entry = { side: 'sell', price: '66000' };
  const linked = { ...order, linkedOrderType: 'one_cancels_other' };
  assert.equal(fieldRefused(place, { ...linked, otocoConfig: Array(10).fill(entry) }), null);
  assert.equal(fieldRefused(place, { ...linked, otocoConfig: Array(11).fill(entry) }), 'otocoConfig');
  // Timestamps are whole milliseconds.
  assert.equal(fieldRefused(place, { ...order, validUntil: 1_800_000_000_000.5 }), 'validUntil');
  // An edit's displayAmount given as a number may not be negative (refused by the schema).
  assert.equal(fieldRefused(edit, { orderId: 'x', quantity: '10', displayAmount: -1 }), 'displayAmount');
  assert.throws(
    () => edit({ orderId: 'x', quantity: '10', displayAmount: -1 }),
    (error: unknown) => error instanceof VenueError && error.errorName === 'invalid_params',
  );
});
