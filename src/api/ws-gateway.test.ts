import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { WebSocket } from 'ws';
import { VirtualClock } from '../app/clock.ts';
import { DEFAULT_CONFIG } from '../app/config.ts';
import { ERROR_CATALOGUE } from '../domain/errors.ts';
import { Instrument } from '../domain/instrument.ts';
import { DEFAULT_PRODUCTS, inverseFutureSpec } from '../market/products.ts';
import type { Authenticator, Principal } from './auth/authenticator.ts';
import { registerBuiltinChannels } from './builtin-channels.ts';
import { ChannelRegistry, Fanout } from './channels.ts';
import { Dispatcher, type DispatchOutcome } from './dispatcher.ts';
import { registerSessionMethods } from './methods/session.ts';
import type { CommandPort, ReadPort } from './ports.ts';
import { RateLimiter } from './rate-limit.ts';
import { MethodRegistry, type SessionHandle } from './registry.ts';
import { ChannelsParams } from './schemas/methods.ts';
import {
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION,
  type SlowConsumerDrop,
  WsGateway,
  type WsGatewayOptions,
} from './ws-gateway.ts';
import {
  SLOW_CONSUMER_BURST_FACTOR,
  SLOW_CONSUMER_GRACE_MS,
  SLOW_CONSUMER_PATIENCE_MS,
} from './ws-session.ts';

/** A socket that records what the session sends, and how it is closed. */
class RecordingSocket extends EventEmitter {
  /** What ws would have queued for the peer (a test sets it to play a peer that stops reading). */
  bufferedAmount = 0;
  readonly sent: string[] = [];
  /** Each close frame asked for: its code, and how many messages had been sent before it. */
  readonly closes: Array<{ code: number | undefined; afterSent: number }> = [];
  /** The reason of each close frame. */
  readonly closeReasons: Array<string | undefined> = [];
  terminated = false;
  /** Whether the peer answers a close frame (the connection then ends); else only terminate ends it. */
  peerAnswersClose = true;
  private ended = false;

  send(data: string | Buffer, options?: { binary?: boolean }): void {
    assert.equal(options?.binary ?? typeof data !== 'string', false, 'messages go out as text frames');
    assert.equal(this.closes.length, 0, 'no message goes out after the close frame');
    this.sent.push(data.toString());
  }

  close(code?: number, reason?: string): void {
    this.closes.push({ code, afterSent: this.sent.length });
    this.closeReasons.push(reason);
    if (this.peerAnswersClose) this.end();
  }

  terminate(): void {
    this.terminated = true;
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.emit('close');
  }
}

function gatewayAnswering(dispatch: () => Promise<DispatchOutcome>, unexpected: unknown[]) {
  const channels = new ChannelRegistry();
  return new WsGateway(
    {
      dispatcher: { dispatch } as unknown as Dispatcher,
      channels,
      fanout: new Fanout(channels),
      commands: {} as CommandPort,
      reads: { openOrders: () => [], accountCancelOnDisconnect: () => false },
      clock: new VirtualClock(0),
      onUnexpected: (error) => unexpected.push(error),
    },
    { maxMessageBytes: 65_536 },
  );
}

test('an answer that cannot be serialised becomes an internal_error with its rid, not a crash', async () => {
  const unexpected: unknown[] = [];
  const gateway = gatewayAnswering(
    async () => ({ httpStatus: 200, answer: { rid: 7, result: { amount: 10n } } }),
    unexpected,
  );
  const socket = new RecordingSocket();
  gateway.accept(socket as unknown as WebSocket);
  socket.emit('message', Buffer.from('{"rid":7,"method":"public/test","params":{}}'), false);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(socket.sent.length, 1);
  const answer = JSON.parse(socket.sent[0]!) as { rid: number; error?: { message: string } };
  assert.equal(answer.rid, 7);
  assert.match(answer.error?.message ?? '', /internal/);
  assert.equal(unexpected.length, 1);
});

test('a dispatcher that rejects is answered with an error, not an unhandled rejection', async () => {
  const unexpected: unknown[] = [];
  const gateway = gatewayAnswering(() => Promise.reject(new Error('boom')), unexpected);
  const socket = new RecordingSocket();
  gateway.accept(socket as unknown as WebSocket);
  socket.emit('message', Buffer.from('{"rid":8,"method":"public/test","params":{}}'), false);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(socket.sent.length, 1);
  assert.ok((JSON.parse(socket.sent[0]!) as { error?: unknown }).error);
  assert.equal(unexpected.length, 1);
});

/** What the tests read of a message the session sent. */
interface WireMessage {
  rid?: number;
  method?: string;
  result?: string[] | string;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  params?: { channel: string; seq: number };
}

const PERP = new Instrument(1, inverseFutureSpec(DEFAULT_PRODUCTS.BTC!, null, 'perpetual', 0));

/** The one key the session-method gateways sign every connection in with. */
const TRADER = {
  apiKey: 'k',
  userId: 1,
  accountIds: new Set([1]),
  defaultAccountId: 1,
  roles: new Set(['trade']),
  deskName: null,
  rateLimits: null,
} as unknown as Principal;

/**
 * A gateway with the real dispatcher, session methods and built-in channels over a market where
 * every name `BTC-<n>` is an instrument (so `trades.BTC-<n>` are as many channels as a test needs).
 */
function subscribingGateway(options: Partial<WsGatewayOptions> = {}) {
  const reads = {
    instrument: (name: string) => (/^BTC-\d+$/.test(name) ? PERP : undefined),
    currencies: () => ['BTC'],
    openOrders: () => [],
    accountCancelOnDisconnect: () => false,
  } as unknown as ReadPort;
  const principal = TRADER;
  const clock = new VirtualClock(0);
  const channels = new ChannelRegistry();
  registerBuiltinChannels(channels, reads);
  const fanout = new Fanout(channels);
  const methods = new MethodRegistry();
  const commands = {} as CommandPort;
  registerSessionMethods(methods, { authenticateWs: () => principal } as unknown as Authenticator, {
    commands,
    reads,
    channels,
  });
  const unexpected: unknown[] = [];
  const limiter = new RateLimiter(
    { enabled: false, matching: { perSecond: 1, burst: 1 }, nonMatching: { perSecond: 1, burst: 1 } },
    () => clock.now(),
  );
  const dispatcher = new Dispatcher(
    methods,
    limiter,
    () => clock.now(),
    (error) => unexpected.push(error),
  );
  const gateway = new WsGateway(
    { dispatcher, channels, fanout, commands, reads, clock, onUnexpected: (error) => unexpected.push(error) },
    { maxMessageBytes: 1 << 20, ...options },
  );
  const socket = new RecordingSocket();
  gateway.accept(socket as unknown as WebSocket);
  let rid = 0;
  const messages = () => socket.sent.map((text) => JSON.parse(text) as WireMessage);
  /** Sends one request; resolves with its answer (a result, or the error object). */
  const call = async (method: string, params: unknown = {}) => {
    const id = ++rid;
    socket.emit('message', Buffer.from(JSON.stringify({ rid: id, method, params })), false);
    for (let turns = 0; turns < 20; turns++) await new Promise((resolve) => setImmediate(resolve));
    const answer = messages().find((m) => m.rid === id);
    assert.ok(answer, `${method} was answered`);
    return answer;
  };
  const subscribe = (channels: string[]) => call('private/subscribe', { channels });
  /** The subscriptions the fan-out holds for the connection. */
  const held = () => fanout.topicCount;
  const pushes = () => messages().filter((m) => m.method === 'subscription');
  return { gateway, socket, call, subscribe, held, pushes, fanout, unexpected, channels, methods };
}

const trades = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `trades.BTC-${from + i}`);

test('subscriptions per connection are capped; a call that would pass the cap subscribes nothing', async () => {
  const g = subscribingGateway({ maxSubscriptionsPerConnection: 5 });
  await g.call('public/auth', { apiKey: 'k', timestamp: 0, nonce: 'n', signature: 's' });
  assert.deepEqual((await g.subscribe(trades(0, 4))).result, trades(0, 4));
  const refused = await g.subscribe([...trades(4, 2)]);
  assert.equal(refused.error?.code, -32602);
  assert.match(refused.error!.message, /channels.*5/);
  assert.deepEqual(refused.error.data, { field: 'channels', limit: 5, subscribed: 4, adding: 2 });
  // All or nothing: the one channel that would have fitted was not subscribed either.
  assert.equal(g.held(), 4);
  // Channels already held add nothing, at the cap or not; the one that fits is taken.
  assert.deepEqual((await g.subscribe([...trades(0, 4), 'trades.BTC-4'])).result, trades(0, 5));
  assert.equal(g.held(), 5);
  assert.equal((await g.subscribe(['trades.BTC-9'])).error?.data?.field, 'channels');
  // Unsubscribing releases its places, unsubscribe_all and public/unsubscribe too.
  assert.deepEqual((await g.call('private/unsubscribe', { channels: trades(0, 2) })).result, trades(0, 2));
  assert.deepEqual((await g.subscribe(trades(10, 2))).result, trades(10, 2));
  assert.deepEqual((await g.call('public/unsubscribe', { channels: ['trades.BTC-10'] })).result, [
    'trades.BTC-10',
  ]);
  assert.deepEqual((await g.subscribe(['trades.BTC-20'])).result, ['trades.BTC-20']);
  assert.equal((await g.call('private/unsubscribe_all')).result, 'ok');
  assert.equal(g.held(), 0);
  assert.deepEqual((await g.subscribe(trades(30, 5))).result, trades(30, 5));
  // The per-call limit stays: 101 channels in one call are refused by the schema.
  assert.ok((await g.subscribe(trades(100, 101))).error);
  // A disconnect releases everything.
  g.socket.close();
  assert.equal(g.held(), 0);
  assert.deepEqual(g.unexpected, []);
});

test('the cap defaults to 1,000 subscriptions, the config default', async () => {
  assert.equal(DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION, DEFAULT_CONFIG.http.wsMaxSubscriptionsPerConnection);
  const g = subscribingGateway();
  await g.call('public/auth', { apiKey: 'k', timestamp: 0, nonce: 'n', signature: 's' });
  for (let from = 0; from < 1_000; from += 100) {
    assert.deepEqual((await g.subscribe(trades(from, 100))).result?.length, 100);
  }
  const refused = await g.subscribe(['trades.BTC-1000']);
  assert.deepEqual(refused.error?.data, { field: 'channels', limit: 1_000, subscribed: 1_000, adding: 1 });
  assert.equal(g.held(), 1_000);
});

test('a private channel needs public/auth first, even from a family that does not check the principal itself', async () => {
  const g = subscribingGateway();
  // A private family that resolves its names for anyone, signed in or not.
  g.channels.register({
    pattern: 'test.private.{name}',
    summary: 'a private channel that leaves the principal to the session',
    access: 'private',
    payload: Type.Null(),
    resolve: (name) => (name.startsWith('test.private.') ? { topics: [name] } : null),
    produce: () => {},
  });
  // A subscribe path that goes straight to the session (public/subscribe refuses private
  // channels itself, private/subscribe needs a key): only the session's own check is left.
  g.methods.register({
    name: 'public/test_subscribe',
    summary: 'subscribes through the session alone',
    access: 'public',
    params: ChannelsParams,
    result: Type.Array(Type.String()),
    handler: (params, context) => context.session!.subscribe(params.channels),
  });
  const refused = await g.call('public/test_subscribe', { channels: ['trades.BTC-1', 'test.private.x'] });
  assert.equal(refused.error?.code, ERROR_CATALOGUE.authorization_required.code);
  assert.equal(refused.error?.data?.field, 'channels[1]');
  assert.equal(g.held(), 0, 'nothing subscribed, not even the public channel before it');
  // Once authenticated, the same path subscribes it.
  await g.call('public/auth', { apiKey: 'k', timestamp: 0, nonce: 'n', signature: 's' });
  assert.deepEqual((await g.call('public/test_subscribe', { channels: ['test.private.x'] })).result, [
    'test.private.x',
  ]);
  assert.deepEqual(g.unexpected, []);
});

test('a channel in another letter case is the one already held: one subscription, pushes under the name held', async () => {
  const g = subscribingGateway({ maxSubscriptionsPerConnection: 2 });
  await g.call('public/auth', { apiKey: 'k', timestamp: 0, nonce: 'n', signature: 's' });
  assert.deepEqual((await g.subscribe(['user.orders.future.btc'])).result, ['user.orders.future.btc']);
  // The answer names the channel as its pushes carry it, once.
  const again = await g.subscribe([
    'user.orders.future.BTC',
    'user.orders.future.Btc',
    'user.orders.future.btc',
  ]);
  assert.deepEqual(again.result, ['user.orders.future.btc']);
  // Spellings of one channel in one call count once against the cap, and are answered once.
  assert.deepEqual((await g.subscribe(['user.orders.any.ANY', 'user.orders.any.any'])).result, [
    'user.orders.any.ANY',
  ]);
  assert.deepEqual(
    g.pushes().map((m) => [m.params!.channel, m.params!.seq]),
    [
      ['user.orders.future.btc', 1],
      ['user.orders.any.ANY', 1],
    ],
  );
  // Either spelling unsubscribes it; the answer names it as it was held.
  assert.deepEqual((await g.call('private/unsubscribe', { channels: ['user.orders.future.BTC'] })).result, [
    'user.orders.future.btc',
  ]);
  assert.deepEqual((await g.call('private/unsubscribe', { channels: ['user.orders.any.ANY'] })).result, [
    'user.orders.any.ANY',
  ]);
  assert.equal(g.held(), 0);
});

/**
 * A gateway whose dispatcher holds every call until the test answers it (`answer(rid)`), as a
 * command waits for the journal's fsync; `dispatched` lists the rids it was asked to run.
 */
function holdingGateway(options: Partial<WsGatewayOptions> = {}) {
  const clock = new VirtualClock(0);
  const channels = new ChannelRegistry();
  const dispatched: number[] = [];
  const waiting = new Map<number, () => void>();
  const dispatch = (envelope: { rid: number }) => {
    dispatched.push(envelope.rid);
    return new Promise<DispatchOutcome>((resolve) =>
      waiting.set(envelope.rid, () =>
        resolve({ httpStatus: 200, answer: { rid: envelope.rid, result: 'ok' } }),
      ),
    );
  };
  const unexpected: unknown[] = [];
  const slow: SlowConsumerDrop[] = [];
  const gateway = new WsGateway(
    {
      // Refusals are charged nothing here (unauthenticated-limits.test.ts checks the charging).
      dispatcher: { dispatch, chargeRefusal: (refusal: unknown) => refusal } as unknown as Dispatcher,
      channels,
      fanout: new Fanout(channels),
      commands: {} as CommandPort,
      reads: { openOrders: () => [], accountCancelOnDisconnect: () => false },
      clock,
      onUnexpected: (error) => unexpected.push(error),
      onSlowConsumer: (drop) => slow.push(drop),
    },
    { maxMessageBytes: 65_536, ...options },
  );
  const connect = (address?: string) => {
    const socket = new RecordingSocket();
    gateway.accept(socket as unknown as WebSocket, address);
    return socket;
  };
  const request = (socket: RecordingSocket, rid: number) =>
    socket.emit('message', Buffer.from(JSON.stringify({ rid, method: 'private/buy', params: {} })), false);
  const answer = (rid: number) => {
    waiting.get(rid)!();
    waiting.delete(rid);
  };
  const messages = (socket: RecordingSocket) =>
    socket.sent.map((text) => JSON.parse(text) as WireMessage & { result?: unknown });
  return { gateway, clock, connect, request, answer, dispatched, messages, unexpected, slow };
}

/** Lets promise callbacks and I/O callbacks of this turn run. */
const settle = async () => {
  for (let turns = 0; turns < 10; turns++) await new Promise((resolve) => setImmediate(resolve));
};

/** Tracks whether a promise has settled. */
function track(promise: Promise<void>) {
  const state = { done: false };
  void promise.then(() => {
    state.done = true;
  });
  return state;
}

test('shutdown: a call in flight when the close starts is answered before the 1001 close', async () => {
  const g = holdingGateway();
  const busy = g.connect();
  const idle = g.connect();
  g.request(busy, 1);
  await settle();
  assert.deepEqual(g.dispatched, [1]);
  const closing = track(g.gateway.close(5_000));
  await settle();
  // The idle connection goes at once; the busy one waits for its answer.
  assert.deepEqual(idle.closes, [{ code: 1001, afterSent: 0 }]);
  assert.deepEqual(busy.closes, []);
  assert.equal(closing.done, false);
  g.answer(1);
  await settle();
  assert.deepEqual(g.messages(busy), [{ rid: 1, result: 'ok' }]);
  assert.deepEqual(busy.closes, [{ code: 1001, afterSent: 1 }]);
  assert.equal(busy.terminated, false);
  assert.equal(
    closing.done,
    true,
    'the close ends once every connection has gone, without waiting for the grace',
  );
  assert.deepEqual(g.unexpected, []);
});

test('shutdown: a message arriving once the close has started is refused with unavailable, not run', async () => {
  const g = holdingGateway();
  const socket = g.connect();
  g.request(socket, 1);
  await settle();
  const closing = track(g.gateway.close(5_000));
  g.request(socket, 2);
  // One that is not JSON is refused the same way (nothing of it runs either).
  socket.emit('message', Buffer.from('{"rid":3,'), false);
  await settle();
  assert.deepEqual(g.dispatched, [1], 'only the call already in flight ran');
  const refused = g.messages(socket);
  assert.equal(refused.length, 2);
  for (const [i, rid] of [2, null].entries()) {
    assert.equal(refused[i]!.rid, rid);
    assert.equal(refused[i]!.error?.code, ERROR_CATALOGUE.unavailable.code);
    assert.match(refused[i]!.error!.message, /shutting down: the request was not run/);
  }
  g.answer(1);
  await settle();
  assert.deepEqual(g.messages(socket)[2], { rid: 1, result: 'ok' });
  assert.deepEqual(socket.closes, [{ code: 1001, afterSent: 3 }]);
  assert.equal(closing.done, true);
});

test('shutdown: a call that never completes holds the close only for the grace, on the service clock', async () => {
  const g = holdingGateway();
  const stuck = g.connect();
  // A peer that does not answer close frames either.
  stuck.peerAnswersClose = false;
  g.request(stuck, 1);
  await settle();
  const closing = track(g.gateway.close(5_000));
  await settle();
  g.clock.advance(4_999);
  await settle();
  assert.equal(closing.done, false);
  assert.deepEqual(stuck.closes, []);
  g.clock.advance(1);
  await settle();
  assert.deepEqual(stuck.closes, [{ code: 1001, afterSent: 0 }]);
  assert.equal(stuck.terminated, true);
  assert.equal(closing.done, true);
  // An answer that comes after all goes nowhere, and nothing breaks.
  g.answer(1);
  await settle();
  assert.deepEqual(stuck.sent, []);
  assert.deepEqual(g.unexpected, []);
});

test('shutdown: a connection accepted once the close has started is closed with 1001 at once', async () => {
  const g = holdingGateway();
  const closing = track(g.gateway.close(5_000));
  await settle();
  assert.equal(closing.done, true);
  const late = g.connect();
  assert.deepEqual(late.closes, [{ code: 1001, afterSent: 0 }]);
  g.request(late, 1);
  await settle();
  assert.deepEqual(g.dispatched, []);
});

test('a peer that stops reading: past its buffered limit it is closed 1008 "slow consumer", reported once, cut after the grace', async () => {
  assert.equal(DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_CONFIG.http.wsMaxBufferedBytes);
  const g = holdingGateway({ maxBufferedBytes: 1_000 });
  const paused = g.connect('10.0.0.7');
  // A paused peer answers no close frame: only the cut ends its connection.
  paused.peerAnswersClose = false;
  for (const rid of [1, 2, 3]) g.request(paused, rid);
  await settle();
  paused.bufferedAmount = 1_000;
  g.answer(1);
  await settle();
  assert.equal(g.messages(paused).length, 1, 'at the limit it is still sent to');
  paused.bufferedAmount = 1_001;
  g.answer(2);
  g.answer(3);
  await settle();
  assert.equal(g.messages(paused).length, 1, 'nothing is sent past the limit');
  assert.deepEqual(paused.closes, [{ code: 1008, afterSent: 1 }]);
  assert.deepEqual(paused.closeReasons, ['slow consumer']);
  assert.deepEqual(g.slow, [
    { connection: 1, address: '10.0.0.7', bufferedBytes: 1_001, reason: 'connection' },
  ]);
  // The close frame waits behind what is queued: the peer has the grace to read on, then is cut.
  assert.equal(paused.terminated, false);
  assert.equal(g.gateway.connectionCount, 1);
  g.clock.advance(SLOW_CONSUMER_GRACE_MS - 1);
  assert.equal(paused.terminated, false);
  g.clock.advance(1);
  assert.equal(paused.terminated, true);
  assert.equal(g.gateway.connectionCount, 0);
  assert.equal(g.gateway.bufferedBytes, 0, 'its queue leaves the total when it closes');
  assert.equal(g.slow.length, 1, 'reported once');
  assert.deepEqual(g.unexpected, []);
});

/**
 * Three connections from 10.0.0.1–3 whose peers never answer a close, each with a call (rids 1–3)
 * the gateway holds until the test answers it.
 */
async function threeWaiting(g: ReturnType<typeof holdingGateway>) {
  const sockets = [g.connect('10.0.0.1'), g.connect('10.0.0.2'), g.connect('10.0.0.3')] as const;
  for (const [i, socket] of sockets.entries()) {
    socket.peerAnswersClose = false;
    g.request(socket, i + 1);
  }
  await settle();
  return sockets;
}

test('past the total budget, the connections with the most queued are dropped first', async () => {
  const g = holdingGateway({ maxBufferedBytes: 10_000, maxBufferedBytesTotal: 2_500 });
  const [a, b, c] = await threeWaiting(g);
  a.bufferedAmount = 1_000;
  b.bufferedAmount = 1_200;
  c.bufferedAmount = 900;
  g.answer(1);
  g.answer(2);
  await settle();
  assert.equal(g.gateway.bufferedBytes, 2_200);
  assert.equal(g.slow.length, 0);
  // 3,100 queued: the biggest (b) goes at once, which brings the total back under the budget.
  g.answer(3);
  await settle();
  assert.deepEqual(
    g.slow.map((drop) => [drop.address, drop.bufferedBytes, drop.reason]),
    [['10.0.0.2', 1_200, 'budget']],
  );
  assert.deepEqual(b.closes, [{ code: 1008, afterSent: 1 }]);
  assert.equal(b.terminated, true, 'dropped for the budget: cut at once, its memory freed');
  assert.equal(a.terminated || c.terminated, false);
  assert.deepEqual(a.closes, []);
  assert.deepEqual(c.closes, []);
  assert.equal(g.gateway.connectionCount, 2);
  assert.equal(g.gateway.bufferedBytes, 1_900);
  // The sender itself goes when it is the biggest.
  g.request(c, 4);
  await settle();
  c.bufferedAmount = 2_000;
  g.answer(4);
  await settle();
  assert.deepEqual(
    g.slow.map((drop) => [drop.address, drop.reason]),
    [
      ['10.0.0.2', 'budget'],
      ['10.0.0.3', 'budget'],
    ],
  );
  assert.equal(c.terminated, true);
  assert.equal(a.terminated, false);
  assert.equal(g.gateway.bufferedBytes, 1_000);
  assert.deepEqual(g.unexpected, []);
});

test('a total exactly at the budget is within it: nobody more is dropped', async () => {
  const g = holdingGateway({ maxBufferedBytes: 10_000, maxBufferedBytesTotal: 2_000 });
  const [a, b, c] = await threeWaiting(g);
  a.bufferedAmount = 1_000;
  b.bufferedAmount = 1_000;
  g.answer(1);
  g.answer(2);
  await settle();
  assert.equal(g.gateway.bufferedBytes, 2_000);
  assert.equal(g.slow.length, 0, 'at the budget, not past it');
  // 3,500 queued: dropping c (1,500) leaves exactly the budget, so a and b stay.
  c.bufferedAmount = 1_500;
  g.answer(3);
  await settle();
  assert.deepEqual(
    g.slow.map((drop) => [drop.address, drop.reason]),
    [['10.0.0.3', 'budget']],
  );
  assert.equal(a.terminated || b.terminated, false, 'a and b stay');
  assert.equal(g.gateway.bufferedBytes, 2_000);
});

test('queues that drained are read again before anyone is dropped for the budget', async () => {
  const g = holdingGateway({ maxBufferedBytes: 10_000, maxBufferedBytesTotal: 2_500 });
  const [a, b] = [g.connect(), g.connect()];
  g.request(a, 1);
  g.request(b, 2);
  await settle();
  a.bufferedAmount = 2_000;
  g.answer(1);
  await settle();
  // a's peer read everything since; the total still counts what a had queued.
  a.bufferedAmount = 0;
  b.bufferedAmount = 1_000;
  g.answer(2);
  await settle();
  assert.deepEqual(g.slow, []);
  assert.equal(g.gateway.bufferedBytes, 1_000);
});

/**
 * A socket over a TCP stream: what is sent queues while the stream is corked, and when the stream
 * is released the kernel takes all but `left` bytes.
 */
class StreamSocket extends RecordingSocket {
  left = 0;
  uncorks = 0;
  readonly _socket = {
    cork: () => {},
    uncork: () => {
      this.uncorks++;
      this.bufferedAmount = this.left;
    },
  };

  override send(data: string | Buffer, options?: { binary?: boolean }): void {
    super.send(data, options);
    this.bufferedAmount += Buffer.byteLength(data);
  }
}

test('over a TCP stream the queue is judged when the turn is flushed: a burst the kernel takes is no offence', async () => {
  const g = holdingGateway({ maxBufferedBytes: 100 });
  const socket = new StreamSocket();
  socket.peerAnswersClose = false;
  g.gateway.accept(socket as unknown as WebSocket, '10.0.0.9');
  for (let rid = 1; rid <= 10; rid++) g.request(socket, rid);
  await settle();
  // Ten answers in one turn queue far past the limit before the stream is released...
  for (let rid = 1; rid <= 10; rid++) g.answer(rid);
  await settle();
  assert.equal(g.messages(socket).length, 10);
  assert.ok(socket.uncorks >= 1);
  // ...and the kernel took them all: nothing is queued, nobody is dropped.
  assert.equal(socket.bufferedAmount, 0);
  assert.deepEqual(g.slow, []);
  assert.deepEqual(socket.closes, []);
  // Now the peer stops reading: what the kernel leaves past the limit is watched, and still
  // there a patience later, unshrunk, it makes the connection a slow consumer.
  socket.left = 101;
  g.request(socket, 11);
  g.request(socket, 12);
  g.request(socket, 13);
  await settle();
  g.answer(11);
  await settle();
  assert.deepEqual(g.slow, [], 'one look past the limit is no verdict');
  g.answer(12);
  await settle();
  assert.equal(g.messages(socket).length, 12, 'sent to while watched');
  g.clock.advance(SLOW_CONSUMER_PATIENCE_MS - 1);
  assert.deepEqual(g.slow, []);
  g.clock.advance(1);
  assert.deepEqual(g.slow, [
    { connection: 1, address: '10.0.0.9', bufferedBytes: 101, reason: 'connection' },
  ]);
  assert.deepEqual(socket.closes, [{ code: 1008, afterSent: 12 }]);
  g.answer(13);
  await settle();
  assert.equal(g.messages(socket).length, 12, 'nothing is sent once it is dropped');
  g.clock.advance(SLOW_CONSUMER_GRACE_MS);
  assert.equal(socket.terminated, true);
  assert.equal(g.gateway.bufferedBytes, 0);
});

test('a burst past the limit that the peer drains is no offence; one that stops shrinking is', async () => {
  const g = holdingGateway({ maxBufferedBytes: 100 });
  const socket = new StreamSocket();
  socket.peerAnswersClose = false;
  g.gateway.accept(socket as unknown as WebSocket, '10.0.0.9');
  for (let rid = 1; rid <= 3; rid++) g.request(socket, rid);
  await settle();
  // A mass cancel's pushes: the kernel leaves 1,000 bytes, ten times the limit.
  socket.left = 1_000;
  g.answer(1);
  await settle();
  // The peer reads: a patience later the queue has shrunk, though still past the limit...
  socket.bufferedAmount = 600;
  g.clock.advance(SLOW_CONSUMER_PATIENCE_MS);
  assert.deepEqual(g.slow, []);
  // ...and another patience later it is within it: the watch ends.
  socket.bufferedAmount = 50;
  g.clock.advance(SLOW_CONSUMER_PATIENCE_MS);
  assert.deepEqual(g.slow, []);
  g.clock.advance(10 * SLOW_CONSUMER_PATIENCE_MS);
  assert.deepEqual(g.slow, [], 'no watch left behind');
  assert.deepEqual(socket.closes, []);
  // A burst that lands past the limit again and then stops shrinking is a slow consumer.
  socket.left = 500;
  g.answer(2);
  await settle();
  socket.bufferedAmount = 450;
  g.clock.advance(SLOW_CONSUMER_PATIENCE_MS);
  assert.deepEqual(g.slow, [], 'it shrank: watched again');
  g.clock.advance(SLOW_CONSUMER_PATIENCE_MS);
  assert.deepEqual(g.slow, [
    { connection: 1, address: '10.0.0.9', bufferedBytes: 450, reason: 'connection' },
  ]);
  assert.deepEqual(socket.closes, [{ code: 1008, afterSent: 2 }]);
});

test('a queue past the burst bound is a slow consumer at once', async () => {
  const g = holdingGateway({ maxBufferedBytes: 100 });
  const socket = new StreamSocket();
  socket.peerAnswersClose = false;
  g.gateway.accept(socket as unknown as WebSocket, '10.0.0.9');
  g.request(socket, 1);
  g.request(socket, 2);
  await settle();
  socket.left = 100 * SLOW_CONSUMER_BURST_FACTOR;
  g.answer(1);
  await settle();
  assert.deepEqual(g.slow, [], 'at the bound it is watched');
  g.clock.advance(SLOW_CONSUMER_PATIENCE_MS - 1);
  socket.left = 100 * SLOW_CONSUMER_BURST_FACTOR + 1;
  g.answer(2);
  await settle();
  assert.deepEqual(g.slow, [
    {
      connection: 1,
      address: '10.0.0.9',
      bufferedBytes: 100 * SLOW_CONSUMER_BURST_FACTOR + 1,
      reason: 'connection',
    },
  ]);
});

// ---- cancel-on-disconnect at the session level (killing tests from the ws-gateway mutation audit) ----

/**
 * A gateway with the real dispatcher and session methods whose core records each command it is
 * given (and accepts it); `public/test_session` hands the test the connection's SessionHandle, so
 * it can report an order placed as the trading methods do (`placed`), also after the close.
 */
function codGateway(accountDefault = false, keyWorks?: (apiKey: string) => boolean) {
  const reads = {
    instrument: () => undefined,
    currencies: () => ['BTC'],
    openOrders: () => [],
    accountCancelOnDisconnect: () => accountDefault,
  } as unknown as ReadPort;
  const principal = TRADER;
  const clock = new VirtualClock(0);
  const channels = new ChannelRegistry();
  registerBuiltinChannels(channels, reads);
  const submitted: Array<Record<string, unknown>> = [];
  /** While set, the core holds each command until `releaseCommands` (as the journal's fsync would). */
  const held: Array<() => void> = [];
  const core = { holding: false };
  const commands = {
    submit: (command: Record<string, unknown>) => {
      submitted.push(command);
      if (!core.holding) return Promise.resolve({ ok: true, events: [] });
      return new Promise((resolve) => held.push(() => resolve({ ok: true, events: [] })));
    },
    now: () => clock.now(),
  } as unknown as CommandPort;
  const methods = new MethodRegistry();
  registerSessionMethods(methods, { authenticateWs: () => principal } as unknown as Authenticator, {
    commands,
    reads,
    channels,
  });
  const handed: { session: SessionHandle | null } = { session: null };
  methods.register({
    name: 'public/test_session',
    summary: 'hands the test its session',
    access: 'public',
    params: Type.Object({}),
    result: Type.Literal('ok'),
    handler: (_params, context) => {
      handed.session = context.session;
      return 'ok' as const;
    },
  });
  const unexpected: unknown[] = [];
  const limiter = new RateLimiter(
    { enabled: false, matching: { perSecond: 1, burst: 1 }, nonMatching: { perSecond: 1, burst: 1 } },
    () => clock.now(),
  );
  const dispatcher = new Dispatcher(
    methods,
    limiter,
    () => clock.now(),
    (error) => unexpected.push(error),
  );
  const gateway = new WsGateway(
    {
      dispatcher,
      channels,
      fanout: new Fanout(channels),
      commands,
      reads,
      clock,
      ...(keyWorks === undefined ? {} : { keyWorks }),
      onUnexpected: (error) => unexpected.push(error),
    },
    { maxMessageBytes: 1 << 20 },
  );
  const socket = new RecordingSocket();
  gateway.accept(socket as unknown as WebSocket);
  let rid = 0;
  const call = async (method: string, params: unknown = {}) => {
    const id = ++rid;
    socket.emit('message', Buffer.from(JSON.stringify({ rid: id, method, params })), false);
    for (let turns = 0; turns < 20; turns++) await new Promise((resolve) => setImmediate(resolve));
    const answer = socket.sent
      .map((text) => JSON.parse(text) as Omit<WireMessage, 'result'> & { result?: unknown })
      .find((m) => m.rid === id);
    assert.ok(answer, `${method} was answered`);
    return answer;
  };
  const session = async () => {
    await call('public/test_session');
    const handle = handed.session;
    assert.ok(handle, 'the session was handed over');
    return handle;
  };
  const auth = () => call('public/auth', { apiKey: 'k', timestamp: 0, nonce: 'n', signature: 's' });
  const ofType = (type: string) => submitted.filter((c) => c.type === type);
  const releaseCommands = () => {
    core.holding = false;
    for (const release of held.splice(0)) release();
  };
  return { socket, clock, core, call, session, auth, submitted, ofType, releaseCommands, unexpected };
}

test('an order placed after the session ended with cancel-on-disconnect on is cancelled as it lands', async () => {
  const g = codGateway();
  await g.auth();
  assert.equal((await g.call('private/enable_cancel_on_disconnect')).result, 'ok');
  const session = await g.session();
  const codSession = session.codSession;
  assert.notEqual(codSession, null);
  // An order sent under the session is still on its way to the core when the connection closes:
  // the close's cancel (nothing placed yet) cannot name it.
  g.socket.close();
  assert.equal(g.ofType('cancel_all').length, 0, 'nothing placed yet: nothing to cancel at the close');
  // It lands: it is cancelled at once, on the account, as cancel-on-disconnect.
  assert.equal(session.placed('o-late', codSession), undefined);
  assert.deepEqual(g.ofType('cancel_all'), [
    { type: 'cancel_all', accountId: 1, orderIds: ['o-late'], cancelReason: 'cancel_on_disconnect' },
  ]);
  assert.deepEqual(g.unexpected, []);
});

test('an order placed after the session ended with cancel-on-disconnect off stays', async () => {
  const g = codGateway();
  await g.auth();
  const session = await g.session();
  assert.equal(session.codSession, null);
  g.socket.close();
  assert.equal(session.placed('o-late', null), undefined);
  assert.deepEqual(g.ofType('cancel_all'), [], 'cancel-on-disconnect was off: the order is left alone');
  assert.deepEqual(g.unexpected, []);
});

test('enable and disable of cancel-on-disconnect are idempotent: a second one journals nothing and keeps the session', async () => {
  const g = codGateway();
  await g.auth();
  // Disabling what is off: answered ok, nothing sent to the core.
  assert.equal((await g.call('private/disable_cancel_on_disconnect')).result, 'ok');
  assert.deepEqual(g.ofType('set_cancel_on_disconnect'), []);
  assert.equal((await g.call('private/enable_cancel_on_disconnect')).result, 'ok');
  const session = await g.session();
  const first = session.codSession;
  assert.notEqual(first, null);
  // Enabling again keeps the session (orders placed under it stay covered) and journals nothing.
  assert.equal((await g.call('private/enable_cancel_on_disconnect')).result, 'ok');
  assert.equal(session.codSession, first);
  assert.equal(g.ofType('set_cancel_on_disconnect').length, 1);
  assert.deepEqual(g.unexpected, []);
});

test('public/auth again with the same key keeps cancel-on-disconnect as the connection set it, whatever the account default', async () => {
  // The account's default is on: the first auth turns it on for the connection.
  const g = codGateway(true);
  await g.auth();
  assert.deepEqual((await g.call('private/get_cancel_on_disconnect')).result, {
    scope: 'connection',
    enabled: true,
  });
  // The connection turns it off for itself, then authenticates again with the same key.
  assert.equal((await g.call('private/disable_cancel_on_disconnect')).result, 'ok');
  const commandsBefore = g.submitted.length;
  assert.ok(!(await g.auth()).error);
  assert.deepEqual((await g.call('private/get_cancel_on_disconnect')).result, {
    scope: 'connection',
    enabled: false,
  });
  assert.equal(g.submitted.length, commandsBefore, 'the same key again sends nothing to the core');
  assert.deepEqual(g.unexpected, []);
});

test('once a heartbeat timeout has ended the session, a call still in flight is not answered over the closing socket', async () => {
  const g = codGateway();
  // A peer that stopped answering does not complete the close handshake either.
  g.socket.peerAnswersClose = false;
  await g.auth();
  assert.equal((await g.call('public/set_heartbeat', { interval: 10 })).result, 'ok');
  // A call that waits for the journal is in flight when the peer goes silent.
  g.core.holding = true;
  g.socket.emit(
    'message',
    Buffer.from(JSON.stringify({ rid: 100, method: 'private/enable_cancel_on_disconnect', params: {} })),
    false,
  );
  await settle();
  g.clock.advance(10_000); // test_request
  g.clock.advance(10_000); // not answered: the session ends, the close frame goes out
  assert.equal(g.socket.closes.length, 1);
  assert.equal(g.socket.closes[0]!.code, 1000);
  // From here on, whatever the session would send is recorded instead of failing the socket's check.
  const late: string[] = [];
  g.socket.send = (data: string | Buffer) => {
    late.push(data.toString());
  };
  g.releaseCommands();
  await settle();
  assert.deepEqual(late, [], 'nothing is sent once the session has ended');
  assert.deepEqual(g.unexpected, []);
});

test('a connection dropped as a slow consumer runs none of the messages it still sends', async () => {
  const g = holdingGateway({ maxBufferedBytes: 1_000 });
  const paused = g.connect('10.0.0.8');
  // It reads nothing, so it never completes the close handshake: its frames keep arriving.
  paused.peerAnswersClose = false;
  g.request(paused, 1);
  await settle();
  paused.bufferedAmount = 1_001;
  g.answer(1);
  await settle();
  assert.deepEqual(paused.closes, [{ code: 1008, afterSent: 0 }]);
  // Its session has ended (cancel-on-disconnect has run): an order it sends now must not be run.
  g.request(paused, 2);
  await settle();
  assert.deepEqual(g.dispatched, [1], 'the message after the drop was not dispatched');
  assert.deepEqual(g.unexpected, []);
});

test('a disabled key: public methods are still answered on the connection; the first private one is refused and ends it', async () => {
  const key = { works: true };
  const g = codGateway(false, () => key.works);
  await g.auth();
  key.works = false;
  // Public methods need no key, as over HTTP: answered, and the session goes on.
  assert.equal((await g.call('public/set_heartbeat', { interval: 10 })).result, 'ok');
  assert.equal(g.socket.closes.length, 0, 'still open');
  // A private one is refused as over HTTP, and the session ends with 1008.
  const refused = await g.call('private/get_cancel_on_disconnect');
  assert.equal(refused.error?.code, ERROR_CATALOGUE.invalid_credentials.code);
  assert.equal(g.socket.closes[0]?.code, 1008);
  assert.deepEqual(g.unexpected, []);
});

test('shutdown: a connection with several calls in flight closes only once the last is answered', async () => {
  const g = holdingGateway();
  const busy = g.connect();
  g.request(busy, 1);
  g.request(busy, 2);
  await settle();
  assert.deepEqual(g.dispatched, [1, 2]);
  const closing = track(g.gateway.close(5_000));
  await settle();
  g.answer(1);
  await settle();
  assert.deepEqual(busy.closes, [], 'one call is still in flight');
  g.answer(2);
  await settle();
  assert.deepEqual(g.messages(busy), [
    { rid: 1, result: 'ok' },
    { rid: 2, result: 'ok' },
  ]);
  assert.deepEqual(busy.closes, [{ code: 1001, afterSent: 2 }]);
  assert.equal(closing.done, true);
  assert.deepEqual(g.unexpected, []);
});

test('a binary frame is refused with bad_request and not run, even when it holds an envelope', async () => {
  const g = holdingGateway();
  const socket = g.connect();
  socket.emit('message', Buffer.from(JSON.stringify({ rid: 1, method: 'private/buy', params: {} })), true);
  await settle();
  assert.deepEqual(g.dispatched, [], 'not dispatched');
  const [answer] = g.messages(socket);
  assert.equal(answer?.rid, null);
  assert.equal(answer?.error?.code, ERROR_CATALOGUE.bad_request.code);
  assert.deepEqual(g.unexpected, []);
});

test('a message that is no JSON object is refused with bad_request naming the message', async () => {
  const g = holdingGateway();
  const socket = g.connect();
  socket.emit('message', Buffer.from(JSON.stringify([{ rid: 1, method: 'private/buy', params: {} }])), false);
  await settle();
  assert.deepEqual(g.dispatched, [], 'not dispatched');
  const [answer] = g.messages(socket);
  assert.equal(answer?.error?.code, ERROR_CATALOGUE.bad_request.code);
  assert.equal(answer?.error?.data?.field, 'message');
  assert.deepEqual(g.unexpected, []);
});

test('one subscribe names at most 100 channels, and a heartbeat interval is at least 10 s', async () => {
  const g = codGateway();
  const names = (count: number) =>
    Array.from({ length: count }, (_, i) => `user.orders.any.any${i === 0 ? '' : i}`);
  const over = await g.call('public/subscribe', { channels: names(101) });
  assert.equal(
    over.error?.code,
    -32602,
    `101 channels in one call are refused invalid_params: ${JSON.stringify(over)}`,
  );
  const heartbeat = await g.call('public/set_heartbeat', { interval: 9 });
  assert.equal(
    heartbeat.error?.code,
    -32602,
    `a 9 s heartbeat is refused invalid_params: ${JSON.stringify(heartbeat)}`,
  );
  assert.equal((await g.call('public/set_heartbeat', { interval: 10 })).result, 'ok');
  assert.deepEqual(g.unexpected, []);
});
