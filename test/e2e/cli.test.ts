/** The operator CLI against a running server: users, accounts (opened and funded), keys, deposits. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpClient } from '../../sdk/http-client.ts';
import { runCli } from '../../src/cli/admin.ts';
import { FakeVenue } from '../support/fake-venue.ts';
import { startHarness } from '../support/gateway-harness.ts';

test('cli creates a user, a funded account and a key that trades; deposits go through the server', async () => {
  const venue = new FakeVenue();
  const harness = await startHarness({ venue, fileKeyStore: true });
  const saved = { DATA_DIR: process.env.DATA_DIR, SECRET_ENCRYPTION_KEY: process.env.SECRET_ENCRYPTION_KEY };
  process.env.DATA_DIR = harness.dataDir;
  delete process.env.SECRET_ENCRYPTION_KEY;
  const lines: string[] = [];
  const cli = async (...args: string[]) => {
    lines.length = 0;
    await runCli([...args, '--url', harness.baseUrl], (line) => lines.push(line));
    return lines.join('\n');
  };
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
    process.env.DATA_DIR = saved.DATA_DIR;
    if (saved.SECRET_ENCRYPTION_KEY !== undefined)
      process.env.SECRET_ENCRYPTION_KEY = saved.SECRET_ENCRYPTION_KEY;
    await harness.close();
  }
});
