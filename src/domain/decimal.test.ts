import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DecimalGrid, formatScaled, parseDecimal } from './decimal.ts';
import { VenueError } from './errors.ts';

describe('DecimalGrid', () => {
  const tick = new DecimalGrid('0.5');
  const optionTick = new DecimalGrid('0.0001');

  test('parses exact multiples of the step into step counts', () => {
    assert.equal(tick.parse('100000.5', 'price'), 200001);
    assert.equal(optionTick.parse('0.0525', 'price'), 525);
    assert.equal(optionTick.parse('0.05250000', 'price'), 525);
  });

  test('prints step counts back as the shortest exact decimal', () => {
    assert.equal(tick.format(200001), '100000.5');
    assert.equal(tick.format(200000), '100000');
    assert.equal(optionTick.format(525), '0.0525');
    assert.equal(optionTick.format(-5), '-0.0005');
  });

  test('rejects off-grid values, too many decimals and junk, naming the field', () => {
    const expectError = (text: string, name: string) =>
      assert.throws(
        () => tick.parse(text, 'price'),
        (error: unknown) =>
          error instanceof VenueError && error.errorName === name && error.data?.field === 'price',
      );
    expectError('100000.25', 'precision_exceeded');
    expectError('100000.3', 'off_grid');
    expectError('1e5', 'invalid_params');
    expectError(' 1', 'invalid_params');
    expectError('', 'invalid_params');
    expectError('99999999999999999999', 'invalid_params');
  });

  test('property: format then parse is the identity on the grid', () => {
    fc.assert(
      fc.property(fc.constantFrom('0.5', '0.0001', '10', '0.001', '2.5'), fc.integer(), (step, steps) => {
        const grid = new DecimalGrid(step);
        assert.equal(grid.parse(grid.format(steps), 'x'), steps);
      }),
    );
  });

  const steps = fc.constantFrom(
    '0.5',
    '0.0001',
    '10',
    '0.001',
    '2.5',
    '1',
    '25',
    '0.00000001',
    '0.05',
    '100000',
  );
  const digits = (maxLength: number) =>
    fc.array(fc.integer({ min: 0, max: 9 }), { maxLength }).map((ds) => ds.join(''));
  /** Mostly plain decimals around the 15-digit fast-path limit, some junk. */
  const decimalText = fc.oneof(
    fc
      .tuple(
        fc.constantFrom('', '', '', '-', '+', ' '),
        digits(18),
        fc.option(digits(18).map((fraction) => `.${fraction}`)),
        fc.constantFrom('', '', '', '0', ' ', 'e5', '.'),
      )
      .map(([sign, whole, fraction, tail]) => `${sign}${whole}${fraction ?? ''}${tail}`),
    fc.string({ maxLength: 12 }),
  );
  const outcome = (run: () => number | string) => {
    try {
      return { value: run() };
    } catch (error) {
      assert.ok(error instanceof VenueError, String(error));
      return { error: error.errorName, message: error.message, data: error.data };
    }
  };

  test('property: parse agrees with the exact bigint path on any text (value or error)', () => {
    fc.assert(
      fc.property(steps, decimalText, (step, text) => {
        const grid = new DecimalGrid(step);
        assert.deepEqual(
          outcome(() => grid.parse(text, 'price')),
          outcome(() => grid.parseExact(text, 'price')),
        );
      }),
      { numRuns: 2000 },
    );
  });

  test('property: format agrees with the exact bigint path for any integer step count', () => {
    fc.assert(
      fc.property(
        steps,
        fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.integer({ min: -999_999, max: 999_999 })),
        (step, count) => {
          const grid = new DecimalGrid(step);
          assert.equal(grid.format(count), grid.formatExact(count));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('-0 parses to 0 and prints as 0', () => {
    assert.ok(Object.is(tick.parse('-0', 'price'), 0));
    assert.ok(Object.is(tick.parse('-0.0', 'price'), 0));
    assert.equal(tick.format(-0), '0');
  });

  test('property: parseDecimal and formatScaled round-trip any decimal string', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.integer({ min: 0, max: 18 }),
        (units, scale) => {
          const text = formatScaled(units, scale);
          const parsed = parseDecimal(text, 'x');
          assert.equal(formatScaled(parsed.units, parsed.scale), text);
        },
      ),
    );
  });
});

describe('DecimalGrid: parse rejections and float rounding (mutation audit)', () => {
  const tick = new DecimalGrid('0.5');
  const optionTick = new DecimalGrid('0.0001');
  const venueError = (name: string, field: string) => (error: unknown) =>
    error instanceof VenueError && error.errorName === name && error.data?.field === field;

  test('an explicit plus sign is rejected, never read as a minus', () => {
    assert.throws(
      () => tick.parse('+1', 'price'),
      venueError('invalid_params', 'price'),
      "grid parse of '+1'",
    );
    assert.throws(
      () => parseDecimal('+1', 'price'),
      venueError('invalid_params', 'price'),
      "parseDecimal('+1')",
    );
  });

  test('a second decimal point is junk on the fast path too', () => {
    assert.throws(
      () => optionTick.parse('0.0.5', 'price'),
      venueError('invalid_params', 'price'),
      "'0.0.5' must not parse as 0.05",
    );
  });

  test('more than 15 digits never takes the float path: a trailing digit is not rounded away', () => {
    assert.throws(
      () => optionTick.parse('0.05000000000000000001', 'price'),
      venueError('precision_exceeded', 'price'),
      "'0.05000000000000000001' must not parse as 0.05",
    );
  });

  test('a zero step is refused', () => {
    assert.throws(() => new DecimalGrid('0'), /grid step must be positive/, "step '0'");
    assert.throws(() => new DecimalGrid('0.000'), /grid step must be positive/, "step '0.000'");
  });

  test('fromNumber: nearest rounds, down and up absorb float noise on exact multiples', () => {
    assert.equal(tick.fromNumber(100.3), 201, 'nearest: 100.3 / 0.5 = 200.6 rounds to 201');
    assert.equal(optionTick.fromNumber(0.0003, 'down'), 3, 'down: 0.0003 (2.9999999999999996 ticks) is 3');
    assert.equal(optionTick.fromNumber(0.0051, 'up'), 51, 'up: 0.0051 (51.00000000000001 ticks) is 51');
    assert.equal(optionTick.fromNumber(0.00035, 'down'), 3, 'down: 3.5 ticks is 3');
    assert.equal(optionTick.fromNumber(0.00035, 'up'), 4, 'up: 3.5 ticks is 4');
  });
});

test('fromNumber nearest rounds a half away from zero on both sides, and never answers -0', () => {
  const unit = new DecimalGrid('1');
  assert.equal(unit.fromNumber(2.5), 3, '2.5 rounds to 3');
  assert.equal(unit.fromNumber(-2.5), -3, '-2.5 rounds to -3, as 2.5 rounds to 3');
  assert.equal(unit.fromNumber(-2.4), -2, '-2.4 rounds to -2');
  assert.ok(Object.is(unit.fromNumber(-0.3), 0), '-0.3 rounds to 0, not -0');
});
