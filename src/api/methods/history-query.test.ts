import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../../domain/errors.ts';
import { historyQuery } from './history.ts';

test("a read store's RangeError becomes invalid_params naming the field it is about", async () => {
  const field = async (message: string) =>
    historyQuery(() => Promise.reject(new RangeError(message))).then(
      () => assert.fail('refused'),
      (error: unknown) => {
        assert.ok(error instanceof VenueError && error.errorName === 'invalid_params', String(error));
        return [error.data?.field, error.message];
      },
    );
  assert.deepEqual(await field('count out of range'), ['count', 'count out of range']);
  assert.deepEqual(await field('offset out of range'), ['offset', 'offset out of range']);
  assert.deepEqual(await field('invalid continuation token'), ['continuation', 'invalid continuation token']);
  await assert.rejects(
    historyQuery(() => Promise.reject(new TypeError('boom'))),
    TypeError,
    'other errors pass through',
  );
});
