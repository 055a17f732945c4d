/**
 * The gateway: one Fastify server (HTTP) with a `ws` upgrade handler (WebSocket at `/ws`) on one
 * port, over the command/read/event ports. Composition: `createGateway(deps)`, then other parts
 * register methods (`gateway.methods`), channels (`gateway.channels`) and flat signed routes
 * (`gateway.registerFlatRoute`) before `listen()`; `close()` shuts down gracefully.
 *
 * Shutdown order: stop accepting (Fastify close stops the listener and drains in-flight HTTP
 * requests), close WebSockets with 1001 (cancel-on-disconnect still runs), then return; the
 * caller then drains the sequencer and closes storage.
 */
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { WebSocket } from 'ws';
import type { Clock } from '../app/clock.ts';
import type { Config } from '../app/config.ts';
import { ERROR_CATALOGUE } from '../domain/errors.ts';
import { buildAsyncApi, buildOpenApi } from './api-docs.ts';
import { Authenticator } from './auth/authenticator.ts';
import type { KeyStore } from './auth/key-store.ts';
import { registerBuiltinChannels } from './builtin-channels.ts';
import { ChannelRegistry, Fanout } from './channels.ts';
import { Dispatcher, type RequestObserver } from './dispatcher.ts';
import { historyAnsweringOutages } from './history-outages.ts';
import {
  answerClientError,
  answerFrameworkError,
  type FlatRouteDefinition,
  type HttpRouteDeps,
  installErrorHandlers,
  installRawJsonParser,
  installShutdownRefusal,
  registerEnvelopeRoute,
  registerFlatRoute,
} from './http-routes.ts';
import { registerAccountSettingsMethods } from './methods/account-settings.ts';
import { API_VERSION, registerPublicMethods } from './methods/public.ts';
import { registerSessionMethods } from './methods/session.ts';
import { registerTradingMethods } from './methods/trading.ts';
import type { ComboPort, CommandPort, EventPort, HistoryPort, ReadPort } from './ports.ts';
import { RateLimiter } from './rate-limit.ts';
import { MethodRegistry } from './registry.ts';
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
  openApi(): Record<string, unknown>;
  asyncApi(): Record<string, unknown>;
  /** Open WebSocket connections. */
  wsConnections(): number;
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
  registerAccountSettingsMethods(methods, methodDeps);
  registerSessionMethods(methods, authenticator, { ...methodDeps, channels });
  registerBuiltinChannels(channels, reads);

  installRawJsonParser(fastify, config.http.bodyLimitBytes);
  installErrorHandlers(fastify, onUnexpected, config.http.bodyLimitBytes);
  installShutdownRefusal(fastify, () => closing);
  registerEnvelopeRoute(fastify, routeDeps);

  const openApi = () => buildOpenApi(methods, flatRoutes, API_VERSION);
  const asyncApi = () => buildAsyncApi(methods, channels, API_VERSION);
  fastify.get('/docs/openapi.json', async () => openApi());
  fastify.get('/docs/asyncapi.json', async () => asyncApi());
  fastify.get('/docs', async (_request, reply) =>
    reply
      .type('text/html')
      .send(
        '<!doctype html><title>API docs</title><h1>Trading and Block RFQ Service</h1>' +
          '<ul><li><a href="/docs/openapi.json">OpenAPI 3.1</a></li><li><a href="/docs/asyncapi.json">AsyncAPI</a></li>' +
          '<li><a href="/docs/errors.json">Error catalogue</a></li></ul>',
      ),
  );
  fastify.get('/docs/errors.json', async () => ERROR_CATALOGUE);
  fastify.get('/health', async (_request, reply) => {
    const problem = deps.health?.() ?? null;
    if (problem === null) return { status: 'ok', time: now() };
    return reply.code(503).send({ status: 'unavailable', reason: problem, time: now() });
  });
  if (metrics !== undefined) {
    fastify.get('/metrics', async (_request, reply) => {
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
    },
    {
      maxMessageBytes: config.http.wsMaxMessageBytes,
      maxConnections: config.http.wsMaxConnections,
      maxConnectionsPerAddress: config.http.wsMaxConnectionsPerAddress,
      maxSubscriptionsPerConnection: config.http.wsMaxSubscriptionsPerConnection,
    },
  );
  fastify.server.on('upgrade', (request, socket, head) => ws.handleUpgrade(request, socket, head));
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
    openApi,
    asyncApi,
    wsConnections: () => ws.connectionCount,
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
      await Promise.all([fastify.close(), ws.close(config.http.shutdownGraceMs)]);
    },
  };
}
