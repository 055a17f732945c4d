/**
 * The operator CLI against a running server: users, accounts (opened and funded), keys, deposits;
 * and against a stopped one's data directory: storage:vacuum.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HttpClient } from '../../sdk/http-client.ts';
import { loadAdminToken } from '../../src/api/admin.ts';
import { openKeyStore } from '../../src/api/auth/open-key-store.ts';
import { runCli, USAGE } from '../../src/cli/admin.ts';
import { runPortfolioCli } from '../../src/cli/portfolio.ts';
import { orderCommand } from '../../src/engine/testkit.ts';
import { FakeVenue } from '../support/fake-venue.ts';
import { startHarness } from '../support/gateway-harness.ts';
import { PERP, startCore, startPortfolioHarness } from '../support/portfolio-harness.ts';
import { startTestService } from '../support/service-harness.ts';

/**
 * Points the admin CLI at `dataDir` (DATA_DIR, and no SECRET_ENCRYPTION_KEY of the test run's);
 * returns what puts the environment back.
 */
function cliEnvFor(dataDir: string): () => void {
  const saved = { DATA_DIR: process.env.DATA_DIR, SECRET_ENCRYPTION_KEY: process.env.SECRET_ENCRYPTION_KEY };
  process.env.DATA_DIR = dataDir;
  delete process.env.SECRET_ENCRYPTION_KEY;
  return () => {
    if (saved.DATA_DIR === undefined) delete process.env.DATA_DIR;
    else process.env.DATA_DIR = saved.DATA_DIR;
    if (saved.SECRET_ENCRYPTION_KEY === undefined) delete process.env.SECRET_ENCRYPTION_KEY;
    else process.env.SECRET_ENCRYPTION_KEY = saved.SECRET_ENCRYPTION_KEY;
  };
}

/** Runs the admin CLI against the service at `baseUrl`: its output, joined, and its last lines. */
function adminCli(baseUrl: string) {
  const lines: string[] = [];
  const cli = async (...args: string[]) => {
    lines.length = 0;
    await runCli([...args, '--url', baseUrl], (line) => lines.push(line));
    return lines.join('\n');
  };
  return { cli, lines };
}

test('cli creates a user, a funded account and a key that trades; deposits go through the server', async () => {
  const venue = new FakeVenue();
  const harness = await startHarness({ venue, fileKeyStore: true });
  const restoreEnv = cliEnvFor(harness.dataDir);
  const { cli } = adminCli(harness.baseUrl);
  try {
    const user = JSON.parse(await cli('user:create', 'desk-x')) as { id: number };
    const accountOut = await cli('account:create', String(user.id), 'main', '--fund');
    assert.match(accountOut, /opened account \d+ in the running server with test funds/);
    const key = JSON.parse(
      await cli(
        'key:create',
        String(user.id),
        '--roles',
        'trade,maker',
        '--desk',
        'DESKX',
        '--rate-matching',
        '5:20',
      ),
    ) as {
      apiKey: string;
      apiSecret: string;
      rateLimits: unknown;
    };
    assert.deepEqual(key.rateLimits, { matching: { perSecond: 5, burst: 20 } });
    const client = new HttpClient({ baseUrl: harness.baseUrl, credentials: key, now: () => venue.now() });
    assert.equal((await client.call('private/get_account_summary', { currency: 'BTC' })).balance, '100');
    const accountId = JSON.parse((await cli('users')) as string).find((u: { id: number }) => u.id === user.id)
      .accounts[0];
    await cli('deposit', String(accountId), 'BTC', '0.5');
    assert.equal((await client.call('private/get_account_summary', { currency: 'BTC' })).balance, '100.5');
    await cli('key:disable', key.apiKey);
    harness.gateway.authenticator.invalidate(key.apiKey);
    await assert.rejects(client.call('private/get_open_orders', {}));
    // Admin endpoints refuse without the token.
    const refused = await fetch(`${harness.baseUrl}/admin/deposit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(refused.status, 401);
  } finally {
    restoreEnv();
    await harness.close();
  }
});

test('admin provisioning checks every deposit before opening the account; a short admin token is refused at start', async () => {
  const venue = new FakeVenue();
  const harness = await startHarness({ venue, fileKeyStore: true });
  try {
    const token = readFileSync(join(harness.dataDir, 'admin.token'), 'utf8').trim();
    const provision = async (body: object) => {
      const answer = await fetch(`${harness.baseUrl}/admin/accounts/provision`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': token },
        body: JSON.stringify(body),
      });
      return (await answer.json()) as { succ: boolean; message: string };
    };
    const user = harness.keyStore.createUser('provisioned', venue.now());
    const account = harness.keyStore.createAccount(user.id, 'main', venue.now());
    const unknown = await provision({ accountId: account.id, deposits: { XYZ: '1' } });
    assert.equal(unknown.succ, false);
    assert.match(unknown.message, /unknown currency XYZ/);
    const negative = await provision({ accountId: account.id, deposits: { BTC: '-1' } });
    assert.equal(negative.succ, false);
    assert.equal(venue.accountSummary(account.id, 'BTC'), undefined, 'a refusal opened nothing');
    // A currency in lower case is the currency: it lands where get_account_summary shows it.
    assert.equal((await provision({ accountId: account.id, deposits: { btc: '7' } })).succ, true);
    assert.equal(venue.accountSummary(account.id, 'BTC')!.balance, 700_000_000);
    const again = await provision({ accountId: account.id });
    assert.equal(again.succ, false);
    assert.match(again.message, /already open/);
  } finally {
    await harness.close();
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'admin-token-'));
  try {
    writeFileSync(join(dataDir, 'admin.token'), '\n', { mode: 0o600 });
    assert.throws(() => loadAdminToken(dataDir), /admin token .* shorter than 16 characters/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('cli mistakes: usage on --help, errors that name the argument, no store created in a wrong DATA_DIR', async () => {
  const venue = new FakeVenue();
  const harness = await startHarness({ venue, fileKeyStore: true });
  const restoreEnv = cliEnvFor(harness.dataDir);
  const lines: string[] = [];
  const cli = async (...args: string[]) => {
    lines.length = 0;
    await runCli(args, (line) => lines.push(line));
    return lines.join('\n');
  };
  const at = ['--url', harness.baseUrl];
  const refused = (pattern: RegExp, ...args: string[]) =>
    assert.rejects(cli(...args), (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    });
  const wrongDir = mkdtempSync(join(tmpdir(), 'cli-wrong-'));
  try {
    assert.equal(await cli('--help'), USAGE);
    assert.equal(await cli('-h'), USAGE);
    await refused(/^usage:/, ...[]);
    await refused(/unknown command 'bogus'[\s\S]*usage:/, 'bogus');
    await refused(/Unknown option '--nope'[\s\S]*usage:/, 'users', '--nope');
    await refused(/a user named 'taker' already exists/, 'user:create', 'taker');
    await refused(/userId must be a positive integer, got 'abc'/, 'account:create', 'abc');
    await refused(/userId must be a positive integer, got '0'/, 'key:list', '0');
    await refused(/user 999 does not exist/, 'account:create', '999', ...at);
    await refused(
      /unknown role 'bogus' in --roles \(roles: trade, taker, maker\)/,
      'key:create',
      '1',
      '--roles',
      'trade,bogus',
    );
    await refused(
      /--rate-matching must be <perSecond>:<burst> with perSecond > 0 and burst >= 1, got '0:0'/,
      'key:create',
      '1',
      '--rate-matching',
      '0:0',
    );
    // Desk and user names are held to the rules of labels, naming the field (stop 43).
    await refused(
      /^--desk must not contain control characters, got "EVIL\\nDESK\\u0001"$/,
      'key:create',
      '1',
      '--roles',
      'maker',
      '--desk',
      'EVIL\nDESK\u0001',
    );
    await refused(
      /^--desk must not start or end with a space/,
      'key:create',
      '1',
      '--roles',
      'maker',
      '--desk',
      ' MAKER1',
    );
    await refused(
      /^--desk must be at most 64 characters/,
      'key:create',
      '1',
      '--roles',
      'maker',
      '--desk',
      'A'.repeat(300),
    );
    await refused(/^role 'trade' is listed twice in --roles$/, 'key:create', '1', '--roles', 'trade,trade');
    await refused(/^name must not contain control characters/, 'user:create', 'bad\u0001name\n');
    await refused(/^name must not be empty, got ""$/, 'user:create', '');
    await refused(/no API key 'k_missing'/, 'key:disable', 'k_missing');
    await refused(/unknown currency XYZ; the venue holds .*BTC/, 'deposit', '1', 'XYZ', '1', ...at);
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const unreachable = ['--url', `http://127.0.0.1:${closedPort}`];
    await refused(
      /cannot reach the service at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): is it running\?/,
      'deposit',
      '1',
      'BTC',
      '1',
      ...unreachable,
    );
    // A service that took the request and dropped the connection may have applied it.
    const dropping = createServer((socket) => socket.once('data', () => socket.destroy()));
    const droppingPort = await new Promise<number>((resolve) =>
      dropping.listen(0, '127.0.0.1', () => resolve((dropping.address() as { port: number }).port)),
    );
    try {
      await refused(
        /failed without an answer .*it may have been applied: run it again with --id [0-9a-f-]{36} \(the same account, currency and amount\): the service credits that id once/,
        'deposit',
        '1',
        'BTC',
        '1',
        '--url',
        `http://127.0.0.1:${droppingPort}`,
      );
    } finally {
      dropping.close();
    }
    await refused(/user 999 does not exist/, 'key:create', '999');
    const user = JSON.parse(await cli('user:create', 'offline-user')) as { id: number };
    // Asked to fund it and could not: a failure a script sees (stop 43); without --fund, stored is done.
    await refused(
      /^account \d+ stored; the service will open it at its next start, unfunded: run deposit once it is up \(cannot reach/,
      'account:create',
      String(user.id),
      'main',
      '--fund',
      ...unreachable,
    );
    assert.match(
      await cli('account:create', String(user.id), 'second', ...unreachable),
      /account \d+ stored; the service will open it at its next start \(cannot reach/,
    );
    // Negative numbers reach the checks that name the argument, not the option parser (stop 43).
    await refused(/^userId must be a positive integer, got '-1'$/, 'account:create', '-1');
    await refused(/^amount must be positive \(a decimal number\), got '-1'$/, 'deposit', '6', 'BTC', '-1');
    await refused(
      /^amount must be positive \(a decimal number\), got '-0.5'$/,
      'deposit',
      '6',
      'BTC',
      '-0.5',
    );
    await refused(/^amount must be positive \(a decimal number\), got '0'$/, 'deposit', '6', 'BTC', '0');
    await refused(/^--account must be a positive integer, got '-2'$/, 'key:create', '1', '--account', '-2');
    // A DATA_DIR the service never used: refused, and nothing is created there.
    process.env.DATA_DIR = join(wrongDir, 'data');
    await refused(
      /no key store at .*keys\.db: set DATA_DIR to the service's data directory/,
      'user:create',
      'x',
    );
    assert.equal(existsSync(process.env.DATA_DIR), false);
    assert.deepEqual(readdirSync(wrongDir), []);
  } finally {
    restoreEnv();
    rmSync(wrongDir, { recursive: true, force: true });
    await harness.close();
  }
});

test('cli deposits carry an id: a retry with --id credits once, across a restart; another content is refused; desks rotate', async () => {
  let running = await startTestService({ config: { simulator: false } });
  const restoreEnv = cliEnvFor(running.dataDir);
  const lines: string[] = [];
  const cli = async (...args: string[]) => {
    lines.length = 0;
    await runCli([...args, '--url', running.baseUrl], (line) => lines.push(line));
    return [...lines];
  };
  const refused = (pattern: RegExp, ...args: string[]) =>
    assert.rejects(cli(...args), (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    });
  const accountId = String(running.credentials[0]!.accountIds[0]);
  const balance = async () =>
    (await running.http(0).call('private/get_account_summary', { currency: 'BTC' })).balance;
  try {
    assert.equal(await balance(), '100');
    // Each invocation makes its own id and prints it first; the answer names it too.
    const first = await cli('deposit', accountId, 'BTC', '0.5');
    const id = /^depositId (\S+)$/.exec(first[0]!)![1]!;
    assert.equal((JSON.parse(first.slice(1).join('\n')) as { depositId: string }).depositId, id);
    assert.equal(await balance(), '100.5');
    const other = await cli('deposit', accountId, 'BTC', '0.5');
    assert.notEqual(other[0], first[0]);
    assert.equal(await balance(), '101');
    // A retry with the id answers as the deposit did and credits nothing.
    const retried = await cli('deposit', accountId, 'btc', '0.50', '--id', id);
    assert.deepEqual(JSON.parse(retried.slice(1).join('\n')), {
      ...JSON.parse(first.slice(1).join('\n')),
      amount: '0.50',
    });
    assert.equal(await balance(), '101');
    await refused(
      /depositId '.+' was already used for a different deposit/,
      'deposit',
      accountId,
      'BTC',
      '0.6',
      '--id',
      id,
    );
    await refused(/--id must be 1 to 64 characters/, 'deposit', accountId, 'BTC', '1', '--id', 'no spaces');
    // The ids are engine state: they survive a restart (journal and snapshot).
    running = await running.restart();
    assert.equal(await balance(), '101');
    await cli('deposit', accountId, 'BTC', '0.5', '--id', id);
    assert.equal(await balance(), '101');
    await refused(
      /depositId '.+' was already used for a different deposit/,
      'deposit',
      accountId,
      'ETH',
      '0.5',
      '--id',
      id,
    );

    // Desk rotation: the desk's user may add a key on it; another user is refused naming --desk.
    const maker = running.credentials[1]!;
    const rotated = JSON.parse(
      (await cli('key:create', String(maker.userId), '--roles', 'trade,maker', '--desk', 'MAKER1')).join(
        '\n',
      ),
    ) as { deskName: string; apiKey: string };
    assert.equal(rotated.deskName, 'MAKER1');
    await cli('key:disable', maker.apiKey);
    await refused(
      /^--desk MAKER1: the desk belongs to user \d+; another user's key cannot carry it/,
      'key:create',
      String(running.credentials[0]!.userId),
      '--roles',
      'maker',
      '--desk',
      'MAKER1',
    );
    // A look-alike in another case is that desk too (stop 43).
    await refused(
      /^--desk maker1: the desk belongs to user \d+ \(it is the desk MAKER1 but for letter case\); another user's key cannot carry it/,
      'key:create',
      String(running.credentials[0]!.userId),
      '--roles',
      'maker',
      '--desk',
      'maker1',
    );
  } finally {
    restoreEnv();
    await running.close();
  }
});

test('cli storage:vacuum compacts the stopped service’s SQLite stores; refused while it runs or with DATABASE_URL', async () => {
  const running = await startTestService({ config: { simulator: false } });
  const saved = { DATA_DIR: process.env.DATA_DIR, DATABASE_URL: process.env.DATABASE_URL };
  process.env.DATA_DIR = running.dataDir;
  delete process.env.DATABASE_URL;
  const lines: string[] = [];
  const cli = async (...args: string[]) => {
    lines.length = 0;
    await runCli(args, (line) => lines.push(line));
    return lines;
  };
  try {
    await assert.rejects(cli('storage:vacuum'), /is in use by another running service/);
    await running.close();
    const out = await cli('storage:vacuum');
    assert.deepEqual(
      out.map((line) => line.split(':')[0]),
      ['journal.sqlite', 'snapshots.sqlite', 'read.sqlite'],
    );
    for (const line of out) assert.match(line, /^\S+: \d+ → \d+ bytes$/);
    // The service starts again on the compacted stores.
    const again = await running.restart();
    assert.equal(again.service.recovery.ok, true);
    await again.close();
    process.env.DATABASE_URL = 'postgres://127.0.0.1:1/none';
    await assert.rejects(cli('storage:vacuum'), /with DATABASE_URL, PostgreSQL reclaims space itself/);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await running.close();
  }
});

test('keys sealed with SECRET_ENCRYPTION_KEY: the cli without it, or with another key, writes nothing and makes no key file; with it, works', async () => {
  const K1 = '5a'.repeat(32);
  let running = await startTestService({ config: { simulator: false, secretEncryptionKey: K1 } });
  const restoreEnv = cliEnvFor(running.dataDir);
  const cli = async (...args: string[]) => {
    const lines: string[] = [];
    await runCli([...args, '--url', running.baseUrl], (line) => lines.push(line));
    return lines.join('\n');
  };
  const keyFile = join(running.dataDir, 'secret.key');
  const stored = () => {
    const store = openKeyStore({ dataDir: running.dataDir, secretEncryptionKey: K1 });
    try {
      return { users: store.listUsers().length, keys: store.listKeys().length };
    } finally {
      store.close();
    }
  };
  const before = stored();
  const userId = String(running.credentials[0]!.userId);
  try {
    // Without the key: refused before anything is written, no key file made, no key issued.
    for (const args of [
      ['key:create', userId],
      ['user:create', 'nokey'],
      ['account:create', userId],
    ]) {
      await assert.rejects(cli(...args), (error: Error) => {
        assert.match(error.message, /sealed with an encryption key that is not available/);
        assert.match(error.message, /SECRET_ENCRYPTION_KEY/);
        assert.ok(error.message.includes(keyFile), 'names the key file');
        return true;
      });
      assert.equal(existsSync(keyFile), false, `${args[0]}: no secret.key written`);
    }
    assert.deepEqual(stored(), before, 'nothing written');
    // With another key: refused too, nothing written.
    process.env.SECRET_ENCRYPTION_KEY = '6b'.repeat(32);
    await assert.rejects(
      cli('key:create', userId),
      /cannot be opened with this encryption key.*SECRET_ENCRYPTION_KEY/,
    );
    await assert.rejects(cli('user:create', 'wrongkey'), /cannot be opened with this encryption key/);
    assert.deepEqual(stored(), before, 'nothing written');
    assert.equal(existsSync(keyFile), false);
    // With the key they were sealed with: the key is issued and answers.
    process.env.SECRET_ENCRYPTION_KEY = K1;
    const key = JSON.parse(await cli('key:create', userId)) as { apiKey: string; apiSecret: string };
    const client = () =>
      new HttpClient({ baseUrl: running.baseUrl, credentials: key, now: () => running.service.core.now() });
    assert.equal((await client().call('private/get_account_summary', { currency: 'BTC' })).balance, '100');
    assert.equal(stored().keys, before.keys + 1);
    // The service restarted without the key is refused the same way, and makes no key file either.
    await running.close();
    await assert.rejects(
      startTestService({ dataDir: running.dataDir, clock: running.clock, config: { simulator: false } }),
      /sealed with an encryption key that is not available/,
    );
    assert.equal(existsSync(keyFile), false);
    running = await running.restart();
    assert.equal((await client().call('private/get_account_summary', { currency: 'BTC' })).balance, '100');
  } finally {
    restoreEnv();
    await running.close();
  }
});

test('portfolio cli watch: exit code 0 for a COMPLETED portfolio, 2 for one that ended otherwise (CANCELLED)', async () => {
  // The core on a virtual clock, set once to the wall clock (the cli signs with it, and the
  // WebSocket login is checked against the core's time) and never advanced: each portfolio has
  // ended before watch starts, so watch answers from its first poll and never waits.
  const core = await startCore();
  core.clock.set(Date.now());
  const harness = await startPortfolioHarness(core);
  const savedExitCode = process.exitCode;
  const MULTI = 3;
  const credential = harness.credentials[MULTI]!;
  const accountId = credential.accountIds[0]!;
  const http = harness.http(MULTI);
  const { port } = harness.gateway.fastify.server.address() as { port: number };
  const legs = [
    {
      instrument: PERP,
      instrumentType: 'PERPETUAL' as const,
      side: 1 as const,
      quantity: '100',
      priceOptions: { priceType: 'LIMIT' as const, price: 60000, priceIn: 'USD' },
    },
  ];
  const watch = async (portfolioId: number) => {
    const lines: string[] = [];
    process.exitCode = undefined;
    await runPortfolioCli(
      [
        'watch',
        String(portfolioId),
        '--url',
        `http://127.0.0.1:${port}`,
        '--key',
        credential.apiKey,
        '--secret',
        credential.apiSecret,
        '--interval',
        '100',
      ],
      (line) => lines.push(line),
    );
    return { exitCode: process.exitCode, out: lines.join('\n') };
  };
  try {
    // Filled at once against a resting sell: COMPLETED, exit 0.
    const makerAccount = harness.credentials[1]!.accountIds[0]!;
    assert.ok(
      (await core.ports.submit(orderCommand(makerAccount, 'sell', 10, 120_000, { instrumentName: PERP }))).ok,
      'the maker rests a sell of 100 at 60,000',
    );
    const filled = (await http.submitPortfolio({ accountId, portfolioType: 'COMMON', legs })).portfolioId;
    assert.equal((await http.portfolioInfo(filled)).portfolioStatus, 'COMPLETED');
    const completed = await watch(filled);
    assert.match(completed.out, new RegExp(`portfolio ${filled} COMMON COMPLETED`));
    assert.equal(completed.exitCode, 0, completed.out);

    // Cancelled before it could fill: exit 2.
    const working = (
      await http.submitPortfolio({
        accountId,
        portfolioType: 'TWAP',
        twapTrade: { durationSec: 60, frequencySec: 10 },
        legs,
      })
    ).portfolioId;
    await http.cancelPortfolio({ portfolioId: working });
    assert.equal((await http.portfolioInfo(working)).portfolioStatus, 'CANCELLED');
    const cancelled = await watch(working);
    assert.match(cancelled.out, new RegExp(`portfolio ${working} TWAP CANCELLED`));
    assert.equal(cancelled.exitCode, 2, cancelled.out);
  } finally {
    process.exitCode = savedExitCode;
    await harness.close();
  }
});

test('cli key:create: default role, --account, both rate overrides; bad rates, unfunded accounts and a deposit without amount are refused', async () => {
  const venue = new FakeVenue();
  const harness = await startHarness({ venue, fileKeyStore: true });
  const restoreEnv = cliEnvFor(harness.dataDir);
  const { cli, lines } = adminCli(harness.baseUrl);
  const refused = (pattern: RegExp, ...args: string[]) =>
    assert.rejects(cli(...args), (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    });
  const taker = harness.credentials[0]!;
  const multi = harness.credentials.find((c) => c.accountIds.length === 2)!;
  try {
    // Without --roles a key may only trade: no taker or maker role it was not asked for.
    const plain = JSON.parse(await cli('key:create', String(taker.userId))) as { roles: string[] };
    assert.deepEqual(plain.roles, ['trade']);
    // --account picks the key's default account among the user's own.
    const second = multi.accountIds[1]!;
    const onSecond = JSON.parse(
      await cli('key:create', String(multi.userId), '--account', String(second)),
    ) as { userId: number; defaultAccountId: number };
    assert.equal(onSecond.userId, multi.userId);
    assert.equal(onSecond.defaultAccountId, second);
    await refused(
      new RegExp(`account ${taker.accountIds[0]} does not belong to user ${multi.userId}`),
      'key:create',
      String(multi.userId),
      '--account',
      String(taker.accountIds[0]),
    );
    // --rate-non-matching lands on the non-matching bucket, not the matching one.
    const limited = JSON.parse(
      await cli('key:create', String(taker.userId), '--rate-non-matching', '7:9'),
    ) as { rateLimits: unknown };
    assert.deepEqual(limited.rateLimits, { nonMatching: { perSecond: 7, burst: 9 } });
    // A rate of 0, a burst of 0 or trailing text is refused, naming the option.
    for (const bad of ['0:5', '5:0', '5:20x']) {
      await refused(
        new RegExp(`--rate-matching must be <perSecond>:<burst> .*got '${bad}'`),
        'key:create',
        String(taker.userId),
        '--rate-matching',
        bad,
      );
    }
    // account:create without --fund opens the account unfunded.
    await cli('account:create', String(taker.userId), 'spare');
    const unfunded = JSON.parse(lines[0]!) as { id: number };
    assert.match(lines[1]!, new RegExp(`^opened account ${unfunded.id} in the running server$`));
    assert.equal(venue.accountSummary(unfunded.id, 'BTC')?.balance, 0);
    // A deposit without an amount is a usage error, before any call.
    await refused(
      /usage: deposit <accountId> <currency> <amount>/,
      'deposit',
      String(taker.accountIds[0]),
      'BTC',
    );
    assert.equal(lines.length, 0, 'nothing printed (no deposit id for a call never made)');
    // A zero amount is refused by the service, naming the amount; nothing is credited.
    await refused(/amount must be positive/, 'deposit', String(taker.accountIds[0]), 'BTC', '0');
    // Ids are plain decimal digits: a mistyped one must not reach a real user or account.
    for (const id of ['0x1', '1e0', ' 1', '01']) {
      await refused(/userId must be a positive integer/, 'key:list', id);
      await refused(/accountId must be a positive integer/, 'deposit', id, 'BTC', '1');
    }
    // Something that is not the service answering (a wrong --url, a proxy's error page) is named.
    const page = createHttpServer((_request, response) =>
      response.writeHead(502).end('<html>bad gateway</html>'),
    );
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    try {
      const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
      await assert.rejects(
        runCli(['deposit', String(taker.accountIds[0]), 'BTC', '1', '--url', pageUrl], () => undefined),
        (error: Error) => {
          assert.match(error.message, /answered HTTP 502 with something that is not the service's answer/);
          assert.match(error.message, /it may have been applied: run it again with --id/);
          return true;
        },
      );
    } finally {
      await new Promise<void>((resolve) => page.close(() => resolve()));
    }
    // Without the admin token the CLI says where it looked and what to do, not a bare ENOENT.
    const tokenFile = join(harness.dataDir, 'admin.token');
    renameSync(tokenFile, `${tokenFile}.aside`);
    try {
      await refused(
        /no admin token at .*admin\.token: start the service once with this DATA_DIR/,
        'deposit',
        String(taker.accountIds[0]),
        'BTC',
        '1',
      );
    } finally {
      renameSync(`${tokenFile}.aside`, tokenFile);
    }
  } finally {
    restoreEnv();
    await harness.close();
  }
});
