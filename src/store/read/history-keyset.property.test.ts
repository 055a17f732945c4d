/**
 * Property tests of the continuation tokens the read store hands out and parses:
 * - history tokens `<seq>:<id>` (history-keyset.ts): any string is no token (''), a position, or a
 *   RangeError (the gateway's invalid_params naming `continuation`), never another exception;
 *   `historyToken` → `parseHistoryToken` round-trips for every seq and id; `idNumber` computes
 *   what `idNumberSql` computes in SQLite for any id (the keyset's invariant);
 * - number tokens (keyset-page.ts) and RFQ trade tokens `<timestamp>:<number>` (rfq/trades.ts):
 *   the same, with their own refusal (RangeError, resp. null).
 *
 * Runs: TOKEN_PROPERTY_RUNS (default 300 per property); TOKEN_PROPERTY_SEED replays a seed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { parseContinuation } from '../../rfq/trades.ts';
import { historyToken, idNumber, idNumberSql, parseHistoryToken } from './history-keyset.ts';
import { numberToken } from './keyset-page.ts';

const RUNS = Number(process.env.TOKEN_PROPERTY_RUNS ?? 300);
const SEED = process.env.TOKEN_PROPERTY_SEED ? Number(process.env.TOKEN_PROPERTY_SEED) : undefined;
const runs = { numRuns: RUNS, seed: SEED, includeErrorInReport: true };

/** `fn(token)`, or the RangeError it throws; anything else thrown fails the property. */
function parsedOrRefused<T>(fn: (token: string) => T, token: string): T | RangeError {
  try {
    return fn(token);
  } catch (error) {
    assert.ok(error instanceof RangeError, `${String(error)} for ${JSON.stringify(token)}`);
    assert.match(error.message, /continuation/);
    return error;
  }
}

/** Number-ish texts: plain, signed, padded, blank, hex, exponent, huge, fractional. */
const numberish = fc.oneof(
  fc.nat().map(String),
  fc.maxSafeNat().map(String),
  fc.constantFrom(
    '',
    ' ',
    '-1',
    '+1',
    '01',
    ' 1',
    '1 ',
    '0x1f',
    '0b1',
    '0o7',
    '1e3',
    '1.5',
    '1.0',
    'Infinity',
    '-0',
  ),
  fc.constantFrom('9007199254740993', '1'.repeat(16), '\u00a01', '\u20281', '١'),
  fc.stringMatching(/^[0-9]{1,20}$/),
);
/** Ids as the engine writes them (BTC-12, BTC-SL-13, BTC-T12) and anything else. */
const idArb = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('BTC-', 'ETH-T', 'BTC-SL-', 'BTC_USDC-', '', 'legacy', 'a:b-'),
      fc.stringMatching(/^[0-9]{0,15}$/),
    )
    .map(([prefix, n]) => prefix + n),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 10 }),
);
const tokenArb = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc
    .tuple(numberish, fc.constantFrom(':', '::', ' :', ''), idArb)
    .map(([seq, colon, id]) => `${seq}${colon}${id}`),
);

describe('history continuation tokens', () => {
  test('any string: no token, a position, or a RangeError', () => {
    fc.assert(
      fc.property(tokenArb, (token) => {
        const parsed = parsedOrRefused(parseHistoryToken, token);
        if (token === '') assert.equal(parsed, null);
        if (parsed === null || parsed instanceof RangeError) return;
        assert.ok(Number.isSafeInteger(parsed.seq));
        assert.ok(token.endsWith(`:${parsed.id}`));
        // The id's number is what the keyset compares: refused (a RangeError), never wrong.
        parsedOrRefused(idNumber, parsed.id);
      }),
      runs,
    );
  });

  test('historyToken → parseHistoryToken round-trips every seq and id', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), idArb, (seq, id) => {
        assert.deepEqual(parseHistoryToken(historyToken(seq, id)), { seq, id });
      }),
      runs,
    );
  });

  test('a token the parser accepts is one historyToken writes', () => {
    fc.assert(
      fc.property(tokenArb, (token) => {
        const parsed = parsedOrRefused(parseHistoryToken, token);
        if (parsed === null || parsed instanceof RangeError) return;
        assert.equal(historyToken(parsed.seq, parsed.id), token);
        assert.ok(parsed.seq >= 0, `negative seq from ${JSON.stringify(token)}`);
      }),
      runs,
    );
  });

  test('idNumber computes what idNumberSql computes (SQLite), or refuses an id with more than 15 trailing digits', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE ids (k INTEGER PRIMARY KEY, id TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO ids (k, id) VALUES (?, ?)');
      const read = db.prepare<[number], { n: number | bigint }>(
        `SELECT ${idNumberSql('id')} AS n FROM ids WHERE k = ?`,
      );
      read.safeIntegers(true);
      let k = 0;
      // Ids are the engine's (no control characters: SQLite's length() stops at a NUL).
      const hasControl = (id: string) => [...id].some((c) => c.charCodeAt(0) < 0x20);
      const plainId = fc
        .oneof(
          idArb,
          fc.tuple(fc.string({ maxLength: 6 }), fc.stringMatching(/^[0-9]{0,18}$/)).map(([a, b]) => a + b),
        )
        .filter((id) => !hasControl(id));
      fc.assert(
        fc.property(plainId, (id) => {
          insert.run(++k, id);
          const sql = BigInt(read.get(k)!.n);
          const js = parsedOrRefused(idNumber, id);
          if (js instanceof RangeError) {
            assert.ok(/[0-9]{16,}$/.test(id), `refused ${JSON.stringify(id)}`);
            return;
          }
          assert.equal(BigInt(js), sql, `idNumber(${JSON.stringify(id)}) = ${js}, SQL ${sql}`);
        }),
        { ...runs, numRuns: RUNS * 2 },
      );
    } finally {
      db.close();
    }
  });
});

describe('number and RFQ trade tokens', () => {
  test('numberToken: any string is no token, the number it spells, or a RangeError; it round-trips', () => {
    fc.assert(
      fc.property(fc.oneof(numberish, fc.string({ maxLength: 20 })), (token) => {
        const parsed = parsedOrRefused(numberToken, token);
        if (token === '') assert.equal(parsed, null);
        if (parsed === null || parsed instanceof RangeError) return;
        assert.ok(Number.isSafeInteger(parsed) && parsed >= 0);
        assert.equal(BigInt(parsed), BigInt(token), `${JSON.stringify(token)} → ${parsed}`);
      }),
      runs,
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 15 - 1 }), (n) => {
        assert.equal(numberToken(String(n)), n);
      }),
      runs,
    );
  });

  test('RFQ trade tokens: any string is null or the pair it spells; timestamp:number round-trips', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          tokenArb,
          fc.tuple(numberish, numberish).map(([a, b]) => `${a}:${b}`),
        ),
        (token) => {
          const parsed = parseContinuation(token);
          if (parsed === null) return;
          const [timestamp, number] = token.split(':');
          assert.equal(BigInt(parsed.timestamp), BigInt(timestamp!));
          assert.equal(BigInt(parsed.number), BigInt(number!));
          assert.ok(Number.isSafeInteger(parsed.timestamp) && Number.isSafeInteger(parsed.number));
        },
      ),
      runs,
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 ** 15 - 1 }),
        fc.integer({ min: 1, max: 10 ** 15 - 1 }),
        (ts, n) => {
          assert.deepEqual(parseContinuation(`${ts}:${n}`), { timestamp: ts, number: n });
        },
      ),
      runs,
    );
  });
});
