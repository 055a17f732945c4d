import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mock, test } from 'node:test';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { type WebSocket, WebSocketServer } from 'ws';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { freePort } from '../../test/support/free-port.ts';
import { PORTFOLIO_BASE_PATH } from '../api/portfolios/routes.ts';
import type { PortfolioInfoWire } from '../api/portfolios/wire.ts';
import { followNews, parsePortfolioCli, renderProgress, runPortfolioCli, USAGE } from './portfolio.ts';

/** The cli refuses `args`, with a message matching `pattern`. */
const refused = (pattern: RegExp, ...args: string[]) =>
  assert.rejects(
    runPortfolioCli(args, () => {}),
    (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    },
  );

/** `followNews` on a fake socket: the lines it prints, its `known`, and a push to its subscription. */
async function newsFollower() {
  let listener: ((push: SubscriptionPush) => void) | undefined;
  const ws = {
    subscribe: async (channels: string[], on?: (push: SubscriptionPush) => void) => {
      listener = on;
      return channels;
    },
  };
  const lines: string[] = [];
  const known = await followNews(ws, (line) => lines.push(line));
  return { lines, known, push: (push: SubscriptionPush) => listener!(push) };
}

/** One leg of `info` as the progress block reads it: a buy, not priority, nothing filled yet priced. */
function progressLeg(fields: Record<string, unknown>) {
  return {
    side: 1,
    hedge: false,
    priority: false,
    averagePrice: null,
    arrivalPrice: null,
    slippageBps: null,
    ...fields,
  };
}

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
      progressLeg({
        instrument: 'BTC-PERPETUAL',
        quantity: '100',
        filledQuantity: '50',
        priority: true,
        averagePrice: '60010',
        arrivalPrice: '60000',
        slippageBps: 1.67,
      }),
      progressLeg({ side: 2, instrument: 'BTC-27DEC26-70000-C', quantity: '2', filledQuantity: '0' }),
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
  const { lines, known, push } = await newsFollower();
  const news = (portfolioId: number, type: string, price?: string) => ({
    channel: 'trade-news',
    seq: 1,
    data: { type, portfolioId, instrument: 'BTC-PERPETUAL', quantity: '100', price },
  });
  push(news(7, 'ORDER_FILLED', '65001'));
  push(news(8, 'ORDER_FILLED', '1'));
  assert.deepEqual(lines, []);
  known(7);
  push(news(7, 'PORTFOLIO_COMPLETED'));
  assert.deepEqual(lines, ['  fill BTC-PERPETUAL 100 @ 65001', '  PORTFOLIO_COMPLETED']);
});

test('portfolio cli mistakes: usage on --help, errors naming the argument, no polling storm', async () => {
  const lines: string[] = [];
  await runPortfolioCli(['--help'], (line) => lines.push(line));
  assert.deepEqual(lines, [USAGE]);
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

test('ORDER_PLACED news is not printed; other events are', async () => {
  const { lines, known, push } = await newsFollower();
  known(7);
  push({
    channel: 'trade-news',
    seq: 1,
    data: { type: 'ORDER_PLACED', portfolioId: 7 },
  } as SubscriptionPush);
  push({
    channel: 'trade-news',
    seq: 2,
    data: { type: 'PORTFOLIO_CANCELLED', portfolioId: 7 },
  } as SubscriptionPush);
  assert.deepEqual(lines, ['  PORTFOLIO_CANCELLED']);
});

test('the progress bar rounds to the nearest cell', () => {
  const info = {
    portfolioId: 1,
    portfolioType: 'TWAP',
    portfolioStatus: 'WORKING',
    currentPart: null,
    balanceTrade: null,
    endReason: null,
    endMessage: null,
    legs: [progressLeg({ instrument: 'X', quantity: '100', filledQuantity: '65' })],
  } as unknown as PortfolioInfoWire;
  assert.match(renderProgress(info)[1]!, /\[#{16}\.{8}\]/);
});

/**
 * A loopback stand-in for the service, small enough to force any status: `info` answers
 * `statuses` in turn (the last one again once they run out) for a one-leg TWAP; the WebSocket
 * answers every call (auth, subscribe) and remembers the key that signed in.
 */
async function fakeService(statuses: string[]) {
  const seen = { infoPolls: 0, wsKeys: [] as string[], sockets: [] as WebSocket[] };
  const server = createServer((request, response) => {
    if (!request.url?.startsWith(`${PORTFOLIO_BASE_PATH}/info`)) {
      response.writeHead(404).end();
      return;
    }
    const portfolioStatus = statuses[Math.min(seen.infoPolls++, statuses.length - 1)]!;
    const value = {
      portfolioId: 7,
      portfolioType: 'TWAP',
      portfolioStatus,
      currentPart: null,
      balanceTrade: null,
      endReason: null,
      endMessage: null,
      legs: [progressLeg({ instrument: 'BTC-PERPETUAL', quantity: '100', filledQuantity: '0' })],
    };
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ succ: true, value }));
  });
  const wss = new WebSocketServer({ server, path: '/ws' });
  wss.on('connection', (socket) => {
    seen.sockets.push(socket);
    socket.on('message', (data) => {
      const { rid, method, params } = JSON.parse(String(data)) as {
        rid: number;
        method: string;
        params: { apiKey?: string; channels?: string[] };
      };
      if (method === 'public/auth') seen.wsKeys.push(params.apiKey!);
      const result =
        method === 'public/auth'
          ? { userId: 1, accountIds: [1], defaultAccountId: 1, roles: ['trade'], deskName: null }
          : (params.channels ?? true);
      socket.send(JSON.stringify({ rid, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      for (const socket of seen.sockets) socket.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Runs the cli against `service` with setTimeout faked: each event-loop turn moves the fake time
 * on by the poll interval, so watch's polls come without real waiting. Restores the exit code.
 */
async function runAgainst(service: { url: string }, ...args: string[]) {
  const lines: string[] = [];
  const savedExitCode = process.exitCode;
  process.exitCode = undefined;
  mock.timers.enable({ apis: ['setTimeout'] });
  let done = false;
  try {
    const run = runPortfolioCli(
      [...args, '--url', service.url, '--key', 'k_cli', '--secret', 's_cli', '--interval', '100'],
      (line) => lines.push(line),
    ).finally(() => {
      done = true;
    });
    while (!done) {
      await nextLoopTurn();
      mock.timers.tick(100);
    }
    await run;
    return { lines, exitCode: process.exitCode };
  } finally {
    mock.timers.reset();
    process.exitCode = savedExitCode;
  }
}

test('watch stops at EXPIRED and exits 2; an unchanged progress block is printed once', async () => {
  const service = await fakeService(['WORKING', 'WORKING', 'EXPIRED', 'COMPLETED']);
  try {
    const { lines, exitCode } = await runAgainst(service, 'watch', '7');
    assert.equal(service.seen.infoPolls, 3, 'watch polls until EXPIRED and no further');
    assert.equal(exitCode, 2, 'a portfolio that ended otherwise than COMPLETED exits 2');
    assert.deepEqual(
      lines.map((line) => line.split('\n')[0]),
      ['portfolio 7 TWAP WORKING', 'portfolio 7 TWAP EXPIRED'],
      'the second WORKING block, unchanged, is not printed again',
    );
  } finally {
    await service.close();
  }
});

test('watch follows even with --no-follow, signs in with --key over API_KEY, and closes its WebSocket', async () => {
  const service = await fakeService(['COMPLETED']);
  const env = { key: process.env.API_KEY, secret: process.env.API_SECRET };
  process.env.API_KEY = 'k_env';
  process.env.API_SECRET = 's_env';
  try {
    const { lines, exitCode } = await runAgainst(service, 'watch', '7', '--no-follow');
    assert.equal(service.seen.infoPolls, 1, '--no-follow does not stop watch from following');
    assert.deepEqual(lines, [
      'portfolio 7 TWAP COMPLETED\n  BUY  BTC-PERPETUAL            [........................] 0/100',
    ]);
    assert.equal(exitCode, 0, 'COMPLETED exits 0');
    assert.deepEqual(service.seen.wsKeys, ['k_cli'], 'the --key option wins over API_KEY');
    assert.equal(service.seen.sockets.length, 1, 'one WebSocket session');
    assert.ok(
      service.seen.sockets[0]!.readyState >= 2,
      `the cli closed its WebSocket before returning (server state ${service.seen.sockets[0]!.readyState})`,
    );
  } finally {
    if (env.key === undefined) delete process.env.API_KEY;
    else process.env.API_KEY = env.key;
    if (env.secret === undefined) delete process.env.API_SECRET;
    else process.env.API_SECRET = env.secret;
    await service.close();
  }
});

test('a service that is not listening is reported by its address', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  await refused(
    new RegExp(
      `cannot reach the service at ${url.replace(/\./g, '\\.')} \\(ECONNREFUSED\\): is it running\\?`,
    ),
    'watch',
    '7',
    '--url',
    url,
    '--key',
    'k_1',
    '--secret',
    's_1',
  );
});
