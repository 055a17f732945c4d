import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../../domain/errors.ts';
import { Authenticator } from './authenticator.ts';
import { SecretBox } from './secret-box.ts';
import { signHttp, signWs } from './signature.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

const SKEW = 15_000;
const T = 1_700_000_000_000;
const NONCE = '5d41402a-bc4b-4a76-b971-9d911017c592';

function setup() {
  const store = new SqliteKeyStore(':memory:', SecretBox.fromText('22'.repeat(32)));
  const user = store.createUser('u', 0);
  store.createAccount(user.id, 'a', 0);
  const key = store.createApiKey({ userId: user.id, roles: ['trade'] }, 0);
  return { store, key };
}

/**
 * A clean restart whose service clock starts behind the time of the last request the stopped run
 * admitted (it starts at max(journal's last command time, wall clock): a quiet tail and a clock
 * that was being slewed back). The saved nonces are restored, but ones expiring more than the
 * ring's span after the restart time land on a live slot and are forgotten early.
 */
for (const behindMs of [0, 1_000]) {
  test(`a restored public/auth nonce is refused again after a restart ${behindMs} ms behind the save`, () => {
    const { store, key } = setup();
    let now = T;
    const before = new Authenticator(store, () => now, { clockSkewMs: SKEW });
    // A client clock 15 s ahead: accepted, and kept until T + 30 s.
    const ts = T + SKEW;
    const auth = {
      apiKey: key.record.apiKey,
      timestamp: ts,
      nonce: NONCE,
      signature: signWs(key.apiSecret, String(ts), NONCE),
    };
    assert.equal(before.authenticateWs(auth).userId, key.record.userId);
    const saved = JSON.parse(JSON.stringify(before.saveReplayMemory()));

    now = T - behindMs;
    const after = new Authenticator(store, () => now, { clockSkewMs: SKEW });
    after.restoreReplayMemory(saved);
    now = T; // the clock catches up; the captured message's timestamp is still inside the window
    assert.throws(
      () => after.authenticateWs(auth),
      (error: unknown) => error instanceof VenueError && error.errorName === 'nonce_reused',
      'the same public/auth message authenticated a second socket',
    );
  });
}

test('the same over HTTP: a byte-identical retry after such a restart runs again instead of replaying', async () => {
  const { store, key } = setup();
  let now = T;
  const before = new Authenticator(store, () => now, { clockSkewMs: SKEW });
  const ts = String(T + SKEW);
  const body = '{"rid":1,"method":"private/buy","params":{}}';
  const request = {
    authorization: `Bearer ${key.record.apiKey}`,
    timestamp: ts,
    nonce: NONCE,
    signature: signHttp(key.apiSecret, ts, NONCE, 'POST', '/api/private/buy', body),
    method: 'POST',
    pathWithQuery: '/api/private/buy',
    body,
  };
  const first = before.authenticateHttp(request);
  if (first.kind !== 'fresh') assert.fail('expected fresh');
  first.settle({ status: 200, body: 'refused: not enough margin' });
  const saved = JSON.parse(JSON.stringify(before.saveReplayMemory()));
  now = T - 1_000;
  const after = new Authenticator(store, () => now, { clockSkewMs: SKEW });
  after.restoreReplayMemory(saved);
  now = T;
  assert.equal(after.authenticateHttp(request).kind, 'replay');
});
