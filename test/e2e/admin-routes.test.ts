/**
 * The admin routes (src/api/admin.ts): the token is compared in full, refusals and bad bodies are
 * flat refusals naming the field, and admin tokens have a minimum length.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FakeVenue } from '../support/fake-venue.ts';
import { startHarness } from '../support/gateway-harness.ts';

// A2/A7/A9/A5 -> target test/e2e/cli.test.ts
test('admin routes: a wrong token of the right length is 401; refusals and bad bodies are not answered succ', async () => {
  const venue = new FakeVenue();
  const harness = await startHarness({ venue });
  try {
    const token = readFileSync(join(harness.dataDir, 'admin.token'), 'utf8').trim();
    const post = async (url: string, body: unknown, presented = token) => {
      const answer = await fetch(`${harness.baseUrl}${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': presented },
        body: JSON.stringify(body),
      });
      return {
        status: answer.status,
        body: (await answer.json()) as { succ: boolean; code: number; message: string; data?: unknown },
      };
    };
    const user = harness.keyStore.createUser('audit', venue.now());
    const account = harness.keyStore.createAccount(user.id, 'main', venue.now());
    const deposits = () => venue.submitted.filter((c) => c.type === 'deposit').length;
    const before = deposits();

    // A token of the right length that is not the token.
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const wrong = await post(
      '/admin/deposit',
      { accountId: account.id, currency: 'BTC', amount: '1' },
      forged,
    );
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.succ, false);
    assert.deepEqual(wrong.body.data, { field: 'x-admin-token' }, 'the refusal names the header');
    assert.equal(deposits(), before, 'a forged token deposits nothing');

    // A body the schema refuses (accountId is not an integer): nothing submitted.
    const invalid = await post('/admin/deposit', { accountId: 'x', currency: 'BTC', amount: '1' });
    assert.equal(invalid.body.succ, false);
    assert.equal(deposits(), before);

    // A deposit the engine refuses (the account is not open there) is not answered succ.
    const refused = await post('/admin/deposit', { accountId: account.id, currency: 'BTC', amount: '1' });
    assert.equal(refused.body.succ, false);

    // One currency named twice, in two cases: refused, nothing opened.
    const twice = await post('/admin/accounts/provision', {
      accountId: account.id,
      deposits: { BTC: '1', btc: '2' },
    });
    assert.equal(twice.body.succ, false);
    assert.match(twice.body.message, /named twice/);
    assert.equal(venue.accountSummary(account.id, 'BTC'), undefined);
  } finally {
    await harness.close();
  }
});

// A3/A4 -> target test/e2e/cli.test.ts
test('admin tokens shorter than 16 characters are refused, by loadAdminToken and by registerAdminRoutes', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { loadAdminToken, registerAdminRoutes, MIN_ADMIN_TOKEN_LENGTH } = await import(
    '../../src/api/admin.ts'
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'admin-token-'));
  try {
    writeFileSync(join(dataDir, 'admin.token'), 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH - 1), { mode: 0o600 });
    assert.throws(() => loadAdminToken(dataDir), /shorter than 16 characters/);
    writeFileSync(join(dataDir, 'admin.token'), 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH), { mode: 0o600 });
    assert.equal(loadAdminToken(dataDir), 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const venue = new FakeVenue();
  const harness = await startHarness({ venue });
  try {
    for (const adminToken of ['', 'x'.repeat(MIN_ADMIN_TOKEN_LENGTH - 1)]) {
      assert.throws(
        () =>
          registerAdminRoutes(harness.gateway, {
            commands: venue,
            reads: venue as never,
            keyStore: harness.keyStore,
            adminToken,
          }),
        /too short/,
      );
    }
  } finally {
    await harness.close();
  }
});

test('a wrong admin token costs the client address a credit, as failed API authentication does: 429 once it has none (stop 43)', async () => {
  const venue = new FakeVenue();
  const burst = 5;
  const harness = await startHarness({
    venue,
    config: { rateLimits: { nonMatching: { perSecond: 0.001, burst } } },
  });
  try {
    const token = readFileSync(join(harness.dataDir, 'admin.token'), 'utf8').trim();
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const post = async (presented: string) => {
      const answer = await fetch(`${harness.baseUrl}/admin/deposit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-admin-token': presented },
        body: JSON.stringify({ accountId: 1, currency: 'BTC', amount: '1', depositId: 'd-1' }),
      });
      return { status: answer.status, body: (await answer.json()) as { code: number; data?: unknown } };
    };
    const statuses: number[] = [];
    for (let i = 0; i < burst + 3; i++) statuses.push((await post(forged)).status);
    assert.deepEqual(statuses, [...Array(burst).fill(401), 429, 429, 429]);
    const limited = await post(forged);
    assert.equal(limited.status, 429);
    assert.deepEqual(
      (limited.body.data as { field?: string; bucket?: string }).bucket,
      'non_matching',
      "the address's non-matching bucket",
    );
    // It is the bucket the address's public calls draw from.
    const publicCall = await fetch(`${harness.baseUrl}/api/public/time`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rid: 1, method: 'public/time', params: {} }),
    });
    assert.equal(publicCall.status, 429);
    // The right token is not charged: the operator's own calls are never refused for the flood.
    const right = await post(token);
    assert.notEqual(right.status, 429);
    assert.notEqual(right.status, 401);
  } finally {
    await harness.close();
  }
});
