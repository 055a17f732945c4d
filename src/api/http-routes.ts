/**
 * HTTP transport: `POST /api/<method>` envelopes and the flat signed routes other parts register
 * (e.g. `/tt/core-broker/openapi/portfolios/*`), on one Fastify instance.
 *
 * Invariants:
 * - Bodies are read raw (the signature covers the exact bytes) and parsed here; a body over the
 *   limit is 413 `request_too_large`, a body that is not JSON 400 `parse_error`, not an envelope
 *   400 `bad_request`, failed authentication 401, rate limiting 429; refusals of a well-formed
 *   envelope travel with 200. No path answers 5xx.
 * - Every request that reaches a route costs one credit, refused or not: a failed authentication
 *   or a body that is no envelope takes it from the client address's non-matching bucket (the
 *   key's, when one authenticated) through `Dispatcher.chargeRefusal`, and is answered 429
 *   `too_many_requests` once that bucket is empty. A request that is charged as usual (by the
 *   dispatcher or a flat route's own charge) takes no second credit. Two exceptions cost none: a
 *   byte-identical signed retry answered from the replay memory (it runs nothing, and a 429 would
 *   hide an order's outcome from the client that sent it), and what Fastify refuses before any
 *   route runs (no route, a wrong Content-Type, a body over the limit); the connection caps bound both.
 * - The unsigned GETs outside the envelope cost their client address one non-matching credit as a
 *   public method does (`chargeAddress`): the API documents and `/metrics` (a render is about a
 *   millisecond of the event loop). `/health` costs none: a balancer polls it, and it is a lookup.
 * - `public/*` envelope methods need no signature (a signature, when sent, is still checked);
 *   everything else must be signed. A byte-identical signed retry gets the stored answer (methods
 *   and flat routes with effects) or runs again (reads: `public/*`, methods named `get_*` and
 *   `GET` flat routes, whose answers are not kept; see `retentionOf`).
 */

import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE, VenueError } from '../domain/errors.ts';
import { jsonBytes } from '../store/json-bytes.ts';
import type {
  AnswerRetention,
  Authenticator,
  HttpAuthOutcome,
  Principal,
  StoredAnswer,
} from './auth/authenticator.ts';
import type { Role } from './auth/key-store.ts';
import { HEADER_NONCE, HEADER_SIGNATURE, HEADER_TIMESTAMP } from './auth/signature.ts';
import {
  type Dispatcher,
  type DispatchOutcome,
  type Envelope,
  parseEnvelope,
  type RequestObserver,
  requireRole,
  salvageRid,
} from './dispatcher.ts';
import type { RateLimiter } from './rate-limit.ts';
import { compileValidator } from './validation.ts';
import { mapError } from './wire-errors.ts';

type Headers = FastifyRequest['headers'];

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Every Authorization header sent, joined with a comma: Node keeps only the first of a repeated
 * Authorization (it joins repeated Service-API-* headers), so a second one would pass unseen; the
 * joined value is refused as malformed, as a repeated Service-API-* header is.
 */
function authorization(request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders;
  if (raw === undefined) return header(request.headers, 'authorization');
  const values: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // Length first: the hot path lower-cases no other header's name.
    if (name.length === 13 && name.toLowerCase() === 'authorization') values.push(raw[i + 1]!);
  }
  return values.length === 0 ? undefined : values.join(', ');
}

function authParts(request: FastifyRequest, body: string) {
  return {
    authorization: authorization(request),
    timestamp: header(request.headers, HEADER_TIMESTAMP),
    nonce: header(request.headers, HEADER_NONCE),
    signature: header(request.headers, HEADER_SIGNATURE),
    method: request.method,
    pathWithQuery: request.url,
    body,
  };
}

function send(reply: FastifyReply, status: number, body: string | Buffer): FastifyReply {
  return reply.code(status).header('content-type', 'application/json; charset=utf-8').send(body);
}

/** Answers a failure outside the dispatcher (auth, parsing) as an error envelope. */
function sendError(
  reply: FastifyReply,
  error: unknown,
  rid: number | null,
  onUnexpected: (e: unknown) => void,
) {
  const mapped = mapError(error, onUnexpected);
  return send(reply, mapped.httpStatus, JSON.stringify({ rid, error: mapped.error }));
}

type WireError = { code: number; message: string; data?: unknown };

/**
 * The folders of the flat routes registered on each app (e.g. `/tt/core-broker/openapi/portfolios/`).
 * A failure Fastify answers before any route runs (body too large, no such route or method) on a
 * path in one of them is answered flat too, so a client of the flat routes sees one shape.
 */
const flatFolders = new WeakMap<FastifyInstance, Set<string>>();

function folderOf(url: string): string {
  return url.slice(0, url.lastIndexOf('/') + 1);
}

function isFlatPath(app: FastifyInstance, url: string): boolean {
  const folders = flatFolders.get(app);
  if (folders === undefined) return false;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  for (const folder of folders) {
    if (path.startsWith(folder) || path === folder.slice(0, -1)) return true;
  }
  return false;
}

/** A failure outside any handler, in the shape of the path: flat or envelope. */
function sendUnrouted(
  app: FastifyInstance,
  url: string,
  reply: FastifyReply,
  status: number,
  error: WireError,
) {
  const body = isFlatPath(app, url) ? flatFailure(error) : JSON.stringify({ rid: null, error });
  return send(reply, status, body);
}

/**
 * Fastify's own refusals before routing (a path that is not valid percent-encoding): 400 with
 * `bad_request` in the shape of the path, as the not-found and body errors are.
 */
export function answerFrameworkError(error: Error, request: FastifyRequest, reply: FastifyReply) {
  return sendUnrouted(request.server, request.url, reply, 400, {
    code: ERROR_CATALOGUE.bad_request.code,
    message: error.message,
    data: { field: 'url' },
  });
}

/**
 * A request Node's HTTP parser refuses (a bad Content-Length, both Content-Length and
 * Transfer-Encoding, a control character in a header, headers over the size limit, garbage):
 * there is no URL to shape the answer by, so it is an envelope, `bad_request` with HTTP 400 (431
 * for oversized headers, 408 for a request that timed out), and the connection closes.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // The field at fault: the headers when they are too large, else the request as a whole.
  const [status, message, field] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request headers are too large', 'headers']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request did not arrive in time', 'request']
        : [400, 'the request is not valid HTTP', 'request'];
  const body = JSON.stringify({
    rid: null,
    error: { code: ERROR_CATALOGUE.bad_request.code, message, data: { field } },
  });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export interface HttpRouteDeps {
  readonly dispatcher: Dispatcher;
  readonly authenticator: Authenticator;
  readonly limiter: RateLimiter;
  readonly onUnexpected: (error: unknown) => void;
  /** Metrics of the flat routes (the envelope route's go through the dispatcher), labelled by path. */
  readonly observe?: RequestObserver | null;
}

/** Bodies are kept as the raw text (it is signed); spec §5 names `Content-Type: application/json`. */
export function installRawJsonParser(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_request, body, done) =>
    done(null, body),
  );
}

export function installErrorHandlers(
  app: FastifyInstance,
  onUnexpected: (error: unknown) => void,
  bodyLimitBytes: number,
): void {
  app.setErrorHandler((error: { code?: string; statusCode?: number }, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const tooLarge = new VenueError('request_too_large', undefined, {
        field: 'body',
        maxBytes: bodyLimitBytes,
      });
      const mapped = mapError(tooLarge, onUnexpected);
      return sendUnrouted(app, request.url, reply, mapped.httpStatus, mapped.error);
    }
    if (
      error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ||
      error.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH'
    ) {
      const refusal = new VenueError('bad_request', 'Content-Type must be application/json', {
        field: 'Content-Type',
      });
      return sendUnrouted(app, request.url, reply, 400, mapError(refusal, onUnexpected).error);
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      const { code, message } = ERROR_CATALOGUE.bad_request;
      return sendUnrouted(app, request.url, reply, 400, { code, message });
    }
    const mapped = mapError(error, onUnexpected);
    return sendUnrouted(app, request.url, reply, mapped.httpStatus, mapped.error);
  });
  app.setNotFoundHandler((request, reply) => {
    const message = `no route ${request.method} ${request.url}`;
    return sendUnrouted(app, request.url, reply, 404, {
      code: ERROR_CATALOGUE.method_not_found.code,
      message,
      data: { field: 'path' },
    });
  });
}

/**
 * While the service shuts down, a request that reaches routing (one more on a keep-alive
 * connection) is refused with `unavailable` in the shape of its path, HTTP 503, and the
 * connection closes after it: it was not run, so the client may send it again once the service
 * is back. Requests already being handled finish as usual. `GET /health` keeps the shape it has
 * while running (`{status: 'unavailable', reason, time}`), so a balancer reading it sees why.
 */
export function installShutdownRefusal(
  app: FastifyInstance,
  closing: () => boolean,
  now: () => number = Date.now,
): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing()) return done();
    const { code } = ERROR_CATALOGUE.unavailable;
    reply.header('connection', 'close');
    if (request.method === 'GET' && request.url.split('?', 1)[0] === '/health') {
      reply.code(503).send({ status: 'unavailable', reason: 'the service is shutting down', time: now() });
      return;
    }
    sendUnrouted(app, request.url, reply, 503, {
      code,
      message:
        'the service is shutting down: the request was not run; send it again once the service is back',
    });
  });
}

const READ_METHOD = /\/get_[a-z_]+$/;

/**
 * What the replay memory keeps of a signed envelope request to `method` (the path's): reads, which
 * have no effects, keep only the request's fingerprint, so a byte-identical retry runs again (their
 * answers, a whole order book or history, are not held for a window); anything else keeps its
 * answer, so a retry gets it and never runs twice. Reads are the `public/*` methods and those named
 * `get_*` in any scope (`private/get_open_orders`, `block/rfqs/get_quotes`): the API names no
 * method with effects so (a read named otherwise only keeps its answer, which is safe). A body
 * naming another method than the path is refused before anything runs.
 */
export function retentionOf(method: string): AnswerRetention {
  return method.startsWith('public/') || READ_METHOD.test(method) ? 'fingerprint' : 'answer';
}

/**
 * The rate-limit identity of a request before authentication: its client address, shared by HTTP
 * and every WebSocket from it (ws-gateway.ts makes the same key).
 */
export function addressKey(request: FastifyRequest): string {
  return `ip:${request.ip}`;
}

/**
 * A route hook that takes one non-matching credit from the client address's bucket (the one its
 * public methods draw from) and answers 429 `too_many_requests` in place of the route once it has
 * none: for the unsigned GETs outside the envelope.
 */
export function chargeAddress(limiter: RateLimiter, onUnexpected: (e: unknown) => void) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    try {
      limiter.take(addressKey(request), false);
    } catch (limited) {
      sendError(reply, limited, null, onUnexpected);
      return;
    }
    done();
  };
}

/** The rid of a body refused before it was parsed (authentication), when it has one. */
function ridOf(raw: string): number | null {
  try {
    return salvageRid(JSON.parse(raw));
  } catch {
    return null;
  }
}

export function registerEnvelopeRoute(app: FastifyInstance, deps: HttpRouteDeps): void {
  const { dispatcher, authenticator, onUnexpected } = deps;
  // Not an async handler (see `Dispatcher.dispatch`): it answers at once or returns a promise that
  // resolves, to nothing, once it has answered.
  app.post('/api/*', (request, reply): Promise<void> | undefined => {
    const raw = typeof request.body === 'string' ? request.body : '';
    const pathMethod = (request.params as { '*': string })['*'];
    let auth: HttpAuthOutcome | null = null;
    const signed =
      request.headers.authorization !== undefined || request.headers[HEADER_SIGNATURE] !== undefined;
    try {
      // A signed read may simply run again on a retry; anything else keeps its answer.
      if (signed || !pathMethod.startsWith('public/'))
        auth = authenticator.authenticateHttp(authParts(request, raw), retentionOf(pathMethod));
    } catch (error) {
      // Failed authentication costs the client address a credit: 429 once it has none left.
      const refusal = dispatcher.chargeRefusal(error, null, addressKey(request));
      sendError(reply, refusal, ridOf(raw), onUnexpected);
      return;
    }
    if (auth?.kind === 'replay') {
      return auth.answer.then((stored) => {
        send(reply, stored.status, stored.body);
      });
    }
    const settle = auth?.settle;
    let parsed: unknown;
    let envelope: Envelope;
    try {
      try {
        parsed = JSON.parse(raw);
      } catch {
        throw new VenueError('parse_error', 'the body is not JSON', { field: 'body' });
      }
      envelope = parseEnvelope(parsed);
      if (envelope.method !== pathMethod) {
        throw new VenueError('bad_request', 'method differs from the path', { field: 'method' });
      }
    } catch (error) {
      // Not dispatched, so not charged yet: the key's credit, or the address's when unsigned.
      const refusal = dispatcher.chargeRefusal(error, auth?.principal ?? null, addressKey(request));
      answerFailure(reply, settle, refusal, parsed, onUnexpected);
      return;
    }
    return dispatcher
      .dispatch(envelope, {
        principal: auth?.principal ?? null,
        transport: 'http',
        session: null,
        anonymousKey: addressKey(request),
      })
      .then(
        (outcome) => answerOutcome(reply, settle, outcome, parsed, onUnexpected),
        (error: unknown) => answerFailure(reply, settle, error, parsed, onUnexpected),
      );
  });
}

/** Sends an envelope answer, first keeping it for byte-identical retries. */
function answer(
  reply: FastifyReply,
  settle: ((answer: StoredAnswer) => void) | undefined,
  status: number,
  body: string | Buffer,
): void {
  settle?.({ status, body });
  send(reply, status, body);
}

function answerOutcome(
  reply: FastifyReply,
  settle: ((answer: StoredAnswer) => void) | undefined,
  outcome: DispatchOutcome,
  parsed: unknown,
  onUnexpected: (error: unknown) => void,
): void {
  let body: Buffer;
  try {
    body = jsonBytes(outcome.answer);
  } catch (error) {
    answerFailure(reply, settle, error, parsed, onUnexpected);
    return;
  }
  answer(reply, settle, outcome.httpStatus, body);
}

function answerFailure(
  reply: FastifyReply,
  settle: ((answer: StoredAnswer) => void) | undefined,
  error: unknown,
  parsed: unknown,
  onUnexpected: (error: unknown) => void,
): void {
  const mapped = mapError(error, onUnexpected);
  answer(reply, settle, mapped.httpStatus, JSON.stringify({ rid: salvageRid(parsed), error: mapped.error }));
}

/** A flat signed route (portfolio style): `{succ, code, message, value}` answers. */
export interface FlatRouteDefinition<Body = unknown, Query = unknown> {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly summary: string;
  readonly body?: TSchema;
  readonly query?: TSchema;
  /** What a success answers in `value`, for the documents (answers are not checked against it). */
  readonly value?: TSchema;
  /**
   * The handler validates its input itself (finer codes than a schema check); `body`/`query` then
   * only type and document the route and are not checked here.
   */
  readonly handlerValidates?: boolean;
  readonly matching?: boolean;
  /**
   * The key needs one of these roles (as an envelope method's `roles`, src/api/registry.ts): a
   * key without any of them is refused `forbidden` before the body is read, and nothing runs.
   * Unset: any key of the user (reads).
   */
  readonly roles?: readonly Role[];
  readonly handler: (input: { body: Body; query: Query; principal: Principal }) => Promise<unknown> | unknown;
}

export function flatAnswer(value: unknown): string {
  return JSON.stringify({ succ: true, code: 0, message: '', value });
}

export function registerFlatRoute(
  app: FastifyInstance,
  deps: HttpRouteDeps,
  route: FlatRouteDefinition,
): void {
  const checked = route.handlerValidates !== true;
  const validateBody = checked && route.body ? compileValidator(route.body, 'body') : null;
  const validateQuery = checked && route.query ? compileValidator(route.query, 'query') : null;
  const { authenticator, dispatcher, limiter, onUnexpected } = deps;
  const folders = flatFolders.get(app) ?? new Set<string>();
  folders.add(folderOf(route.url));
  flatFolders.set(app, folders);
  app.route({
    method: route.method,
    url: route.url,
    handler: async (request, reply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      let auth: HttpAuthOutcome;
      try {
        // A GET route reads (no effects): its retry runs again, its answer is not kept.
        auth = authenticator.authenticateHttp(
          authParts(request, raw),
          route.method === 'GET' ? 'fingerprint' : 'answer',
        );
      } catch (error) {
        // As on the envelope route: the client address pays for a failed authentication.
        const refusal = dispatcher.chargeRefusal(error, null, addressKey(request));
        const mapped = mapError(refusal, onUnexpected);
        return send(reply, mapped.httpStatus, flatFailure(mapped.error));
      }
      if (auth.kind === 'replay') {
        const stored = await auth.answer;
        return send(reply, stored.status, stored.body);
      }
      const started = deps.observe ? performance.now() : 0;
      let ok = false;
      let status = 200;
      let body: string;
      try {
        limiter.take(auth.principal.apiKey, route.matching ?? false, auth.principal.rateLimits);
        // After the rate limit, so refused requests still cost the key its credit.
        requireRole(auth.principal, route.roles, `${route.method} ${route.url}`, 'path');
        let parsed: unknown = {};
        if (route.method === 'POST') {
          try {
            parsed = JSON.parse(raw);
          } catch {
            throw new VenueError('parse_error', 'the body is not JSON', { field: 'body' });
          }
          // As on the envelope route: JSON of the wrong shape is a bad request (400), not a refusal.
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
            throw new VenueError('bad_request', 'the body must be a JSON object', { field: 'body' });
          }
        }
        validateBody?.(parsed);
        const query = { ...(request.query as Record<string, unknown>) };
        validateQuery?.(query);
        body = flatAnswer(await route.handler({ body: parsed, query, principal: auth.principal }));
        ok = true;
      } catch (error) {
        const mapped = mapError(error, onUnexpected);
        status = mapped.httpStatus;
        body = flatFailure(mapped.error);
      }
      auth.settle({ status, body });
      try {
        deps.observe?.(route.url, 'http', ok, performance.now() - started);
      } catch (error) {
        onUnexpected(error);
      }
      return send(reply, status, body);
    },
  });
}

/** A flat route's refusal: `{succ: false, code, message, value: null, data}`. */
export function flatFailure(error: WireError): string {
  return JSON.stringify({
    succ: false,
    code: error.code,
    message: error.message,
    value: null,
    data: error.data ?? null,
  });
}
