/**
 * The gateway: one Fastify server (HTTP) with a `ws` upgrade handler (WebSocket at `/ws`) on one
 * port, over the command/read/event ports. Composition: `createGateway(deps)`, then other parts
 * register methods (`gateway.methods`), channels (`gateway.channels`) and flat signed routes
 * (`gateway.registerFlatRoute`) before `listen()`; `close()` shuts down gracefully.
 *
 * Shutdown order: stop accepting (Fastify close stops the listener and drains in-flight HTTP
 * requests), close WebSockets with 1001 (cancel-on-disconnect still runs), then return; the
 * caller then drains the sequencer and closes storage.
 *
 * Descriptors: every TCP connection the server accepts (HTTP, WebSocket, upgrading) counts
 * against `http.maxConnectionsPerAddress` and `http.maxConnections` (`ConnectionCaps`), so one
 * client cannot hold the descriptors the stores need; a request has `http.requestTimeoutMs` to
 * arrive whole (headers and body), else it is answered 408 and its connection closed.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import type { WebSocket } from 'ws';
import type { Clock } from '../app/clock.ts';
import type { Config } from '../app/config.ts';
import { ERROR_CATALOGUE, VenueError } from '../domain/errors.ts';
import { buildAsyncApi, buildOpenApi } from './api-docs.ts';
import { Authenticator } from './auth/authenticator.ts';
import type { KeyStore } from './auth/key-store.ts';
import { registerBuiltinChannels } from './builtin-channels.ts';
import { ChannelRegistry, Fanout } from './channels.ts';
import { ConnectionCount } from './connection-count.ts';
import { Dispatcher, type RequestObserver } from './dispatcher.ts';
import { historyAnsweringOutages } from './history-outages.ts';
import {
  addressKey,
  answerClientError,
  answerFrameworkError,
  chargeAddress,
  type FlatRouteDefinition,
  type HttpRouteDeps,
  installErrorHandlers,
  installRawJsonParser,
  installShutdownRefusal,
  registerEnvelopeRoute,
  registerFlatRoute,
} from './http-routes.ts';
import { registerAccountSettingsMethods } from './methods/account-settings.ts';
import { registerComboMethods } from './methods/combos.ts';
import { registerHistoryMethods } from './methods/history.ts';
import { API_VERSION, registerPublicMethods } from './methods/public.ts';
import { registerSessionMethods } from './methods/session.ts';
import { registerTradingMethods } from './methods/trading.ts';
import type { ComboPort, CommandPort, EventPort, HistoryPort, ReadPort } from './ports.ts';
import { RateLimiter } from './rate-limit.ts';
import { MethodRegistry } from './registry.ts';
import { mapError } from './wire-errors.ts';
import { WsGateway } from './ws-gateway.ts';

export type GatewayConfig = Pick<Config, 'port' | 'host' | 'logLevel' | 'http' | 'auth' | 'rateLimits'>;

export interface GatewayDeps {
  readonly config: GatewayConfig;
  readonly commands: CommandPort;
  readonly reads: ReadPort;
  readonly history: HistoryPort;
  readonly events: EventPort;
  readonly keyStore: KeyStore;
  readonly clock: Clock;
  /** Combos listed on first use (the market layer); without it only listed instruments exist. */
  readonly combos?: ComboPort;
  /** Makes WebSocket cancel-on-disconnect session ids unique across runs: the run's start seq. */
  readonly codSessionPrefix?: string;
  /** Metrics: told of each dispatched request; `render` answers `GET /metrics`. */
  readonly metrics?: {
    readonly request: RequestObserver;
    render(): Promise<{ readonly contentType: string; readonly body: string }>;
    /** A TCP connection refused over the caps: past its address's (`address`) or all of them (`total`). */
    readonly connectionRefused?: (reason: ConnectionRefusal) => void;
    /** A WebSocket dropped as a slow consumer: past its own limit, or for the total budget. */
    readonly slowConsumerDisconnect?: (reason: 'connection' | 'budget') => void;
  };
  /**
   * Why the service cannot serve (`GET /health` then answers 503 with it), or null; called on
   * each /health request, so it must be cheap. Absent: always healthy.
   */
  readonly health?: () => string | null;
}

export interface Gateway {
  readonly methods: MethodRegistry;
  readonly channels: ChannelRegistry;
  readonly authenticator: Authenticator;
  readonly fastify: FastifyInstance;
  registerFlatRoute<Body, Query>(route: FlatRouteDefinition<Body, Query>): void;
  /**
   * Charges a request refused before any bucket was (a wrong admin token) one non-matching credit
   * of its client address, as failed API authentication is: answers the error to send, `refusal`
   * or `too_many_requests` once the address has no credit left.
   */
  chargeAddressRefusal(request: FastifyRequest, refusal: unknown): unknown;
  openApi(): Record<string, unknown>;
  asyncApi(): Record<string, unknown>;
  /** Open WebSocket connections. */
  wsConnections(): number;
  /** Open TCP connections of every kind (HTTP, WebSocket, upgrading), as the caps count them. */
  connections(): number;
  /**
   * Serves an already-open WebSocket as a `/ws` session (one accepted by another server, or an
   * in-process socket: bench/pipeline.bench.ts drives the request path this way without I/O).
   */
  serveWebSocket(socket: WebSocket): void;
  /** Starts listening; resolves with the bound address (port 0 picks a free port). */
  listen(): Promise<{ host: string; port: number }>;
  close(): Promise<void>;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const { config, commands, reads, history, events, keyStore, clock, metrics } = deps;
  const now = () => commands.now();
  // Fastify logs two info lines per request: at the default level that was a synchronous
  // stdout write per line on the hot path. Its logger starts at warn unless debug or trace
  // is asked for (errors and warnings are still logged; the service has its own info log).
  const fastifyLogLevel = config.logLevel === 'info' ? 'warn' : config.logLevel;
  const requestLogs = fastifyLogLevel === 'debug' || fastifyLogLevel === 'trace';
  const fastify = Fastify({
    logger: { level: fastifyLogLevel },
    // Without request logs, no per-request child logger (a pino child per request) and no
    // request-log calls: both cost on every request and would write nothing.
    logController: new LogController({ disableRequestLogging: !requestLogs }),
    childLoggerFactory: (logger, bindings, options) =>
      requestLogs ? logger.child(bindings, options) : logger,
    bodyLimit: config.http.bodyLimitBytes,
    // Fastify sets the server's requestTimeout to its own (0, none, unless given); Node's server
    // takes the headers' limit and how often it checks both at construction.
    requestTimeout: config.http.requestTimeoutMs,
    http: {
      requestTimeout: config.http.requestTimeoutMs,
      headersTimeout: config.http.requestTimeoutMs,
      connectionsCheckingInterval: timeoutCheckEvery(config.http.requestTimeoutMs),
    },
    forceCloseConnections: 'idle',
    // Requests that arrive while the service shuts down get an error envelope (installShutdownRefusal),
    // not Fastify's own 503 body, which no client of the envelope can read.
    return503OnClosing: false,
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  });
  let closing = false;
  const onUnexpected = (error: unknown, method?: string) =>
    fastify.log.error({ err: error, method }, 'unexpected error answered as internal_error');

  const methods = new MethodRegistry();
  const channels = new ChannelRegistry();
  const fanout = new Fanout(channels, () => events.sequence);
  const authenticator = new Authenticator(keyStore, now, {
    clockSkewMs: config.auth.clockSkewMs,
    replay: {
      maxEntries: config.auth.replayMaxEntries,
      maxAnswerBytes: config.auth.replayMaxAnswerBytes,
      maxEntriesPerKey: config.auth.replayMaxEntriesPerKey,
      maxAnswerBytesPerKey: config.auth.replayMaxAnswerBytesPerKey,
    },
  });
  const limiter = new RateLimiter(config.rateLimits, () => clock.now());
  const observe = metrics === undefined ? null : metrics.request;
  const dispatcher = new Dispatcher(methods, limiter, now, onUnexpected, observe);
  const routeDeps: HttpRouteDeps = { dispatcher, authenticator, limiter, onUnexpected, observe };
  const flatRoutes: FlatRouteDefinition[] = [];

  const methodDeps = {
    commands,
    reads,
    history: historyAnsweringOutages(history),
    ...(deps.combos === undefined ? {} : { combos: deps.combos }),
  };
  registerPublicMethods(methods, methodDeps);
  registerTradingMethods(methods, methodDeps);
  registerHistoryMethods(methods, methodDeps);
  registerAccountSettingsMethods(methods, methodDeps);
  registerComboMethods(methods, methodDeps);
  registerSessionMethods(methods, authenticator, { ...methodDeps, channels });
  registerBuiltinChannels(channels, reads);

  installRawJsonParser(fastify, config.http.bodyLimitBytes);
  installErrorHandlers(fastify, onUnexpected, config.http.bodyLimitBytes);
  installShutdownRefusal(fastify, () => closing, now);
  registerEnvelopeRoute(fastify, routeDeps);

  // Built once, at the first request (every method, route and channel is registered by then):
  // each is about 120 KB, and building one took some 5 ms of the event loop per request, free
  // and unauthenticated.
  const openApi = () => buildOpenApi(methods, flatRoutes, API_VERSION);
  const asyncApi = () => buildAsyncApi(methods, channels, API_VERSION);
  const openApiText = memoizedJson(openApi);
  const asyncApiText = memoizedJson(asyncApi);
  const charged = { onRequest: chargeAddress(limiter, onUnexpected) };
  fastify.get('/docs/openapi.json', charged, (_request, reply) => reply.type(JSON_TYPE).send(openApiText()));
  fastify.get('/docs/asyncapi.json', charged, (_request, reply) =>
    reply.type(JSON_TYPE).send(asyncApiText()),
  );
  fastify.get('/docs', charged, async (_request, reply) =>
    reply
      .type('text/html')
      .send(
        '<!doctype html><title>API docs</title><h1>Trading and Block RFQ Service</h1>' +
          '<ul><li><a href="/docs/openapi.json">OpenAPI 3.1</a></li><li><a href="/docs/asyncapi.json">AsyncAPI</a></li>' +
          '<li><a href="/docs/errors.json">Error catalogue</a></li></ul>',
      ),
  );
  fastify.get('/docs/errors.json', charged, async () => ERROR_CATALOGUE);
  fastify.get('/health', async (_request, reply) => {
    const problem = deps.health?.() ?? null;
    if (problem === null) return { status: 'ok', time: now() };
    return reply.code(503).send({ status: 'unavailable', reason: problem, time: now() });
  });
  if (metrics !== undefined) {
    fastify.get('/metrics', charged, async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply.type(contentType).send(body);
    });
  }

  const ws = new WsGateway(
    {
      dispatcher,
      channels,
      fanout,
      commands,
      reads,
      clock,
      keyWorks: (apiKey) => authenticator.keyWorks(apiKey),
      onUnexpected,
      codSessionPrefix: deps.codSessionPrefix,
      onSlowConsumer: (drop) => {
        fastify.log.warn(drop, 'WebSocket connection dropped as a slow consumer');
        metrics?.slowConsumerDisconnect?.(drop.reason);
      },
    },
    {
      maxMessageBytes: config.http.wsMaxMessageBytes,
      maxBufferedBytes: config.http.wsMaxBufferedBytes,
      maxBufferedBytesTotal: config.http.wsMaxBufferedBytesTotal,
      maxConnections: config.http.wsMaxConnections,
      maxConnectionsPerAddress: config.http.wsMaxConnectionsPerAddress,
      maxSubscriptionsPerConnection: config.http.wsMaxSubscriptionsPerConnection,
    },
  );
  fastify.server.on('upgrade', (request, socket, head) => ws.handleUpgrade(request, socket, head));
  const caps = new ConnectionCaps(
    config.http.maxConnections,
    config.http.maxConnectionsPerAddress,
    clock,
    (reason) => metrics?.connectionRefused?.(reason),
  );
  caps.install(fastify.server);
  const stopEvents = events.onCommitted((batch) => {
    try {
      fanout.publish(batch);
    } catch (error) {
      onUnexpected(error, 'fanout');
    }
  });

  return {
    methods,
    channels,
    authenticator,
    fastify,
    registerFlatRoute: (route) => {
      flatRoutes.push(route as FlatRouteDefinition);
      registerFlatRoute(fastify, routeDeps, route as FlatRouteDefinition);
    },
    chargeAddressRefusal: (request, refusal) => dispatcher.chargeRefusal(refusal, null, addressKey(request)),
    openApi,
    asyncApi,
    wsConnections: () => ws.connectionCount,
    connections: () => caps.count,
    serveWebSocket: (socket) => ws.accept(socket),
    async listen() {
      await fastify.listen({ port: config.port, host: config.host });
      const address = fastify.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : config.port;
      return { host: config.host, port };
    },
    async close() {
      closing = true;
      stopEvents();
      caps.cutRefused();
      const wsClosed = ws.close(config.http.shutdownGraceMs);
      // Node's close ends idle keep-alive connections at once, and a request a client has just
      // written to one is cut with a reset, its fate unknown to the client. Until then every
      // request is refused (503, unavailable, Connection: close), so the client knows it was not run.
      await lingerWhile(() => caps.count - ws.connectionCount > 0, config.http.shutdownIdleLingerMs);
      await Promise.all([fastify.close(), wsClosed]);
    },
  };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Waits (real time, in 10 ms steps) while `open()` holds, for at most `ms`. */
async function lingerWhile(open: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (open() && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(10, until - Date.now())));
  }
}

/** `build()`'s value as JSON text, built at the first call and kept. */
function memoizedJson(build: () => unknown): () => string {
  let text: string | null = null;
  return () => {
    text ??= JSON.stringify(build());
    return text;
  };
}

/**
 * How often Node's server looks for requests past their timeout: a tenth of it within [10 ms, 1 s]
 * (Node's own 30 s would let a 30 s timeout run to a minute).
 */
function timeoutCheckEvery(requestTimeoutMs: number): number {
  return Math.max(10, Math.min(1_000, Math.floor(requestTimeoutMs / 10)));
}

/** Why a connection was refused: past its address's cap, or past the total. */
export type ConnectionRefusal = 'address' | 'total';

/**
 * How long, on the service clock, a refused connection is kept for its client to read the answer
 * and close; then it is cut.
 */
export const REFUSED_LINGER_MS = 1_000;
/** Refused connections kept at once to be answered; one more past it is cut with no answer. */
const REFUSED_KEPT_MAX = 256;

/**
 * Every TCP connection the server accepts (HTTP, WebSocket, upgrading), in all and by client
 * address (`remoteAddress`), counted from the server's `connection` event until the socket's
 * `close`, which every way of ending it emits once. One over a cap never reaches Node's HTTP
 * parser, so nothing it sends runs: it is answered 429 `too_many_requests` (its address's cap) or
 * 503 `unavailable` (the total) with `Connection: close`, its side is closed at once, what it sends
 * is read and dropped (closing on unread data would reset the connection, and the answer with
 * it), and it is cut when its client closes or `REFUSED_LINGER_MS` later. At most
 * `REFUSED_KEPT_MAX` are kept so; past that a refused connection is cut at once, unanswered.
 */
class ConnectionCaps {
  private readonly connections = new ConnectionCount();
  private readonly refused = new Set<Socket>();

  constructor(
    private readonly maxConnections: number,
    private readonly maxPerAddress: number,
    private readonly clock: Clock,
    private readonly onRefused: (reason: ConnectionRefusal) => void,
  ) {}

  get count(): number {
    return this.connections.open;
  }

  /** Puts the server's own `connection` listeners (Node's HTTP set-up) behind the caps. */
  install(server: Server): void {
    const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (!this.admit(socket)) return;
      for (const listener of listeners) listener.call(server, socket);
    });
  }

  private admit(socket: Socket): boolean {
    const address = socket.remoteAddress ?? '';
    const fromAddress = this.connections.from(address);
    if (fromAddress >= this.maxPerAddress) {
      this.refuse(socket, 'address', fromAddress);
      return false;
    }
    if (this.connections.open >= this.maxConnections) {
      this.refuse(socket, 'total', fromAddress);
      return false;
    }
    this.connections.hold(address, socket);
    return true;
  }

  private refuse(socket: Socket, reason: ConnectionRefusal, fromAddress: number): void {
    this.onRefused(reason);
    socket.on('error', () => socket.destroy());
    if (this.refused.size >= REFUSED_KEPT_MAX) {
      socket.destroy();
      return;
    }
    this.refused.add(socket);
    const cancel = this.clock.schedule(this.clock.now() + REFUSED_LINGER_MS, () => socket.destroy());
    socket.once('close', () => {
      cancel();
      this.refused.delete(socket);
    });
    socket.on('end', () => socket.destroy());
    socket.resume();
    socket.end(refusal(reason, fromAddress));
  }

  /** The server stops: refused connections still kept are cut. */
  cutRefused(): void {
    for (const socket of this.refused) socket.destroy();
  }
}

/** The answer of a refused connection: the status line, and the error envelope. */
function refusal(reason: ConnectionRefusal, fromAddress: number): string {
  const [status, error] =
    reason === 'address'
      ? [
          '429 Too Many Requests',
          new VenueError('too_many_requests', 'too many connections from this address', {
            field: 'connection',
            connectionsFromAddress: fromAddress,
          }),
        ]
      : [
          '503 Service Unavailable',
          new VenueError('unavailable', 'the service has too many connections open; try again later'),
        ];
  const body = JSON.stringify({ rid: null, error: mapError(error).error });
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
