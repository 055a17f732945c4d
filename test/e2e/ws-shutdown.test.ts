/**
 * WebSocket calls during a shutdown, over the real engine and sequencer and real sockets: a call
 * already executed but waiting for the journal when the close starts is answered before the
 * connection closes with 1001; a message that comes after the close started is refused with
 * `unavailable` and not run. (An audit found every call in flight at a SIGTERM executed but cut
 * off with "connection closed": a client that retried placed its order twice.)
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import WebSocket from 'ws';
import { signWs } from '../../sdk/index.ts';
import type { UnstampedCommand } from '../../src/core/commands.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { startEngineVenue } from '../support/engine-venue.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { until } from '../support/until.ts';

const PERP = 'BTC-PERPETUAL';

interface Answer {
  rid?: number;
  result?: { order?: { orderId: string } };
  error?: { code: number; message: string };
}

/** A raw authenticated connection that logs, in order, the answers it gets and its close code. */
async function connection(harness: Harness, now: () => number) {
  const socket = new WebSocket(harness.wsUrl);
  const log: Array<string> = [];
  const answers = new Map<number, Answer>();
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Answer;
    if (typeof message.rid !== 'number') return;
    answers.set(message.rid, message);
    log.push(`answer ${message.rid}`);
  });
  socket.on('close', (code) => log.push(`close ${code}`));
  await new Promise((resolve) => socket.on('open', resolve));
  let rid = 0;
  const send = (method: string, params: object) => {
    const id = ++rid;
    socket.send(JSON.stringify({ rid: id, method, params }));
    return id;
  };
  const answered = async (id: number) => {
    await until(() => answers.has(id));
    return answers.get(id)!;
  };
  const credential = harness.credentials[0]!;
  const timestamp = now();
  const nonce = randomUUID();
  const auth = await answered(
    send('public/auth', {
      apiKey: credential.apiKey,
      timestamp,
      nonce,
      signature: signWs(credential.apiSecret, String(timestamp), nonce),
    }),
  );
  assert.equal(auth.error, undefined, JSON.stringify(auth.error));
  log.length = 0;
  return { socket, log, send, answered };
}

test('shutdown: a WebSocket call waiting for the journal is answered before the 1001 close; a later one is refused, not run', async () => {
  /** Journal appends wait here while `holding`, until released: the command is executed, not durable. */
  const held: Array<{ command: UnstampedCommand; release: () => void }> = [];
  let holding = false;
  const engine = await startEngineVenue(undefined, {}, (entry) =>
    holding
      ? new Promise<void>((release) => held.push({ command: entry.command, release }))
      : Promise.resolve(),
  );
  const harness = await startHarness({ venue: engine, clock: engine.clock });
  try {
    const busy = await connection(harness, () => engine.now());
    const idle = await connection(harness, () => engine.now());
    const openBefore = engine.reads.openOrders(1, {}).length;
    holding = true;
    const buy = busy.send('private/buy', { instrumentName: PERP, quantity: '10', price: '30000' });
    await until(() => held.length === 1);
    assert.equal(engine.reads.openOrders(1, {}).length, openBefore + 1, 'the order is executed');

    const closing = harness.gateway.close();
    // The close has started: what comes now is refused, and not run.
    const late = busy.send('private/buy', { instrumentName: PERP, quantity: '10', price: '30010' });
    const refused = await busy.answered(late);
    assert.equal(refused.error?.code, ERROR_CATALOGUE.unavailable.code);
    assert.match(refused.error!.message, /shutting down: the request was not run/);
    assert.equal(engine.reads.openOrders(1, {}).length, openBefore + 1, 'the refused order did not run');
    // A connection with nothing in flight closes at once.
    await until(() => idle.log.length > 0);
    assert.deepEqual(idle.log, ['close 1001']);

    holding = false;
    for (const { release } of held.splice(0)) release();
    const answer = await busy.answered(buy);
    assert.equal(answer.error, undefined, JSON.stringify(answer.error));
    assert.ok(answer.result?.order?.orderId);
    await closing;
    await until(() => busy.log.includes('close 1001'));
    assert.deepEqual(busy.log, [`answer ${late}`, `answer ${buy}`, 'close 1001']);
  } finally {
    holding = false;
    for (const { release } of held.splice(0)) release();
    await harness.close().catch(() => undefined);
  }
});
