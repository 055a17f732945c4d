import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VenueError } from '../domain/errors.ts';
import { ReadStoreBehindError } from '../store/read/read-store.ts';
import { archiveAnsweringOutages, historyAnsweringOutages, isStorageOutage } from './history-outages.ts';
import type { HistoryPort } from './ports.ts';

function failing(error: unknown): HistoryPort {
  return {
    order: () => Promise.reject(error),
    orderHistory: () => Promise.reject(error),
    userTrades: () => Promise.reject(error),
    orderTrades: () => Promise.reject(error),
    settlements: () => Promise.reject(error),
    transactions: () => Promise.reject(error),
  };
}

test('a history store that cannot be reached is unavailable, naming history; other errors pass', async () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const shutdown = Object.assign(new Error('terminating connection due to administrator command'), {
    code: '57P01',
  });
  for (const error of [refused, shutdown, new Error('Connection terminated unexpectedly')]) {
    assert.ok(isStorageOutage(error));
    const history = historyAnsweringOutages(failing(error));
    await assert.rejects(
      history.orderHistory({ accountId: 1, currency: 'BTC', now: 0 }),
      (e: unknown) => e instanceof VenueError && e.errorName === 'unavailable' && e.data?.field === 'history',
    );
    await assert.rejects(history.order('BTC-1'), (e: unknown) => e instanceof VenueError);
    await assert.rejects(
      history.userTrades({ accountId: 1, now: 0 }),
      (e: unknown) => e instanceof VenueError,
    );
  }
  const bug = new TypeError('x is undefined');
  assert.equal(isStorageOutage(bug), false);
  await assert.rejects(historyAnsweringOutages(failing(bug)).order('BTC-1'), (e: unknown) => e === bug);
  const badToken = new RangeError('invalid continuation token');
  await assert.rejects(
    historyAnsweringOutages(failing(badToken)).orderHistory({ accountId: 1, currency: 'BTC', now: 0 }),
    (e: unknown) => e === badToken,
  );
});

test('a history store (or the portfolio archive) still behind the caller after its wait is unavailable: history behind, safe to retry', async () => {
  const behind = new ReadStoreBehindError(120, 100, 2_000, new Error('disk I/O error'));
  const history = historyAnsweringOutages(failing(behind));
  for (const query of [
    history.orderHistory({ accountId: 1, currency: 'BTC', now: 0 }),
    history.userTrades({ accountId: 1, now: 0 }),
    history.order('BTC-1'),
    // The pruned portfolios' records (portfolio info) are read from the same store.
    archiveAnsweringOutages({ portfolio: () => Promise.reject(behind) }).portfolio(7),
  ]) {
    await assert.rejects(query, (e: unknown) => {
      assert.ok(e instanceof VenueError);
      assert.equal(e.errorName, 'unavailable');
      assert.match(e.message, /behind.*safe to try again/);
      assert.deepEqual(e.data, {
        field: 'history',
        reason: 'history_behind',
        safeToRetry: true,
        behindCommands: 20,
      });
      return true;
    });
  }
});

test('the portfolio archive that does not answer is unavailable too, not internal_error', async () => {
  const down = archiveAnsweringOutages({
    portfolio: () => Promise.reject(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })),
  });
  await assert.rejects(
    down.portfolio(7),
    (e: unknown) => e instanceof VenueError && e.errorName === 'unavailable',
  );
});

test('a store that caught up while the refusal was made still counts as at least one command behind', async () => {
  // Written up to what was needed by the time the error is read: a count of 0 would say "not behind".
  const history = historyAnsweringOutages(failing(new ReadStoreBehindError(100, 100, 2_000, null)));
  await assert.rejects(history.order('BTC-1'), (e: unknown) => {
    assert.ok(e instanceof VenueError, `a VenueError, got ${String(e)}`);
    assert.equal(e.data?.behindCommands, 1);
    return true;
  });
});

test('every listed socket error code is an outage', () => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND'])
    assert.equal(isStorageOutage(Object.assign(new Error('x'), { code })), true, code);
});
