/**
 * Property tests of the envelope parser every HTTP and WebSocket request goes through
 * (dispatcher.ts `parseEnvelope`, `salvageRid`):
 * - any JSON text, parsed as the routes parse it, is an envelope or a `bad_request` (HTTP 400)
 *   naming the field at fault when there is one, never another exception;
 * - a well-formed envelope (safe-integer rid, method of 1–128 characters, params an object, null
 *   or absent, optional `jsonrpc`) is parsed to exactly its parts;
 * - `salvageRid` gives the rid of any body that has a safe-integer one, else null.
 *
 * Runs: ENVELOPE_PROPERTY_RUNS (default 500 per property); ENVELOPE_PROPERTY_SEED replays a seed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { VenueError } from '../domain/errors.ts';
import { parseEnvelope, salvageRid } from './dispatcher.ts';

const RUNS = Number(process.env.ENVELOPE_PROPERTY_RUNS ?? 500);
const SEED = process.env.ENVELOPE_PROPERTY_SEED ? Number(process.env.ENVELOPE_PROPERTY_SEED) : undefined;
const runs = { numRuns: RUNS, seed: SEED, includeErrorInReport: true };

const ENVELOPE_KEYS = ['rid', 'method', 'params', 'jsonrpc'];

const leaf = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(2 ** 53, -(2 ** 53), 1.5, -0, 1e300, 0),
  fc.string({ maxLength: 10 }),
  fc.string({ minLength: 120, maxLength: 140 }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(
  leaf,
  fc.array(leaf, { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), leaf, { maxKeys: 2 }),
);
/** Objects with envelope keys holding any value, sometimes an extra key (`__proto__` too). */
const shaped = fc
  .tuple(
    fc.record({ rid: value, method: value, params: value, jsonrpc: value }, { requiredKeys: [] }),
    fc.option(
      fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'id', 'RID')),
    ),
    value,
  )
  .map(([record, extra, extraValue]) =>
    extra === null
      ? JSON.stringify(record)
      : `{${JSON.stringify(extra)}:${JSON.stringify(extraValue)},${JSON.stringify(record).slice(1)}`,
  )
  .map((text) => text.replace(',}', '}'));
const jsonText = fc.oneof(fc.json({ maxDepth: 3 }), shaped);

describe('envelope parsing: properties', () => {
  test('any JSON body: an envelope or bad_request naming the field, never another exception', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const body: unknown = JSON.parse(text);
        let envelope: ReturnType<typeof parseEnvelope>;
        try {
          envelope = parseEnvelope(body);
        } catch (error) {
          assert.ok(error instanceof VenueError, `${String(error)} for ${text}`);
          assert.equal(error.errorName, 'bad_request', text);
          assert.equal(error.httpStatus, 400);
          const field = error.data?.field;
          if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
            assert.ok(
              (typeof field === 'string' && Object.hasOwn(body, field)) ||
                ['rid', 'method'].includes(field as string),
              `${String(field)} for ${text}`,
            );
          } else {
            // No object at all: the whole body is at fault.
            assert.equal(field, 'body', text);
          }
          return;
        }
        const record = body as Record<string, unknown>;
        assert.ok(
          Object.keys(record).every((key) => ENVELOPE_KEYS.includes(key)),
          text,
        );
        assert.equal(envelope.rid, record.rid);
        assert.ok(Number.isSafeInteger(envelope.rid));
        assert.equal(envelope.method, record.method);
        assert.ok(envelope.method.length >= 1 && envelope.method.length <= 128);
        assert.deepEqual(envelope.params, record.params ?? {});
        assert.ok(typeof envelope.params === 'object' && !Array.isArray(envelope.params));
      }),
      runs,
    );
  });

  test('a well-formed envelope is parsed to its parts', () => {
    fc.assert(
      fc.property(
        fc.maxSafeInteger(),
        fc.string({ minLength: 1, maxLength: 128 }),
        fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }), {
          nil: undefined,
        }),
        fc.option(fc.constant('2.0')),
        fc.boolean(),
        (rid, method, params, jsonrpc, nullParams) => {
          const sent = {
            rid,
            method,
            ...(params === undefined ? (nullParams ? { params: null } : {}) : { params }),
            ...(jsonrpc === null ? {} : { jsonrpc }),
          };
          const body: unknown = JSON.parse(JSON.stringify(sent));
          const sentParams = params === undefined ? {} : JSON.parse(JSON.stringify(params));
          assert.deepEqual(parseEnvelope(body), { rid, method, params: sentParams });
          assert.equal(salvageRid(body), rid);
        },
      ),
      runs,
    );
  });

  test('salvageRid: the safe-integer rid of any body, else null', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const body: unknown = JSON.parse(text);
        const rid = salvageRid(body);
        const sent =
          typeof body === 'object' && body !== null && 'rid' in body
            ? (body as { rid: unknown }).rid
            : undefined;
        assert.equal(rid, typeof sent === 'number' && Number.isSafeInteger(sent) ? sent : null, text);
      }),
      runs,
    );
  });
});

describe('envelope parsing: boundaries', () => {
  /** The field a refused body names (`bad_request`), or null when it is an envelope. */
  function refused(body: unknown): unknown {
    try {
      parseEnvelope(body);
    } catch (error) {
      assert.ok(error instanceof VenueError);
      assert.equal(error.errorName, 'bad_request');
      return error.data?.field;
    }
    return null;
  }

  test('rid within ±(2^53 - 1), method of 1 to 128 characters, params an object, null or absent', () => {
    assert.equal(refused({ rid: 2 ** 53 - 1, method: 'public/time' }), null);
    assert.equal(refused({ rid: -(2 ** 53 - 1), method: 'public/time' }), null);
    assert.equal(refused({ rid: 2 ** 53, method: 'public/time' }), 'rid');
    assert.equal(refused({ rid: -(2 ** 53), method: 'public/time' }), 'rid');
    assert.equal(refused({ rid: 1, method: 'm'.repeat(128) }), null);
    assert.equal(refused({ rid: 1, method: 'm'.repeat(129) }), 'method');
    assert.equal(refused({ rid: 1, method: '' }), 'method');
    assert.equal(refused({ rid: 1, method: 'public/time', params: [] }), 'params');
    // A body that is no object names the body (a WebSocket message names the message).
    for (const body of [[], [{ rid: 1, method: 'public/time' }], 'x', 7, null, true])
      assert.equal(refused(body), 'body', JSON.stringify(body));
    try {
      parseEnvelope([], 'message');
      assert.fail('expected a refusal');
    } catch (error) {
      assert.ok(error instanceof VenueError);
      assert.equal(error.data?.field, 'message');
    }
    assert.equal(refused({ rid: 1, method: 'public/time', params: 'x' }), 'params');
    assert.deepEqual(parseEnvelope({ rid: 1, method: 'public/time', params: null }).params, {});
    assert.deepEqual(parseEnvelope({ rid: 1, method: 'public/time' }).params, {});
  });
});
