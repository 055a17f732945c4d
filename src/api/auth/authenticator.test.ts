import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../../domain/errors.ts';
import { Authenticator, DEFAULT_KEY_CACHE_TTL_MS, type HttpRequestParts } from './authenticator.ts';
import { SecretBox } from './secret-box.ts';
import { signHttp, signWs } from './signature.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

/** A fixed UUID-form nonce named by `label` (its bytes in the last group). */
function uuid(label: string): string {
  return `00000000-0000-4000-8000-${Buffer.from(label).toString('hex').padStart(12, '0')}`;
}

function setup() {
  const store = new SqliteKeyStore(':memory:', SecretBox.fromText('22'.repeat(32)));
  const user = store.createUser('u', 0);
  store.createAccount(user.id, 'a', 0);
  const key = store.createApiKey({ userId: user.id, roles: ['trade'] }, 0);
  let now = 1_700_000_000_000;
  const clock = {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
  const auth = new Authenticator(store, clock.now, { clockSkewMs: 15_000 });
  const request = (overrides: Partial<HttpRequestParts> & { ts?: number } = {}): HttpRequestParts => {
    const ts = String(overrides.ts ?? now);
    const nonce = overrides.nonce ?? uuid('n-1');
    const body = overrides.body ?? '{"rid":1,"method":"public/test","params":{}}';
    return {
      authorization: `Bearer ${key.record.apiKey}`,
      timestamp: ts,
      nonce,
      signature: signHttp(key.apiSecret, ts, nonce, 'POST', '/api/public/test', body),
      method: 'POST',
      pathWithQuery: '/api/public/test',
      body,
      ...overrides,
    };
  };
  return { auth, key, clock, request, store };
}

function errorName(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof VenueError) return error.errorName;
    throw error;
  }
  return 'none';
}

test('a correctly signed request authenticates to the key owner', () => {
  const { auth, key, request } = setup();
  const outcome = auth.authenticateHttp(request());
  assert.equal(outcome.kind, 'fresh');
  if (outcome.kind === 'fresh') assert.equal(outcome.principal.userId, key.record.userId);
});

test('method, path and body are covered by the signature', () => {
  const { auth, request } = setup();
  assert.equal(
    errorName(() => auth.authenticateHttp({ ...request(), body: '{}' })),
    'invalid_credentials',
  );
  assert.equal(
    errorName(() => auth.authenticateHttp({ ...request(), pathWithQuery: '/api/x' })),
    'invalid_credentials',
  );
  assert.equal(
    errorName(() => auth.authenticateHttp({ ...request(), method: 'GET' })),
    'invalid_credentials',
  );
  assert.equal(
    errorName(() => auth.authenticateHttp({ ...request(), authorization: undefined })),
    'authorization_required',
  );
  // An unknown key and a wrong signature are one answer: a refusal does not tell which keys exist.
  const refusalOf = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      assert.ok(error instanceof VenueError);
      return { name: error.errorName, message: error.message, data: error.data };
    }
    assert.fail('expected a refusal');
  };
  const unknownKey = refusalOf(() => auth.authenticateHttp({ ...request(), authorization: 'Bearer nope' }));
  assert.equal(unknownKey.name, 'invalid_credentials');
  assert.deepEqual(
    unknownKey,
    refusalOf(() => auth.authenticateHttp({ ...request(), signature: 'x'.repeat(44) })),
  );
});

test('timestamps beyond 15 s are refused with the server time', () => {
  const { auth, clock, request } = setup();
  const now = clock.now();
  try {
    auth.authenticateHttp(request({ ts: now - 15_001 }));
    assert.fail('expected clock_skew');
  } catch (error) {
    assert.ok(error instanceof VenueError);
    assert.equal(error.errorName, 'clock_skew');
    assert.equal(error.data?.serverTime, now);
  }
  assert.equal(auth.authenticateHttp(request({ ts: now + 15_000 })).kind, 'fresh');
});

test('a reused nonce is refused unless the request is byte-identical, which replays the answer', async () => {
  const { auth, request, clock } = setup();
  const first = auth.authenticateHttp(request());
  assert.equal(first.kind, 'fresh');
  const retry = auth.authenticateHttp(request());
  assert.equal(retry.kind, 'replay');
  if (first.kind === 'fresh') first.settle({ status: 200, body: 'original' });
  if (retry.kind === 'replay') assert.deepEqual(await retry.answer, { status: 200, body: 'original' });
  assert.equal(
    errorName(() => auth.authenticateHttp(request({ body: '{"other":1}' }))),
    'nonce_reused',
  );
  // Once the first timestamp has left the window, the nonce is forgotten (and the old ts refused).
  clock.advance(20_000);
  assert.equal(auth.authenticateHttp(request()).kind, 'fresh');
  assert.ok(auth.rememberedNonces <= 2);
});

test('a nonce is kept a window past the moment it was seen, not only past its timestamp', () => {
  const { auth, request, clock } = setup();
  // Signed 14 s ago: still inside the window when it arrives.
  assert.equal(auth.authenticateHttp(request({ ts: clock.now() - 14_000 })).kind, 'fresh');
  clock.advance(2_000);
  assert.equal(
    errorName(() => auth.authenticateHttp(request({ ts: clock.now(), body: '{"other":1}' }))),
    'nonce_reused',
  );
  clock.advance(14_000);
  assert.equal(auth.authenticateHttp(request({ ts: clock.now(), body: '{"other":1}' })).kind, 'fresh');
});

test('websocket auth signs ts\\nnonce\\nGET\\n/ws\\n and never accepts a nonce twice', () => {
  const { auth, key, clock } = setup();
  const ts = clock.now();
  const params = {
    apiKey: key.record.apiKey,
    timestamp: ts,
    nonce: uuid('w1'),
    signature: signWs(key.apiSecret, String(ts), uuid('w1')),
  };
  assert.equal(auth.authenticateWs(params).userId, key.record.userId);
  assert.equal(
    errorName(() => auth.authenticateWs(params)),
    'nonce_reused',
  );
  // The same message again is no "different request": the refusal says what to do instead.
  assert.throws(() => auth.authenticateWs(params), /accepted once; sign a new one/);
  assert.equal(
    errorName(() => auth.authenticateWs({ ...params, nonce: uuid('w2') })),
    'invalid_credentials',
  );
});

test('fingerprint retention: a byte-identical retry runs again, a different request is refused', () => {
  const { auth, request } = setup();
  const first = auth.authenticateHttp(request(), 'fingerprint');
  assert.equal(first.kind, 'fresh');
  if (first.kind === 'fresh') first.settle({ status: 200, body: 'not kept' });
  assert.equal(auth.authenticateHttp(request(), 'fingerprint').kind, 'fresh');
  assert.equal(auth.rememberedAnswerBytes, 0);
  assert.equal(
    errorName(() => auth.authenticateHttp(request({ body: '{"other":1}' }), 'answer')),
    'nonce_reused',
  );
});

test('at the cap new signed requests are refused with too_many_requests, retries still replay', async () => {
  const { store, key, clock, request } = setup();
  const capped = new Authenticator(store, clock.now, {
    clockSkewMs: 15_000,
    // A key's share as large as the caps: this is about the caps themselves.
    replay: { maxEntries: 2, maxAnswerBytes: 1_000, maxEntriesPerKey: 2, maxAnswerBytesPerKey: 1_000 },
  });
  const first = capped.authenticateHttp(request({ nonce: uuid('a') }));
  if (first.kind === 'fresh') first.settle({ status: 200, body: 'A' });
  capped.authenticateHttp(request({ nonce: uuid('b') }));
  assert.equal(
    errorName(() => capped.authenticateHttp(request({ nonce: uuid('c') }))),
    'too_many_requests',
  );
  const ts = clock.now();
  const ws = {
    apiKey: key.record.apiKey,
    timestamp: ts,
    nonce: uuid('w'),
    signature: signWs(key.apiSecret, String(ts), uuid('w')),
  };
  assert.equal(
    errorName(() => capped.authenticateWs(ws)),
    'too_many_requests',
  );
  const retry = capped.authenticateHttp(request({ nonce: uuid('a') }));
  if (retry.kind !== 'replay') assert.fail('expected replay');
  assert.deepEqual(await retry.answer, { status: 200, body: 'A' });
  clock.advance(16_000);
  assert.equal(capped.authenticateHttp(request({ nonce: uuid('c') })).kind, 'fresh');
});

test('a nonce must be in UUID form, over HTTP and WebSocket', () => {
  const { auth, request, key } = setup();
  const http = () => auth.authenticateHttp(request({ nonce: 'not-a-uuid' }));
  assert.throws(
    http,
    (error: unknown) => error instanceof VenueError && error.data?.field === 'Service-API-Nonce',
  );
  assert.equal(auth.authenticateHttp(request({ nonce: uuid('ok') })).kind, 'fresh');
  const timestamp = 1_700_000_000_000;
  const ws = () =>
    auth.authenticateWs({
      apiKey: key.record.apiKey,
      timestamp,
      nonce: 'w-1',
      signature: signWs(key.apiSecret, String(timestamp), 'w-1'),
    });
  assert.throws(ws, (error: unknown) => error instanceof VenueError && error.data?.field === 'nonce');
});

test('after a crash, requests signed up to the refused time are unavailable; reads signed then and later requests run', () => {
  const { auth, key, clock, request } = setup();
  const until = clock.now() + 3_000;
  auth.refuseSignedUntil(until);
  let refusal: VenueError | null = null;
  try {
    auth.authenticateHttp(request({ ts: until }));
  } catch (error) {
    refusal = error as VenueError;
  }
  assert.equal(refusal?.errorName, 'unavailable');
  assert.deepEqual(refusal?.data, {
    field: 'Service-API-Timestamp',
    signedNotAfter: until,
    retryAfterMs: 3_001,
  });
  // Signed public reads run again on a retry anyway: not refused.
  assert.equal(
    auth.authenticateHttp(request({ ts: until, nonce: uuid('read') }), 'fingerprint').kind,
    'fresh',
  );
  assert.equal(auth.authenticateHttp(request({ ts: until + 1, nonce: uuid('new') })).kind, 'fresh');
  const ws = (ts: number, nonce: string) => ({
    apiKey: key.record.apiKey,
    timestamp: ts,
    nonce,
    signature: signWs(key.apiSecret, String(ts), nonce),
  });
  assert.equal(
    errorName(() => auth.authenticateWs(ws(until, uuid('w1')))),
    'unavailable',
  );
  assert.equal(auth.authenticateWs(ws(until + 1, uuid('w2'))).userId, key.record.userId);
});

test('saved and restored across a clean restart: retries replay, reused nonces conflict, unsettled ones are unknown', async () => {
  const { auth, request, store, clock } = setup();
  const settled = auth.authenticateHttp(request({ nonce: uuid('done') }));
  if (settled.kind === 'fresh') settled.settle({ status: 200, body: 'original' });
  auth.authenticateHttp(request({ nonce: uuid('cut') }));
  const saved = JSON.parse(JSON.stringify(auth.saveReplayMemory()));

  const restarted = new Authenticator(store, clock.now, { clockSkewMs: 15_000 });
  restarted.restoreReplayMemory(saved);
  const retry = restarted.authenticateHttp(request({ nonce: uuid('done') }));
  if (retry.kind !== 'replay') assert.fail('expected replay');
  assert.deepEqual(await retry.answer, { status: 200, body: 'original' });
  assert.equal(
    errorName(() => restarted.authenticateHttp(request({ nonce: uuid('done'), body: '{"other":1}' }))),
    'nonce_reused',
  );
  assert.equal(
    errorName(() => restarted.authenticateHttp(request({ nonce: uuid('cut') }))),
    'unavailable',
  );
});

test('a request re-signed with its nonce upper-cased is the same nonce: refused as reused', () => {
  const { auth, request, key, clock } = setup();
  const nonce = '8f14e45f-ceea-467f-a0e6-b3c4d5e6f7a8';
  assert.equal(auth.authenticateHttp(request({ nonce })).kind, 'fresh');
  assert.equal(
    errorName(() => auth.authenticateHttp(request({ nonce: nonce.toUpperCase() }))),
    'nonce_reused',
  );
  const ts = clock.now();
  const ws = (wsNonce: string) => ({
    apiKey: key.record.apiKey,
    timestamp: ts,
    nonce: wsNonce,
    signature: signWs(key.apiSecret, String(ts), wsNonce),
  });
  const wsNonce = 'c9f0f895-fb98-4b91-99f5-1e4c1a2b3d4e';
  assert.equal(auth.authenticateWs(ws(wsNonce)).userId, key.record.userId);
  assert.equal(
    errorName(() => auth.authenticateWs(ws(wsNonce.toUpperCase()))),
    'nonce_reused',
  );
});

test('a key over its share of the replay memory gets too_many_requests; another key still gets in', () => {
  const { store, key, clock, request } = setup();
  const user = store.createUser('other', 0);
  store.createAccount(user.id, 'b', 0);
  const other = store.createApiKey({ userId: user.id, roles: ['trade'] }, 0);
  const shared = new Authenticator(store, clock.now, {
    clockSkewMs: 15_000,
    replay: { maxEntries: 8, maxAnswerBytes: 1_000_000, maxEntriesPerKey: 2 },
  });
  for (const n of ['a', 'b', 'c', 'd'])
    assert.equal(shared.authenticateHttp(request({ nonce: uuid(n) })).kind, 'fresh');
  let refusal: VenueError | null = null;
  try {
    shared.authenticateHttp(request({ nonce: uuid('e') }));
  } catch (error) {
    refusal = error as VenueError;
  }
  assert.equal(refusal?.errorName, 'too_many_requests');
  // The key's oldest nonce (signed now, kept the window past it) leaves at the end of its bucket.
  assert.deepEqual(refusal?.data, { field: 'Service-API-Nonce', retryAfterMs: 15_100 });
  assert.deepEqual(shared.rememberedBy(key.record.apiKey), { entries: 4, answerBytes: 0 });
  const ts = clock.now();
  const ws = (apiKey: string, secret: string, nonce: string) => ({
    apiKey,
    timestamp: ts,
    nonce,
    signature: signWs(secret, String(ts), nonce),
  });
  assert.equal(
    errorName(() => shared.authenticateWs(ws(key.record.apiKey, key.apiSecret, uuid('w')))),
    'too_many_requests',
  );
  // The other key: a signed request and a WebSocket auth, up to its own share.
  const body = '{"rid":1,"method":"public/test","params":{}}';
  const signed = signHttp(other.apiSecret, String(ts), uuid('o1'), 'POST', '/api/public/test', body);
  const fromOther = shared.authenticateHttp({
    ...request({ nonce: uuid('o1') }),
    authorization: `Bearer ${other.record.apiKey}`,
    signature: signed,
  });
  assert.equal(fromOther.kind, 'fresh');
  assert.equal(shared.authenticateWs(ws(other.record.apiKey, other.apiSecret, uuid('o2'))).userId, user.id);
});

test('keyWorks: a key stops working once disabled and the cache expired', () => {
  const { auth, request, store, key, clock } = setup();
  const outcome = auth.authenticateHttp(request());
  if (outcome.kind !== 'fresh') assert.fail('expected fresh');
  const apiKey = key.record.apiKey;
  assert.equal(auth.keyWorks(apiKey), true);
  store.disableKey(apiKey);
  clock.advance(DEFAULT_KEY_CACHE_TTL_MS - 1);
  assert.equal(auth.keyWorks(apiKey), true, 'the cache holds for its TTL, as over HTTP');
  clock.advance(1);
  assert.equal(auth.keyWorks(apiKey), false);
  assert.equal(auth.keyWorks('no-such-key'), false);
});

test('the key cache runs on a monotonic clock too: a disabled key stops within the TTL of real time while the service clock stands still', () => {
  const { store, key, clock, request } = setup();
  let mono = 0;
  const auth = new Authenticator(store, clock.now, { clockSkewMs: 15_000, monotonic: () => mono });
  const apiKey = key.record.apiKey;
  assert.equal(auth.authenticateHttp(request({ nonce: uuid('m-1') })).kind, 'fresh');
  assert.equal(auth.keyWorks(apiKey), true);
  store.disableKey(apiKey);
  // The wall clock stepped back: the service clock holds its high-water mark while real time passes.
  mono += DEFAULT_KEY_CACHE_TTL_MS - 1;
  assert.equal(auth.keyWorks(apiKey), true, 'the cache holds for its TTL');
  mono += 1;
  assert.equal(auth.keyWorks(apiKey), false, 'a WebSocket session key check re-reads the store');
  assert.equal(
    errorName(() => auth.authenticateHttp(request({ nonce: uuid('m-2') }))),
    'invalid_credentials',
  );
});

test('the key cache: an entry from a later service time (the clock went back) is read again', () => {
  const { store, key, request } = setup();
  let now = 1_700_000_000_000;
  const mono = 0;
  const auth = new Authenticator(store, () => now, { clockSkewMs: 15_000, monotonic: () => mono });
  assert.equal(auth.authenticateHttp(request({ nonce: uuid('b-1') })).kind, 'fresh');
  store.disableKey(key.record.apiKey);
  now -= 600_000;
  assert.equal(auth.keyWorks(key.record.apiKey), false);
});

test('the skew window is closed on both sides: 15 s ahead or behind passes, one ms more is refused either way', () => {
  const { auth, clock, request } = setup();
  const now = clock.now();
  for (const ts of [now + 15_001, now - 15_001]) {
    assert.throws(
      () => auth.authenticateHttp(request({ ts, nonce: uuid(ts > now ? 'ahead' : 'behind') })),
      (error: unknown) => {
        assert.ok(error instanceof VenueError);
        assert.equal(error.errorName, 'clock_skew');
        assert.deepEqual(error.data, { field: 'Service-API-Timestamp', serverTime: now, maxSkewMs: 15_000 });
        return true;
      },
      `a timestamp ${ts - now} ms from server time is refused`,
    );
  }
  assert.equal(auth.authenticateHttp(request({ ts: now - 15_000, nonce: uuid('past') })).kind, 'fresh');
  assert.equal(auth.authenticateHttp(request({ ts: now + 15_000, nonce: uuid('future') })).kind, 'fresh');
});

test('a byte-identical retry at the last instant its timestamp is accepted still gets the original answer', async () => {
  const { auth, clock, request } = setup();
  const now = clock.now();
  // Signed at the server time, and signed 15 s ahead (the far edge): each is accepted until its
  // timestamp is 15 s behind, and a retry then must not run again.
  for (const [label, ts] of [
    ['at', now],
    ['ahead', now + 15_000],
  ] as const) {
    const first = auth.authenticateHttp(request({ ts, nonce: uuid(label) }));
    if (first.kind !== 'fresh') assert.fail('expected fresh');
    first.settle({ status: 200, body: label });
  }
  clock.advance(15_000);
  const atEdge = auth.authenticateHttp(request({ ts: now, nonce: uuid('at') }));
  if (atEdge.kind !== 'replay') assert.fail('a retry at ts + 15 s ran again');
  assert.deepEqual(await atEdge.answer, { status: 200, body: 'at' });
  clock.advance(15_000);
  const ahead = auth.authenticateHttp(request({ ts: now + 15_000, nonce: uuid('ahead') }));
  if (ahead.kind !== 'replay') assert.fail('a retry of a request signed 15 s ahead ran again');
  assert.deepEqual(await ahead.answer, { status: 200, body: 'ahead' });
});

test('a nonce with anything after its UUID form is refused, over HTTP and WebSocket', () => {
  const { auth, request, key, clock } = setup();
  const nonce = `${uuid('x')}-extra`;
  assert.throws(
    () => auth.authenticateHttp(request({ nonce })),
    (error: unknown) =>
      error instanceof VenueError &&
      error.errorName === 'invalid_credentials' &&
      error.data?.field === 'Service-API-Nonce',
  );
  const ts = clock.now();
  assert.throws(
    () =>
      auth.authenticateWs({
        apiKey: key.record.apiKey,
        timestamp: ts,
        nonce,
        signature: signWs(key.apiSecret, String(ts), nonce),
      }),
    (error: unknown) => error instanceof VenueError && error.data?.field === 'nonce',
  );
});

test('at the global cap a key that holds no nonce yet is refused too', () => {
  const { store, request, clock } = setup();
  const user = store.createUser('newcomer', 0);
  store.createAccount(user.id, 'n', 0);
  const other = store.createApiKey({ userId: user.id, roles: ['trade'] }, 0);
  const capped = new Authenticator(store, clock.now, {
    clockSkewMs: 15_000,
    replay: { maxEntries: 2, maxAnswerBytes: 1_000, maxEntriesPerKey: 2, maxAnswerBytesPerKey: 1_000 },
  });
  capped.authenticateHttp(request({ nonce: uuid('a') }));
  capped.authenticateHttp(request({ nonce: uuid('b') }));
  const ts = String(clock.now());
  const body = '{"rid":1,"method":"public/test","params":{}}';
  assert.equal(
    errorName(() =>
      capped.authenticateHttp({
        ...request({ nonce: uuid('o') }),
        authorization: `Bearer ${other.record.apiKey}`,
        signature: signHttp(other.apiSecret, ts, uuid('o'), 'POST', '/api/public/test', body),
      }),
    ),
    'too_many_requests',
  );
  assert.equal(capped.rememberedNonces, 2, 'the memory stays at its cap');
});

test('the replay-memory 429 says when a retry can get in: when the oldest nonce holding it leaves (stop 43)', () => {
  const { store, clock, request } = setup();
  const shared = new Authenticator(store, clock.now, {
    clockSkewMs: 15_000,
    replay: { maxEntries: 8, maxAnswerBytes: 1_000_000, maxEntriesPerKey: 2 },
  });
  const start = clock.now();
  for (const n of ['a', 'b', 'c', 'd']) {
    assert.equal(shared.authenticateHttp(request({ nonce: uuid(n) })).kind, 'fresh');
    clock.advance(1_000);
  }
  let tries = 0;
  const retryAfter = (): number | null => {
    tries += 1;
    try {
      shared.authenticateHttp(request({ nonce: uuid(`r${tries}`) }));
      return null;
    } catch (error) {
      assert.equal((error as VenueError).errorName, 'too_many_requests');
      return (error as VenueError).data?.retryAfterMs as number;
    }
  };
  // Nonce 'a' was signed at start: kept until start + 15,001, forgotten at the end of that bucket.
  const freedAt = start + 15_100;
  assert.equal(retryAfter(), freedAt - clock.now(), 'the hint runs to when the oldest nonce leaves');
  clock.advance(5_000);
  assert.equal(retryAfter(), freedAt - clock.now(), 'the same moment, asked again later');
  clock.advance(freedAt - clock.now() - 1);
  assert.equal(retryAfter(), 1, 'a millisecond before it, still refused');
  clock.advance(1);
  assert.equal(retryAfter(), null, 'honouring the hint gets in');
});

test('the 429 of a full replay memory runs to when its oldest nonce leaves, whatever key holds it (stop 43)', () => {
  const { store, key, clock, request } = setup();
  const capped = new Authenticator(store, clock.now, {
    clockSkewMs: 15_000,
    replay: { maxEntries: 2, maxAnswerBytes: 1_000, maxEntriesPerKey: 2, maxAnswerBytesPerKey: 1_000 },
  });
  const start = clock.now();
  capped.authenticateHttp(request({ nonce: uuid('a') }));
  clock.advance(3_000);
  capped.authenticateHttp(request({ nonce: uuid('b') }));
  clock.advance(1_000);
  const ts = clock.now();
  const refusal = (() => {
    try {
      capped.authenticateWs({
        apiKey: key.record.apiKey,
        timestamp: ts,
        nonce: uuid('w'),
        signature: signWs(key.apiSecret, String(ts), uuid('w')),
      });
    } catch (error) {
      return error as VenueError;
    }
    return null;
  })();
  assert.deepEqual(refusal?.data, { field: 'nonce', retryAfterMs: start + 15_100 - ts });
});

test('a key over its share while other keys press the memory is told when enough of its nonces leave (stop 43)', () => {
  const { store, clock, request } = setup();
  const user = store.createUser('other', 0);
  store.createAccount(user.id, 'b', 0);
  const other = store.createApiKey({ userId: user.id, roles: ['trade'] }, 0);
  const shared = new Authenticator(store, clock.now, {
    clockSkewMs: 15_000,
    replay: { maxEntries: 8, maxAnswerBytes: 1_000_000, maxEntriesPerKey: 2 },
  });
  const start = clock.now();
  for (const n of ['a', 'b', 'c', 'd']) {
    assert.equal(shared.authenticateHttp(request({ nonce: uuid(n) })).kind, 'fresh');
    clock.advance(1_000);
  }
  const ws = (nonce: string) => {
    const ts = clock.now();
    return {
      apiKey: other.record.apiKey,
      timestamp: ts,
      nonce,
      signature: signWs(other.apiSecret, String(ts), nonce),
    };
  };
  shared.authenticateWs(ws(uuid('o1')));
  shared.authenticateWs(ws(uuid('o2')));
  // 6 of 8 nonces: pressed. The key holds 4 against a share of 2. After 'a' and 'b' leave it still
  // holds its share of a memory half full; after 'c' the memory is below half.
  let refusal: VenueError | null = null;
  try {
    shared.authenticateHttp(request({ nonce: uuid('e') }));
  } catch (error) {
    refusal = error as VenueError;
  }
  const freedAt = start + 2_000 + 15_100;
  assert.deepEqual(refusal?.data, { field: 'Service-API-Nonce', retryAfterMs: freedAt - clock.now() });
  clock.advance(freedAt - clock.now() - 1);
  assert.equal(
    errorName(() => shared.authenticateHttp(request({ nonce: uuid('f') }))),
    'too_many_requests',
  );
  clock.advance(1);
  assert.equal(shared.authenticateHttp(request({ nonce: uuid('g') })).kind, 'fresh');
});
