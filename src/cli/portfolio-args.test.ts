import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePortfolioCli, runPortfolioCli } from './portfolio.ts';

const refused = (pattern: RegExp, ...args: string[]) =>
  assert.rejects(
    runPortfolioCli(args, () => {}),
    (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    },
  );

test('portfolioId 0 and non-decimal spellings are refused, naming the field', async () => {
  await refused(/portfolioId must be a positive integer, got '0'/, 'info', '0');
  await refused(/portfolioId must be a positive integer, got '1e3'/, 'info', '1e3');
  await refused(/portfolioId must be a positive integer, got '0x10'/, 'cancel', '0x10');
});

test('--interval 99 is refused; 100 (the documented minimum) passes the interval check', async () => {
  await refused(/--interval must be .* got '99'/, 'watch', '1', '--interval', '99');
  // 100 gets past the interval check: the next failure is about something else (credentials).
  await assert.rejects(
    runPortfolioCli(['watch', '1', '--interval', '100', '--credentials', '/nonexistent/c.json'], () => {}),
    (error: Error) => {
      assert.doesNotMatch(error.message, /--interval/);
      assert.match(error.message, /cannot read credentials file/);
      return true;
    },
  );
});

test('a boolean option is never joined with the next argument', () => {
  const { values, positionals } = parsePortfolioCli(['submit', '--no-follow', 'body.json']);
  assert.equal(values['no-follow'], true);
  assert.deepEqual(positionals, ['submit', 'body.json']);
});

test('a --key without a secret is not used alone: the credentials file is read instead', async () => {
  const env = { key: process.env.API_KEY, secret: process.env.API_SECRET };
  delete process.env.API_KEY;
  delete process.env.API_SECRET;
  try {
    await refused(
      /cannot read credentials file \/nonexistent\/c\.json/,
      'info',
      '1',
      '--key',
      'k_1',
      '--credentials',
      '/nonexistent/c.json',
    );
  } finally {
    if (env.key !== undefined) process.env.API_KEY = env.key;
    if (env.secret !== undefined) process.env.API_SECRET = env.secret;
  }
});
test("an --interval past setTimeout's limit (2^31-1 ms) is refused, not turned into a 1 ms poll", async () => {
  await assert.rejects(
    runPortfolioCli(
      ['watch', '1', '--interval', '3000000000', '--credentials', '/nonexistent/c.json'],
      () => {},
    ),
    (error: Error) => {
      assert.match(error.message, /--interval/);
      return true;
    },
  );
});
