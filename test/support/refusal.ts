/** The API error a call is refused with; fails the test when the call succeeds or fails otherwise. */
import assert from 'node:assert/strict';
import { ApiError } from '../../sdk/errors.ts';

export async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => assert.fail('expected a refusal'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ApiError, String(error));
  return error;
}

/** The refused call's error name, the field its data names and its message. */
export async function refusalParts(
  promise: Promise<unknown>,
): Promise<{ name: string; field: unknown; message: string }> {
  const error = await refusal(promise);
  return {
    name: error.errorName ?? '',
    field: (error.data as { field?: unknown }).field,
    message: error.message,
  };
}
