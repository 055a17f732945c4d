/**
 * The sdk's WebSocket client against the whole service (virtual clock): reconnecting while it
 * holds more channels than one subscribe takes, channels the service refuses on resubscribe,
 * reconnect failures reported (retried, or given up on a disabled key), sessions that start clean
 * after `close()`/`connect()`, and listeners that go with their channels.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { signWs } from '../../sdk/index.ts';
import type { SubscriptionPush } from '../../sdk/types.ts';
import { type ReconnectError, SUBSCRIBE_CHANNELS_PER_CALL, WsClient } from '../../sdk/ws-client.ts';
import { SecretBox } from '../../src/api/auth/secret-box.ts';
import { SqliteKeyStore } from '../../src/api/auth/sqlite-key-store.ts';
import { startTestService, type TestService } from '../support/service-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';
/** Real time a reconnect gets (it takes milliseconds; the bound only ends a test that hangs). */
const RECONNECT_BOUND_MS = 3_000;

describe('the sdk WebSocket client against the service', () => {
  let running: TestService;
  const clients: WsClient[] = [];
  before(async () => {
    running = await startTestService();
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await running.close();
    rmSync(running.dataDir, { recursive: true, force: true });
  });

  const client = (
    credentials: { apiKey: string; apiSecret: string } = running.credentials[0]!,
    options: { now?: () => number; reconnect?: boolean } = {},
  ) => {
    const made = new WsClient({
      url: running.wsUrl,
      credentials: { apiKey: credentials.apiKey, apiSecret: credentials.apiSecret },
      now: options.now ?? (() => running.service.core.now()),
      reconnectDelayMs: 1,
      ...(options.reconnect === undefined ? {} : { reconnect: options.reconnect }),
    });
    clients.push(made);
    return made;
  };

  /** Resolves on the client's next `onReconnected`, rejects on `gave_up` or after the bound. */
  const reconnected = (ws: WsClient, errors: ReconnectError[] = []) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no reconnect in time')), RECONNECT_BOUND_MS);
      ws.onReconnected = () => {
        clearTimeout(timer);
        resolve();
      };
      ws.onReconnectError = (error) => {
        errors.push(error);
        if (error.kind === 'gave_up') {
          clearTimeout(timer);
          reject(error);
        }
      };
    });

  /** Resolves with the client's next `onReconnectError`, or rejects after the bound. */
  const nextReconnectError = (ws: WsClient) =>
    new Promise<ReconnectError>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no reconnect error in time')), RECONNECT_BOUND_MS);
      ws.onReconnectError = (error) => {
        clearTimeout(timer);
        resolve(error);
      };
    });

  const signedAuth = (ws: WsClient, credentials: { apiKey: string; apiSecret: string }) => {
    const timestamp = running.service.core.now();
    const nonce = randomUUID();
    return ws.call('public/auth', {
      apiKey: credentials.apiKey,
      timestamp,
      nonce,
      signature: signWs(credentials.apiSecret, String(timestamp), nonce),
    });
  };

  test('holding more channels than one subscribe takes, it reconnects: all resubscribed, then cancel-on-disconnect', async () => {
    const ws = client();
    await ws.connect();
    await ws.auth();
    const instruments = await ws.call('public/get_instruments', { currency: 'BTC' });
    const channels = instruments.map((instrument) => `ticker.${instrument.instrumentName}`);
    assert.ok(channels.length > SUBSCRIBE_CHANNELS_PER_CALL, `${channels.length} channels`);
    for (let start = 0; start < channels.length; start += SUBSCRIBE_CHANNELS_PER_CALL) {
      await ws.subscribe(channels.slice(start, start + SUBSCRIBE_CHANNELS_PER_CALL));
    }
    await ws.call('private/enable_cancel_on_disconnect', {});
    const snapshots = new Set<string>();
    ws.onAnyPush((push) => {
      if (push.snapshot) snapshots.add(push.channel);
    });
    const errors: ReconnectError[] = [];
    const again = reconnected(ws, errors);
    ws.dropConnection();
    await again;
    await until(() => snapshots.size === channels.length);
    assert.deepEqual(errors, []);
    assert.deepEqual(await ws.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    await ws.close();
  });

  test('a failed reconnect attempt is reported and retried; cancel-on-disconnect is back once it succeeds', async () => {
    let skewMs = 0;
    const ws = client(running.credentials[0]!, { now: () => running.service.core.now() + skewMs });
    await ws.connect();
    await ws.auth();
    await ws.call('private/enable_cancel_on_disconnect', {});
    // The client's clock runs an hour ahead: its re-auth is refused (clock_skew), which may pass.
    skewMs = 3_600_000;
    const failed = nextReconnectError(ws);
    ws.dropConnection();
    const error = await failed;
    assert.equal(error.kind, 'retrying');
    assert.ok(error.cause instanceof ApiError && error.cause.errorName === 'clock_skew', String(error.cause));
    assert.equal(ws.connected, false);
    await assert.rejects(ws.call('public/test', {}), /not connected/);

    const again = reconnected(ws);
    skewMs = 0;
    await again;
    assert.ok(ws.connected);
    assert.deepEqual(await ws.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: true,
    });
    await ws.close();
  });

  test('a key disabled while the client is away: the reconnect gives up, says why, and tries no more', async () => {
    const keys = new SqliteKeyStore(join(running.dataDir, 'keys.db'), SecretBox.load(null, running.dataDir));
    const created = keys.createApiKey({ userId: running.credentials[0]!.userId, roles: ['trade'] }, 0);
    const credentials = { apiKey: created.record.apiKey, apiSecret: created.apiSecret };
    const ws = client(credentials);
    await ws.connect();
    await ws.auth();
    await ws.subscribe([`ticker.${PERP}`]);
    assert.equal(keys.disableKey(credentials.apiKey), true);
    keys.close();
    running.clock.advance(60_000); // past the service's key cache

    const errors: ReconnectError[] = [];
    const again = reconnected(ws, errors);
    ws.dropConnection();
    const error = await again.then(
      () => assert.fail('reconnected with a disabled key'),
      (e: unknown) => e as ReconnectError,
    );
    assert.equal(error.kind, 'gave_up');
    assert.ok(error.cause instanceof ApiError && error.cause.errorName === 'invalid_credentials');
    assert.deepEqual(
      errors.map((e) => e.kind),
      ['gave_up'],
    );
    await until(() => !(ws as unknown as { reconnecting: boolean }).reconnecting);
    assert.equal(ws.connected, false);
    // A new session starts from nothing: unauthenticated, public channels only.
    await ws.connect();
    assert.deepEqual(await ws.subscribe([`ticker.${PERP}`]), [`ticker.${PERP}`]);
    await ws.close();
  });

  test('signing in as another key through call(): its channels and listeners go, and a reconnect gives up rather than sign in as the first key', async () => {
    const ws = client();
    await ws.connect();
    await ws.auth();
    const got: string[] = [];
    await ws.subscribe([`ticker.${PERP}`], () => got.push('ticker'));
    await until(() => got.length === 1);
    // Signing in again with the client's own key through call() keeps everything.
    await signedAuth(ws, running.credentials[0]!);
    assert.equal(
      (await ws.call('private/get_account_summary', { currency: 'BTC' })).accountId,
      running.credentials[0]!.accountIds[0],
    );
    // Another key: the service ends the first key's session, and the client forgets its channels.
    const other = running.credentials[3]!;
    await signedAuth(ws, other);
    const held = (ws as unknown as { subscribed: Set<string> }).subscribed;
    assert.deepEqual([...held], []);
    assert.deepEqual(await ws.unsubscribe([`ticker.${PERP}`]), [], 'the service holds it no more either');
    assert.equal(
      (await ws.call('private/get_account_summary', { currency: 'BTC' })).accountId,
      other.accountIds[0],
    );

    const again = reconnected(ws);
    ws.dropConnection();
    const error = await again.then(
      () => assert.fail('reconnected as the first key'),
      (e: unknown) => e as ReconnectError,
    );
    assert.equal(error.kind, 'gave_up');
    assert.match(error.message, /credentials/);
    assert.equal(ws.connected, false);
  });

  test('close() then connect() starts clean: nothing of the closed session is sent or restored', async () => {
    const ws = client();
    await ws.connect();
    await ws.auth();
    await ws.call('public/set_heartbeat', { interval: 10 });
    await ws.call('private/enable_cancel_on_disconnect', {});
    await ws.subscribe([`ticker.${PERP}`]);
    await ws.close();

    await ws.connect();
    const pushes: SubscriptionPush[] = [];
    ws.onAnyPush((push) => pushes.push(push));
    // Unauthenticated: a public subscribe, not a private one.
    assert.deepEqual(await ws.subscribe(['ticker.ETH-PERPETUAL']), ['ticker.ETH-PERPETUAL']);
    await ws.auth();
    // The snapshot came before the subscribe's answer; a price check may have pushed again since.
    await until(() => pushes.length >= 1);
    assert.deepEqual(new Set(pushes.map((push) => push.channel)), new Set(['ticker.ETH-PERPETUAL']));
    pushes.length = 0;
    const again = reconnected(ws);
    ws.dropConnection();
    await again;
    // The resubscribe's snapshots are pushed before the answer to a later call.
    await ws.call('public/test', {});
    // The resubscribed snapshot first; a price check may follow it, on that channel only.
    assert.deepEqual(
      { channel: pushes[0]?.channel, seq: pushes[0]?.seq, snapshot: pushes[0]?.snapshot },
      { channel: 'ticker.ETH-PERPETUAL', seq: 1, snapshot: true },
    );
    assert.deepEqual(new Set(pushes.map((push) => push.channel)), new Set(['ticker.ETH-PERPETUAL']));
    assert.deepEqual(await ws.call('private/get_cancel_on_disconnect', {}), {
      scope: 'connection',
      enabled: false,
    });
    // No heartbeat on the new connection: a test_request would come before this call's answer.
    const answered = ws.heartbeatsAnswered.count;
    running.clock.advance(10_000);
    await ws.call('public/test', {});
    assert.equal(ws.heartbeatsAnswered.count, answered);
    await ws.close();
  });

  test('connect() after a drop the client did not reconnect starts clean too', async () => {
    const ws = client(running.credentials[0]!, { reconnect: false });
    await ws.connect();
    await ws.auth();
    await ws.subscribe([`ticker.${PERP}`]);
    ws.dropConnection();
    await until(() => !ws.connected);
    await ws.connect();
    assert.deepEqual(await ws.subscribe(['ticker.ETH-PERPETUAL']), ['ticker.ETH-PERPETUAL']);
    await ws.close();
  });

  test('unsubscribing removes the channel’s listeners; a refused subscribe leaves none', async () => {
    const ws = client();
    await ws.connect();
    const got: string[] = [];
    await ws.subscribe([`ticker.${PERP}`], () => got.push('first'));
    await until(() => got.length === 1);
    assert.deepEqual(await ws.unsubscribe([`ticker.${PERP}`]), [`ticker.${PERP}`]);
    await assert.rejects(
      ws.subscribe([`ticker.${PERP}`, 'nope.channel'], () => got.push('refused')),
      (e) => e instanceof ApiError && e.data?.field === 'channels[1]',
    );
    await ws.subscribe([`ticker.${PERP}`], () => got.push('second'));
    await until(() => got.includes('second'));
    assert.deepEqual(got, ['first', 'second']);

    // public/unsubscribe_all through call(): the channels are not restored by a reconnect.
    await ws.call('public/unsubscribe_all', {});
    got.length = 0;
    const again = reconnected(ws);
    ws.dropConnection();
    await again;
    await ws.call('public/test', {});
    assert.deepEqual(got, []);
    await ws.close();
  });

  test('channels subscribed through call() are resubscribed; private/unsubscribe_all through call() forgets them', async () => {
    const ws = client();
    await ws.connect();
    await ws.auth();
    const snapshots: string[] = [];
    ws.onAnyPush((push) => {
      if (push.snapshot) snapshots.push(push.channel);
    });
    await ws.call('private/subscribe', { channels: [`ticker.${PERP}`, 'user.orders.any.any'] });
    await until(() => snapshots.length === 2);
    snapshots.length = 0;
    let again = reconnected(ws);
    ws.dropConnection();
    await again;
    await until(() => snapshots.length === 2);
    assert.deepEqual(snapshots.sort(), [`ticker.${PERP}`, 'user.orders.any.any']);

    // Unsubscribed through call(): one channel, then all; a reconnect restores neither.
    await ws.call('private/unsubscribe', { channels: ['user.orders.any.any'] });
    await ws.call('private/unsubscribe_all', {});
    snapshots.length = 0;
    again = reconnected(ws);
    ws.dropConnection();
    await again;
    await ws.call('public/test', {});
    assert.deepEqual(snapshots, []);
    await ws.close();
  });

  test('a channel unsubscribed under another spelling is forgotten: a reconnect does not restore it', async () => {
    const ws = client();
    await ws.connect();
    await ws.auth();
    const pushes: SubscriptionPush[] = [];
    ws.onAnyPush((push) => pushes.push(push));
    await ws.subscribe(['user.orders.any.btc']);
    await until(() => pushes.length === 1);
    assert.deepEqual(await ws.unsubscribe(['user.orders.any.BTC']), ['user.orders.any.btc']);
    pushes.length = 0;
    const again = reconnected(ws);
    ws.dropConnection();
    await again;
    // A resubscribe's snapshot would be pushed before the answer to a later call.
    await ws.call('public/test', {});
    assert.deepEqual(pushes, []);
    await ws.close();
  });

  test('cancel-on-disconnect turned off with account scope stays on for this connection across a reconnect', async () => {
    const ws = client();
    await ws.connect();
    await ws.auth();
    await ws.call('private/enable_cancel_on_disconnect', { scope: 'connection' });
    // The account scope turns it off for new connections only, not for the asking one.
    await ws.call('private/disable_cancel_on_disconnect', { scope: 'account' });
    const on = { scope: 'connection', enabled: true };
    assert.deepEqual(await ws.call('private/get_cancel_on_disconnect', {}), on);
    const again = reconnected(ws);
    ws.dropConnection();
    await again;
    assert.deepEqual(await ws.call('private/get_cancel_on_disconnect', {}), on);
    await ws.call('private/disable_cancel_on_disconnect', {});
    await ws.close();
  });

  test('a listener subscribed under another spelling of a held channel gets its pushes', async () => {
    const ws = client();
    await ws.connect();
    await ws.auth();
    const first: SubscriptionPush[] = [];
    const second: SubscriptionPush[] = [];
    await ws.subscribe(['user.orders.future.btc'], (push) => first.push(push));
    await until(() => first.length === 1);
    assert.deepEqual(await ws.subscribe(['user.orders.future.BTC'], (push) => second.push(push)), [
      'user.orders.future.btc',
    ]);
    await running.http(0).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' });
    await until(() => second.length === 1);
    assert.equal(second[0]!.channel, 'user.orders.future.btc');
    assert.equal(first.length, 2);
    // Deribit's interval suffix is another spelling too.
    const third: SubscriptionPush[] = [];
    assert.deepEqual(await ws.subscribe(['user.orders.future.BTC.raw'], (push) => third.push(push)), [
      'user.orders.future.btc',
    ]);
    await running.http(0).call('private/buy', { instrumentName: PERP, quantity: '10', price: '30001' });
    await until(() => third.length === 1);
    assert.equal(third[0]!.channel, 'user.orders.future.btc');
    await ws.close();
  });
});
