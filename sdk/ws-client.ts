/**
 * Typed WebSocket client: envelopes over `/ws`, pushes by channel, automatic answers to
 * heartbeat test_requests, and reconnection with re-authentication and resubscription.
 *
 * Invariants:
 * - Calls in flight when the connection drops are rejected (the caller decides whether to retry;
 *   the server may or may not have executed them).
 * - After a reconnect the client re-sends `public/auth` (fresh nonce), turns cancel-on-disconnect
 *   back on if this client had it on, sets the heartbeat it had asked for, and re-subscribes every
 *   channel it held, before resolving `reconnected`. Per-channel `seq` restarts with the snapshot.
 *   (A connection's session settings die with it on the server: without this, a market maker's
 *   orders after a reconnect would silently lose their cancel-on-disconnect.)
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
   * How long a call waits for its answer before it rejects (default 30 s). The request may still
   * have run: check the state before sending it again.
   */
  readonly timeoutMs?: number;
}

type PushListener = (push: SubscriptionPush) => void;

const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** The methods whose effect on the connection a reconnect restores. */
const SESSION_SETTINGS: ReadonlySet<MethodName> = new Set<MethodName>([
  'public/set_heartbeat',
  'public/disable_heartbeat',
  'private/enable_cancel_on_disconnect',
  'private/disable_cancel_on_disconnect',
]);

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  readonly timer: ReturnType<typeof setTimeout>;
}

export class WsClient {
  private socket: WebSocket | null = null;
  private rid = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<PushListener>>();
  private readonly anyListeners = new Set<PushListener>();
  private readonly subscribed = new Set<string>();
  private closedByUser = false;
  private authenticated = false;
  /** The session settings a reconnect restores (as last answered by the server). */
  private cancelOnDisconnect = false;
  private heartbeatInterval: number | null = null;
  /** One reconnect loop at a time: a socket that dies inside the loop is the loop's to retry. */
  private reconnecting = false;
  /** Resolves on each successful (re)connection, after re-auth and resubscribe. */
  onReconnected: (() => void) | null = null;
  readonly heartbeatsAnswered = { count: 0 };

  constructor(private readonly options: WsClientOptions) {}

  async connect(): Promise<void> {
    this.closedByUser = false;
    await this.open();
  }

  private open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.options.url);
      this.socket = socket;
      let opened = false;
      socket.on('open', () => {
        opened = true;
        resolve();
      });
      socket.on('error', (error) => reject(error));
      socket.on('message', (data) => this.onMessage(data.toString()));
      socket.on('close', () => this.onClose(socket, opened));
    });
  }

  private onMessage(text: string): void {
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
      const push = message.params as SubscriptionPush;
      for (const listener of this.listeners.get(push.channel) ?? []) listener(push);
      for (const listener of this.anyListeners) listener(push);
      return;
    }
    if (message.method === 'heartbeat') {
      if (message.params?.type === 'test_request') {
        this.heartbeatsAnswered.count++;
        void this.call('public/test', {}).catch(() => {});
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
  private onClose(socket: WebSocket, opened: boolean): void {
    if (this.socket !== socket) return;
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(new Error('connection closed'));
    }
    this.pending.clear();
    this.socket = null;
    if (!opened || this.closedByUser || this.options.reconnect === false || this.reconnecting) return;
    this.reconnecting = true;
    void this.reconnectLoop().finally(() => {
      this.reconnecting = false;
    });
  }

  private async reconnectLoop(): Promise<void> {
    const delay = this.options.reconnectDelayMs ?? 200;
    for (let attempt = 0; !this.closedByUser; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay * 2 ** attempt, 5_000)));
      if (this.closedByUser) return;
      try {
        await this.open();
        if (this.authenticated) await this.auth();
        if (this.authenticated && this.cancelOnDisconnect) {
          await this.call('private/enable_cancel_on_disconnect', { scope: 'connection' });
        }
        if (this.heartbeatInterval !== null) {
          await this.call('public/set_heartbeat', { interval: this.heartbeatInterval });
        }
        const channels = [...this.subscribed];
        if (channels.length > 0) {
          await this.call(this.authenticated ? 'private/subscribe' : 'public/subscribe', { channels });
        }
        this.onReconnected?.();
        return;
      } catch {
        this.socket?.terminate();
      }
    }
  }

  call<M extends MethodName>(method: M, params: ParamsOf<M> = {} as ParamsOf<M>): Promise<ResultOf<M>> {
    const socket = this.socket;
    if (socket === null || socket.readyState !== WebSocket.OPEN)
      return Promise.reject(new Error('not connected'));
    const rid = this.rid++;
    const answer = new Promise<ResultOf<M>>((resolve, reject) => {
      const timeoutMs = this.options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
      const timer = setTimeout(() => {
        this.pending.delete(rid);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms (it may still have run)`));
      }, timeoutMs);
      this.pending.set(rid, { resolve: resolve as (value: unknown) => void, reject, timer });
      socket.send(JSON.stringify({ rid, method, params }));
    });
    if (!SESSION_SETTINGS.has(method)) return answer;
    return answer.then((result) => {
      this.remember(method, params as { interval?: number; scope?: string });
      return result;
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

  /** Sends a raw text frame (tests). */
  sendRaw(text: string): void {
    this.socket?.send(text);
  }

  /**
   * Authenticates the connection. After a crash restart the service refuses an auth signed up to
   * a time it names (`signedNotAfter`); authenticating changes nothing but this connection, so it
   * is signed again past that time at once rather than waiting (up to 15 s).
   */
  async auth(): Promise<AuthResult> {
    const credentials = this.options.credentials;
    if (!credentials) throw new Error('no credentials');
    const signed = (timestamp: number) => {
      const nonce = randomUUID();
      return this.call('public/auth', {
        apiKey: credentials.apiKey,
        timestamp,
        nonce,
        signature: signWs(credentials.apiSecret, String(timestamp), nonce),
      });
    };
    const now = (this.options.now ?? Date.now)();
    const result = await signed(now).catch((error: unknown) => {
      const until = error instanceof ApiError ? signedNotAfter(error) : null;
      if (until === null) throw error;
      return signed(Math.max(now, until + 1));
    });
    this.authenticated = true;
    return result;
  }

  async subscribe(channels: string[], listener?: PushListener): Promise<string[]> {
    if (listener) for (const channel of channels) this.on(channel, listener);
    const result = await this.call(this.authenticated ? 'private/subscribe' : 'public/subscribe', {
      channels,
    });
    for (const channel of result) this.subscribed.add(channel);
    return result;
  }

  async unsubscribe(channels: string[]): Promise<string[]> {
    const result = await this.call(this.authenticated ? 'private/unsubscribe' : 'public/unsubscribe', {
      channels,
    });
    for (const channel of channels) this.subscribed.delete(channel);
    return result;
  }

  on(channel: string, listener: PushListener): void {
    let set = this.listeners.get(channel);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
  }

  onAnyPush(listener: PushListener): void {
    this.anyListeners.add(listener);
  }

  /** Drops the connection without ending the client (tests reconnection). */
  dropConnection(): void {
    this.socket?.terminate();
  }

  get connected(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  async close(): Promise<void> {
    this.closedByUser = true;
    const socket = this.socket;
    if (socket === null) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
    });
  }
}
