/**
 * Property tests of request signing (signature.ts) and of the header parsing and verification in
 * authenticator.ts:
 * - arbitrary header strings, and arbitrary `public/auth` params, are refused with the
 *   catalogue's authentication errors only, each naming the header or param at fault;
 * - a correctly signed request verifies, for any method, path, body (any Unicode), timestamp
 *   inside the window (as sent) and UUID nonce (any case);
 * - any single-byte change to the body or path (their UTF-8 bytes, decoded as the server decodes
 *   them), the timestamp, the nonce or the signature is refused, also after the original request
 *   was answered (it must never be taken for a retry of it);
 * - the signed payload is unambiguous: moving the path/body boundary or changing one field gives
 *   another payload.
 *
 * Runs: AUTH_PROPERTY_RUNS (default 100, scaled per property); AUTH_PROPERTY_SEED replays a seed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { VenueError } from '../../domain/errors.ts';
import { Authenticator, type HttpRequestParts } from './authenticator.ts';
import { SecretBox } from './secret-box.ts';
import { signaturePayload, signHttp, signWs } from './signature.ts';
import { SqliteKeyStore } from './sqlite-key-store.ts';

const RUNS = Number(process.env.AUTH_PROPERTY_RUNS ?? 100);
const SEED = process.env.AUTH_PROPERTY_SEED ? Number(process.env.AUTH_PROPERTY_SEED) : undefined;
const runs = { numRuns: RUNS, seed: SEED, includeErrorInReport: true };

const NOW = 1_700_000_000_000;
const SKEW_MS = 15_000;

const store = new SqliteKeyStore(':memory:', SecretBox.fromText('22'.repeat(32)));
const user = store.createUser('u', 0);
store.createAccount(user.id, 'a', 0);
const key = store.createApiKey({ userId: user.id, roles: ['trade'] }, 0);
const API_KEY = key.record.apiKey;
const SECRET = key.apiSecret;

/** A fresh authenticator (replay memory and key cache) over the one store: runs do not share nonces. */
const fresh = () => new Authenticator(store, () => NOW, { clockSkewMs: SKEW_MS });

const HTTP_FIELDS = new Set([
  'Authorization',
  'Service-API-Timestamp',
  'Service-API-Nonce',
  'Service-API-Signature',
]);
const WS_FIELDS = new Set(['apiKey', 'timestamp', 'nonce', 'signature']);
/** What a signed request may be refused with (SEMANTICS.md, Authentication). */
const AUTH_ERRORS = new Set(['authorization_required', 'invalid_credentials', 'clock_skew', 'nonce_reused']);

/** The refusal `run` throws: an authentication error of the catalogue naming one of `fields`. */
function authRefusal(run: () => unknown, fields: ReadonlySet<string>, what: () => string): VenueError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof VenueError, `not a VenueError: ${String(error)} for ${what()}`);
    assert.ok(AUTH_ERRORS.has(error.errorName), `${error.errorName} (${error.message}) for ${what()}`);
    assert.ok(
      fields.has(error.data?.field as string),
      `field ${String(error.data?.field)} (${error.message}) for ${what()}`,
    );
    return error;
  }
  assert.fail(`accepted: ${what()}`);
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const timestampArb = fc.integer({ min: -SKEW_MS, max: SKEW_MS }).chain((offset) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(String(NOW + offset)) },
    // "As sent": leading zeros are a valid form of the same time (at most 16 digits).
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((z) => `${'0'.repeat(z)}${NOW + offset}`) },
  ),
);

function randomCase(text: string): fc.Arbitrary<string> {
  return fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
}

const nonceArb = fc.uuid().chain(randomCase);

/** A request target as a client sends it: path and query of URL-safe (or %-escaped) characters. */
const pathArb = fc
  .tuple(
    fc.array(fc.stringMatching(/^[A-Za-z0-9_.~%-]{0,12}$/), { minLength: 1, maxLength: 4 }),
    fc.option(fc.stringMatching(/^[A-Za-z0-9_.~%=&-]{0,24}$/)),
  )
  .map(([parts, query]) => `/${parts.join('/')}${query === null ? '' : `?${query}`}`);

const methodArb = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH');

/** A body as the server sees it: any Unicode text (decoded from UTF-8), or JSON. */
const bodyArb = fc.oneof(
  fc.constant(''),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.json({ maxDepth: 2 }),
);

interface Signed {
  readonly method: string;
  readonly path: string;
  readonly body: string;
  readonly ts: string;
  readonly nonce: string;
}

const signedArb: fc.Arbitrary<Signed> = fc.record({
  method: methodArb,
  path: pathArb,
  body: bodyArb,
  ts: timestampArb,
  nonce: nonceArb,
});

function request(
  s: Signed,
  signature = signHttp(SECRET, s.ts, s.nonce, s.method, s.path, s.body),
): HttpRequestParts {
  return {
    authorization: `Bearer ${API_KEY}`,
    timestamp: s.ts,
    nonce: s.nonce,
    signature,
    method: s.method,
    pathWithQuery: s.path,
    body: s.body,
  };
}

/** Changes byte `index` of `text`'s UTF-8 bytes to `byte` and decodes the bytes as the server does. */
function changeByte(text: string, index: number, byte: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length === 0) return String.fromCharCode(byte);
  const i = index % bytes.length;
  bytes[i] = bytes[i] === byte ? (byte + 1) % 256 : byte;
  return bytes.toString('utf8');
}

/** Changes one character of an ASCII header value to another printable ASCII character. */
function changeAscii(text: string, index: number, code: number): string {
  if (text.length === 0) return String.fromCharCode(code);
  const i = index % text.length;
  const next = text.charCodeAt(i) === code ? (code === 126 ? 32 : code + 1) : code;
  return text.slice(0, i) + String.fromCharCode(next) + text.slice(i + 1);
}

/** Header values: absent, arbitrary text, or a near miss of a valid one. */
function headerArb(valid: fc.Arbitrary<string>): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.string({ maxLength: 60 }),
    fc.string({ unit: 'binary', maxLength: 60 }),
    valid,
    fc
      .tuple(valid, fc.nat(), fc.integer({ min: 32, max: 126 }))
      .map(([text, index, code]) => changeAscii(text, index, code)),
    valid.map((text) => ` ${text}\t`),
    fc.tuple(valid, valid).map(([a, b]) => `${a},${b}`),
  );
}

// ---------------------------------------------------------------------------------------------

describe('request signatures: properties', () => {
  test('arbitrary headers: refused with an authentication error naming the header, never anything else', () => {
    const signature = signedArb.map((s) => signHttp(SECRET, s.ts, s.nonce, s.method, s.path, s.body));
    fc.assert(
      fc.property(
        fc.record({
          authorization: headerArb(
            fc.constantFrom(`Bearer ${API_KEY}`, `bearer   ${API_KEY}`, 'Bearer k_unknown'),
          ),
          timestamp: headerArb(timestampArb),
          nonce: headerArb(nonceArb),
          signature: headerArb(signature),
          method: methodArb,
          pathWithQuery: pathArb,
          body: bodyArb,
        }),
        (parts) => {
          authRefusal(
            () => fresh().authenticateHttp(parts),
            HTTP_FIELDS,
            () => JSON.stringify(parts),
          );
        },
      ),
      { ...runs, numRuns: RUNS * 3 },
    );
  });

  test('arbitrary public/auth params: refused with an authentication error naming the param', () => {
    fc.assert(
      fc.property(
        fc.record({
          apiKey: fc.oneof(fc.constant(API_KEY), fc.string({ maxLength: 40 })),
          timestamp: fc.oneof(
            timestampArb,
            timestampArb.map(Number),
            fc.double(),
            fc.integer(),
            fc.string({ maxLength: 20 }),
            fc.constantFrom(NOW + 0.5, -NOW, 1e21, Number.MAX_SAFE_INTEGER + 2),
          ),
          nonce: headerArb(nonceArb).map((n) => n ?? ''),
          signature: fc.oneof(
            fc.string({ maxLength: 50 }),
            fc.tuple(timestampArb, nonceArb).map(([ts, nonce]) => signWs(SECRET, ts, nonce)),
          ),
        }),
        (params) => {
          authRefusal(
            () => fresh().authenticateWs(params),
            WS_FIELDS,
            () => JSON.stringify(params),
          );
        },
      ),
      { ...runs, numRuns: RUNS * 2 },
    );
  });

  test('a correctly signed request verifies, and its byte-identical retry is a replay', () => {
    fc.assert(
      fc.property(signedArb, (s) => {
        const auth = fresh();
        const first = auth.authenticateHttp(request(s));
        assert.equal(first.kind, 'fresh');
        if (first.kind !== 'fresh') return;
        assert.equal(first.principal.apiKey, API_KEY);
        first.settle({ status: 200, body: 'answer' });
        assert.equal(auth.authenticateHttp(request(s)).kind, 'replay');
      }),
      runs,
    );
  });

  test('one byte changed in body, path, timestamp, nonce or signature: refused, also after the original ran', () => {
    type Part = 'body' | 'path' | 'ts' | 'nonce' | 'signature';
    fc.assert(
      fc.property(
        signedArb,
        fc.constantFrom<Part>('body', 'path', 'ts', 'nonce', 'signature'),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.boolean(),
        (s, part, index, byte, originalFirst) => {
          const original = request(s);
          const printable = 32 + (byte % 95);
          let changed: HttpRequestParts;
          switch (part) {
            case 'body':
              changed = { ...original, body: changeByte(s.body, index, byte) };
              break;
            case 'path':
              changed = { ...original, pathWithQuery: changeByte(s.path, index, byte) };
              break;
            case 'ts':
              changed = { ...original, timestamp: changeAscii(s.ts, index, printable) };
              break;
            case 'nonce':
              changed = { ...original, nonce: changeAscii(s.nonce, index, printable) };
              break;
            case 'signature':
              changed = { ...original, signature: changeAscii(original.signature!, index, printable) };
              break;
          }
          const auth = fresh();
          if (originalFirst) {
            const first = auth.authenticateHttp(original);
            if (first.kind === 'fresh') first.settle({ status: 200, body: 'answer' });
          }
          authRefusal(
            () => auth.authenticateHttp(changed),
            HTTP_FIELDS,
            () => `${part} changed: ${JSON.stringify(changed)} (original ${JSON.stringify(original)})`,
          );
        },
      ),
      { ...runs, numRuns: RUNS * 3 },
    );
  });

  test('public/auth: one byte changed in timestamp, nonce or signature is refused', () => {
    fc.assert(
      fc.property(
        timestampArb,
        nonceArb,
        fc.constantFrom('timestamp', 'nonce', 'signature'),
        fc.nat(),
        fc.integer({ min: 32, max: 126 }),
        (ts, nonce, part, index, code) => {
          const params = { apiKey: API_KEY, timestamp: ts, nonce, signature: signWs(SECRET, ts, nonce) };
          assert.equal(fresh().authenticateWs(params).apiKey, API_KEY);
          const changed = {
            ...params,
            [part]: changeAscii(params[part as keyof typeof params], index, code),
          };
          authRefusal(
            () => fresh().authenticateWs(changed),
            WS_FIELDS,
            () => JSON.stringify(changed),
          );
        },
      ),
      runs,
    );
  });

  test('the signed payload is unambiguous: one split of path and body, and a changed field is another payload', () => {
    fc.assert(
      fc.property(signedArb, signedArb, (a, b) => {
        const payload = (s: Signed) => signaturePayload(s.ts, s.nonce, s.method, s.path, s.body);
        // Split the payload's "path\nbody" at another newline: the path never holds one, so only
        // the original split gives a newline-free path.
        const joined = `${a.path}\n${a.body}`;
        for (let at = joined.indexOf('\n'); at >= 0; at = joined.indexOf('\n', at + 1)) {
          const path = joined.slice(0, at);
          if (path.includes('\n')) break;
          assert.equal(path, a.path);
          assert.equal(payload({ ...a, path, body: joined.slice(at + 1) }), payload(a));
        }
        const same =
          a.ts === b.ts &&
          a.nonce === b.nonce &&
          a.method === b.method &&
          a.path === b.path &&
          a.body === b.body;
        assert.equal(payload(a) === payload(b), same);
      }),
      runs,
    );
  });
});
