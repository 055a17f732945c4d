/** The error an sdk call throws when the service answers `{rid, error}`. */
import type { WireErrorBody } from './types.ts';

export class ApiError extends Error {
  readonly code: number;
  readonly data: Record<string, unknown> | undefined;

  constructor(
    error: WireErrorBody,
    readonly httpStatus: number | null,
  ) {
    super(error.message);
    this.name = 'ApiError';
    this.code = error.code;
    this.data = error.data;
  }
}
