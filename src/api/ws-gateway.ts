/**
 * WebSocket transport at `/ws`: the same envelopes as HTTP, plus session state — the principal
 * set by `public/auth`, subscriptions, heartbeats and cancel-on-disconnect.
 *
 * Invariants:
 * - Until `public/auth` succeeds only `public/*` methods are answered (private ones get
 *   `authorization_required`). A failed `public/auth` is answered with its error and changes
 *   nothing: a connection already authenticated keeps its key and session.
 * - A disabled key stops on open connections as over HTTP, within the key cache's TTL: each private
 *   request asks the authenticator's cache first (`keyWorks`), and every `keyCheckMs` the
 *   authenticated connections are checked too (so one that only listens stops as well). A private
 *   request on a disabled key is refused with `invalid_credentials`, as over HTTP; then, or when
 *   the periodic check finds it, the session ends as on a disconnect (subscriptions dropped,
 *   cancel-on-disconnect run, later messages ignored) and the connection closes with 1008.
 * - Frames over `wsMaxMessageBytes` close the connection (1009); a frame that is not JSON or not
 *   an envelope gets an error answer with `rid: null` (or the salvaged rid) and the session lives on.
 * - Heartbeat: every `interval` s the server sends `{method:"heartbeat", params:{type:"test_request"}}`;
 *   when a whole interval passes with no message from the client, the session ends at once (its
 *   cancel-on-disconnect runs, later messages are ignored) and the connection is closed.
 * - Cancel-on-disconnect: when enabled, the end of the session cancels the open orders this
 *   connection placed, and the orders they made (cancelReason `cancel_on_disconnect`), in one
 *   journaled `cancel_all` of its session. Orders of other connections and of HTTP stay.
 *   The session ends when the connection closes, however it closes, and for the previous key
 *   when `public/auth` switches the connection to another key. A key's session starts with it
 *   on when the account's default (`account` scope, kept in the core) is on; `public/auth` is
 *   answered once that is durable.
 * - The core knows which orders those are (src/engine/cod-sessions.ts): turning it on or off is a
 *   journaled `set_cancel_on_disconnect` (answered once durable) naming a session id unique
 *   across runs, and orders placed while it is on carry that id; an order that was in flight
 *   when it was turned on joins in a second command, answered (like `enable`) only once that is
 *   durable. So after a crash, when no session could run, the service cancels them at start-up
 *   (`cancel_cod_sessions`).
 * - Unauthenticated requests are rate-limited by client address, as over HTTP, not per connection.
 * - A client that stops reading is disconnected rather than allowed to grow server memory. What is
 *   queued for a connection (written, not yet taken by the kernel: ws's `bufferedAmount`) is
 *   judged once a turn's messages have been offered to the kernel (when the corked TCP stream is
 *   released), so a burst the kernel takes at once is no offence; a socket with no TCP stream
 *   under it is judged before each message. A queue past `maxBufferedBytes` is watched: if it has
 *   not shrunk `SLOW_CONSUMER_PATIENCE_MS` later (or is past `SLOW_CONSUMER_BURST_FACTOR` times the
 *   limit at once), the connection is a slow consumer, sent
 *   nothing more, its session ends (as on a disconnect), a 1008 "slow consumer" close frame is
 *   queued behind the data, and it is cut `SLOW_CONSUMER_GRACE_MS` later unless it has read up and
 *   closed. The queues of all connections are summed too: past `maxBufferedBytesTotal` the
 *   connections with the most queued are dropped the same way, biggest first, until the total is
 *   back within it, and cut at once (their memory is what has to go). Each drop is reported once
 *   (`onSlowConsumer`).
 * - A connection holds at most `maxSubscriptionsPerConnection` subscriptions (each costs server
 *   memory, about 500 bytes, and fan-out work). A subscribe that would pass it is refused with
 *   `invalid_params` naming `channels` and the limit, and subscribes nothing; channels already
 *   held add nothing. Unsubscribing, `unsubscribe_all`, a key switch and the end of the session
 *   free their places.
 * - One subscription per channel: spellings of one channel (a currency in another letter case)
 *   are the subscription already held, and the answer names it as its pushes carry it.
 * - Shutdown (`close`): from its start no message is run; each is answered with `unavailable`
 *   ("the request was not run", as HTTP answers during a shutdown), so a client may send it again
 *   once the service is back. Calls already being handled (executed, waiting for the journal)
 *   finish: a connection closes with 1001 once its last call in flight has been answered, at once
 *   when it has none. ws writes a connection's frames in order, so the close frame follows the
 *   answers on the wire. The wait is bounded by the grace (`SHUTDOWN_GRACE_MS`, on the service
 *   clock): connections still open then (a call that never completes, a peer that does not answer
 *   the close frame) are closed with 1001 and cut.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Clock } from '../app/clock.ts';
import { VenueError } from '../domain/errors.ts';
import { DEFAULT_KEY_CACHE_TTL_MS } from './auth/authenticator.ts';
import type { ChannelRegistry, Fanout } from './channels.ts';
import { ConnectionCount } from './connection-count.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { CommandPort, ReadPort } from './ports.ts';
import { mapError } from './wire-errors.ts';
import { GOING_AWAY, GOING_AWAY_REASON, Session } from './ws-session.ts';

export interface WsGatewayOptions {
  readonly maxMessageBytes: number;
  /**
   * Bytes queued for one connection past which it is a slow consumer (default
   * `DEFAULT_MAX_BUFFERED_BYTES`, the config's `http.wsMaxBufferedBytes` default).
   */
  readonly maxBufferedBytes?: number;
  /** Bytes queued for all connections together; past it the biggest are dropped (default unbounded). */
  readonly maxBufferedBytesTotal?: number;
  /** Connections open at once; an upgrade beyond it is answered 429 (default unbounded). */
  readonly maxConnections?: number;
  /** The same, per client address. */
  readonly maxConnectionsPerAddress?: number;
  /**
   * Subscriptions one connection holds at once (default `DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION`,
   * the config's `http.wsMaxSubscriptionsPerConnection` default).
   */
  readonly maxSubscriptionsPerConnection?: number;
  /**
   * How often the keys of authenticated connections are checked (through the authenticator's key
   * cache); default `DEFAULT_KEY_CACHE_TTL_MS`, the cache's own TTL.
   */
  readonly keyCheckMs?: number;
}

export interface WsGatewayDeps {
  readonly dispatcher: Dispatcher;
  readonly channels: ChannelRegistry;
  readonly fanout: Fanout;
  readonly commands: CommandPort;
  /**
   * Open orders, to forget the placed orders that are closed (`Session.placed`); the account's
   * cancel-on-disconnect default, for connections that authenticate.
   */
  readonly reads: Pick<ReadPort, 'openOrders' | 'accountCancelOnDisconnect'>;
  readonly clock: Clock;
  /**
   * Whether a key still works (the authenticator's `keyWorks`, through its key cache); absent:
   * always (a gateway without a key store).
   */
  readonly keyWorks?: (apiKey: string) => boolean;
  readonly onUnexpected: (error: unknown) => void;
  /** Told once of each connection dropped as a slow consumer (to log and count it). */
  readonly onSlowConsumer?: (drop: SlowConsumerDrop) => void;
  /**
   * Makes cancel-on-disconnect session ids unique across runs (the run's start seq); each id is
   * `<prefix>.<connection>.<n>`. Default '0' (a gateway whose core does not outlive it).
   */
  readonly codSessionPrefix?: string;
}

/** Bytes queued for one connection unless configured (`WS_MAX_BUFFERED_BYTES`). */
export const DEFAULT_MAX_BUFFERED_BYTES = 1_048_576;
/** A connection dropped as a slow consumer, as `WsGatewayDeps.onSlowConsumer` is told of it. */
export interface SlowConsumerDrop {
  readonly connection: number;
  /** The client's address (null for a socket served without one). */
  readonly address: string | null;
  /** What was queued for it when it was dropped. */
  readonly bufferedBytes: number;
  /**
   * `connection`: past its own limit; `budget`: among the biggest queues when the total passed
   * the budget.
   */
  readonly reason: 'connection' | 'budget';
}
/** Subscriptions per connection unless configured (`WS_MAX_SUBSCRIPTIONS_PER_CONNECTION`). */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 1_000;

export class WsGateway {
  private readonly server: WebSocketServer;
  private readonly sessions = new Set<Session>();
  private nextId = 1;
  /** What is queued for all connections (each session's `queued`, which may lag a drained queue). */
  private queuedTotal = 0;
  /** Upgraded and upgrading connections, in all and by client address. */
  private readonly connections = new ConnectionCount();
  /** The pending periodic key check (see `watchKeys`), null while none is due. */
  private keyCheckCancel: (() => void) | null = null;
  private closing = false;
  /** The shutdown under way (see `close`), null before. */
  private shutdown: Promise<void> | null = null;
  /** Called when the last connection has gone during the shutdown. */
  private allGone: (() => void) | null = null;

  constructor(
    private readonly deps: WsGatewayDeps,
    private readonly options: WsGatewayOptions,
  ) {
    this.server = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
  }

  /**
   * Handles an HTTP upgrade; only `/ws` is accepted. Upgrades (in progress or done) count against
   * the connection limits, so a client stuck in a reconnect storm cannot exhaust descriptors.
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/ws') {
      socket.destroy();
      return;
    }
    const address = request.socket.remoteAddress ?? '';
    const fromAddress = this.connections.from(address);
    if (
      this.connections.open >= (this.options.maxConnections ?? Number.POSITIVE_INFINITY) ||
      fromAddress >= (this.options.maxConnectionsPerAddress ?? Number.POSITIVE_INFINITY)
    ) {
      refuseUpgrade(socket, fromAddress);
      return;
    }
    // The TCP socket closes once, whether the upgrade failed or the WebSocket on it ended.
    this.connections.hold(address, socket);
    this.server.handleUpgrade(request, socket, head, (ws) => this.accept(ws, address));
  }

  /**
   * Serves an open WebSocket (upgraded here or elsewhere) as a session. `address` is the client's,
   * the rate-limit identity before authentication (without it, the connection's own).
   */
  accept(socket: WebSocket, address?: string): void {
    if (this.closing) {
      // Upgraded while the shutdown went on: nothing of it is run.
      socket.on('error', () => socket.terminate());
      socket.close(GOING_AWAY, GOING_AWAY_REASON);
      return;
    }
    const session = new Session(
      this.nextId++,
      socket,
      this.deps,
      this.options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
      this.options.maxSubscriptionsPerConnection ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION,
      address,
      this.watchKeys,
      this.queueChanged,
    );
    this.sessions.add(session);
    socket.on('message', (data, isBinary) => {
      if (isBinary) session.refuseBinary();
      else void session.receive(data.toString());
    });
    socket.on('close', () => {
      this.sessions.delete(session);
      this.queuedTotal -= session.queued;
      session.queued = 0;
      session.closedForGood();
      if (this.sessions.size === 0) this.allGone?.();
    });
    socket.on('error', () => socket.terminate());
  }

  get connectionCount(): number {
    return this.sessions.size;
  }

  /** What is queued for all connections, as last counted. */
  get bufferedBytes(): number {
    return this.queuedTotal;
  }

  /** A session queued messages: its queue is counted again, and the total kept to its budget. */
  private readonly queueChanged = (session: Session): void => {
    if (!this.sessions.has(session)) return;
    const queued = session.bufferedAmount;
    this.queuedTotal += queued - session.queued;
    session.queued = queued;
    if (this.queuedTotal > (this.options.maxBufferedBytesTotal ?? Number.POSITIVE_INFINITY))
      this.keepToBudget();
  };

  /**
   * The total passed the budget: every queue is read again (one that drained since its last send
   * still counted what it had), and if the total is still over, the connections with the most
   * queued are dropped, biggest first, until it is within the budget.
   */
  private keepToBudget(): void {
    const budget = this.options.maxBufferedBytesTotal ?? Number.POSITIVE_INFINITY;
    let total = 0;
    for (const session of this.sessions) {
      session.queued = session.bufferedAmount;
      total += session.queued;
    }
    this.queuedTotal = total;
    if (total <= budget) return;
    const biggestFirst = [...this.sessions].sort((a, b) => b.queued - a.queued);
    for (const session of biggestFirst) {
      if (this.queuedTotal <= budget || session.queued === 0) break;
      const queued = session.queued;
      // Its memory goes with the cut (the close event, maybe later, then removes nothing more).
      this.queuedTotal -= queued;
      session.queued = 0;
      session.dropSlow('budget', queued);
    }
  }

  /**
   * Checks the keys of the authenticated connections every `keyCheckMs` on the service's clock,
   * while there are any (no timer otherwise): those whose key was disabled end (Session.checkKey).
   */
  private readonly watchKeys = (): void => {
    if (this.keyCheckCancel !== null || this.closing) return;
    const every = this.options.keyCheckMs ?? DEFAULT_KEY_CACHE_TTL_MS;
    this.keyCheckCancel = this.deps.clock.schedule(this.deps.clock.now() + every, () => {
      this.keyCheckCancel = null;
      let authenticated = false;
      for (const session of this.sessions) if (session.checkKey()) authenticated = true;
      if (authenticated) this.watchKeys();
    });
  };

  /**
   * Shuts the connections down (see the invariants): messages are refused from now on, each
   * connection closes with 1001 once its calls in flight are answered, and this resolves once all
   * are gone, or after `graceMs` on the service clock, when those left are cut. Calling it again
   * returns the same shutdown.
   */
  close(graceMs: number): Promise<void> {
    this.shutdown ??= this.shutDown(graceMs);
    return this.shutdown;
  }

  private async shutDown(graceMs: number): Promise<void> {
    this.closing = true;
    this.keyCheckCancel?.();
    this.keyCheckCancel = null;
    if (this.sessions.size > 0) {
      let cancelGrace = (): void => {};
      let backstop: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.allGone = resolve;
        cancelGrace = this.deps.clock.schedule(this.deps.clock.now() + graceMs, resolve);
        // The same grace in real time too: a virtual clock that nobody advances must not hold a stop.
        backstop = setTimeout(resolve, graceMs);
        backstop.unref();
        // Idle connections close now (a fake socket may close within the call).
        for (const session of this.sessions) session.shutDown();
        if (this.sessions.size === 0) resolve();
      });
      cancelGrace();
      clearTimeout(backstop);
      this.allGone = null;
    }
    for (const session of this.sessions) session.cutOff();
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Answers an upgrade over the connection limits with 429 and the error envelope, then closes. */
function refuseUpgrade(socket: Duplex, fromAddress: number): void {
  const error = mapError(
    new VenueError('too_many_requests', 'too many WebSocket connections', {
      field: 'connection',
      connectionsFromAddress: fromAddress,
    }),
  ).error;
  const body = JSON.stringify({ rid: null, error });
  socket.end(
    `HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
