/**
 * Malformed credentials against a real server: the same malformed value gets the same refusal
 * over HTTP and the WebSocket, and an Authorization header sent twice is refused like a repeated
 * Service-API-* header, naming it (stop 43).
 */
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { after, before, test } from 'node:test';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { FakeVenue } from '../support/fake-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { rawWsAuth } from '../support/ws-auth.ts';

let harness: Harness;
let venue: FakeVenue;
before(async () => {
  venue = new FakeVenue();
  harness = await startHarness({ venue, config: { rateLimits: { enabled: false } } });
});
after(() => harness.close());

const INVALID = ERROR_CATALOGUE.invalid_credentials.code;
type Refusal = { code: number; message: string; data?: { field?: string } };

/** POST with raw headers (a flat list, so a header may repeat): the status and the error. */
function post(path: string, body: string, headers: readonly string[]) {
  return new Promise<{ status: number; error: Refusal | undefined }>((resolve, reject) => {
    const { hostname, port } = new URL(harness.baseUrl);
    const socket = createConnection({ host: hostname, port: Number(port) });
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', answer = ''] = text.split('\r\n\r\n');
      resolve({
        status: Number(head.split(' ')[1]),
        error: answer === '' ? undefined : (JSON.parse(answer) as { error?: Refusal }).error,
      });
    });
    let lines = `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n`;
    for (let i = 0; i < headers.length; i += 2) lines += `${headers[i]}: ${headers[i + 1]}\r\n`;
    socket.end(`${lines}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

/** A signed HTTP request as flat headers, with `timestamp` in place of the signed one if given. */
function signedHeaders(path: string, body: string, timestamp?: string): string[] {
  const signed = harness.http(0).sign('POST', path, body);
  const headers: string[] = [];
  for (const [name, value] of Object.entries(signed.headers)) {
    if (name === 'content-type') continue;
    headers.push(name, name === 'service-api-timestamp' && timestamp !== undefined ? timestamp : value);
  }
  return headers;
}

function wsAuth(timestamp: unknown): Promise<Refusal | undefined> {
  return rawWsAuth(harness.wsUrl, harness.credentials[0]!, timestamp);
}

test('a malformed timestamp is invalid_credentials naming it, over HTTP and over the WebSocket alike', async () => {
  const path = '/api/private/get_open_orders';
  const body = JSON.stringify({ rid: 1, method: 'private/get_open_orders', params: {} });
  for (const bad of ['-1', '5.5', `${venue.now()}.0`, '1'.repeat(23), '1'.repeat(400), '0x10', '1e12']) {
    const http = await post(path, body, signedHeaders(path, body, bad));
    assert.equal(http.status, 401, bad);
    assert.equal(http.error?.code, INVALID, `HTTP ${bad}`);
    assert.equal(http.error?.data?.field, 'Service-API-Timestamp');
    const ws = await wsAuth(bad);
    assert.equal(ws?.code, INVALID, `WebSocket ${bad}: ${ws?.message}`);
    assert.equal(ws?.data?.field, 'timestamp');
    assert.equal(ws?.message, http.error?.message.replace('Service-API-Timestamp', 'timestamp'));
  }
  for (const bad of [-1, 5.5, 1e21]) {
    const ws = await wsAuth(bad);
    assert.equal(ws?.code, INVALID, `WebSocket number ${bad}`);
    assert.equal(ws?.data?.field, 'timestamp');
  }
  assert.equal(await wsAuth(venue.now()), undefined, 'a good number still signs in');
  assert.equal(await wsAuth(String(venue.now())), undefined, 'and a good string');
});

test('an Authorization header sent twice is refused naming it, as a repeated Service-API-* header is', async () => {
  const path = '/api/private/get_open_orders';
  const body = JSON.stringify({ rid: 2, method: 'private/get_open_orders', params: {} });
  const good = signedHeaders(path, body);
  assert.equal((await post(path, body, good)).status, 200, 'the signed request alone is served');
  const key = `Bearer ${harness.credentials[0]!.apiKey}`;
  for (const second of [key, 'Bearer someone-else', '']) {
    const twice = await post(path, body, [...signedHeaders(path, body), 'Authorization', second]);
    assert.equal(twice.status, 401, `a second Authorization '${second}'`);
    assert.equal(twice.error?.code, INVALID);
    assert.equal(twice.error?.data?.field, 'Authorization');
  }
  const nonceTwice = signedHeaders(path, body);
  const nonce = nonceTwice[nonceTwice.indexOf('service-api-nonce') + 1]!;
  const repeated = await post(path, body, [...nonceTwice, 'Service-API-Nonce', nonce]);
  assert.equal(repeated.status, 401);
  assert.equal(repeated.error?.code, INVALID, 'a repeated nonce header: the same refusal');
  assert.equal(repeated.error?.data?.field, 'Service-API-Nonce');
  // Another scheme or more words: present but malformed, named, not "required".
  for (const malformed of [`${key} extra`, `Bearer:${harness.credentials[0]!.apiKey}`, 'Basic abc']) {
    const headers = signedHeaders(path, body);
    headers[headers.indexOf('authorization') + 1] = malformed;
    const answer = await post(path, body, headers);
    assert.equal(answer.status, 401);
    assert.equal(answer.error?.code, INVALID, malformed);
    assert.equal(answer.error?.data?.field, 'Authorization');
  }
});
