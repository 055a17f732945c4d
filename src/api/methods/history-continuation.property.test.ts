/**
 * Property tests of history continuation tokens through the methods that take them
 * (`private/get_order_history_by_currency`, `private/get_user_trades_by_currency` and
 * `_by_instrument`, trading.ts), on both HistoryPorts: the in-memory one (memory-history.ts) and
 * the read store on SQLite (src/store/read):
 * - any string as `continuation` is answered, or refused with a VenueError `invalid_params` whose
 *   `data.field` is `continuation` (by the params schema or by the store), never anything else;
 * - the tokens a page hands out decode on the next call: walking the pages of any set of orders
 *   (any ids the engine may write, any commands and times) sees every order once, newest first.
 *
 * Runs: HISTORY_TOKEN_RUNS (default 150 per property); HISTORY_TOKEN_SEED replays a seed.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { orderView, tradeView } from '../../../test/store/read-store-contract.ts';
import type { CoreEvent } from '../../core/events.ts';
import { VenueError } from '../../domain/errors.ts';
import { Instrument } from '../../domain/instrument.ts';
import { perpetualSpec } from '../../engine/testkit.ts';
import { idNumber } from '../../store/read/history-keyset.ts';
import { SqliteReadDb } from '../../store/read/read-db.ts';
import { ReadStore } from '../../store/read/read-store.ts';
import type { Principal } from '../auth/authenticator.ts';
import { MemoryHistory } from '../memory-history.ts';
import type { CommandPort, HistoryPort, ReadPort } from '../ports.ts';
import { type CallContext, MethodRegistry } from '../registry.ts';
import { registerHistoryMethods } from './history.ts';

const RUNS = Number(process.env.HISTORY_TOKEN_RUNS ?? 150);
const SEED = process.env.HISTORY_TOKEN_SEED ? Number(process.env.HISTORY_TOKEN_SEED) : undefined;
const runs = { numRuns: RUNS, seed: SEED, includeErrorInReport: true };

const NOW = 1_800_000_000_000;
const ACCOUNT = 1;
const INSTRUMENT = 'BTC-PERPETUAL';
const instrument = new Instrument(0, perpetualSpec());
const kindOf = (name: string) => (name === INSTRUMENT ? 'future' : undefined);

const context: CallContext = {
  principal: {
    apiKey: 'k',
    userId: 1,
    accountIds: new Set([ACCOUNT]),
    defaultAccountId: ACCOUNT,
    roles: new Set(['trade']),
    deskName: null,
    rateLimits: null,
  } as unknown as Principal,
  transport: 'http',
  session: null,
  receivedAt: NOW,
};

function registryOver(history: HistoryPort): MethodRegistry {
  const registry = new MethodRegistry();
  registerHistoryMethods(registry, {
    commands: { now: () => NOW } as unknown as CommandPort,
    reads: {
      currencies: () => ['BTC', 'ETH', 'USDC'],
      instrument: (name: string) => (name === INSTRUMENT ? instrument : undefined),
    } as unknown as ReadPort,
    history,
  });
  return registry;
}

/** A call as the dispatcher makes it: the params schema, then the handler. */
async function call(
  registry: MethodRegistry,
  name: string,
  params: Record<string, unknown>,
): Promise<unknown> {
  const method = registry.get(name);
  assert.ok(method !== undefined, name);
  method.validate(params);
  return method.handler(params as never, context);
}

const filled = (orderId: string, lastUpdatedAt: number): CoreEvent => ({
  type: 'order',
  order: orderView({
    orderId,
    accountId: ACCOUNT,
    instrumentName: INSTRUMENT,
    currency: 'BTC',
    orderState: 'filled',
    filledAmount: 10,
    amount: 10,
    price: 120_000,
    lastUpdatedAt,
  }),
});
const traded = (tradeId: string, timestamp: number): CoreEvent => ({
  type: 'trade',
  trade: {
    ...tradeView(tradeId, timestamp, ACCOUNT, 2),
    tradeSeq: 1,
    instrumentName: INSTRUMENT,
    currency: 'BTC',
    price: 120_000,
    amount: 10,
  },
});

const stores: ReadStore[] = [];
after(async () => {
  for (const store of stores) await store.close();
});

async function readStore(): Promise<ReadStore> {
  const store = await ReadStore.open({
    db: new SqliteReadDb(':memory:', { writerThread: false }),
    kindOf: (name) => kindOf(name) ?? null,
  });
  stores.push(store);
  return store;
}

/** Number-ish texts, then ids: what a token is made of, and what it is not. */
const numberish = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom('', ' ', '-1', '+1', '01', '0x1f', '1e3', '1.5', 'Infinity', '9007199254740993', '١'),
);
const idish = fc.oneof(
  fc
    .tuple(fc.constantFrom('BTC-', 'BTC-T', 'BTC-SL-', 'legacy', ''), fc.stringMatching(/^[0-9]{0,18}$/))
    .map(([prefix, n]) => prefix + n),
  fc.string({ maxLength: 12 }),
);
const tokenArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc
    .tuple(numberish, fc.constantFrom(':', '::', ''), idish, fc.constantFrom('', 'M', 'T'))
    .map((p) => p.join('')),
  fc.constantFrom('x'.repeat(129), '1:\u0000', '1:\ud800', '\ud800:1'),
);

const METHODS: readonly [string, Record<string, unknown>][] = [
  ['private/get_order_history_by_currency', { currency: 'BTC', withContinuation: true }],
  ['private/get_order_history_by_instrument', { instrumentName: INSTRUMENT, withContinuation: true }],
  ['private/get_user_trades_by_currency', { currency: 'BTC' }],
  ['private/get_user_trades_by_instrument', { instrumentName: INSTRUMENT }],
];

describe('history continuation through the methods', async () => {
  const memory = new MemoryHistory(kindOf);
  const store = await readStore();
  // A few rows, so that a token is compared with rows (the memory port compares lazily).
  const batch = {
    seq: 1,
    ts: NOW - 60_000,
    events: [filled('BTC-1', NOW - 60_000), filled('BTC-2', NOW - 60_000), traded('BTC-T1', NOW - 60_000)],
  };
  memory.record(batch);
  store.push(batch);
  await store.flush();

  for (const [backend, history] of [
    ['memory', memory],
    ['read store (SQLite)', store],
  ] as const) {
    const registry = registryOver(history);
    test(`${backend}: any continuation is answered or refused as invalid_params naming continuation`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...METHODS), tokenArb, async ([name, params], continuation) => {
          try {
            await call(registry, name, { ...params, continuation });
          } catch (error) {
            const what = `${name} ${JSON.stringify(continuation)}: ${String(error)}`;
            assert.ok(error instanceof VenueError, what);
            assert.equal(error.errorName, 'invalid_params', what);
            assert.equal(error.data?.field, 'continuation', what);
          }
        }),
        runs,
      );
    });
  }

  /** Newest first by `key` (the command's seq), then the number the id ends in, then the id. */
  const newestFirst = (rows: { id: string; seq: number; at: number }[], key: 'seq') =>
    [...rows]
      .sort(
        (a, b) =>
          b[key] - a[key] || idNumber(b.id) - idNumber(a.id) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      )
      .map((r) => r.id);

  const orderId = fc
    .tuple(
      fc.constantFrom('BTC-', 'BTC-SL-', 'BTC-TP-', 'BTC-T', 'legacy', 'a:b-'),
      fc.integer({ min: 0, max: 10 ** 15 - 1 }),
    )
    .map(([prefix, n]) => `${prefix}${n}`);
  /** Commands in journal order: each a time (never going back) and the orders it filled. */
  const commandsArb = fc.array(
    fc.record({
      gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60_000 })),
      ids: fc.uniqueArray(orderId, { minLength: 1, maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 6 },
  );

  /** One history per run, under an account of its own in the shared read store. */
  let account = 100;
  let storeSeq = 10;
  async function walk(
    registry: MethodRegistry,
    accountId: number,
    count: number,
    limit: number,
  ): Promise<string[]> {
    const walked: string[] = [];
    let continuation: string | null = null;
    const caller: CallContext = {
      ...context,
      principal: { ...context.principal!, accountIds: new Set([accountId]), defaultAccountId: accountId },
    };
    for (let pages = 0; pages <= limit; pages++) {
      const method = registry.get('private/get_order_history_by_currency')!;
      const params = {
        currency: 'BTC',
        count,
        withContinuation: true,
        ...(continuation === null ? {} : { continuation }),
      };
      method.validate(params);
      const page = (await method.handler(params as never, caller)) as {
        orders: { orderId: string }[];
        continuation: string | null;
      };
      assert.ok(page.orders.length <= count);
      walked.push(...page.orders.map((o) => o.orderId));
      continuation = page.continuation;
      if (continuation === null) return walked;
    }
    assert.fail(`the walk did not end after ${limit} pages: ${walked.join(' ')}`);
  }

  async function fill(commands: { gapMs: number; ids: string[] }[]) {
    const accountId = ++account;
    const memoryPort = new MemoryHistory(kindOf);
    const rows: { id: string; seq: number; at: number }[] = [];
    const seen = new Set<string>();
    let at = NOW - 20 * 60_000;
    for (const { gapMs, ids } of commands) {
      at += gapMs;
      // An order id is unique over the whole history (an order changes in place).
      const fresh = ids.filter((id) => !seen.has(id));
      if (fresh.length === 0) continue;
      for (const id of fresh) seen.add(id);
      const batch = {
        seq: ++storeSeq,
        ts: at,
        events: fresh.map((id) => {
          const event = filled(id, at);
          return event.type === 'order' ? { ...event, order: { ...event.order, accountId } } : event;
        }),
      };
      memoryPort.record(batch);
      store.push(batch);
      rows.push(...fresh.map((id) => ({ id, seq: batch.seq, at })));
    }
    await store.flush();
    return { accountId, memoryPort, rows };
  }

  test('walking the pages sees every order once, newest first by command', async () => {
    await fc.assert(
      fc.asyncProperty(commandsArb, fc.integer({ min: 1, max: 4 }), async (commands, count) => {
        const { accountId, memoryPort, rows } = await fill(commands);
        assert.deepEqual(
          await walk(registryOver(store), accountId, count, rows.length),
          newestFirst(rows, 'seq'),
        );
        assert.deepEqual(
          await walk(registryOver(memoryPort), accountId, count, rows.length),
          newestFirst(rows, 'seq'),
        );
      }),
      { ...runs, numRuns: Math.max(1, Math.ceil(RUNS / 2)) },
    );
  });

  test('the memory port pages as the read store does', async () => {
    await fc.assert(
      fc.asyncProperty(commandsArb, fc.integer({ min: 1, max: 4 }), async (commands, count) => {
        const { accountId, memoryPort, rows } = await fill(commands);
        assert.deepEqual(
          await walk(registryOver(memoryPort), accountId, count, rows.length),
          await walk(registryOver(store), accountId, count, rows.length),
        );
      }),
      { ...runs, numRuns: Math.max(1, Math.ceil(RUNS / 2)) },
    );
  });
});
