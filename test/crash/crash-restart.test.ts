/**
 * Crash test: the real service runs as a child process (`src/app/main.ts`, simulator off so only
 * our traffic moves the books) on each store configuration (`test/support/service-backends.ts`):
 * SQLite under a temp DATA_DIR, PostgreSQL (DATABASE_URL), and the journal on NATS JetStream with
 * snapshots and read store in PostgreSQL. Concurrent signed HTTP traffic places, edits and cancels
 * orders from two accounts that trade with each other; the child is killed with SIGKILL at a
 * random moment, right after an answer arrived, then:
 *
 * 1. the journal is recovered offline in this process (replayed from seq 1, every hash checkpoint
 *    checked, the snapshots ignored; from the same backend the service used): every acknowledged
 *    order must be there, with its acknowledged terminal state where it had one;
 * 2. the service is restarted: it recovers from its latest snapshot plus the journal after it
 *    (SNAPSHOT_ENV: a cadence of a few hundred commands), and its recovered state hash must equal
 *    the offline replay's, and its book the offline replay's book. Over the cycles at least one
 *    restart must have loaded a snapshot and replayed a tail on top of it;
 * 3. the restarted service's order history (the read store, which lost its unwritten rows in the
 *    crash and is re-fed) holds every order acknowledged closed, in its acknowledged state;
 * 4. combos: two other accounts cross on a call spread and a future spread on the perpetual
 *    (`test/support/crash-combos.ts`; the future spread's first order, which lists it, comes after
 *    the first restart). The restarted service lists every acknowledged combo trade and its leg
 *    trades as they were answered, no combo trade that was neither acknowledged nor in flight at
 *    a kill, and positions on the legs only that are their leg trades' sums and the offline
 *    replay's. Over the cycles a restart must have loaded combo trades from its snapshot and
 *    replayed more in its tail.
 *
 * On NATS only the service is killed; nats-server keeps running, so an acknowledged append must
 * survive (decisions, "What a JetStream ack guarantees": the ack is not an fsync).
 *
 * The kill follows an answer at once, and PostgreSQL runs with fsync on, because a store that
 * answered early loses only the commands answered last, and only while their write is still in the
 * service. Checked by making the PostgreSQL journal answer before its INSERT completed: with fsync
 * off no cycle of nine lost anything; with fsync on, 2 of 9 cycles caught it when killed on a
 * timer, 5 of 9 when killed right after an answer.
 *
 * A restart after SIGKILL refuses requests signed up to the last journaled command's time plus the
 * 15 s window (their nonces were lost; see `src/app/replay-state.ts`). The clients here sign with
 * a clock 14 s ahead, which puts them past that window once the restart has taken a second, so
 * the test needs no waiting; `test/crash/restart-replay.test.ts` covers the refusal itself.
 *
 * CRASH_CYCLES sets the number of kill/restart cycles on SQLite (default 10; the soak mode runs
 * 50); the server backends run 30% of it (3 by default, 15 in the soak) to keep the suite short.
 * A missing PostgreSQL or nats-server skips its backends, except under CI=true, where it fails.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import { HttpClient } from '../../sdk/http-client.ts';
import type { Order } from '../../sdk/types.ts';
import type { DemoCredential } from '../../src/api/bootstrap.ts';
import { createCoreMachine } from '../../src/app/core-factory.ts';
import { stampInPlace } from '../../src/app/sequencer.ts';
import type { CoreMachine, MachineCommand, MachineSnapshot } from '../../src/core/machine.ts';
import { StoreOpenError } from '../../src/store/data-dir-lock.ts';
import type { SnapshotStore } from '../../src/store/journal.ts';
import { openStores, type Stores } from '../../src/store/open-stores.ts';
import { recover } from '../../src/store/recovery.ts';
import {
  ComboLedger,
  type CrashCombos,
  checkComboTraffic,
  chooseCombos,
  driveComboTraffic,
} from '../support/crash-combos.ts';
import { retryWhileHistoryBehind } from '../support/history-retry.ts';
import { type ServiceBackend, startServiceBackends } from '../support/service-backends.ts';
import {
  type ChildRecovery,
  killHard,
  sequence,
  startServiceChild,
  within,
} from '../support/service-child.ts';

const CYCLES = Number(process.env.CRASH_CYCLES ?? 10);
/** Cycles on a backend: fewer on the server backends (see the header). */
const cyclesOn = (backend: ServiceBackend) =>
  backend.storage === 'sqlite' ? CYCLES : Math.max(1, Math.round(CYCLES * 0.3));
const INSTRUMENT = 'BTC-PERPETUAL';
const WORKERS = 6;
/** The demo keys from this index on (two) trade the combos; the first two trade the perpetual. */
const COMBO_KEYS = 2;
/**
 * The service's snapshot cadence here, far below the defaults: the first start journals about
 * 1,500 commands (listing, demo accounts) and a cycle a few hundred, so every restart loads a
 * snapshot (of this run or an earlier one) and replays a tail of up to a few hundred commands,
 * usually with checkpoints in it.
 */
const SNAPSHOT_ENV = {
  SNAPSHOT_EVERY_COMMANDS: '250',
  CHECKPOINT_EVERY_COMMANDS: '100',
  SNAPSHOT_EVERY_MS: '0',
};
/** Signing clock ahead of the service's (inside the 15 s window): see the header. */
const signingClock = () => Date.now() + 14_000;

/**
 * The backend's stores, opened right after the kill. The killed service's PostgreSQL session keeps
 * the journal's writer lock until the statement it was running ends, and nats-server drops its
 * writer responder once it sees the connection close: either can refuse for a few milliseconds
 * (not seen in these runs, but a loaded machine widens the window).
 */
async function openAfterKill(dataDir: string, backend: ServiceBackend): Promise<Stores<MachineCommand>> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      return await openStores<MachineCommand>({ dataDir, ...backend.stores });
    } catch (error) {
      if (!(error instanceof StoreOpenError) || Date.now() > deadline) throw error;
      await delay(50);
    }
  }
}

/**
 * The reference: the backend's journal recovered offline from seq 1, every hash checkpoint in it
 * checked. It ignores the snapshots on purpose: recovering from the service's latest snapshot
 * would only repeat the restart's own computation (same snapshot, same tail, same deterministic
 * core), so equal hashes would prove little. Against the whole journal, the restart's hash (its
 * snapshot + the tail) being equal shows the snapshot is the state the journal leads to. Its
 * snapshot store is an empty one, so it also deletes none of the service's snapshots (recovery
 * discards those ahead of the journal: that is for the restart to do and report).
 */
async function recoverOffline(
  dataDir: string,
  backend: ServiceBackend,
): Promise<{ machine: CoreMachine; comboTradeSeqs: number[] }> {
  const stores = await openAfterKill(dataDir, backend);
  /** The seq of every trade on a combo's book (the trade events with legs). */
  const comboTradeSeqs: number[] = [];
  try {
    const { core, report } = await recover({
      journal: stores.journal,
      snapshots: NO_SNAPSHOTS,
      strict: true,
      createCore: (state) => {
        const machine = createCoreMachine(state as MachineSnapshot | null);
        return {
          machine,
          apply: (entry: { seq: number; ts: number; command: MachineCommand }) => {
            const { engineEvents } = machine.execute(stampInPlace(entry.command, entry));
            for (const event of engineEvents)
              if (event.type === 'trade' && event.trade.legs !== undefined) comboTradeSeqs.push(entry.seq);
          },
          stateHash: () => machine.stateHash(),
        };
      },
    });
    assert.equal(report.ok, true);
    assert.equal(report.snapshotSeq, null);
    return { machine: core.machine, comboTradeSeqs };
  } finally {
    await stores.close();
  }
}

const NO_SNAPSHOTS: SnapshotStore = {
  saveSnapshot: () => Promise.reject(new Error('the offline reference saves no snapshot')),
  latestSnapshot: async () => null,
  listSnapshots: async () => [],
  discardAfter: async () => 0,
  pin: async () => false,
  unpinBefore: async () => 0,
  close: async () => undefined,
};

/**
 * Random order traffic until `stop()`; records the last acknowledged view of every order.
 * `acknowledgment()` resolves when the next answer arrives, in the same tick.
 */
function driveTraffic(clients: HttpClient[], mid: number, seed: number) {
  const acknowledged = new Map<string, Order>();
  let onAcknowledged: (() => void) | null = null;
  const record = (orderId: string, order: Order) => {
    acknowledged.set(orderId, order);
    onAcknowledged?.();
    onAcknowledged = null;
  };
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
          record(result.order.orderId, result.order);
          if (result.order.orderState === 'open') mine.push(result.order.orderId);
        } else if (roll < 0.8) {
          const orderId = mine.splice(Math.floor(next() * mine.length), 1)[0]!;
          record(orderId, await client.call('private/cancel', { orderId }));
        } else {
          const orderId = mine[Math.floor(next() * mine.length)]!;
          const current = acknowledged.get(orderId)!;
          const result = await client.call('private/edit', {
            orderId,
            quantity: String(Number(current.quantity) + 10),
            price: current.price,
          });
          record(orderId, result.order);
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
    acknowledgment: () =>
      new Promise<void>((resolve) => {
        onAcknowledged = resolve;
      }),
    stop: async () => {
      running = false;
      await done;
    },
  };
}

function checkAcknowledged(machine: CoreMachine, acknowledged: ReadonlyMap<string, Order>, at: string): void {
  for (const [orderId, ack] of acknowledged) {
    const order = machine.venue.getOrder(orderId);
    assert.ok(order !== null, `${at}: acknowledged order ${orderId} is missing after the crash`);
    if (ack.orderState === 'cancelled' || ack.orderState === 'filled') {
      assert.equal(order.orderState, ack.orderState, `${at}: order ${orderId} state`);
    }
    const filledLots = Number(ack.filledQuantity) / 10;
    assert.ok(order.filledAmount >= filledLots, `${at}: order ${orderId} lost fills`);
  }
}

/** Every order in the account's history (closed ones included), by id: the state of each. */
async function historyStates(client: HttpClient): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  let continuation: string | null | undefined;
  do {
    const page = await retryWhileHistoryBehind(() =>
      client.call('private/get_order_history_by_currency', {
        currency: 'BTC',
        count: 1000,
        includeUnfilled: true,
        withContinuation: true,
        ...(continuation ? { continuation } : {}),
      }),
    );
    assert.ok(!Array.isArray(page));
    for (const order of page.orders) states.set(order.orderId, order.orderState);
    continuation = page.continuation;
  } while (continuation);
  return states;
}

/** `cycles` kill/restart cycles of the service on `backend`, each checked as the header says. */
async function crashCycles(t: TestContext, backend: ServiceBackend, cycles: number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'crash-'));
  const start = async () => {
    const started = await startServiceChild(dataDir, { ...backend.env, ...SNAPSHOT_ENV });
    if (started.storage !== backend.storage || started.journal !== backend.journal) {
      await killHard(started.process);
      assert.fail(`the service runs on ${started.storage}/${started.journal}, not on ${backend.name}`);
    }
    return started;
  };
  let seed = 42;
  let child = await start();
  const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as DemoCredential[];
  /** Signed clients of the first `count` demo credentials from `offset` on the running child. */
  const clientsOf = (offset: number) =>
    [offset, offset + 1].map(
      (index) =>
        new HttpClient({
          baseUrl: `http://127.0.0.1:${child.port}`,
          credentials: { apiKey: credentials[index]!.apiKey, apiSecret: credentials[index]!.apiSecret },
          now: signingClock,
        }),
    ) as [HttpClient, HttpClient];
  /** The combo accounts (the third and fourth keys' default accounts) trade combos only. */
  const comboAccounts = [
    credentials[COMBO_KEYS]!.accountIds[0]!,
    credentials[COMBO_KEYS + 1]!.accountIds[0]!,
  ];
  const combos = await chooseCombos(clientsOf(0)[0], Date.now());
  const comboLedger = new ComboLedger();
  let totalAcknowledged = 0;
  const recoveries: ChildRecovery[] = [];
  /** Per restart: combo trades in the snapshot it loaded, and in the tail it replayed on top. */
  const comboTradesAround: { inSnapshot: number; inTail: number }[] = [];
  const began = performance.now();
  try {
    for (let cycle = 1; cycle <= cycles; cycle++) {
      const cycleBegan = performance.now();
      const clients = clientsOf(0);
      const ticker = await clients[0]!.call('public/ticker', { instrumentName: INSTRUMENT });
      const mid = Math.round(Number(ticker.markPrice));
      const trafficSeed = seed++;
      /** Names the run in failures (the seed drives the traffic's choices and the kill delay). */
      const at = `${backend.name} cycle ${cycle} (seed ${trafficSeed})`;
      const traffic = driveTraffic(clients, mid, trafficSeed);
      // The future spread's first use (its listing) follows a restart when there is one.
      const comboTraffic = driveComboTraffic(clientsOf(COMBO_KEYS), combos, comboLedger, {
        cycle,
        seed: trafficSeed,
        withFutureSpread: cycle > 1 || cycles === 1,
      });
      await delay(800 + ((seed * 7919) % 1200));
      if (cycle === 2) {
        // One restart must load combo trades from its snapshot (cycle 1's are in the journal) and
        // replay more after it, however slowly the machine snapshots: wait for such a snapshot,
        // then for one more combo trade.
        const seq = await sequence(child.port);
        await within(child.snapshotSaved(seq), 30_000, `a snapshot at seq ${seq} or later`);
        const before = comboTraffic.traded;
        const deadline = Date.now() + 15_000;
        while (comboTraffic.traded === before && Date.now() < deadline) await delay(50);
      }
      // Right after an answer: a store that answered early loses the commands answered last.
      await Promise.race([traffic.acknowledgment(), delay(5_000)]);
      await killHard(child.process);
      await Promise.all([traffic.stop(), comboTraffic.stop()]);
      totalAcknowledged += traffic.acknowledged.size;

      const { machine: reference, comboTradeSeqs } = await recoverOffline(dataDir, backend);
      checkAcknowledged(reference, traffic.acknowledged, at);
      const retiredComboOrders = checkComboOrders(reference, comboLedger, combos, at);
      reference.venue.validate();

      child = await start();
      assert.equal(child.recoveredHash, reference.stateHash(), `${at}: restart hash = offline replay hash`);
      const recovery = child.recovery!;
      recoveries.push(recovery);
      const snapshotSeq = recovery.snapshotSeq ?? 0;
      comboTradesAround.push({
        inSnapshot: comboTradeSeqs.filter((seq) => seq <= snapshotSeq).length,
        inTail: comboTradeSeqs.filter((seq) => seq > snapshotSeq).length,
      });
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
        `${at}: bids`,
      );
      assert.deepEqual(
        live.asks.map((level) => Number(level[1])),
        expected.asks.map((level) => level.amount * 10),
        `${at}: asks`,
      );
      const restarted = clientsOf(0);
      const history = new Map<string, string>();
      for (const client of restarted)
        for (const [id, state] of await historyStates(client)) history.set(id, state);
      for (const [orderId, ack] of traffic.acknowledged) {
        if (ack.orderState !== 'cancelled' && ack.orderState !== 'filled') continue;
        assert.equal(history.get(orderId), ack.orderState, `${at}: order ${orderId} in the history`);
      }

      // The combos: still listed, their trades and the leg positions as acknowledged.
      const comboClients = clientsOf(COMBO_KEYS);
      const view = await checkComboTraffic(comboClients, combos, comboLedger, at);
      for (const [index, accountId] of comboAccounts.entries()) {
        const held = new Map(
          reference.venue.positions(accountId).map((position) => [position.instrumentName, position.size]),
        );
        assert.deepEqual(
          view.positions[index],
          held,
          `${at}: account ${accountId}'s positions = offline replay's`,
        );
      }
      const used = new Set([...comboLedger.trades.values()].map(({ trade }) => trade.instrumentName));
      for (const combo of [combos.callSpread, combos.futureSpread].filter((c) => used.has(c.name))) {
        const listed = await comboClients[0].call('public/get_instruments', {
          currency: 'BTC',
          kind: combo.kind,
        });
        assert.ok(
          listed.some((instrument) => instrument.instrumentName === combo.name),
          `${at}: ${combo.name} is listed after the restart`,
        );
      }
      const comboHistory = new Map<string, string>();
      for (const client of comboClients)
        for (const [id, state] of await historyStates(client)) comboHistory.set(id, state);
      for (const orderId of retiredComboOrders)
        assert.ok(comboHistory.has(orderId), `${at}: combo order ${orderId}, closed since, in the history`);
      for (const [orderId, ack] of comboLedger.orders) {
        if (ack.orderState !== 'cancelled' && ack.orderState !== 'filled') continue;
        assert.equal(
          comboHistory.get(orderId),
          ack.orderState,
          `${at}: combo order ${orderId} in the history`,
        );
      }
      t.diagnostic(
        `${at}: ${traffic.acknowledged.size} orders acknowledged before SIGKILL, ${comboTraffic.traded} combo trades in ${comboTraffic.rounds} combo rounds${comboTraffic.refused.length === 0 ? '' : ` (refused: ${comboTraffic.refused.join('; ')})`}; restart from snapshot ${recovery.snapshotSeq} + ${recovery.replayed} replayed to seq ${recovery.lastSeq}, ${recovery.checkpointsVerified} checkpoints checked, combo trades ${comboTradesAround.at(-1)!.inSnapshot} in the snapshot and ${comboTradesAround.at(-1)!.inTail} in the tail; cycle took ${seconds(performance.now() - cycleBegan)}`,
      );
    }
    assert.ok(totalAcknowledged > cycles * 5, `enough traffic was acknowledged (${totalAcknowledged})`);
    // The comparison above covered a restart from a snapshot, not only replays from seq 1.
    assert.ok(
      recoveries.some((r) => r.snapshotSeq !== null && r.snapshotSeq > 0 && r.replayed > 0),
      `a restart recovered from a snapshot plus a tail: ${JSON.stringify(recoveries)}`,
    );
    // Both combos traded, and (over several cycles) a restart loaded combo trades from its
    // snapshot and replayed more on top of it.
    const traded = new Set([...comboLedger.trades.values()].map(({ trade }) => trade.instrumentName));
    assert.deepEqual(
      [...traded].sort(),
      [combos.callSpread.name, combos.futureSpread.name].sort(),
      'both combos traded',
    );
    if (cycles > 1)
      assert.ok(
        comboTradesAround.some((around) => around.inSnapshot > 0 && around.inTail > 0),
        `a restart had combo trades in its snapshot and in its tail: ${JSON.stringify(comboTradesAround)}`,
      );
    t.diagnostic(
      `${backend.name}: ${cycles} cycles took ${seconds(performance.now() - began)}, ${comboLedger.trades.size} combo trades acknowledged`,
    );
  } finally {
    await killHard(child.process).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Every acknowledged combo order is in the replay, in its acknowledged terminal state, its fills
 * kept. The ledger spans every cycle and the engine keeps only its newest closed orders
 * (`recentClosedOrders`, 10,000), so an order may have closed and left the replay's memory since:
 * those are returned, to be found in the order history after the restart instead.
 */
function checkComboOrders(
  machine: CoreMachine,
  ledger: ComboLedger,
  combos: CrashCombos,
  at: string,
): string[] {
  const lots = new Map([combos.callSpread, combos.futureSpread].map((combo) => [combo.name, combo.lot]));
  const retired: string[] = [];
  for (const [orderId, ack] of ledger.orders) {
    const order = machine.venue.getOrder(orderId);
    if (order === null && machine.venue.closedOrderCount() >= machine.venue.config.recentClosedOrders) {
      retired.push(orderId);
      continue;
    }
    assert.ok(order !== null, `${at}: acknowledged combo order ${orderId} is missing after the crash`);
    if (ack.orderState === 'cancelled' || ack.orderState === 'filled')
      assert.equal(order.orderState, ack.orderState, `${at}: combo order ${orderId} state`);
    const filledLots = Math.round(Number(ack.filledQuantity) / lots.get(ack.instrumentName)!);
    assert.ok(order.filledAmount >= filledLots, `${at}: combo order ${orderId} lost fills`);
  }
  return retired;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const backends = await startServiceBackends();
after(() => backends.stop());

for (const backend of backends.all) {
  const cycles = cyclesOn(backend);
  test(
    `on ${backend.name} the service loses nothing acknowledged across ${cycles} SIGKILL/restart cycles`,
    {
      skip: backend.missing ?? false,
      timeout: 900_000,
    },
    (t) => crashCycles(t, backend, cycles),
  );
}
