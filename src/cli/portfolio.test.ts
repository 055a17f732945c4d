import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SubscriptionPush } from '../../sdk/types.ts';
import type { PortfolioInfoWire } from '../api/portfolios/wire.ts';
import { followNews, parsePortfolioCli, renderProgress, runPortfolioCli, USAGE } from './portfolio.ts';

test('the progress block shows status, part, per-leg bars, average, arrival and slippage', () => {
  const info = {
    portfolioId: 7,
    portfolioType: 'BALANCE',
    portfolioStatus: 'WORKING',
    currentPart: 1,
    balanceTrade: { parts: 3 },
    endReason: null,
    endMessage: null,
    legs: [
      {
        side: 1,
        instrument: 'BTC-PERPETUAL',
        quantity: '100',
        filledQuantity: '50',
        hedge: false,
        priority: true,
        averagePrice: '60010',
        arrivalPrice: '60000',
        slippageBps: 1.67,
      },
      {
        side: 2,
        instrument: 'BTC-27DEC26-70000-C',
        quantity: '2',
        filledQuantity: '0',
        hedge: false,
        priority: false,
        averagePrice: null,
        arrivalPrice: null,
        slippageBps: null,
      },
    ],
  } as unknown as PortfolioInfoWire;
  const lines = renderProgress(info);
  assert.equal(lines[0], 'portfolio 7 BALANCE WORKING part 2/3');
  assert.match(
    lines[1]!,
    /BUY {2}BTC-PERPETUAL +\[#{12}\.{12}\] 50\/100 priority avg 60010 arrival 60000 slippage 1\.67 bps/,
  );
  assert.match(lines[2]!, /SELL BTC-27DEC26-70000-C +\[\.{24}\] 0\/2$/);
});

test('trade-news pushes that arrive before the submit answers are shown once the id is known', async () => {
  let listener: ((push: SubscriptionPush) => void) | undefined;
  const ws = {
    subscribe: async (channels: string[], on?: (push: SubscriptionPush) => void) => {
      listener = on;
      return channels;
    },
  };
  const lines: string[] = [];
  const known = await followNews(ws, (line) => lines.push(line));
  const news = (portfolioId: number, type: string, price?: string) => ({
    channel: 'trade-news',
    seq: 1,
    data: { type, portfolioId, instrument: 'BTC-PERPETUAL', quantity: '100', price },
  });
  listener!(news(7, 'ORDER_FILLED', '65001'));
  listener!(news(8, 'ORDER_FILLED', '1'));
  assert.deepEqual(lines, []);
  known(7);
  listener!(news(7, 'PORTFOLIO_COMPLETED'));
  assert.deepEqual(lines, ['  fill BTC-PERPETUAL 100 @ 65001', '  PORTFOLIO_COMPLETED']);
});

test('portfolio cli mistakes: usage on --help, errors naming the argument, no polling storm', async () => {
  const lines: string[] = [];
  await runPortfolioCli(['--help'], (line) => lines.push(line));
  assert.deepEqual(lines, [USAGE]);
  const refused = (pattern: RegExp, ...args: string[]) =>
    assert.rejects(
      runPortfolioCli(args, () => {}),
      (error: Error) => {
        assert.match(error.message, pattern);
        return true;
      },
    );
  await refused(/^usage:/);
  await refused(/unknown command 'bogus'/, 'bogus', '1');
  await refused(/submit needs <file\.json>/, 'submit');
  await refused(/Unknown option '--nope'[\s\S]*usage:/, 'info', '1', '--nope');
  await refused(
    /--interval must be a whole number of milliseconds from 100 to 2147483647, got 'abc'/,
    'watch',
    '1',
    '--interval',
    'abc',
  );
  await refused(/--interval must be .* got '0'/, 'watch', '1', '--interval', '0');
  await refused(/portfolioId must be a positive integer, got 'abc'/, 'info', 'abc');
  await refused(/cannot read portfolio file \/nonexistent\/body\.json/, 'submit', '/nonexistent/body.json');
});

test('portfolio cli: a value that starts with a dash is taken, a forgotten value is still refused', async () => {
  // base64url secrets start with '-' one time in 64; parseArgs alone refuses them as ambiguous.
  const { values } = parsePortfolioCli([
    'info',
    '7',
    '--key',
    'k_1',
    '--secret',
    '-Ab_9',
    '--interval',
    '200',
  ]);
  assert.equal(values.secret, '-Ab_9', 'the dash-led secret is the value of --secret');
  assert.equal(values.key, 'k_1', 'the key is read as before');
  assert.equal(values.interval, '200', 'later options are read as before');
  assert.equal(
    parsePortfolioCli(['info', '7', '--secret', '--x']).values.secret,
    '--x',
    'a secret led by two dashes too',
  );
  assert.throws(
    () => parsePortfolioCli(['info', '7', '--key', '--secret', 's']),
    /Option '--key' argument is ambiguous/,
    'a --key whose value was forgotten is still refused, not given the name --secret',
  );
  assert.throws(
    () => parsePortfolioCli(['info', '7', '--key', '--url=http://x']),
    /Option '--key' argument is ambiguous/,
    'an option written with = counts as an option name too',
  );
});
