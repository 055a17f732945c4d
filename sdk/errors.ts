/** The error an sdk call throws when the service answers `{rid, error}` (or a flat failure). */
import { ERROR_CATALOGUE, type ErrorName } from '../src/domain/errors.ts';
import type { WireErrorBody } from './types.ts';

const NAME_OF_CODE = new Map<number, ErrorName>(
  Object.entries(ERROR_CATALOGUE).map(([name, entry]) => [entry.code, name as ErrorName]),
);

export class ApiError extends Error {
  readonly code: number;
  /** The catalogue name of `code` (docs/errors.md), e.g. `not_enough_funds`; null for a code it lacks. */
  readonly errorName: ErrorName | null;
  readonly data: Record<string, unknown> | undefined;

  constructor(
    error: WireErrorBody,
    readonly httpStatus: number | null,
  ) {
    super(error.message);
    this.name = 'ApiError';
    this.code = error.code;
    this.errorName = NAME_OF_CODE.get(error.code) ?? null;
    this.data = error.data;
  }
}

/**
 * The time a post-crash refusal names (`unavailable` with `data.signedNotAfter`: the service
 * refuses requests signed up to then, as they may repeat ones it executed); null for any other
 * error. Takes a wire error body or an `ApiError`.
 */
export function signedNotAfter(error: { readonly code?: unknown; readonly data?: unknown }): number | null {
  if (error.code !== ERROR_CATALOGUE.unavailable.code) return null;
  const data = error.data;
  if (typeof data !== 'object' || data === null) return null;
  const until = (data as Record<string, unknown>).signedNotAfter;
  return typeof until === 'number' ? until : null;
}
