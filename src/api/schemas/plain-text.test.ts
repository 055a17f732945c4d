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
