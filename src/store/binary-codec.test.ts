import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { BatchEncoder, decodeBatch, encodeBatch } from './binary-codec.ts';

const viaJson = (values: unknown[]) => JSON.parse(JSON.stringify(values)) as unknown[];

test('decoding gives exactly what a JSON round trip gives (property)', () => {
  fc.assert(
    fc.property(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 12 }), (values) => {
      assert.deepEqual(decodeBatch(encodeBatch(values)), viaJson(values));
    }),
    { numRuns: 300 },
  );
});

test('JSON edge cases: -0, non-finite, omitted properties, toJSON, big and fractional numbers', () => {
  const values: unknown[] = [
    {
      a: -0,
      b: Number.NaN,
      c: Number.POSITIVE_INFINITY,
      d: undefined,
      e: () => 1,
      f: [undefined, Symbol('x')],
    },
    { when: new Date(0), nested: { toJSON: () => 'custom' } },
    [2 ** 31, -(2 ** 31), 2 ** 31 - 1, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 0.1, -1.5e-300],
    'lone \ud800 surrogate and emoji 😀',
    { ['__proto__']: 1, constructor: 2 },
    JSON.parse('{"__proto__": {"x": 1}}'),
    null,
    true,
    false,
  ];
  assert.deepEqual(decodeBatch(encodeBatch(values)), viaJson(values));
  const decoded = decodeBatch(encodeBatch([JSON.parse('{"__proto__": {"x": 1}}')]))[0] as object;
  assert.equal(Object.getPrototypeOf(decoded), Object.prototype);
  assert.deepEqual(Object.keys(decoded), ['__proto__']);
});

test('repeated strings and shapes are stored once', () => {
  const command = { type: 'place_order', instrumentName: 'BTC-27DEC24-60000-C', side: 'buy', amount: 5 };
  const copies = Array.from({ length: 100 }, () => command);
  const hundred = encodeBatch(copies).length;
  const json = JSON.stringify(copies).length;
  assert.ok(hundred * 4 < json, `${hundred} bytes for 100 copies vs ${json} as JSON`);
});

test('a batch is its own exact-size buffer, small or grown past the first chunk', () => {
  // Frames go to other threads by structured clone, which copies a view's whole backing store.
  for (const values of [[1], [{ text: 'x'.repeat(5000) }, Array.from({ length: 3000 }, (_, i) => i)]]) {
    const encoded = encodeBatch(values);
    assert.equal(encoded.byteOffset, 0);
    assert.equal(encoded.buffer.byteLength, encoded.length);
    assert.deepEqual(decodeBatch(encoded), viaJson(values));
  }
});

test('interleaved batches number the shared shapes each in their own table', () => {
  const first = new BatchEncoder();
  first.add({ a: 1, b: 2 });
  const second = new BatchEncoder();
  second.add({ x: 1 }, { a: 3, b: 4 });
  first.add({ c: 5 }, { a: 6, b: 7 });
  second.add({ a: 8, b: 9 });
  assert.deepEqual(decodeBatch(first.finish()), [{ a: 1, b: 2 }, { c: 5 }, { a: 6, b: 7 }]);
  assert.deepEqual(decodeBatch(second.finish()), [{ x: 1 }, { a: 3, b: 4 }, { a: 8, b: 9 }]);
});

test('objects with data-dependent keys: the shared shape trie starts over and batches still decode', () => {
  const wide = Object.fromEntries(Array.from({ length: 70_000 }, (_, i) => [`k${i}`, i]));
  const values = [{ a: 1, b: 'x' }, wide, { a: 2, b: 'y' }, { c: [{ a: 3, b: 'z' }] }];
  const first = encodeBatch(values);
  assert.deepEqual(decodeBatch(first), viaJson(values));
  // A batch begun before the restart and finished after it.
  const encoder = new BatchEncoder();
  encoder.add({ a: 1, b: 'x' });
  encodeBatch([wide, wide]);
  encoder.add({ a: 2, b: 'y' }, { d: null });
  assert.deepEqual(decodeBatch(encoder.finish()), [{ a: 1, b: 'x' }, { a: 2, b: 'y' }, { d: null }]);
});

test('values JSON cannot hold are refused', () => {
  assert.throws(() => encodeBatch([10n]), /BigInt/);
  assert.throws(() => encodeBatch([undefined]), /not JSON-serialisable/);
});

test('truncated or altered bytes never decode silently into different values', () => {
  const values = [{ type: 'x', n: 1, s: 'abc' }, [1, 2, 3], 'tail'];
  const encoded = encodeBatch(values);
  for (let cut = 0; cut < encoded.length; cut++) {
    assert.throws(() => decodeBatch(encoded.subarray(0, cut)));
  }
});
