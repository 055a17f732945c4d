/**
 * Maps refusals to the wire: `VenueError`s thrown at the edge and refusals returned by the core
 * become `{code, message, data}` plus the HTTP status the catalogue assigns.
 *
 * Invariants: every path yields a catalogue entry; anything unexpected becomes `internal_error`
 * (HTTP 200, never 5xx) and is reported to `onUnexpected` for logging, without leaking internals.
 */
import { ERROR_CATALOGUE, type ErrorData, type ErrorName, VenueError } from '../domain/errors.ts';

export interface WireError {
  readonly code: number;
  readonly message: string;
  readonly data?: ErrorData;
}

export interface MappedError {
  readonly httpStatus: number;
  readonly error: WireError;
}

/** A refusal as the core returns it (a result, not an exception). */
export interface Refusal {
  readonly error: ErrorName;
  readonly message?: string;
  readonly data?: ErrorData;
}

export function isErrorName(name: unknown): name is ErrorName {
  return typeof name === 'string' && Object.hasOwn(ERROR_CATALOGUE, name);
}

export function refusalToVenueError(refusal: Refusal): VenueError {
  const name = isErrorName(refusal.error) ? refusal.error : 'other_reject';
  return new VenueError(name, refusal.message, refusal.data);
}

export function mapError(error: unknown, onUnexpected?: (error: unknown) => void): MappedError {
  if (error instanceof VenueError) {
    const wire: WireError =
      error.data === undefined
        ? { code: error.code, message: error.message }
        : { code: error.code, message: error.message, data: error.data };
    return { httpStatus: error.httpStatus, error: wire };
  }
  onUnexpected?.(error);
  const definition = ERROR_CATALOGUE.internal_error;
  return { httpStatus: definition.httpStatus, error: { code: definition.code, message: definition.message } };
}
