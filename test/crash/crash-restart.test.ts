/**
 * Crash test: the real service runs as a child process (`src/app/main.ts`, SQLite under a temp
 * DATA_DIR, simulator off so only our traffic moves the books); concurrent signed HTTP traffic
 * places, edits and cancels orders from two accounts that trade with each other; the child is
 * killed with SIGKILL at a random moment, then:
 *
 * 1. the data directory is recovered offline in this process (snapshot + journal replay): every
 *    acknowledged order must be there, with its acknowledged terminal state where it had one;
 * 2. the service is restarted: its recovered state hash must equal the offline replay's, and its
 *    book must equal the offline replay's book;
 * 3. the restarted service's order history (the read store, which lost its unwritten rows in the
 *    crash and is re-fed) holds every order acknowledged closed, in its acknowledged state.
 *
 * A restart after SIGKILL refuses requests signed up to the last journaled command's time plus the
 * 15 s window (their nonces were lost; see `src/app/replay-state.ts`). The clients here sign with
 * a clock 14 s ahead, which puts them past that window once the restart has taken a second, so
 * the test needs no waiting; `test/crash/restart-replay.test.ts` covers the refusal itself.
 *
 * CRASH_CYCLES sets the number of kill/restart cycles (default 10; the soak mode runs 50).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import type { Order } from '../../sdk/types.ts';
import type { DemoCredential } from '../../src/api/bootstrap.ts';
import { createCoreMachine } from '../../src/app/core-factory.ts';
import { stampInPlace } from '../../src/app/sequencer.ts';
import type { CoreMachine, MachineCommand, MachineSnapshot } from '../../src/core/machine.ts';
import { openStores } from '../../src/store/open-stores.ts';
import { recover } from '../../src/store/recovery.ts';
import { killHard, startServiceChild } from '../support/service-child.ts';

const CYCLES = Number(process.env.CRASH_CYCLES ?? 10);
const INSTRUMENT = 'BTC-PERPETUAL';
const WORKERS = 6;
/** Signing clock ahead of the service's (inside the 15 s window): see the header. */
const signingClock = () => Date.now() + 14_000;

/** The reference: the data directory recovered offline, as a fresh process would. */
async function recoverOffline(dataDir: string): Promise<CoreMachine> {
  const stores = await openStores<MachineCommand>({ dataDir, databaseUrl: null });
  const { journal, snapshots } = stores;
  try {
    const { core, report } = await recover({
      journal,
      snapshots,
      strict: true,
      createCore: (state) => {
        const machine = createCoreMachine(state as MachineSnapshot | null);
        return {
          machine,
          apply: (entry: { seq: number; ts: number; command: MachineCommand }) =>
            void machine.execute(stampInPlace(entry.command, entry)),
          stateHash: () => machine.stateHash(),
        };
      },
    });
    assert.equal(report.ok, true);
    return core.machine;
  } finally {
    await stores.close();
  }
}

/** Random order traffic until `stop()`; records the last acknowledged view of every order. */
function driveTraffic(clients: HttpClient[], mid: number, seed: number) {
  const acknowledged = new Map<string, Order>();
  let running = true;
  let random = seed;
  const next = () => {
    random = (random * 1_103_515_245 + 12_345) % 2_147_483_648;
    return random / 2_147_483_648;
  };
  const worker = async (index: number) => {
    const client = clients[index % clients.length]!;
    const mine: string[] = [];
    while (running) {
      const roll = next();
      try {
        if (roll < 0.55 || mine.length === 0) {
          const side = next() < 0.5 ? 'buy' : 'sell';
          const offset = Math.round((next() - 0.5) * 40) * 0.5;
          const result = await client.call(side === 'buy' ? 'private/buy' : 'private/sell', {
            instrumentName: INSTRUMENT,
            quantity: String(10 * (1 + Math.floor(next() * 5))),
            price: String(mid + offset),
          });
          acknowledged.set(result.order.orderId, result.order);
          if (result.order.orderState === 'open') mine.push(result.order.orderId);
        } else if (roll < 0.8) {
          const orderId = mine.splice(Math.floor(next() * mine.length), 1)[0]!;
          acknowledged.set(orderId, await client.call('private/cancel', { orderId }));
        } else {
          const orderId = mine[Math.floor(next() * mine.length)]!;
          const current = acknowledged.get(orderId)!;
          const result = await client.call('private/edit', {
            orderId,
            quantity: String(Number(current.quantity) + 10),
            price: current.price,
          });
          acknowledged.set(orderId, result.order);
        }
      } catch (error) {
        // Refusals (an order filled meanwhile, funds) are answers; a dead server ends the loop.
        if (!(error instanceof ApiError)) return;
      }
    }
  };
  const done = Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i)));
  return {
    acknowledged,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

function checkAcknowledged(machine: CoreMachine, acknowledged: ReadonlyMap<string, Order>): void {
  for (const [orderId, ack] of acknowledged) {
    const order = machine.venue.getOrder(orderId);
    assert.ok(order !== null, `acknowledged order ${orderId} is missing after the crash`);
    if (ack.orderState === 'cancelled' || ack.orderState === 'filled') {
      assert.equal(order.orderState, ack.orderState, `order ${orderId} state`);
    }
    const filledLots = Number(ack.filledQuantity) / 10;
    assert.ok(order.filledAmount >= filledLots, `order ${orderId} lost fills`);
  }
}

/** Every order in the account's history (closed ones included), by id: the state of each. */
async function historyStates(client: HttpClient): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  let continuation: string | null | undefined;
  do {
    const page = await client.call('private/get_order_history_by_currency', {
      currency: 'BTC',
      count: 1000,
      includeUnfilled: true,
      withContinuation: true,
      ...(continuation ? { continuation } : {}),
    });
    assert.ok(!Array.isArray(page));
    for (const order of page.orders) states.set(order.orderId, order.orderState);
    continuation = page.continuation;
  } while (continuation);
  return states;
}

test(`the service loses nothing acknowledged across ${CYCLES} SIGKILL/restart cycles`, {
  timeout: 900_000,
}, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'crash-'));
  let seed = 42;
  let child = await startServiceChild(dataDir);
  const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as DemoCredential[];
  let totalAcknowledged = 0;
  try {
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const baseUrl = `http://127.0.0.1:${child.port}`;
      const clients = [0, 1].map(
        (index) =>
          new HttpClient({
            baseUrl,
            credentials: { apiKey: credentials[index]!.apiKey, apiSecret: credentials[index]!.apiSecret },
            now: signingClock,
          }),
      );
      const ticker = await clients[0]!.call('public/ticker', { instrumentName: INSTRUMENT });
      const mid = Math.round(Number(ticker.markPrice));
      const traffic = driveTraffic(clients, mid, seed++);
      await new Promise((resolve) => setTimeout(resolve, 800 + ((seed * 7919) % 1200)));
      await killHard(child.process);
      await traffic.stop();
      totalAcknowledged += traffic.acknowledged.size;
      t.diagnostic(`cycle ${cycle}: ${traffic.acknowledged.size} orders acknowledged before SIGKILL`);

      const reference = await recoverOffline(dataDir);
      checkAcknowledged(reference, traffic.acknowledged);
      reference.venue.validate();

      child = await startServiceChild(dataDir);
      assert.equal(
        child.recoveredHash,
        reference.stateHash(),
        `cycle ${cycle}: restart hash = offline replay hash`,
      );
      const book = await clients[0]!
        .call('public/get_order_book', { instrumentName: INSTRUMENT, depth: 1000 })
        .catch(() => null);
      const live = await new HttpClient({ baseUrl: `http://127.0.0.1:${child.port}` }).call(
        'public/get_order_book',
        {
          instrumentName: INSTRUMENT,
          depth: 1000,
        },
      );
      assert.equal(book, null, 'the killed server no longer answers');
      const expected = reference.venue.book(INSTRUMENT, 1000)!;
      assert.deepEqual(
        live.bids.map((level) => Number(level[1])),
        expected.bids.map((level) => level.amount * 10),
        `cycle ${cycle}: bids`,
      );
      assert.deepEqual(
        live.asks.map((level) => Number(level[1])),
        expected.asks.map((level) => level.amount * 10),
        `cycle ${cycle}: asks`,
      );
      const restarted = credentials.slice(0, 2).map(
        (credential) =>
          new HttpClient({
            baseUrl: `http://127.0.0.1:${child.port}`,
            credentials: { apiKey: credential.apiKey, apiSecret: credential.apiSecret },
            now: signingClock,
          }),
      );
      const history = new Map<string, string>();
      for (const client of restarted)
        for (const [id, state] of await historyStates(client)) history.set(id, state);
      for (const [orderId, ack] of traffic.acknowledged) {
        if (ack.orderState !== 'cancelled' && ack.orderState !== 'filled') continue;
        assert.equal(history.get(orderId), ack.orderState, `cycle ${cycle}: order ${orderId} in the history`);
      }
    }
    assert.ok(totalAcknowledged > CYCLES * 5, `enough traffic was acknowledged (${totalAcknowledged})`);
  } finally {
    await killHard(child.process).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
});
