/**
 * Typed WebSocket client: envelopes over `/ws`, pushes by channel, automatic answers to
 * heartbeat test_requests, and reconnection with re-authentication and resubscription.
 *
 * Invariants:
 * - Calls in flight when the connection drops are rejected (the caller decides whether to retry;
 *   the server may or may not have executed them). Until a reconnect has restored the session,
 *   calls are rejected as while disconnected (`not connected`), so no order goes out on a new
 *   connection before its cancel-on-disconnect is back on.
 * - After a reconnect the client re-sends `public/auth` (fresh nonce), sets the heartbeat it had
 *   asked for, re-subscribes every channel it held (at most `SUBSCRIBE_CHANNELS_PER_CALL` a call;
 *   a channel the server now refuses is dropped and reported, the others subscribed), and last
 *   turns cancel-on-disconnect back on if this client had it on, before it calls `onReconnected`.
 *   Per-channel `seq` restarts at 1, with a snapshot on the channels that have one (user.orders,
 *   order.change.any, book, ticker, user.portfolio); the others (user.trades, user.changes, trades,
 *   trade-news, block_rfq) do not replay what happened while disconnected: `onDisconnected` and
 *   `onReconnected` mark the span to read from the history methods. (A connection's session settings die with it on
 *   the server: without this, a market maker's orders after a reconnect would silently lose their
 *   cancel-on-disconnect.)
 * - A reconnect that fails is reported (`onReconnectError`) and tried again with backoff, unless
 *   the server refused something trying again cannot change (the credentials): then the client
 *   stops, as if closed, and says so. A reconnect signs in with the client's `credentials`; a
 *   client signed in through `call('public/auth')` with another key (or given none) gives up at
 *   once, rather than carry on signed out or as another account.
 * - Signing in with another key ends the last key's session on the server (its channels, its
 *   cancel-on-disconnect): the client forgets those channels and their listeners too.
 * - A session is one `connect()`: `close()` ends it, and the next `connect()` starts with nothing
 *   of the last (not authenticated, no channels, heartbeat and cancel-on-disconnect off).
 * - A channel's listeners last as long as its subscription: `unsubscribe()`, the end of the
 *   session, or a refusal on resubscribe removes them. `onAnyPush` listeners stay.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { signWs } from '../src/api/auth/signature.ts';
import { ApiError, signedNotAfter } from './errors.ts';
import type { Credentials } from './http-client.ts';
import type { AuthResult, MethodName, ParamsOf, ResultOf, SubscriptionPush, WireErrorBody } from './types.ts';

export interface WsClientOptions {
  /** e.g. ws://127.0.0.1:8080/ws */
  readonly url: string;
  readonly credentials?: Credentials;
  readonly reconnect?: boolean;
  readonly reconnectDelayMs?: number;
  readonly now?: () => number;
  /**
   * How long a call waits for its answer before it rejects (default 35 s, past the service's 30 s
   * journal deadline). The request may still have run: check the state before sending it again.
   */
  readonly timeoutMs?: number;
}

type PushListener = (push: SubscriptionPush) => void;

/**
 * The most channels the service takes in one `public/subscribe` or `private/subscribe`
 * (`ChannelsParams`, `maxItems`, in src/api/schemas/methods.ts; a test keeps the two equal).
 * A reconnect resubscribes in calls of at most this many.
 */
export const SUBSCRIBE_CHANNELS_PER_CALL = 100;

/**
 * What `onReconnectError` reports:
 * - `retrying`: this attempt failed (`cause`); the client tries again after the backoff.
 * - `channels_refused`: the client reconnected, but the server refused the channels in
 *   `refusedChannels` (each with its error); they are no longer held, the others are subscribed.
 * - `gave_up`: the server refused something trying again cannot change (`cause`, e.g. a disabled
 *   key); the client stopped and holds nothing, as after `close()`. `connect()` starts afresh.
 */
export type ReconnectErrorKind = 'retrying' | 'channels_refused' | 'gave_up';

export class ReconnectError extends Error {
  readonly refusedChannels: ReadonlyMap<string, ApiError>;

  constructor(
    readonly kind: ReconnectErrorKind,
    message: string,
    details: { cause?: unknown; refusedChannels?: ReadonlyMap<string, ApiError> } = {},
  ) {
    super(message, 'cause' in details ? { cause: details.cause } : undefined);
    this.name = 'ReconnectError';
    this.refusedChannels = details.refusedChannels ?? new Map();
  }
}

/**
 * What the service's other spellings of a channel share: letter case aside, and without Deribit's
 * interval suffix (`.raw`, `.100ms`, `.agg2`).
 */
function spellingKey(channel: string): string {
  return channel.replace(/\.(raw|100ms|agg2)$/, '').toLowerCase();
}

/** Past the service's 30 s journal deadline, within which it answers a command held by a stalled journal. */
const DEFAULT_CALL_TIMEOUT_MS = 35_000;

/** The methods whose effect on the connection a reconnect restores (see `track`). */
const TRACKED_METHODS: ReadonlySet<MethodName> = new Set<MethodName>([
  'public/auth',
  'public/set_heartbeat',
  'public/disable_heartbeat',
  'private/enable_cancel_on_disconnect',
  'private/disable_cancel_on_disconnect',
  'public/subscribe',
  'private/subscribe',
  'public/unsubscribe',
  'private/unsubscribe',
  'public/unsubscribe_all',
  'private/unsubscribe_all',
]);

/**
 * Refusals a reconnect gets again however often it tries: the key is unknown, disabled or lacks
 * the right, or the request itself is refused (it was accepted before, so the service changed).
 * Anything else (the connection, `unavailable`, rate limits, clock skew) may pass: it is retried.
 */
const LASTING_REFUSALS: ReadonlySet<string> = new Set([
  'invalid_credentials',
  'unauthorized',
  'forbidden',
  'permission_denied',
  'invalid_params',
  'method_not_found',
]);

interface Pending {
  readonly socket: WebSocket;
  resolve(value: unknown): void;
  reject(error: Error): void;
  readonly timer: ReturnType<typeof setTimeout>;
}

type Send = <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;

export class WsClient {
  private socket: WebSocket | null = null;
  /** The socket's session is usable by the caller (false while a reconnect restores it). */
  private ready = false;
  /** One per `connect()`: work of an earlier session that finishes late changes nothing. */
  private generation = 0;
  private rid = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<PushListener>>();
  private readonly anyListeners = new Set<PushListener>();
  private readonly subscribed = new Set<string>();
  /** The seq of each channel's last push on this connection (see `checkSeq`). */
  private readonly lastSeq = new Map<string, number>();
  /** By `close()`, or by a reconnect that gave up. */
  private closed = false;
  private authenticated = false;
  /**
   * Signed in through `call('public/auth')` by a client given no credentials: a reconnect could
   * not sign in again, so it gives up rather than carry on signed out.
   */
  private signedInWithoutSecret = false;
  /** The key the connection is signed in with, as answered (null before a sign-in). */
  private signedInKey: string | null = null;
  /** The session settings a reconnect restores (as last answered by the server). */
  private cancelOnDisconnect = false;
  private heartbeatInterval: number | null = null;
  /** One reconnect loop at a time: a socket that dies inside the loop is the loop's to retry. */
  private reconnecting = false;
  /** Called on each successful reconnection, after re-auth, resubscribe and session settings. */
  onReconnected: (() => void) | null = null;
  /** Called when a reconnect attempt fails, gives up, or loses channels (see `ReconnectError`). */
  onReconnectError: ((error: ReconnectError) => void) | null = null;
  /**
   * Called when the open connection closes other than by `close()` or `connect()`, with the close
   * code and reason as received (1008 "slow consumer": the service dropped pushes it could not
   * deliver; 1006: no close frame, which is also what a client that stalled usually sees, its 1008
   * frame stuck behind the data it did not read), before any reconnect. A reconnect's resubscribe starts every
   * channel at seq 1, with a fresh snapshot where the channel has one (see the header).
   */
  onDisconnected: ((close: { readonly code: number; readonly reason: string }) => void) | null = null;
  /**
   * Called when a channel's push does not follow its last one (`seq` not one more), before the
   * listeners get it: pushes were missed. Resubscribing the channel starts it afresh.
   */
  onGap:
    | ((gap: { readonly channel: string; readonly expectedSeq: number; readonly seq: number }) => void)
    | null = null;
  readonly heartbeatsAnswered = { count: 0 };

  constructor(private readonly options: WsClientOptions) {}

  /** Opens a new session: nothing of an earlier one (closed, or dropped and not reconnected) carries over. */
  async connect(): Promise<void> {
    const generation = ++this.generation;
    this.closed = false;
    this.reconnecting = false;
    this.ready = false;
    this.endSession();
    const previous = this.socket;
    this.socket = null;
    previous?.terminate();
    const socket = await this.open();
    if (generation !== this.generation || this.closed) {
      socket.terminate();
      throw new Error('connection closed');
    }
    this.ready = true;
  }

  private open(): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.options.url);
      this.socket = socket;
      let opened = false;
      socket.on('open', () => {
        opened = true;
        resolve(socket);
      });
      socket.on('error', (error) => reject(error));
      socket.on('message', (data) => this.onMessage(socket, data.toString()));
      socket.on('close', (code, reason) => this.onClose(socket, opened, code, reason.toString()));
    });
  }

  private onMessage(socket: WebSocket, text: string): void {
    let message: {
      rid?: number | null;
      result?: unknown;
      error?: WireErrorBody;
      method?: string;
      params?: { type?: string } & Partial<SubscriptionPush>;
    };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method === 'subscription' && message.params) {
      if (socket !== this.socket) return;
      const push = message.params as SubscriptionPush;
      this.checkSeq(push);
      for (const listener of this.listeners.get(push.channel) ?? []) listener(push);
      for (const listener of this.anyListeners) listener(push);
      return;
    }
    if (message.method === 'heartbeat') {
      if (message.params?.type === 'test_request') {
        this.heartbeatsAnswered.count++;
        // On the socket asked, even while a reconnect restores it.
        void this.request(socket, 'public/test', {}).catch(() => {});
      }
      return;
    }
    if (typeof message.rid !== 'number') return;
    const pending = this.pending.get(message.rid);
    if (pending === undefined) return;
    this.pending.delete(message.rid);
    clearTimeout(pending.timer);
    if (message.error) pending.reject(new ApiError(message.error, null));
    else pending.resolve(message.result);
  }

  /**
   * A connection that was open is reconnected; one that never opened is not: `connect()` already
   * rejected, and a loop behind the caller's back would keep the process alive, retrying.
   */
  private onClose(socket: WebSocket, opened: boolean, code: number, reason: string): void {
    for (const [rid, pending] of this.pending) {
      if (pending.socket !== socket) continue;
      clearTimeout(pending.timer);
      this.pending.delete(rid);
      pending.reject(new Error('connection closed'));
    }
    if (this.socket !== socket) return;
    this.socket = null;
    this.ready = false;
    if (opened && !this.closed) this.onDisconnected?.({ code, reason });
    if (!opened || this.closed || this.options.reconnect === false || this.reconnecting) return;
    this.reconnecting = true;
    const generation = this.generation;
    void this.reconnectLoop(generation).finally(() => {
      if (generation === this.generation) this.reconnecting = false;
    });
  }

  /** Stops reconnecting for good: the client is as if closed, and says why. */
  private giveUp(error: ReconnectError): void {
    this.closed = true;
    this.ready = false;
    this.endSession();
    this.onReconnectError?.(error);
  }

  /** The session `generation` is over (closed, given up, or replaced by a new `connect()`). */
  private stale(generation: number): boolean {
    return this.closed || generation !== this.generation;
  }

  private async reconnectLoop(generation: number): Promise<void> {
    const delay = this.options.reconnectDelayMs ?? 200;
    for (let attempt = 0; ; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay * 2 ** attempt, 5_000)));
      if (this.stale(generation)) return;
      if (this.signedInWithoutSecret) {
        this.giveUp(
          new ReconnectError(
            'gave_up',
            "reconnect cannot sign in again: the connection signed in through call('public/auth') with a key the client was not given the credentials of",
          ),
        );
        return;
      }
      let socket: WebSocket | null = null;
      let refused: Map<string, ApiError>;
      try {
        socket = await this.open();
        refused = await this.restore(socket);
      } catch (error) {
        socket?.terminate();
        if (this.stale(generation)) return;
        if (error instanceof ApiError && error.errorName !== null && LASTING_REFUSALS.has(error.errorName)) {
          this.giveUp(
            new ReconnectError('gave_up', `reconnect refused, not retried: ${error.message}`, {
              cause: error,
            }),
          );
          return;
        }
        const reason = error instanceof Error ? error.message : String(error);
        this.onReconnectError?.(
          new ReconnectError('retrying', `reconnect attempt failed, retrying: ${reason}`, { cause: error }),
        );
        continue;
      }
      if (this.stale(generation)) {
        socket.terminate();
        return;
      }
      if (socket !== this.socket || socket.readyState !== WebSocket.OPEN) {
        // It closed as the restore ended (its close left the retrying to this loop): try again.
        socket.terminate();
        this.onReconnectError?.(
          new ReconnectError('retrying', 'reconnect attempt failed, retrying: connection closed'),
        );
        continue;
      }
      this.forgetChannels([...refused.keys()]);
      this.ready = true;
      if (refused.size > 0) {
        this.onReconnectError?.(
          new ReconnectError('channels_refused', `resubscribe refused ${[...refused.keys()].join(', ')}`, {
            refusedChannels: refused,
          }),
        );
      }
      this.onReconnected?.();
      return;
    }
  }

  /**
   * Brings a new socket's session back to what the last one had. Cancel-on-disconnect comes last,
   * once re-auth and everything else succeeded: an attempt that fails earlier leaves nothing
   * journaled behind, and no call of the caller's goes out before it (the socket is not `ready`).
   * Returns the channels the server refused, each with its error.
   */
  private async restore(socket: WebSocket): Promise<Map<string, ApiError>> {
    // Every channel counts from 1 again on the new connection.
    this.lastSeq.clear();
    const send: Send = (method, params) => this.request(socket, method, params);
    if (this.authenticated) await this.authenticate(send);
    if (this.heartbeatInterval !== null) {
      await send('public/set_heartbeat', { interval: this.heartbeatInterval });
    }
    const refused = await this.resubscribe(send);
    if (this.authenticated && this.cancelOnDisconnect) {
      await send('private/enable_cancel_on_disconnect', { scope: 'connection' });
    }
    return refused;
  }

  /**
   * Resubscribes every channel held, `SUBSCRIBE_CHANNELS_PER_CALL` at a time. The service checks
   * a call's channels all or nothing and names the first it refuses (`channels[i]`): that one is
   * set aside and the rest sent again. Any other error fails the attempt.
   */
  private async resubscribe(send: Send): Promise<Map<string, ApiError>> {
    const method = this.authenticated ? 'private/subscribe' : 'public/subscribe';
    const channels = [...this.subscribed];
    const refused = new Map<string, ApiError>();
    for (let start = 0; start < channels.length; start += SUBSCRIBE_CHANNELS_PER_CALL) {
      let chunk = channels.slice(start, start + SUBSCRIBE_CHANNELS_PER_CALL);
      while (chunk.length > 0) {
        try {
          await send(method, { channels: chunk });
          break;
        } catch (error) {
          const index = refusedChannelIndex(error, chunk.length);
          if (index === null) throw error;
          refused.set(chunk[index]!, error as ApiError);
          chunk = chunk.filter((_, i) => i !== index);
        }
      }
    }
    return refused;
  }

  call<M extends MethodName>(method: M, params: ParamsOf<M> = {} as ParamsOf<M>): Promise<ResultOf<M>> {
    const socket = this.socket;
    if (!this.ready || socket === null || socket.readyState !== WebSocket.OPEN)
      return Promise.reject(new Error('not connected'));
    const answer = this.request(socket, method, params);
    if (!TRACKED_METHODS.has(method)) return answer;
    const generation = this.generation;
    return answer.then((result) => {
      if (generation === this.generation) this.track(method, params, result);
      return result;
    });
  }

  /**
   * Keeps what an answered call changed on the connection, made through `call` or the helpers
   * alike: the channels held (a reconnect resubscribes them) and the session settings.
   */
  private track(method: MethodName, params: unknown, result: unknown): void {
    switch (method) {
      case 'public/auth': {
        // Another key ends the last key's session on the server: its channels go, and with them
        // their listeners; its cancel-on-disconnect has run.
        const apiKey = (params as { apiKey: string }).apiKey;
        if (this.signedInKey !== null && this.signedInKey !== apiKey) {
          this.forgetChannels([...this.subscribed]);
          this.cancelOnDisconnect = false;
        }
        this.signedInKey = apiKey;
        // A reconnect signs in with the client's credentials: a connection signed in as another
        // key could only come back as the wrong account, so it gives up instead.
        this.signedInWithoutSecret = this.options.credentials?.apiKey !== apiKey;
        if (!this.signedInWithoutSecret) this.authenticated = true;
        return;
      }
      case 'public/subscribe':
      case 'private/subscribe':
        for (const channel of result as string[]) this.subscribed.add(channel);
        return;
      case 'public/unsubscribe':
      case 'private/unsubscribe':
        this.forgetChannels([...(params as { channels: string[] }).channels, ...(result as string[])]);
        return;
      case 'public/unsubscribe_all':
      case 'private/unsubscribe_all':
        this.forgetChannels([...this.subscribed]);
        return;
      default:
        this.remember(method, params as { interval?: number; scope?: string });
    }
  }

  /** Sends on `socket`, ready or not (the caller's calls go through `call`). */
  private request<M extends MethodName>(
    socket: WebSocket,
    method: M,
    params: ParamsOf<M>,
  ): Promise<ResultOf<M>> {
    if (socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error('not connected'));
    const rid = this.rid++;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      const timeoutMs = this.options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
      const timer = setTimeout(() => {
        this.pending.delete(rid);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms (it may still have run)`));
      }, timeoutMs);
      this.pending.set(rid, { socket, resolve: resolve as (value: unknown) => void, reject, timer });
      socket.send(JSON.stringify({ rid, method, params }));
    });
  }

  /** Keeps what a session method, once answered, set on this connection (see the header). */
  private remember(method: MethodName, params: { interval?: number; scope?: string }): void {
    const connectionScope = params.scope === undefined || params.scope === 'connection';
    if (method === 'public/set_heartbeat') this.heartbeatInterval = params.interval ?? null;
    else if (method === 'public/disable_heartbeat') this.heartbeatInterval = null;
    // The account scope turns it on for the asking connection too, but turns it off only for new ones.
    else if (method === 'private/enable_cancel_on_disconnect') this.cancelOnDisconnect = true;
    else if (method === 'private/disable_cancel_on_disconnect' && connectionScope)
      this.cancelOnDisconnect = false;
  }

  /** Forgets the session: what a reconnect would restore, and the listeners of its channels. */
  private endSession(): void {
    this.forgetChannels([...this.subscribed]);
    this.authenticated = false;
    this.signedInWithoutSecret = false;
    this.signedInKey = null;
    this.cancelOnDisconnect = false;
    this.heartbeatInterval = null;
  }

  private forgetChannels(channels: readonly string[]): void {
    for (const channel of channels) {
      this.subscribed.delete(channel);
      this.listeners.delete(channel);
      this.lastSeq.delete(channel);
    }
  }

  /**
   * Each channel's pushes count 1, 2, 3… from its subscribe (a snapshot starts again at 1): a push
   * that does not follow the last one means pushes were missed, reported to `onGap` before the
   * listeners get it. A gap is a service fault: resubscribing gives a fresh start.
   */
  private checkSeq(push: SubscriptionPush): void {
    const last = this.lastSeq.get(push.channel);
    if (last !== undefined && !push.snapshot && push.seq !== last + 1) {
      this.onGap?.({ channel: push.channel, expectedSeq: last + 1, seq: push.seq });
    }
    this.lastSeq.set(push.channel, push.seq);
  }

  /** Sends a raw text frame (tests). */
  sendRaw(text: string): void {
    this.socket?.send(text);
  }

  /**
   * Authenticates the connection. After a crash restart the service refuses an auth signed up to
   * a time it names (`signedNotAfter`); authenticating changes nothing but this connection, so it
   * is signed again past that time at once rather than waiting (up to 15 s).
   */
  auth(): Promise<AuthResult> {
    // Through `call`, which records the answered sign-in (`track`) for a reconnect to restore.
    return this.authenticate((method, params) => this.call(method, params));
  }

  private async authenticate(send: Send): Promise<AuthResult> {
    const credentials = this.options.credentials;
    if (!credentials) throw new Error('no credentials');
    const signed = (timestamp: number) => {
      const nonce = randomUUID();
      return send('public/auth', {
        apiKey: credentials.apiKey,
        timestamp,
        nonce,
        signature: signWs(credentials.apiSecret, String(timestamp), nonce),
      });
    };
    const now = (this.options.now ?? Date.now)();
    return signed(now).catch((error: unknown) => {
      const until = error instanceof ApiError ? signedNotAfter(error) : null;
      if (until === null) throw error;
      return signed(Math.max(now, until + 1));
    });
  }

  /**
   * Subscribes `channels`, and calls `listener` (if given) with their pushes until they are
   * unsubscribed or the session ends. A subscribe the server refuses adds no listener.
   */
  async subscribe(channels: string[], listener?: PushListener): Promise<string[]> {
    const generation = this.generation;
    // Before the call: the snapshots follow its answer at once.
    const added = listener ? channels.filter((channel) => this.addListener(channel, listener)) : [];
    let held: string[];
    try {
      held = await this.call(this.authenticated ? 'private/subscribe' : 'public/subscribe', { channels });
    } catch (error) {
      if (generation === this.generation) for (const channel of added) this.off(channel, listener!);
      throw error;
    }
    // A channel already held under another spelling (a currency's letter case, an interval
    // suffix) is answered, and pushed, under the held name: the listener goes there.
    if (generation === this.generation) {
      for (const channel of added) {
        if (held.includes(channel)) continue;
        const name = held.find((h) => spellingKey(h) === spellingKey(channel));
        if (name === undefined) continue;
        this.off(channel, listener!);
        this.addListener(name, listener!);
      }
    }
    return held;
  }

  /** Unsubscribes `channels` and removes their listeners (those of `subscribe` and of `on`). */
  unsubscribe(channels: string[]): Promise<string[]> {
    return this.call(this.authenticated ? 'private/unsubscribe' : 'public/unsubscribe', { channels });
  }

  /** Calls `listener` with the pushes of `channel` until the channel is unsubscribed or the session ends. */
  on(channel: string, listener: PushListener): void {
    this.addListener(channel, listener);
  }

  /** False when `listener` was already listening to `channel`. */
  private addListener(channel: string, listener: PushListener): boolean {
    let set = this.listeners.get(channel);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    if (set.has(listener)) return false;
    set.add(listener);
    return true;
  }

  private off(channel: string, listener: PushListener): void {
    const set = this.listeners.get(channel);
    if (set === undefined) return;
    set.delete(listener);
    if (set.size === 0) this.listeners.delete(channel);
  }

  onAnyPush(listener: PushListener): void {
    this.anyListeners.add(listener);
  }

  /** Drops the connection without ending the client (tests reconnection). */
  dropConnection(): void {
    this.socket?.terminate();
  }

  /** Open, and (after a drop) its session restored. */
  get connected(): boolean {
    return this.ready && this.socket?.readyState === WebSocket.OPEN;
  }

  /** Ends the session: no reconnect, and the next `connect()` starts with nothing of it. */
  async close(): Promise<void> {
    this.closed = true;
    this.ready = false;
    this.endSession();
    const socket = this.socket;
    if (socket === null) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
    });
  }
}

/** The index of the channel a subscribe's refusal names (`data.field` = `channels[i]`), or null. */
function refusedChannelIndex(error: unknown, count: number): number | null {
  if (!(error instanceof ApiError)) return null;
  const match = /^channels\[(\d+)\]$/.exec(String(error.data?.field ?? ''));
  if (match === null) return null;
  const index = Number(match[1]);
  return index < count ? index : null;
}
