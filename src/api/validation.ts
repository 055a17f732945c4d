/**
 * Schema validation for every method and body: TypeBox schemas compiled once by Ajv. The schema
 * is the single source of validation, TypeScript types (`Static`), the generated OpenAPI /
 * AsyncAPI documents and the sdk's types.
 *
 * Invariants: no coercion, unknown properties are refused, the first error names its field
 * (`data.field`, a path such as `otocoConfig[0].side`, written the way handlers name fields).
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { VenueError } from '../domain/errors.ts';

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false });

export type Validator = (value: unknown) => void;

/** Compiles a schema into a function that throws a VenueError naming the field at fault. */
export function compileValidator(schema: TSchema, root = 'params'): Validator {
  const check = ajv.compile(schema);
  return (value) => {
    if (!check(value)) throw toVenueError(check.errors?.[0], root);
  };
}

function toVenueError(error: ErrorObject | undefined, root: string): VenueError {
  if (error === undefined) return new VenueError('invalid_params');
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  switch (error.keyword) {
    case 'required': {
      const field = fieldPath([...path, String(error.params.missingProperty)]);
      return new VenueError('missing_params', `${field} is required`, { field });
    }
    case 'additionalProperties': {
      const field = fieldPath([...path, String(error.params.additionalProperty)]);
      return new VenueError('invalid_params', `${field} is not a known field`, { field });
    }
    case 'enum': {
      const field = path.length > 0 ? fieldPath(path) : root;
      const allowed = (error.params.allowedValues as unknown[]).join(', ');
      return new VenueError('invalid_params', `${field} must be one of ${allowed}`, { field });
    }
    default: {
      const field = path.length > 0 ? fieldPath(path) : root;
      return new VenueError('invalid_params', `${field} ${error.message ?? 'is invalid'}`, { field });
    }
  }
}

/** `legs[0].quantity` from `['legs', '0', 'quantity']`: array indices in brackets. */
function fieldPath(parts: readonly string[]): string {
  let field = '';
  for (const part of parts) {
    if (/^\d+$/.test(part)) field += `[${part}]`;
    else field += field === '' ? part : `.${part}`;
  }
  return field;
}

// Schema helpers shared by the method schemas.

/** An optional param that may also be sent as null (spec 4: null and omitted are equivalent). */
export function Opt<T extends TSchema>(schema: T) {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}

/**
 * One of a fixed set of strings, as a JSON Schema `enum` (not `anyOf` of constants: Ajv builds an
 * error object for every branch an accepted value does not match, about 200 bytes per field).
 */
export function StringEnum<const T extends string>(
  values: readonly T[],
  options: { readonly description?: string } = {},
) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

/** A decimal carried as a string on the wire. */
export const DecimalString = (options?: string | { readonly description?: string }) => {
  const description = typeof options === 'string' ? options : options?.description;
  return Type.String({
    pattern: '^-?\\d{1,20}(\\.\\d{1,20})?$',
    maxLength: 42,
    ...(description ? { description } : {}),
  });
};

export const Strict = { additionalProperties: false } as const;
