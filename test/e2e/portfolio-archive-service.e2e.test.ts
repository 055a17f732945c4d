/**
 * Finished portfolios pruned from the core 7 days after they ended (FINISHED_RETENTION_MS,
 * src/algo/machine.ts), through the whole in-process service (test/support/service-harness.ts)
 * on a virtual clock, driven through the sdk's typed portfolio calls: `info` answers alike before
 * and after the prune, and after restarts (from the read store, `portfolioArchive`, as
 * src/app/service.ts wires it); `cancel` refuses a pruned one as finished; another user's key
 * does not see it; new portfolios never reuse a pruned id; cancel-all and the order listings
 * neither fail on nor bring back a pruned one. There is no portfolio listing route: the read
 * store's `portfolioHistory` is checked directly.
 *
 * Restarts: one before the prune (the snapshot at the stop holds them; the restored core prunes
 * them when their time comes), one from the snapshot taken after the prune (only the read store
 * knows them), and one from the snapshot before the prune with the journal replayed over it.
 *
 * Time: the market loop schedules its next tick only once the last one is done, so a 7-day jump
 * of the virtual clock fires one tick on the way (which lists the week's new expiries), not
 * 604,800. The simulator is off (prices and expiries still run): the books hold only this test's
 * orders.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ApiError } from '../../sdk/errors.ts';
import type { HttpClient } from '../../sdk/http-client.ts';
import type { PortfolioInfo, SubmitPortfolioBody } from '../../sdk/types.ts';
import { FINISHED_RETENTION_MS, type PortfolioMachine } from '../../src/algo/machine.ts';
import { PORTFOLIOS } from '../../src/app/core-factory.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { portfolioHistory } from '../../src/store/read/portfolio-queries.ts';
import { SqliteSnapshotStore } from '../../src/store/sqlite/sqlite-snapshots.ts';
import { startTestService, type TestService, type TestServiceOptions } from '../support/service-harness.ts';

const PERP = 'BTC-PERPETUAL';
/** Demo credentials (src/api/bootstrap.ts): 0 taker, 1 maker1, 2 maker2, 3 multi (two accounts). */
const MAKER = 1;
const OTHER = 2;
const USER = 3;

/**
 * No periodic snapshots (a clean stop still takes one, so each restart has one at its stop), and a
 * state-hash checkpoint every 10 commands, which a replay of the journal checks. The snapshots and
 * the read store are written inline (`snapshotReplica` off): a replica thread on each of the
 * three restarts would double the test's time (it passes with the replica too).
 */
const OPTIONS = {
  config: { simulator: false, snapshotReplica: false },
  snapshotPolicy: { everyCommands: 0, everyMs: 0, checkpointEveryCommands: 10 },
} satisfies TestServiceOptions;

const refusedWith = (name: keyof typeof ERROR_CATALOGUE) => (error: unknown) =>
  error instanceof ApiError && error.code === ERROR_CATALOGUE[name].code;

/** Waits until the market tick under way (if any) has submitted and every command is durable. */
async function settle(running: TestService): Promise<void> {
  await running.service.market.idle();
  await running.service.core.drain();
}

/**
 * Moves the virtual clock to `at` (one market tick on the way), then a second on: a tick whose
 * commands are all stamped at or after `at`.
 */
async function moveTo(running: TestService, at: number): Promise<void> {
  running.clock.set(at);
  await settle(running);
  running.clock.advance(1_000);
  await settle(running);
}

function algos(running: TestService): PortfolioMachine {
  return running.service.core.machine.sub<PortfolioMachine>(PORTFOLIOS);
}

function commonBuy(accountId: number, quantity: string, price: string): SubmitPortfolioBody {
  return {
    accountId,
    portfolioType: 'COMMON',
    strategy: 'Custom',
    legs: [
      {
        instrument: PERP,
        instrumentType: 'PERPETUAL',
        side: 1,
        quantity,
        priceOptions: { priceType: 'LIMIT', price, priceIn: 'USD' },
      },
    ],
  };
}

/** The final record the read store keeps for a pruned portfolio (null while the core holds it). */
async function storedRecord(running: TestService, portfolioId: number): Promise<unknown> {
  await running.service.readStore.flush();
  const rows = await running.service.readStore.query<{ state: string | null }>(
    'SELECT state FROM portfolios WHERE portfolio_id = ?',
    [portfolioId],
  );
  assert.equal(rows.length, 1, `a row for portfolio ${portfolioId}`);
  return rows[0]!.state === null ? null : JSON.parse(rows[0]!.state);
}

describe('finished portfolios pruned from the core, through the whole service', () => {
  let running: TestService;
  let user: HttpClient;
  let accountId: number;
  let mirrorAccountId: number;
  /** A COMMON limit buy that filled against a resting maker order. */
  let filled: number;
  /** A COMMON limit buy that rested and was cancelled, and its mirror (cancelled with it). */
  let cancelled: number;
  let mirror: number;
  /** Each pruned portfolio's info as it answered before the prune. */
  const infos = new Map<number, PortfolioInfo>();
  /** Each pruned portfolio's final record as the read store took it at the prune. */
  const records = new Map<number, unknown>();
  let childOrderId: string;
  /** The highest portfolio id handed out so far. */
  let highestId = 0;
  let lowPrice: string;
  /** The seq of the snapshot taken at the stop before the prune. */
  let snapshotBeforePrune = 0;

  const pruned = () => [filled, cancelled, mirror];
  const submit = async (body: SubmitPortfolioBody) => (await user.submitPortfolio(body)).portfolioId;

  async function assertInfosAlike(message: string): Promise<void> {
    for (const portfolioId of pruned()) {
      assert.deepEqual(
        await user.portfolioInfo(portfolioId),
        infos.get(portfolioId),
        `${message}: info of ${portfolioId}`,
      );
    }
  }

  function assertNotInCore(message: string): void {
    for (const portfolioId of pruned()) {
      assert.equal(
        algos(running).portfolio(portfolioId),
        undefined,
        `${message}: ${portfolioId} in the core`,
      );
    }
    assert.ok(
      algos(running)
        .snapshot()
        .portfolios.every((portfolio) => !pruned().includes(portfolio.id)),
      `${message}: in the core's snapshot`,
    );
  }

  before(async () => {
    running = await startTestService(OPTIONS);
    running.clock.advance(1_000);
    await settle(running);
    user = running.http(USER);
    [accountId, mirrorAccountId] = running.credentials[USER]!.accountIds as [number, number];
  });
  after(async () => {
    await running.close();
  });

  test('a filled and a cancelled portfolio answer info alike before and after the 7-day prune', async () => {
    const ticker = await running.http(MAKER).call('public/ticker', { instrumentName: PERP });
    const mark = Number(ticker.markPrice);
    const price = String(Math.round(mark / 100) * 100);
    lowPrice = String(Math.round(mark / 200) * 100);
    await running.http(MAKER).call('private/sell', {
      instrumentName: PERP,
      quantity: '100',
      price,
      postOnly: true,
      label: 'maker',
    });
    filled = await submit(commonBuy(accountId, '100', price));
    const filledInfo = await user.portfolioInfo(filled);
    assert.equal(filledInfo.portfolioStatus, 'COMPLETED', JSON.stringify(filledInfo));
    assert.equal(filledInfo.legs[0]!.filledQuantity, '100');
    childOrderId = filledInfo.childOrders[0]!.orderId;

    cancelled = await submit({
      ...commonBuy(accountId, '100', lowPrice),
      sendToDummyAccountIds: [mirrorAccountId],
    });
    const working = await user.portfolioInfo(cancelled);
    assert.equal(working.portfolioStatus, 'WORKING');
    assert.equal(working.mirrorPortfolioIds.length, 1);
    mirror = working.mirrorPortfolioIds[0]!;
    // Cancelling the original cancels its mirror too (cancel follows the links).
    await user.cancelPortfolio({ portfolioId: cancelled, accountId });
    await settle(running);
    for (const portfolioId of pruned()) infos.set(portfolioId, await user.portfolioInfo(portfolioId));
    assert.equal(infos.get(cancelled)!.portfolioStatus, 'CANCELLED');
    assert.equal(infos.get(mirror)!.portfolioStatus, 'CANCELLED');
    assert.equal(infos.get(mirror)!.linkedPortfolioId, cancelled);
    highestId = Math.max(...pruned());
    for (const portfolioId of pruned()) {
      assert.equal(
        await storedRecord(running, portfolioId),
        null,
        'no record stored while the core holds it',
      );
    }

    // A restart before the prune: the snapshot taken at the stop holds them.
    const lastSeq = running.service.core.sequence;
    running = await running.restart();
    user = running.http(USER);
    assert.equal(running.service.recovery.snapshotSeq, lastSeq);
    snapshotBeforePrune = lastSeq;
    await assertInfosAlike('restored before the prune');

    const endedAt = Math.max(...pruned().map((portfolioId) => infos.get(portfolioId)!.endTimestamp!));
    // Two seconds short of the 7 days: still held, and answered alike.
    await moveTo(running, endedAt + FINISHED_RETENTION_MS - 2_000);
    for (const portfolioId of pruned()) {
      assert.notEqual(
        algos(running).portfolio(portfolioId),
        undefined,
        `held until its 7 days: ${portfolioId}`,
      );
    }
    await assertInfosAlike('before the prune');

    await moveTo(running, endedAt + FINISHED_RETENTION_MS);
    assertNotInCore('pruned');
    await assertInfosAlike('after the prune');
    for (const portfolioId of pruned()) {
      const record = await storedRecord(running, portfolioId);
      assert.notEqual(record, null, `the final record of ${portfolioId} is in the read store`);
      // The record the core let go of (kept in memory for reads until the store has it).
      assert.deepEqual(record, structuredClone(algos(running).prunedPortfolio(portfolioId)));
      records.set(portfolioId, record);
    }
  });

  test('after the prune: cancel is refused as finished, another user cannot see them', async () => {
    await assertRefusals();
  });

  test('after the prune: a new portfolio gets a fresh id', async () => {
    const fresh = await submit(commonBuy(accountId, '100', lowPrice));
    assert.ok(fresh > highestId, `${fresh} after ${highestId}`);
    highestId = fresh;
    assert.equal((await user.portfolioInfo(fresh)).portfolioStatus, 'WORKING');
    // Cancel-all cancels the live one only.
    assert.deepEqual(await user.cancelAllPortfolios({ accountId }), { portfolioIds: [fresh] });
    assert.equal((await user.portfolioInfo(fresh)).portfolioStatus, 'CANCELLED');
    assertNotInCore('after a cancel-all');
    await assertInfosAlike('after a cancel-all');
  });

  test('after the prune: cancel-all and the order listings neither fail on nor bring back a pruned one', async () => {
    await assertListings('after the prune');
  });

  test('after a restart from the snapshot taken after the prune: the read store alone answers', async () => {
    const lastSeq = running.service.core.sequence;
    running = await running.restart();
    assert.equal(running.service.recovery.snapshotSeq, lastSeq);
    assert.equal(running.service.recovery.replayed, 0);
    for (const portfolioId of pruned()) {
      assert.equal(algos(running).prunedPortfolio(portfolioId), undefined, 'nothing of it in memory');
    }
    await assertAfterRestart('restored after the prune');
  });

  test('after a restart from the snapshot taken before the prune, the journal replayed over it', async () => {
    const { dataDir, clock } = running;
    await running.close();
    const snapshots = new SqliteSnapshotStore({ path: join(dataDir, 'snapshots.sqlite') });
    try {
      await snapshots.discardAfter(snapshotBeforePrune);
    } finally {
      await snapshots.close();
    }
    running = await startTestService({ ...OPTIONS, dataDir, clock });
    const { recovery } = running.service;
    assert.equal(recovery.snapshotSeq, snapshotBeforePrune);
    assert.ok(recovery.replayed > 0 && recovery.checkpointsVerified > 0, JSON.stringify(recovery));
    // The replay pruned them again at the same command: the same records.
    for (const portfolioId of pruned()) {
      assert.deepEqual(
        structuredClone(algos(running).prunedPortfolio(portfolioId)),
        records.get(portfolioId),
      );
    }
    await assertAfterRestart('replayed over the prune');
  });

  /** After a restart: nothing of them in the core, info answers alike, ids stay fresh. */
  async function assertAfterRestart(message: string): Promise<void> {
    user = running.http(USER);
    assert.ok(running.service.recovery.ok, `${message}: recovered without a hash mismatch`);
    assertNotInCore(message);
    for (const portfolioId of pruned()) {
      assert.deepEqual(await storedRecord(running, portfolioId), records.get(portfolioId), message);
    }
    await assertInfosAlike(message);
    await assertRefusals();
    await assertListings(message);
    const fresh = await submit(commonBuy(accountId, '100', lowPrice));
    assert.ok(fresh > highestId, `${message}: ${fresh} after ${highestId}`);
    highestId = fresh;
    await user.cancelPortfolio({ portfolioId: fresh, accountId });
    assert.equal((await user.portfolioInfo(fresh)).portfolioStatus, 'CANCELLED');
    await assertInfosAlike(`${message}, after a new portfolio`);
  }

  async function assertRefusals(): Promise<void> {
    for (const portfolioId of pruned()) {
      const own = infos.get(portfolioId)!.accountId;
      await assert.rejects(
        user.cancelPortfolio({ portfolioId }),
        refusedWith('portfolio_not_active'),
        `cancel ${portfolioId}`,
      );
      await assert.rejects(
        user.cancelPortfolio({ portfolioId, accountId: own }),
        refusedWith('portfolio_not_active'),
        `cancel ${portfolioId} naming its account`,
      );
      await assert.rejects(
        running.http(OTHER).portfolioInfo(portfolioId),
        refusedWith('portfolio_not_found'),
        `another user's info of ${portfolioId}`,
      );
      await assert.rejects(
        running.http(OTHER).cancelPortfolio({ portfolioId }),
        refusedWith('portfolio_not_found'),
        `another user's cancel of ${portfolioId}`,
      );
    }
    // A mirror may be cancelled naming its original's account: refused as finished all the same.
    await assert.rejects(
      user.cancelPortfolio({ portfolioId: mirror, accountId }),
      refusedWith('portfolio_not_active'),
    );
    await assert.rejects(user.portfolioInfo(highestId + 1_000), refusedWith('portfolio_not_found'));
    assertNotInCore('a refused cancel brings nothing back');
    await assertInfosAlike('after the refusals');
  }

  async function assertListings(message: string): Promise<void> {
    for (const account of [accountId, mirrorAccountId]) {
      assert.deepEqual(await user.cancelAllPortfolios({ accountId: account }), { portfolioIds: [] }, message);
      assert.deepEqual(
        await user.cancelAllPortfolios({ accountId: account, portfolioType: 'COMMON' }),
        { portfolioIds: [] },
        message,
      );
    }
    assert.deepEqual(
      await user.call('private/get_open_orders_by_label', { currency: 'BTC', label: `portfolio:${filled}` }),
      [],
    );
    const history = await user.call('private/get_order_history_by_currency', {
      currency: 'BTC',
      count: 1000,
      includeUnfilled: true,
      historical: true,
      includeOld: true,
    });
    assert.ok(Array.isArray(history), 'without a continuation: a plain list');
    const child = history.find((order) => order.orderId === childOrderId);
    assert.equal(child?.label, `portfolio:${filled}`, `${message}: the child order stays in history`);
    assert.equal(child?.orderState, 'filled');
    const state = await user.call('private/get_order_state', { orderId: childOrderId });
    assert.equal(state.orderState, 'filled');
    // The read store's listing keeps them, with their final status.
    for (const account of [accountId, mirrorAccountId]) {
      const listed = await portfolioHistory(running.service.readStore, {
        accountId: account,
        status: 'finished',
        count: 1000,
      });
      for (const portfolioId of pruned()) {
        if (infos.get(portfolioId)!.accountId !== account) continue;
        const row = listed.portfolios.find((p) => p.portfolioId === portfolioId);
        assert.equal(
          row?.status,
          infos.get(portfolioId)!.portfolioStatus,
          `${message}: ${portfolioId} listed`,
        );
      }
    }
    assertNotInCore(`${message}: nothing brought back`);
    await assertInfosAlike(message);
  }
});
