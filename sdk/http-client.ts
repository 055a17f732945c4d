/**
 * Typed HTTP client: `POST /api/<method>` envelopes and the flat signed routes, signed as
 * SEMANTICS.md says (ts\nnonce\nMETHOD\npathWithQuery\nbody, HMAC-SHA256, base64). Uses the
 * platform `fetch` (keep-alive by default in Node). The flat portfolio routes (spec 4.1) have
 * typed calls (`submitPortfolio`, `portfolioInfo`, `cancelPortfolio`, `cancelAllPortfolios`)
 * whose bodies and answers are typed from the server's schemas; `flat` stays for any other route.
 *
 * A call whose answer is lost (the connection drops, or no answer within `timeoutMs`) is sent
 * again, the very same signed bytes, up to `retries` times while the signature's timestamp is
 * fresh. The service answers a byte-identical retry with the original answer and never runs it
 * twice, so an order whose answer was lost is neither lost nor placed twice. The last sending
 * waits until `answerDeadlineMs` after the first: the service holds a command up to 30 s while
 * its journal is stalled (NATS or PostgreSQL failing over) and answers it then, so a client that
 * gave up sooner would take an order that was placed for one that may not have been.
 *
 * After a crash the service refuses requests signed up to a time it names (`signedNotAfter`: it
 * cannot tell them from retries of requests it may have executed). A call refused so on its first
 * sending never ran, so it is signed again (new nonce) with a timestamp past that time, as are the
 * calls after it until the clock passes it. A resend refused so may have run: that refusal goes to
 * the caller.
 */
import { randomUUID } from 'node:crypto';
import { signHttp } from '../src/api/auth/signature.ts';
import { ApiError, signedNotAfter } from './errors.ts';
import type {
  CancelAllPortfoliosBody,
  CancelPortfolioBody,
  MethodName,
  ParamsOf,
  PortfolioInfo,
  ResultOf,
  SubmitPortfolioBody,
  WireErrorBody,
} from './types.ts';

/** Prefix of the flat portfolio routes (spec 4.1; the service's `PORTFOLIO_BASE_PATH`). */
export const PORTFOLIO_PATH = '/tt/core-broker/openapi/portfolios';

export interface Credentials {
  readonly apiKey: string;
  readonly apiSecret: string;
}

export interface HttpClientOptions {
  readonly baseUrl: string;
  readonly credentials?: Credentials;
  /** Clock for signatures (tests); defaults to Date.now. */
  readonly now?: () => number;
  /** Resends of the same signed request after a lost answer (default 2; 0 never resends). */
  readonly retries?: number;
  /** How long one attempt waits for its answer, ms (default 10,000). */
  readonly timeoutMs?: number;
  /**
   * How long a call waits for its answer in all, ms, its last sending waiting out what is left.
   * Default: 35,000 (past the service's 30 s journal deadline), or, when `timeoutMs` is given,
   * none (each sending waits `timeoutMs`).
   */
  readonly answerDeadlineMs?: number;
}

/**
 * Resends stop this long after the first attempt: the service refuses a timestamp more than 15 s
 * from its clock (SEMANTICS), and the same bytes carry the same timestamp.
 */
const RESEND_WINDOW_MS = 12_000;
const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
const DEFAULT_ANSWER_DEADLINE_MS = 35_000;

export interface RawAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

export interface SignedRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body: string;
  readonly headers: Record<string, string>;
}

export class HttpClient {
  private rid = 1;
  private readonly now: () => number;
  /** Sign no earlier than this (past a post-crash `signedNotAfter`); 0: no floor. */
  private signFloor = 0;

  constructor(private readonly options: HttpClientOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Builds a signed request (exposed so tests can replay or tamper with it). */
  sign(
    method: 'GET' | 'POST',
    path: string,
    body: string,
    nonce: string = randomUUID(),
    ts = Math.max(this.now(), this.signFloor),
  ): SignedRequest {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const credentials = this.options.credentials;
    if (credentials) {
      const timestamp = String(ts);
      headers.authorization = `Bearer ${credentials.apiKey}`;
      headers['service-api-timestamp'] = timestamp;
      headers['service-api-nonce'] = nonce;
      headers['service-api-signature'] = signHttp(
        credentials.apiSecret,
        timestamp,
        nonce,
        method,
        path,
        body,
      );
    }
    return { method, path, body, headers };
  }

  /** One attempt: rejects when no answer comes (connection lost, refused, timed out). */
  async send(
    request: SignedRequest,
    timeoutMs = this.options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS,
  ): Promise<RawAnswer> {
    const response = await fetch(`${this.options.baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      signal: AbortSignal.timeout(timeoutMs),
      ...(request.method === 'POST' ? { body: request.body } : {}),
    });
    const text = await response.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, body, text };
  }

  /**
   * Signs and sends; sends the same bytes again while no answer came, and signs anew once if the
   * first sending was refused as signed before a crash (see the header).
   */
  private async signAndSend(method: 'GET' | 'POST', path: string, body: string): Promise<RawAnswer> {
    const first = await this.sendUntilAnswered(this.sign(method, path, body));
    const floor = first.resent ? null : refusedSignedNotAfter(first.answer);
    if (floor === null) return first.answer;
    this.signFloor = Math.max(this.signFloor, floor + 1);
    return (await this.sendUntilAnswered(this.sign(method, path, body))).answer;
  }

  /** Sends, and sends the same bytes again while no answer came (see the header). */
  private async sendUntilAnswered(request: SignedRequest): Promise<{ answer: RawAnswer; resent: boolean }> {
    const retries = this.options.retries ?? 2;
    const attemptTimeout = this.options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
    const started = Date.now();
    const deadline =
      started +
      (this.options.answerDeadlineMs ??
        (this.options.timeoutMs === undefined ? DEFAULT_ANSWER_DEADLINE_MS : 0));
    for (let attempt = 0; ; attempt++) {
      // A sending that cannot be followed by another, should it time out, waits out the deadline.
      const now = Date.now();
      const last = attempt >= retries || now + attemptTimeout - started >= RESEND_WINDOW_MS;
      const timeout = last ? Math.max(attemptTimeout, deadline - now) : attemptTimeout;
      try {
        return { answer: await this.send(request, timeout), resent: attempt > 0 };
      } catch (error) {
        if (attempt >= retries || Date.now() - started >= RESEND_WINDOW_MS) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 1_000)));
      }
    }
  }

  /** Calls an envelope method; resolves with `result` or throws `ApiError`. */
  async call<M extends MethodName>(method: M, params: ParamsOf<M> = {} as ParamsOf<M>): Promise<ResultOf<M>> {
    const rid = this.rid++;
    const answer = await this.signAndSend('POST', `/api/${method}`, JSON.stringify({ rid, method, params }));
    const body = answer.body as { rid: number; result?: unknown; error?: unknown };
    if (isObject(body) && body.error !== undefined) {
      // An error that is not ours (a proxy's, or a server's own `{error: "…"}`): code -1, its text.
      const error = isObject(body.error) ? errorBody(body.error) : null;
      throw new ApiError(
        error ?? {
          code: -1,
          message: `unexpected answer (HTTP ${answer.status}): ${answer.text.slice(0, 200)}`,
        },
        answer.status,
      );
    }
    if (!isObject(body) || !('result' in body)) {
      throw new ApiError(
        { code: -1, message: `unexpected answer (HTTP ${answer.status}): ${answer.text.slice(0, 200)}` },
        answer.status,
      );
    }
    return body.result as ResultOf<M>;
  }

  /** Submits a portfolio (`POST …/portfolios/submit`, spec 4.1); resolves with its id. */
  submitPortfolio(body: SubmitPortfolioBody): Promise<{ portfolioId: number }> {
    return this.flat('POST', `${PORTFOLIO_PATH}/submit`, body);
  }

  /** A portfolio of the key's user (`GET …/portfolios/info`); another's is `portfolio_not_found`. */
  portfolioInfo(portfolioId: number): Promise<PortfolioInfo> {
    return this.flat('GET', `${PORTFOLIO_PATH}/info?portfolioId=${encodeURIComponent(portfolioId)}`);
  }

  /** Cancels a portfolio (`POST …/portfolios/cancel`): CANCELLING at once, then CANCELLED. */
  async cancelPortfolio(body: CancelPortfolioBody): Promise<void> {
    await this.flat<null>('POST', `${PORTFOLIO_PATH}/cancel`, body);
  }

  /** Cancels every active portfolio of an account (optionally of one type); the ids cancelled. */
  cancelAllPortfolios(body: CancelAllPortfoliosBody): Promise<{ portfolioIds: number[] }> {
    return this.flat('POST', `${PORTFOLIO_PATH}/cancel-all`, body);
  }

  /**
   * A flat signed route (portfolio style); resolves with `value` or throws `ApiError`. Untyped:
   * the portfolio routes have the typed calls above. A GET sends no body (its fields go in the
   * path's query): one given is refused here, as it would be signed and never sent.
   */
  async flat<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    if (method === 'GET' && body !== undefined) {
      throw new TypeError(`GET ${path} sends no body: put its fields in the query`);
    }
    const answer = await this.signAndSend(method, path, body === undefined ? '' : JSON.stringify(body));
    const parsed = answer.body as { succ?: unknown; value?: T } | null;
    if (isObject(parsed) && parsed.succ === true) return parsed.value as T;
    throw new ApiError(flatError(answer), answer.status);
  }
}

/** The `signedNotAfter` of a post-crash refusal (envelope or flat answer), else null. */
function refusedSignedNotAfter(answer: RawAnswer): number | null {
  const body = answer.body;
  if (!isObject(body)) return null;
  return signedNotAfter(isObject(body.error) ? body.error : body);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorBody(source: Record<string, unknown>): WireErrorBody | null {
  if (typeof source.code !== 'number') return null;
  return {
    code: source.code,
    message: typeof source.message === 'string' ? source.message : '',
    ...(isObject(source.data) ? { data: source.data } : {}),
  };
}

/**
 * The error of a failed flat call: the flat `{succ: false, code, message, data}` answer, or an
 * `{error}` envelope (what a proxy or an older service may send), else code -1 with the text.
 */
function flatError(answer: RawAnswer): WireErrorBody {
  const body = answer.body;
  const found = isObject(body)
    ? (errorBody(body) ?? (isObject(body.error) ? errorBody(body.error) : null))
    : null;
  return (
    found ?? { code: -1, message: `unexpected answer (HTTP ${answer.status}): ${answer.text.slice(0, 200)}` }
  );
}
