/**
 * Verifies signed requests (SEMANTICS.md, Authentication) and resolves them to a principal.
 *
 * Invariants:
 * - A timestamp more than `clockSkewMs` from server time is refused with `clock_skew`, carrying
 *   `serverTime`; a bad or unknown key or signature is `invalid_credentials`.
 * - A nonce is remembered per key until both its timestamp and the moment it was first seen have
 *   left the window, without regard to case (a UUID in either case is accepted, and is one nonce;
 *   the signature is over the nonce as sent). Seen again with a byte-identical request (same method, path, body, timestamp
 *   and signature) the ORIGINAL answer is returned (waiting for it if still in flight) and nothing
 *   runs twice; with any other request it is `nonce_reused`.
 * - WebSocket `public/auth` binds a session, so a reused nonce there is always refused.
 * - Replay memory is bounded (ReplayMemory): answers are kept only for requests whose re-run would
 *   matter; past `maxEntries` / `maxAnswerBytes` new signed requests are refused with 429 rather
 *   than forgetting a nonce still inside the window. Once it is half full, a key over its share
 *   is refused so (`fullFor`): one key cannot take the memory from the others.
 * - Across a restart: after a clean stop the service saves the replay memory and restores it
 *   (`saveReplayMemory`, `restoreReplayMemory`), so retries and reused nonces are answered as
 *   before. After a crash the memory is lost, so `refuseSignedUntil` refuses every request signed
 *   at or before the time given (the last journaled command's time plus the window) whose nonce is
 *   not remembered: it may be the retry of a request the crashed run executed. Signed `public/*`
 *   reads (fingerprint retention) run again anyway and are not refused.
 * - Principals are cached for `cacheTtlMs` so a key created by the CLI in another process is
 *   seen at once (misses always re-read) and a disabled key stops within the TTL. A WebSocket
 *   session asks again through the same cache (`keyWorks`) before each private request and
 *   periodically, so its key stops within the TTL there too. The TTL runs on a monotonic clock
 *   (`monotonic`) as well as on `now`, and an entry is re-read once either says it is older: the
 *   service clock may stand still or slow down (a wall clock stepped back is slewed away), and a
 *   disabled key must still stop within the TTL of real time; `now` keeps it on the service clock
 *   for virtual-clock tests.
 */
import { VenueError } from '../../domain/errors.ts';
import type { KeyStore, RateLimitOverride, Role } from './key-store.ts';
import {
  type AnswerRetention,
  ReplayMemory,
  type ReplayMemoryLimits,
  type SavedNonce,
} from './replay-memory.ts';
import { signaturesMatch, signHttp, signWs } from './signature.ts';

export interface Principal {
  readonly apiKey: string;
  readonly userId: number;
  readonly accountIds: ReadonlySet<number>;
  readonly defaultAccountId: number;
  readonly roles: ReadonlySet<Role>;
  readonly deskName: string | null;
  readonly rateLimits: RateLimitOverride | null;
}

/** A finished HTTP answer, kept for byte-identical retries: the very body sent (text or bytes). */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string | Buffer;
}

export interface HttpRequestParts {
  readonly authorization: string | undefined;
  readonly timestamp: string | undefined;
  readonly nonce: string | undefined;
  readonly signature: string | undefined;
  readonly method: string;
  readonly pathWithQuery: string;
  readonly body: string;
}

export type HttpAuthOutcome =
  | { readonly kind: 'fresh'; readonly principal: Principal; readonly settle: (answer: StoredAnswer) => void }
  | { readonly kind: 'replay'; readonly answer: Promise<StoredAnswer> };

export interface WsAuthParams {
  readonly apiKey: string;
  readonly timestamp: string | number;
  readonly nonce: string;
  readonly signature: string;
}

interface CachedKey {
  readonly principal: Principal;
  readonly secret: string;
  /** Service time (`now`) and monotonic time when read from the store. */
  readonly loadedAt: number;
  readonly loadedAtMono: number;
}

/** How long a key's principal is cached (a disabled key works at most this long). */
export const DEFAULT_KEY_CACHE_TTL_MS = 30_000;

export interface AuthenticatorOptions {
  readonly clockSkewMs: number;
  /** Default `DEFAULT_KEY_CACHE_TTL_MS`. */
  readonly cacheTtlMs?: number;
  /** Caps on the replay memory; absent: `DEFAULT_REPLAY_LIMITS`. */
  readonly replay?: ReplayMemoryLimits;
  /** A monotonic clock (ms) also timing the key cache. Default `performance.now`. */
  readonly monotonic?: () => number;
}

export type { AnswerRetention, SavedNonce } from './replay-memory.ts';

/** The refusal of a key that is unknown or disabled, on every path (`field`: where it came from). */
export function disabledKeyError(field: string): VenueError {
  return new VenueError('invalid_credentials', 'unknown or disabled API key', { field });
}

/**
 * A signed request that does not authenticate: one answer whether the key is unknown, disabled or
 * the signature wrong, naming the field the signature came in, so a refusal does not tell which
 * keys exist.
 */
function credentialsRefused(signatureField: string): VenueError {
  return new VenueError(
    'invalid_credentials',
    'unknown or disabled API key, or a signature that does not match it',
    { field: signatureField },
  );
}

export class Authenticator {
  private readonly keys = new Map<string, CachedKey>();
  private readonly memory: ReplayMemory;
  private readonly cacheTtlMs: number;
  private readonly monotonic: () => number;
  /** Requests signed at or before this time may repeat one a crashed run executed (see above). */
  private uncertainUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: KeyStore,
    private readonly now: () => number,
    private readonly options: AuthenticatorOptions,
  ) {
    this.cacheTtlMs = options.cacheTtlMs ?? DEFAULT_KEY_CACHE_TTL_MS;
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.memory = new ReplayMemory(options.clockSkewMs, options.replay);
  }

  /**
   * `retention`: 'answer' keeps the answer for byte-identical retries (anything with effects or
   * private data); 'fingerprint' remembers only the nonce, and a byte-identical retry runs again
   * (signed `public/*` reads, which an unsigned caller may repeat at will anyway).
   */
  authenticateHttp(request: HttpRequestParts, retention: AnswerRetention = 'answer'): HttpAuthOutcome {
    const apiKey = bearerKey(request.authorization);
    const { timestamp, nonce, signature } = request;
    if (!timestamp) throw missingHeader('Service-API-Timestamp');
    if (!nonce) throw missingHeader('Service-API-Nonce');
    checkNonceForm(nonce, 'Service-API-Nonce');
    if (!signature) throw missingHeader('Service-API-Signature');
    const now = this.now();
    const ts = this.checkTimestamp(timestamp, now, 'Service-API-Timestamp');
    const key = this.signer(apiKey, now, 'Service-API-Signature');
    const expected = signHttp(
      key.secret,
      timestamp,
      nonce,
      request.method,
      request.pathWithQuery,
      request.body,
    );
    if (!signaturesMatch(signature, expected)) throw credentialsRefused('Service-API-Signature');
    this.memory.prune(now);
    // The verified signature is an HMAC over ts, nonce, method, path and body: equal signatures
    // under one key mean a byte-identical request, so it serves as the request's fingerprint.
    const seen = this.memory.lookup(apiKey, nonce, signature);
    switch (seen.kind) {
      case 'replay':
        return { kind: 'replay', answer: seen.answer };
      case 'rerun':
        return { kind: 'fresh', principal: key.principal, settle: IGNORE_ANSWER };
      case 'conflict':
        throw new VenueError('nonce_reused', undefined, { field: 'Service-API-Nonce' });
      case 'unknown':
        throw new VenueError(
          'unavailable',
          'the service stopped before answering this request, so its outcome is unknown: check the state, then sign a new request',
          { field: 'Service-API-Nonce' },
        );
      case 'absent':
        if (retention === 'answer') this.refuseUncertain(ts, now, 'Service-API-Timestamp');
        break;
      default: {
        const _exhaustive: never = seen;
        throw _exhaustive;
      }
    }
    this.admit(apiKey, 'Service-API-Nonce', now);
    const settle = this.memory.remember(apiKey, nonce, this.nonceExpiry(ts, now), signature, retention);
    return { kind: 'fresh', principal: key.principal, settle };
  }

  /** `public/auth` on the WebSocket: signature over ts\nnonce\nGET\n/ws\n. */
  authenticateWs(params: WsAuthParams): Principal {
    const timestamp = String(params.timestamp);
    const now = this.now();
    const ts = this.checkTimestamp(timestamp, now, 'timestamp');
    checkNonceForm(params.nonce, 'nonce');
    const key = this.signer(params.apiKey, now, 'signature');
    if (!signaturesMatch(params.signature, signWs(key.secret, timestamp, params.nonce)))
      throw credentialsRefused('signature');
    this.memory.prune(now);
    if (this.memory.has(params.apiKey, params.nonce)) {
      throw new VenueError('nonce_reused', 'a public/auth nonce is accepted once; sign a new one', {
        field: 'nonce',
      });
    }
    this.refuseUncertain(ts, now, 'timestamp');
    this.admit(params.apiKey, 'nonce', now);
    this.memory.rememberSession(params.apiKey, params.nonce, this.nonceExpiry(ts, now));
    return key.principal;
  }

  /** Every nonce remembered now, to restore after a clean restart. */
  saveReplayMemory(): SavedNonce[] {
    return this.memory.save();
  }

  /** Remembers the nonces a clean stop saved (the expired ones are dropped). */
  restoreReplayMemory(saved: readonly SavedNonce[]): void {
    this.memory.restore(saved, this.now());
  }

  /**
   * After a crash: refuses requests signed at or before `ts` whose nonce is not remembered, since
   * the crashed run may have executed them (their retries must not run twice).
   */
  refuseSignedUntil(ts: number): void {
    this.uncertainUntil = ts;
  }

  /**
   * Whether `apiKey` is known and enabled now, through the key cache: a key disabled in the store
   * stops within `cacheTtlMs`, as over HTTP (WebSocket sessions ask before each private request).
   * A failing store read throws.
   */
  keyWorks(apiKey: string): boolean {
    try {
      this.lookup(apiKey, this.now(), 'apiKey');
      return true;
    } catch (error) {
      if (error instanceof VenueError && error.errorName === 'invalid_credentials') return false;
      throw error;
    }
  }

  /** Forgets cached principals (after the CLI or bootstrap changed keys in this process). */
  invalidate(apiKey?: string): void {
    if (apiKey === undefined) this.keys.clear();
    else this.keys.delete(apiKey);
  }

  get rememberedNonces(): number {
    return this.memory.entries;
  }

  /** Characters of answers held for retries (the quantity `maxAnswerBytes` caps). */
  get rememberedAnswerBytes(): number {
    return this.memory.answerBytes;
  }

  /** What one key holds in the replay memory (what its share caps). */
  rememberedBy(apiKey: string): { readonly entries: number; readonly answerBytes: number } {
    return this.memory.heldBy(apiKey);
  }

  /**
   * Refuses rather than forgets: a forgotten nonce inside the window could run a request twice.
   * A key over its share is refused before the memory is full, so the others still get in.
   */
  private admit(apiKey: string, field: string, now: number): void {
    if (!this.memory.fullFor(apiKey)) return;
    const message = this.memory.full
      ? 'too many signed requests inside the replay window'
      : 'too many signed requests by this key inside the replay window: it holds its share of the replay memory';
    // When enough of the nonces holding the memory (the key's own, when over its share) have left
    // it: a retry sooner is refused again.
    const freedAt = this.memory.freedAt(apiKey, now);
    const retryAfterMs = Number.isNaN(freedAt) ? this.memory.bucketMs : Math.max(1, freedAt - now);
    throw new VenueError('too_many_requests', message, { field, retryAfterMs });
  }

  private refuseUncertain(ts: number, now: number, field: string): void {
    if (ts > this.uncertainUntil) return;
    throw new VenueError(
      'unavailable',
      'the service restarted after a crash and cannot tell this request from a retry of one it may have executed: check the state, then sign a new request',
      {
        field,
        signedNotAfter: this.uncertainUntil,
        retryAfterMs: Math.max(1, this.uncertainUntil + 1 - now),
      },
    );
  }

  /**
   * A nonce is kept a window past both its timestamp and the moment it was first seen: a request
   * signed 14 s ago and another with its nonce 2 s later are both inside the window (SEMANTICS).
   */
  private nonceExpiry(ts: number, now: number): number {
    return Math.max(ts, now) + this.options.clockSkewMs + 1;
  }

  private checkTimestamp(text: string, now: number, field: string): number {
    const ts = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(ts)) {
      throw new VenueError('invalid_credentials', `${field} must be epoch milliseconds`, { field });
    }
    if (Math.abs(ts - now) > this.options.clockSkewMs) {
      throw new VenueError('clock_skew', undefined, {
        field,
        serverTime: now,
        maxSkewMs: this.options.clockSkewMs,
      });
    }
    return ts;
  }

  /** `field`: where the key came from (the Authorization header, or `apiKey` of `public/auth`). */
  /** The key a request is signed with; an unknown or disabled one is refused as a bad signature. */
  private signer(apiKey: string, now: number, signatureField: string): CachedKey {
    try {
      return this.lookup(apiKey, now, signatureField);
    } catch (error) {
      if (error instanceof VenueError && error.errorName === 'invalid_credentials')
        throw credentialsRefused(signatureField);
      throw error;
    }
  }

  private lookup(apiKey: string, now: number, field: string): CachedKey {
    const cached = this.keys.get(apiKey);
    const mono = this.monotonic();
    if (cached !== undefined && this.fresh(cached, now, mono)) return cached;
    const found = this.store.findKey(apiKey);
    if (found === undefined || found.record.disabled) {
      this.keys.delete(apiKey);
      throw disabledKeyError(field);
    }
    const record = found.record;
    const principal: Principal = {
      apiKey,
      userId: record.userId,
      accountIds: new Set(this.store.accountsOf(record.userId).map((account) => account.id)),
      defaultAccountId: record.defaultAccountId,
      roles: new Set(record.roles),
      deskName: record.deskName,
      rateLimits: record.rateLimits,
    };
    const entry: CachedKey = { principal, secret: found.apiSecret, loadedAt: now, loadedAtMono: mono };
    this.keys.set(apiKey, entry);
    return entry;
  }

  /** Younger than the TTL on both clocks (a service clock that went back counts as expired). */
  private fresh(cached: CachedKey, now: number, mono: number): boolean {
    const age = now - cached.loadedAt;
    const monoAge = mono - cached.loadedAtMono;
    return age >= 0 && age < this.cacheTtlMs && monoAge >= 0 && monoAge < this.cacheTtlMs;
  }
}

const IGNORE_ANSWER = (_answer: StoredAnswer): void => {};

/**
 * The key of `Authorization: Bearer <API_KEY>`. Missing (or empty) is `authorization_required`;
 * present but not that form (another scheme, more words, or the header sent twice, which reaches
 * here joined with a comma as Node joins the Service-API-* headers) is `invalid_credentials`
 * naming it, as a malformed Service-API-* header is.
 */
function bearerKey(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw new VenueError('authorization_required', 'Authorization: Bearer <API_KEY> is required', {
      field: 'Authorization',
    });
  }
  const match = /^Bearer\s+([^\s,]+)$/i.exec(header.trim());
  if (match === null) {
    throw new VenueError(
      'invalid_credentials',
      'Authorization must be one header of the form Bearer <API_KEY>',
      { field: 'Authorization' },
    );
  }
  return match[1]!;
}

const UUID_FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Spec §5: the nonce is a unique request identifier in UUID form (any version). */
function checkNonceForm(nonce: string, field: string): void {
  if (!UUID_FORM.test(nonce)) {
    throw new VenueError('invalid_credentials', `${field} must be a UUID (8-4-4-4-12 hex digits)`, { field });
  }
}

function missingHeader(name: string): VenueError {
  return new VenueError('authorization_required', `${name} header is required`, { field: name });
}
