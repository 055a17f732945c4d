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

test('a value that fits no branch of a union of plain types is described by every branch', () => {
  const amount = compileValidator(
    Type.Object({ displayAmount: Type.Union([Type.String(), Type.Number({ minimum: 0 })]) }, Strict),
  );
  assert.throws(
    () => amount({ displayAmount: -1 }),
    (error: unknown) =>
      error instanceof VenueError &&
      error.data?.field === 'displayAmount' &&
      error.message === 'displayAmount must be string, or must be >= 0',
  );
  // A union of objects keeps the first error, which names the deeper field.
  const variants = compileValidator(
    Type.Union([
      Type.Object({ kind: Type.Literal('a'), size: Type.Number() }, Strict),
      Type.Object({ kind: Type.Literal('b') }, Strict),
    ]),
  );
  assert.throws(
    () => variants({ kind: 'a', size: 'x' }),
    (error: unknown) => error instanceof VenueError && error.data?.field === 'size',
  );
});

test('a field missing from, or unknown to, an optional object is named with its code', () => {
  const hedged = compileValidator(
    Type.Object(
      {
        hedge: Type.Union([
          Type.Object({ instrumentName: Type.String(), price: Type.String() }, Strict),
          Type.Null(),
        ]),
      },
      Strict,
    ),
  );
  const refusal = (value: unknown) => {
    try {
      hedged(value);
    } catch (error) {
      assert.ok(error instanceof VenueError);
      return { name: error.errorName, field: error.data?.field };
    }
    return null;
  };
  assert.deepEqual(refusal({ hedge: { instrumentName: 'X' } }), {
    name: 'missing_params',
    field: 'hedge.price',
  });
  assert.deepEqual(refusal({ hedge: { instrumentName: 'X', price: '1', size: 1 } }), {
    name: 'invalid_params',
    field: 'hedge.size',
  });
  assert.equal(refusal({ hedge: null }), null);
});

test('an optional union (Opt of a union) is described by its branches only, as a plain union is', async () => {
  const { EditOrderParams } = await import('./schemas/methods.ts');
  const edit = compileValidator(EditOrderParams);
  const message = (displayAmount: unknown) => {
    try {
      edit({ orderId: 'x', quantity: '10', displayAmount });
    } catch (error) {
      assert.ok(error instanceof VenueError, 'a VenueError');
      assert.equal(error.data?.field, 'displayAmount');
      return error.message;
    }
    return null;
  };
  assert.equal(message(-1), 'displayAmount must be string, or must be >= 0');
  assert.equal(message(true), 'displayAmount must be string, or must be number');
  assert.equal(message(null), null);
});
