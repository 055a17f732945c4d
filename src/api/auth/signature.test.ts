/**
 * The wire format of SEMANTICS.md (Authentication), pinned by known answers computed outside
 * signature.ts: the server and the sdk share signature.ts, so a change there passes every test
 * that signs through it while every third-party client stops authenticating.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { signaturePayload, signHttp, signWs } from './signature.ts';

const SECRET = 'test-secret';
const TS = '1700000000000';
const NONCE = '0b7e2c1a-4f3d-4e8a-9c6b-2d5f8a1e3c7b';
const hmac = (payload: string) => createHmac('sha256', SECRET).update(payload).digest('base64');

test('HTTP: base64(HMAC-SHA256(secret, ts\\nnonce\\nMETHOD\\npathWithQuery\\nbody))', () => {
  const body = '{"rid":1}';
  const expected = 'Q3+bMHn9iSymyjnCE3d0GrpqmGRwHDKMgeIVYJjd/Eo=';
  assert.equal(hmac(`${TS}\n${NONCE}\nPOST\n/api/private/buy?x=1\n${body}`), expected);
  assert.equal(
    signaturePayload(TS, NONCE, 'post', '/api/private/buy?x=1', body),
    `${TS}\n${NONCE}\nPOST\n/api/private/buy?x=1\n${body}`,
  );
  assert.equal(signHttp(SECRET, TS, NONCE, 'POST', '/api/private/buy?x=1', body), expected);
});

test('WebSocket public/auth: the same over ts\\nnonce\\nGET\\n/ws\\n', () => {
  const expected = 'gowv3Mq3LLqOh5YR+qXl65Dpwd5rnb1udZoNzqOW0Ts=';
  assert.equal(hmac(`${TS}\n${NONCE}\nGET\n/ws\n`), expected);
  assert.equal(signWs(SECRET, TS, NONCE), expected);
});
