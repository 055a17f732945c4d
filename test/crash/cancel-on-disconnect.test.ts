/**
 * Cancel-on-disconnect across a crash: the service is SIGKILLed while a WebSocket connection with
 * cancel-on-disconnect has resting orders. No session can run then, so the restarted service
 * cancels exactly that connection's orders (cancelReason `cancel_on_disconnect`, in state and in
 * order history) before it serves; the orders of another connection of the same key without it,
 * and of HTTP, stay open. The service snapshots after every command here, and is killed once a
 * snapshot holds the sessions' orders: the restart finds the sessions in the snapshot it loads,
 * not by replaying the commands that opened them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { HttpClient } from '../../sdk/http-client.ts';
import type { Order } from '../../sdk/types.ts';
import { WsClient } from '../../sdk/ws-client.ts';
import type { DemoCredential } from '../../src/api/bootstrap.ts';
import { retryWhileHistoryBehind } from '../support/history-retry.ts';
import {
  killHard,
  type ServiceChild,
  sequence,
  startServiceChild,
  within,
} from '../support/service-child.ts';

const PERP = 'BTC-PERPETUAL';
/** A snapshot after every command (one at a time: those due while one is written are skipped). */
const SNAPSHOT_ENV = { SNAPSHOT_EVERY_COMMANDS: '1' };

test('after SIGKILL the restart cancels the orders of connections with cancel-on-disconnect, and only those', {
  timeout: 180_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cod-crash-'));
  let child: ServiceChild = await startServiceChild(dataDir, SNAPSHOT_ENV);
  const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as DemoCredential[];
  const credential = { apiKey: credentials[0]!.apiKey, apiSecret: credentials[0]!.apiSecret };
  const ws = () =>
    new WsClient({ url: `ws://127.0.0.1:${child.port}/ws`, credentials: credential, reconnect: false });
  const sockets: WsClient[] = [];
  try {
    const withCod = ws();
    const without = ws();
    sockets.push(withCod, without);
    for (const client of sockets) {
      await client.connect();
      await client.auth();
    }
    const buy = async (client: Pick<WsClient, 'call'>, price: string, more: object = {}) =>
      (await client.call('private/buy', { instrumentName: PERP, quantity: '10', price, ...more })).order;

    // Placed before cancel-on-disconnect is turned on: the connection's all the same.
    const early = await buy(withCod, '40000');
    assert.equal(await withCod.call('private/enable_cancel_on_disconnect', { scope: 'connection' }), 'ok');
    const late = await buy(withCod, '40010');
    const oto = await buy(withCod, '40020', {
      linkedOrderType: 'one_triggers_other',
      otocoConfig: [{ side: 'sell', quantity: '10', price: '90000' }],
    });
    const secondary = oto.otoOrderIds![0]!;
    const codSeq = await sequence(child.port);
    const otherConnection = await buy(without, '40030');
    const http = new HttpClient({ baseUrl: `http://127.0.0.1:${child.port}`, credentials: credential });
    const overHttp = (
      await http.call('private/buy', { instrumentName: PERP, quantity: '10', price: '40040' })
    ).order;
    const cod = [early.orderId, late.orderId, oto.orderId, secondary];
    const kept = [otherConnection.orderId, overHttp.orderId];

    // The market journals its prices every second or so, so a snapshot at codSeq or later comes.
    await within(child.snapshotSaved(codSeq), 30_000, `a snapshot at seq ${codSeq} or later`);
    await killHard(child.process);
    child = await startServiceChild(dataDir, SNAPSHOT_ENV);
    const recovered = child.recovery!;
    assert.ok(
      recovered.snapshotSeq !== null && recovered.snapshotSeq >= codSeq,
      `recovered from a snapshot holding the sessions (at ${codSeq} or later): ${JSON.stringify(recovered)}`,
    );
    const client = await clientAfterCrash(child.port, credential);

    for (const orderId of cod) {
      const order = await client.call('private/get_order_state', { orderId });
      assert.equal(order.orderState, 'cancelled', orderId);
      assert.equal(order.cancelReason, 'cancel_on_disconnect', orderId);
    }
    for (const orderId of kept) {
      const order = await client.call('private/get_order_state', { orderId });
      assert.equal(order.orderState, 'open', orderId);
    }
    const open = (await client.call('private/get_open_orders', {})).map((o) => o.orderId);
    assert.deepEqual(open.sort(), [...kept].sort());

    const history = await retryWhileHistoryBehind(() =>
      client.call('private/get_order_history_by_currency', {
        currency: 'BTC',
        includeUnfilled: true,
        count: 100,
      }),
    );
    const orders = (Array.isArray(history) ? history : (history as { orders: Order[] }).orders) as Order[];
    for (const orderId of cod) {
      const order = orders.find((o) => o.orderId === orderId);
      assert.ok(order !== undefined, `${orderId} in order history`);
      assert.equal(order.orderState, 'cancelled', orderId);
      assert.equal(order.cancelReason, 'cancel_on_disconnect', orderId);
    }
    for (const orderId of kept) {
      assert.ok(!orders.some((o) => o.orderId === orderId && o.orderState === 'cancelled'), orderId);
    }
  } finally {
    for (const socket of sockets) await socket.close().catch(() => {});
    await killHard(child.process);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * After a crash, requests signed up to 15 s after the last journaled command are refused
 * (`unavailable`, with `signedNotAfter`); the sdk signs a refused first sending again past that
 * time (sdk/http-client.ts), so the client needs nothing special.
 */
async function clientAfterCrash(
  port: number,
  credentials: { apiKey: string; apiSecret: string },
): Promise<HttpClient> {
  const client = new HttpClient({ baseUrl: `http://127.0.0.1:${port}`, credentials });
  await client.call('private/get_open_orders', {});
  return client;
}
