/**
 * Runs one envelope `{rid, method, params}` for either transport: method lookup, transport and
 * access checks, rate limit, params validation, handler, error mapping.
 *
 * Invariants:
 * - The answer is `{rid, result}` or `{rid, error}`, never both; handler exceptions of any kind
 *   become catalogue errors (unexpected ones `internal_error`, logged), never a crash or a 5xx.
 * - Checks run in this order, so a caller learns the cheapest truth first: method exists, allowed
 *   on this transport, authenticated, rate limit, role, params.
 * - Every envelope costs one credit, refused or not. A refusal before the rate limit (unknown
 *   method, wrong transport, `authorization_required`) takes it from the key's non-matching bucket
 *   when one authenticated, else from the client address's (`chargeRefusal`); `forbidden` comes
 *   after the key's charge for the method. An empty bucket answers `too_many_requests` instead.
 */
import { VenueError } from '../domain/errors.ts';
import type { Principal } from './auth/authenticator.ts';
import type { Role } from './auth/key-store.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { CallContext, MethodRegistry, SessionHandle, Transport } from './registry.ts';
import { mapError, type WireError } from './wire-errors.ts';

export interface Envelope {
  readonly rid: number;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

export type EnvelopeAnswer =
  | { readonly rid: number | null; readonly result: unknown }
  | { readonly rid: number | null; readonly error: WireError };

export interface DispatchOutcome {
  readonly httpStatus: number;
  readonly answer: EnvelopeAnswer;
}

export interface DispatchContext {
  readonly principal: Principal | null;
  readonly transport: Transport;
  readonly session: SessionHandle | null;
  /** Rate-limit identity when there is no principal (connection or remote address). */
  readonly anonymousKey: string;
}

const ENVELOPE_KEYS = new Set(['rid', 'method', 'params', 'jsonrpc']);

/**
 * Checks the envelope's shape; anything else is `bad_request` (HTTP 400). `field` names the whole
 * request when it is no object at all: `body` over HTTP, `message` over WebSocket.
 */
export function parseEnvelope(body: unknown, field = 'body'): Envelope {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new VenueError('bad_request', `the ${field} must be an envelope {rid, method, params}`, { field });
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!ENVELOPE_KEYS.has(key))
      throw new VenueError('bad_request', `${key} is not an envelope field`, { field: key });
  }
  const { rid, method, params } = record;
  if (typeof rid !== 'number' || !Number.isSafeInteger(rid)) {
    throw new VenueError('bad_request', 'rid must be an integer of at most 2^53 - 1 in magnitude', {
      field: 'rid',
    });
  }
  if (typeof method !== 'string' || method.length === 0 || method.length > 128) {
    throw new VenueError('bad_request', 'method must be a method name', { field: 'method' });
  }
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params))) {
    throw new VenueError('bad_request', 'params must be an object', { field: 'params' });
  }
  return { rid, method, params: (params ?? {}) as Record<string, unknown> };
}

/** The rid of a body that failed to be an envelope, when one can be read. */
export function salvageRid(body: unknown): number | null {
  if (typeof body === 'object' && body !== null && 'rid' in body) {
    const rid = (body as { rid: unknown }).rid;
    if (typeof rid === 'number' && Number.isSafeInteger(rid)) return rid;
  }
  return null;
}

/**
 * Told of every dispatched envelope: the method name (`unknown` when it is not registered, so
 * callers never see arbitrary client strings), whether it answered a result, and the time it took.
 */
export type RequestObserver = (method: string, transport: Transport, ok: boolean, ms: number) => void;

type RegisteredMethod = NonNullable<ReturnType<MethodRegistry['get']>>;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

export class Dispatcher {
  constructor(
    private readonly registry: MethodRegistry,
    private readonly limiter: RateLimiter,
    private readonly now: () => number,
    private readonly onUnexpected: (error: unknown, method: string) => void,
    private readonly observe: RequestObserver | null = null,
  ) {}

  /**
   * Takes one credit for a request refused before its method's bucket was charged (failed
   * authentication, a body that is no envelope, an unknown method): from the key's non-matching
   * bucket when a key authenticated, else from the client address's (`anonymousKey`), the bucket
   * its unauthenticated requests draw from. Answers the error to send: `refusal`, or
   * `too_many_requests` once that bucket is empty, so a flood of bad requests is throttled as any
   * other. Only refusals call it: a request charged as usual takes no second credit.
   */
  chargeRefusal(refusal: unknown, principal: Principal | null, anonymousKey: string): unknown {
    try {
      this.limiter.take(principal?.apiKey ?? anonymousKey, false, principal?.rateLimits);
    } catch (limited) {
      return limited;
    }
    return refusal;
  }

  /** Whether `method` is a registered method that needs an authenticated principal. */
  isPrivate(method: string): boolean {
    return this.registry.get(method)?.access === 'private';
  }

  /**
   * Never rejects: every failure becomes an error answer. Written without `async`: an async frame
   * costs about 400 bytes per call, a `then` with two small closures about half that.
   */
  dispatch(envelope: Envelope, context: DispatchContext): Promise<DispatchOutcome> {
    const started = this.observe === null ? 0 : performance.now();
    const method = this.registry.get(envelope.method);
    let answer: unknown;
    try {
      answer = this.run(envelope, context, method);
    } catch (error) {
      return Promise.resolve(this.failed(envelope, context, method, started, error));
    }
    if (!isThenable(answer))
      return Promise.resolve(this.succeeded(envelope, context, method, started, answer));
    return Promise.resolve(answer).then(
      (result) => this.succeeded(envelope, context, method, started, result),
      (error: unknown) => this.failed(envelope, context, method, started, error),
    );
  }

  private succeeded(
    envelope: Envelope,
    context: DispatchContext,
    method: RegisteredMethod | undefined,
    started: number,
    result: unknown,
  ): DispatchOutcome {
    return this.observed(
      { httpStatus: 200, answer: { rid: envelope.rid, result } },
      envelope,
      context,
      method,
      started,
      true,
    );
  }

  private failed(
    envelope: Envelope,
    context: DispatchContext,
    method: RegisteredMethod | undefined,
    started: number,
    error: unknown,
  ): DispatchOutcome {
    const mapped = mapError(error, (unexpected) => this.onUnexpected(unexpected, envelope.method));
    const wire = spelledAsSent(mapped.error, envelope.params);
    return this.observed(
      { httpStatus: mapped.httpStatus, answer: { rid: envelope.rid, error: wire } },
      envelope,
      context,
      method,
      started,
      false,
    );
  }

  private observed(
    outcome: DispatchOutcome,
    envelope: Envelope,
    context: DispatchContext,
    method: RegisteredMethod | undefined,
    started: number,
    ok: boolean,
  ): DispatchOutcome {
    if (this.observe !== null) {
      const name = method === undefined ? 'unknown' : envelope.method;
      try {
        // ok: answered with a result; an error answer is an error whatever its HTTP status (a
        // refusal travels with 200).
        this.observe(name, context.transport, ok, performance.now() - started);
      } catch (error) {
        this.onUnexpected(error, envelope.method);
      }
    }
    return outcome;
  }

  /** Throws the checks' refusals; returns the handler's answer (a promise for async handlers). */
  private run(
    envelope: Envelope,
    context: DispatchContext,
    method: ReturnType<MethodRegistry['get']>,
  ): unknown {
    const principal = context.session?.principal ?? context.principal;
    if (method === undefined) {
      const refusal = new VenueError('method_not_found', `unknown method ${envelope.method}`, {
        field: 'method',
      });
      throw this.chargeRefusal(refusal, principal, context.anonymousKey);
    }
    if (method.transports && !method.transports.includes(context.transport)) {
      const refusal = new VenueError(
        'method_not_found',
        `${envelope.method} is served over ${method.transports.join(' and ')} only`,
        { field: 'method', transports: [...method.transports] },
      );
      throw this.chargeRefusal(refusal, principal, context.anonymousKey);
    }
    if (method.access === 'private') {
      if (principal === null) {
        const refusal = new VenueError('authorization_required', undefined, { field: 'method' });
        throw this.chargeRefusal(refusal, null, context.anonymousKey);
      }
      // Before the role check, as on the flat routes: a key refused `forbidden` still pays for
      // the call, from its own bucket (its address's neighbours do not pay for it).
      this.limiter.take(principal.apiKey, method.matching ?? false, principal.rateLimits);
      requireRole(principal, method.roles, envelope.method, 'method');
    } else {
      this.limiter.take(
        principal?.apiKey ?? context.anonymousKey,
        method.matching ?? false,
        principal?.rateLimits,
      );
    }
    method.validate(envelope.params);
    const call: CallContext = {
      principal,
      transport: context.transport,
      session: context.session,
      receivedAt: this.now(),
    };
    return method.handler(envelope.params as never, call);
  }
}

const TIME_IN_FORCE = /^(.*?)(timeInForce|timeInforce)$/;

/** `params`' value at a field path (`otocoConfig[1]`, `a.b`), or undefined. */
function valueAt(params: unknown, path: string): unknown {
  let value = params;
  for (const part of path.split(/\.|\[(\d+)\]/)) {
    if (part === undefined || part === '') continue;
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * A refusal's `data.field` as the client spelled it: the time in force is taken under both
 * spellings (SEMANTICS, Orders), and a refusal names the one the request used (`timeInforce`,
 * spec 4.3's, or `timeInForce`, the examples'), also inside `otocoConfig[i]`. Only refusals pay.
 */
export function spelledAsSent(error: WireError, params: unknown): WireError {
  const field = error.data?.field;
  if (typeof field !== 'string') return error;
  const match = TIME_IN_FORCE.exec(field);
  if (match === null) return error;
  const prefix = match[1]!;
  const parent = valueAt(params, prefix.endsWith('.') ? prefix.slice(0, -1) : prefix);
  if (typeof parent !== 'object' || parent === null || Object.hasOwn(parent, match[2]!)) return error;
  const other = match[2] === 'timeInForce' ? 'timeInforce' : 'timeInForce';
  if (!Object.hasOwn(parent, other)) return error;
  return { ...error, data: { ...error.data, field: `${prefix}${other}` } };
}

/**
 * Refuses a key with none of `roles` (unset: any key) `forbidden`, naming `operation` (a method, or
 * a flat route's method and path) and, in `data.field`, what names it in the request.
 */
export function requireRole(
  principal: Principal,
  roles: readonly Role[] | undefined,
  operation: string,
  field: string,
): void {
  if (roles === undefined || roles.some((role) => principal.roles.has(role))) return;
  throw new VenueError('forbidden', `${operation} needs role ${roles.join(' or ')}`, {
    field,
    roles: [...roles],
  });
}
