/**
 * Property tests of the instrument-name parsers (instrument.ts): `parseExpiryCode`,
 * `parseStrikeFromName`, `parseInstrumentName` and `comboKindOfName`, which the read store uses to
 * file every row by kind and currency:
 * - any string: null or a parse, never an exception; never both a single instrument and a combo;
 * - an expiry code parses only in its canonical spelling, at 08:00 UTC, and every day of 2000–2099
 *   round-trips through `formatExpiryCode`;
 * - every name the product builders write (market/products.ts `optionName`, futures, spot pairs)
 *   parses back to its parts.
 *
 * Runs: NAME_PROPERTY_RUNS (default 500 per property); NAME_PROPERTY_SEED replays a seed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { optionName, strikeText } from '../market/products.ts';
import {
  comboKindOfName,
  formatExpiryCode,
  formatStrikeForName,
  parseExpiryCode,
  parseInstrumentName,
  parseStrikeFromName,
} from './instrument.ts';

const RUNS = Number(process.env.NAME_PROPERTY_RUNS ?? 500);
const SEED = process.env.NAME_PROPERTY_SEED ? Number(process.env.NAME_PROPERTY_SEED) : undefined;
const runs = { numRuns: RUNS, seed: SEED, includeErrorInReport: true };

const DAY = 86_400_000;
const FIRST = Date.UTC(2000, 0, 1, 8);
const LAST = Date.UTC(2099, 11, 31, 8);
const expiryArb = fc.integer({ min: 0, max: (LAST - FIRST) / DAY }).map((d) => FIRST + d * DAY);
const currencyArb = fc.stringMatching(/^[A-Z0-9]{1,6}$/);
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const codeish = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 0, max: 40 }),
      fc.constantFrom(...MONTHS, 'Dec', 'XYZ'),
      fc.integer({ min: 0, max: 120 }),
    )
    .map(([d, m, y]) => `${d}${m}${y}`),
  fc
    .tuple(fc.stringMatching(/^[0-9]{1,3}$/), fc.constantFrom(...MONTHS), fc.stringMatching(/^[0-9]{1,3}$/))
    .map((p) => p.join('')),
  fc.string({ maxLength: 8 }),
);
/** Names built from name-like parts, near misses and anything. */
const nameish = fc.oneof(
  fc
    .array(
      fc.oneof(
        currencyArb,
        codeish,
        fc.constantFrom(
          'PERPETUAL',
          'C',
          'P',
          'X',
          'FS',
          'CS',
          'STRD',
          '70000',
          '0d625',
          '1d',
          'BTC_USDC',
          '27DEC26_PERP',
          '',
        ),
      ),
      {
        minLength: 1,
        maxLength: 5,
      },
    )
    .map((parts) => parts.join('-')),
  fc.string({ maxLength: 30 }),
);

describe('instrument names: properties', () => {
  test('expiry codes: canonical spellings only, at 08:00 UTC; every day of 2000–2099 round-trips', () => {
    fc.assert(
      fc.property(codeish, (code) => {
        const at = parseExpiryCode(code);
        if (at === null) return;
        assert.equal(formatExpiryCode(at), code);
        assert.equal(new Date(at).getUTCHours(), 8);
        assert.equal(at % DAY, 8 * 3_600_000);
      }),
      runs,
    );
    fc.assert(
      fc.property(expiryArb, (at) => {
        assert.equal(parseExpiryCode(formatExpiryCode(at)), at);
      }),
      runs,
    );
  });

  test('any name: null or a parse, never both a single instrument and a combo', () => {
    fc.assert(
      fc.property(nameish, (name) => {
        const parsed = parseInstrumentName(name);
        const combo = comboKindOfName(name);
        assert.ok(parsed === null || combo === null, `${name}: ${parsed?.kind} and ${combo}`);
        if (parsed === null) return;
        assert.ok(name.startsWith(parsed.baseCurrency));
        if (parsed.kind === 'option') {
          assert.ok(parsed.strike !== null && parsed.expiration !== null && parsed.optionType !== null);
          assert.ok(Number.isFinite(Number(parsed.strike)), `${name}: strike ${parsed.strike}`);
        }
      }),
      runs,
    );
  });

  test('names the product builders write parse back to their parts', () => {
    const strikeArb = fc.oneof(
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.integer({ min: 1, max: 999_999 }).map((n) => n / 1000),
      fc.double({ min: 1e-6, max: 1e12, noNaN: true }),
    );
    fc.assert(
      fc.property(
        currencyArb,
        fc.boolean(),
        expiryArb,
        strikeArb,
        fc.constantFrom('call', 'put'),
        (c, linear, at, strike, type) => {
          const name = optionName(c, linear, at, strike, type as 'call' | 'put');
          assert.deepEqual(parseInstrumentName(name), {
            kind: 'option',
            baseCurrency: c,
            quoteCurrency: linear ? 'USDC' : null,
            expiration: at,
            strike: strikeText(strike),
            optionType: type,
          });
          assert.equal(parseStrikeFromName(formatStrikeForName(strikeText(strike))), strikeText(strike));
          assert.equal(comboKindOfName(name), null);
        },
      ),
      runs,
    );
    fc.assert(
      fc.property(currencyArb, fc.option(currencyArb), expiryArb, (c, quote, at) => {
        const pair = quote === null ? c : `${c}_${quote}`;
        assert.deepEqual(parseInstrumentName(`${pair}-PERPETUAL`), {
          kind: 'future',
          baseCurrency: c,
          quoteCurrency: quote,
          expiration: null,
          strike: null,
          optionType: null,
        });
        assert.equal(parseInstrumentName(`${pair}-${formatExpiryCode(at)}`)?.expiration, at);
        if (quote !== null) assert.equal(parseInstrumentName(pair)?.kind, 'spot');
        else assert.equal(parseInstrumentName(pair), null);
      }),
      runs,
    );
  });
});
