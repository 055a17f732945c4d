import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { jsonBytes } from './json-bytes.ts';

function sameAsStringify(value: unknown): void {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) {
    assert.throws(() => jsonBytes(value), TypeError);
    return;
  }
  const bytes = jsonBytes(value);
  assert.ok(bytes.equals(Buffer.from(text)), `${bytes.toString()} !== ${text}`);
}

test('property: the bytes of JSON.stringify for any JSON value, any unicode in strings', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => sameAsStringify(value)),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ unit: 'binary' }), fc.array(fc.string({ unit: 'binary' }), { maxLength: 4 })),
      (value) => sameAsStringify(value),
    ),
    { numRuns: 1000 },
  );
});

test('property: the bytes of JSON.stringify for anything else it accepts', () => {
  const anything = fc.anything({
    withBoxedValues: true,
    withNullPrototype: true,
    withDate: true,
    withSparseArray: true,
    withTypedArray: true,
    withMap: true,
    withSet: true,
    values: [
      fc.double(),
      fc.integer(),
      fc.maxSafeInteger(),
      fc.constantFrom(undefined, null, -0, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 1e21, 1e-7),
      fc.string({ unit: 'binary' }),
      fc.boolean(),
      fc.constant(() => 1),
      fc.constant(Symbol('s')),
    ],
  });
  fc.assert(
    fc.property(anything, (value) => sameAsStringify(value)),
    { numRuns: 2000 },
  );
});

test('toJSON is applied with its key, and an omitted result drops the member', () => {
  const keys: string[] = [];
  const spy = (result: unknown) => ({
    toJSON(key: string) {
      keys.push(key);
      return result;
    },
  });
  sameAsStringify({ a: spy(1), b: spy(undefined), c: [spy('x'), spy(undefined)], d: new Date(0) });
  // Once for JSON.stringify, once for jsonBytes.
  assert.deepEqual(keys, ['a', 'b', '0', '1', 'a', 'b', '0', '1']);
});

test('a BigInt throws as JSON.stringify does; a top-level value without JSON form throws', () => {
  assert.throws(() => jsonBytes({ amount: 10n }), TypeError);
  assert.throws(() => jsonBytes(undefined), TypeError);
  assert.throws(() => jsonBytes(() => 1), TypeError);
});

test('answers larger than the scratch buffer and nested calls from toJSON come out whole', () => {
  const big = { rows: Array.from({ length: 5000 }, (_, i) => ({ i, name: `row-${i}`, ok: i % 2 === 0 })) };
  sameAsStringify(big);
  sameAsStringify({ inner: { toJSON: () => JSON.parse(jsonBytes({ x: [1, 'é'] }).toString()) }, after: 'z' });
});

test('integers around the split at 10^8 and at the ends of the safe range print as JSON.stringify prints them', () => {
  const edges = [1, 9, 10, 99_999_999, 100_000_000, 100_000_001, 1_000_000_007, 1_764_415_200_123];
  for (const n of [...edges, 2 ** 31 - 1, 2 ** 31, 10 ** 15, 10 ** 16 - 1, Number.MAX_SAFE_INTEGER]) {
    for (const value of [n, -n]) sameAsStringify({ value, list: [value, 0, -0] });
  }
});
