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
    if (!check(value)) throw toVenueError(unionError(check.errors) ?? check.errors?.[0], root);
  };
}

/**
 * A value that fits no branch of a union of plain types (`"1.5"` or a number ≥ 0) is described by
 * all of them: Ajv's first error would name only the first branch ("must be string") although a
 * number was allowed. An object branch's missing or unknown field is named as such.
 */
function unionError(errors: ErrorObject[] | null | undefined): ErrorObject | undefined {
  const first = errors?.[0];
  const union = errors?.find((e) => e.keyword === 'anyOf' && e.instancePath === first?.instancePath);
  if (first === undefined || union === undefined) return undefined;
  // An object branch that is missing a field or has an unknown one (an optional object, `hedge`:
  // object or null): its error names the deeper field, at the union's own path.
  if (first.keyword === 'required' || first.keyword === 'additionalProperties') return undefined;
  // Every anyOf at this path is left out: an optional union (`Opt` of one) nests two.
  const branches = errors!.filter((e) => e.keyword !== 'anyOf' && e.instancePath === first.instancePath);
  // `null` stands for "not given" in optional fields: not worth naming beside the real types.
  const messages = [...new Set(branches.filter((e) => e.params.type !== 'null').map(requirement))];
  if (messages.length === 0) return undefined;
  return { ...first, keyword: 'anyOf', message: messages.join(', or ') };
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
    default: {
      const field = path.length > 0 ? fieldPath(path) : root;
      return new VenueError('invalid_params', `${field} ${requirement(error)}`, { field });
    }
  }
}

/**
 * A pattern for text that reaches the read store's SQL: no control characters (PostgreSQL refuses
 * a NUL in a text parameter, which would surface as an internal error instead of a bad param).
 */
export const PLAIN_TEXT = '^[^\\u0000-\\u001f\\u007f]*$';

/** What a value failed, e.g. `must be one of buy, sell` (a fixed set is answered with the set). */
function requirement(error: ErrorObject): string {
  if (error.keyword === 'enum')
    return `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
  if (error.keyword === 'pattern' && error.params.pattern === PLAIN_TEXT)
    return 'must not contain control characters';
  return error.message ?? 'is invalid';
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
