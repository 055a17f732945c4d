import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { VenueError } from '../domain/errors.ts';
import { compileValidator, Strict } from './validation.ts';

const validate = compileValidator(
  Type.Object(
    {
      legs: Type.Array(
        Type.Object(
          { quantity: Type.String(), side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]) },
          Strict,
        ),
      ),
    },
    Strict,
  ),
);

function fieldOf(value: unknown): unknown {
  try {
    validate(value);
  } catch (error) {
    assert.ok(error instanceof VenueError);
    return error.data?.field;
  }
  return undefined;
}

test('schema errors name fields the way handlers do: array indices in brackets', () => {
  assert.equal(fieldOf({ legs: [{ quantity: '1', side: 'buy' }, { side: 'buy' }] }), 'legs[1].quantity');
  assert.equal(fieldOf({ legs: [{ quantity: 1, side: 'buy' }] }), 'legs[0].quantity');
  assert.equal(fieldOf({ legs: [{ quantity: '1', side: 'buy', extra: 1 }] }), 'legs[0].extra');
  assert.equal(fieldOf({ legs: 'x' }), 'legs');
  assert.equal(fieldOf('x'), 'params');
  assert.equal(fieldOf({ legs: [] }), undefined);
});
