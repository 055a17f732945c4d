import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../domain/errors.ts';
import { mapError, refusalToVenueError } from './wire-errors.ts';

test('a VenueError maps to its catalogue code, status and data', () => {
  const mapped = mapError(new VenueError('invalid_params', 'price must be a string', { field: 'price' }));
  assert.deepEqual(mapped, {
    httpStatus: 200,
    error: { code: -32602, message: 'price must be a string', data: { field: 'price' } },
  });
  assert.equal(mapError(new VenueError('too_many_requests')).httpStatus, 429);
  assert.equal(mapError(new VenueError('clock_skew')).httpStatus, 401);
});

test('an unexpected exception becomes internal_error without a 5xx and is reported', () => {
  const seen: unknown[] = [];
  const mapped = mapError(new TypeError('boom'), (error) => seen.push(error));
  assert.deepEqual(mapped, { httpStatus: 200, error: { code: 11094, message: 'internal server error' } });
  assert.equal(seen.length, 1);
});

test('core refusals map by name; unknown names fall back to other_reject', () => {
  assert.equal(refusalToVenueError({ error: 'not_enough_funds' }).code, 10009);
  assert.equal(refusalToVenueError({ error: 'nonsense' as never }).code, 11030);
});
