import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CancelReason } from '../../src/core/types.ts';
import { AlgoHarness, leg, PERP_60K, portfolio, T0, TRADER } from './harness.ts';

const twap = (amount = 100) =>
  portfolio({
    portfolioType: 'TWAP',
    legs: [leg({ amount })],
    twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 2_000 },
  });

/** The cancelReason of each of the portfolio's children, in placing order (null = not cancelled). */
function reasons(h: AlgoHarness, portfolioId: number): (CancelReason | null)[] {
  return h.childOrders(portfolioId).map((child) => h.venue.getOrder(child.orderId)!.cancelReason);
}

/** The cancelReason every `order` event of a cancelled child carried (what order.change pushes). */
function eventReasons(h: AlgoHarness, run: () => void): (CancelReason | null)[] {
  const seen: (CancelReason | null)[] = [];
  const execute = h.venue.execute.bind(h.venue);
  h.venue.execute = (command) => {
    const result = execute(command);
    for (const event of result.events)
      if (event.type === 'order' && event.order.orderState === 'cancelled' && event.order.owner !== null)
        seen.push(event.order.cancelReason);
    return result;
  };
  try {
    run();
  } finally {
    h.venue.execute = execute;
  }
  return seen;
}

describe('cancel reasons of portfolio children', () => {
  test('a TWAP slice roll-over and the end of the TWAP cancel with `algorithm`', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 7, PERP_60K);
    const id = h.submit(twap());
    const first = h.childOrders(id)[0]!;
    assert.equal(first.open, true);
    const atRollOver = eventReasons(h, () => h.runUntil(T0 + 2_000));
    assert.equal(first.open, false, 'slice 0 rest cancelled at slice 1');
    assert.equal(h.venue.getOrder(first.orderId)!.cancelReason, 'algorithm');
    assert.deepEqual(atRollOver, ['algorithm']);
    h.runUntil(T0 + 10_000);
    assert.equal(h.machine.portfolio(id)!.status, 'EXPIRED');
    assert.deepEqual(reasons(h, id), ['algorithm', 'algorithm', 'algorithm', 'algorithm', 'algorithm']);
  });

  test('the end action of a BALANCE cancels the remainder with `algorithm`', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      portfolio({
        portfolioType: 'BALANCE',
        legs: [leg({ amount: 30, pricing: { ...leg().pricing, price: 59_000 } })],
        balance: { parts: 3, eachLimitMs: 10_000, totalLimitMs: 0, totalEndAction: 'CANCEL_REMAINING' },
      }),
    );
    h.runUntil(T0 + 30_000);
    assert.equal(h.machine.portfolio(id)!.status, 'EXPIRED');
    assert.equal(h.openChildren(id).length, 0);
    const all = reasons(h, id);
    assert.ok(all.length > 0);
    assert.deepEqual(
      all.filter((reason) => reason !== 'algorithm'),
      [],
    );
  });

  test('FAILED cleanup cancels the children already placed with `algorithm`', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      portfolio({
        legs: [
          leg({ amount: 10, pricing: { ...leg().pricing, price: 59_000 } }),
          leg({ side: 'sell', amount: 10, reduceOnly: true }),
        ],
      }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'FAILED');
    assert.equal(p.endReason, 'child_rejected');
    assert.deepEqual(reasons(h, id), ['algorithm']);
  });

  test('a user cancel of a WORKING portfolio cancels its children with `user_request`', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(twap());
    h.runUntil(T0 + 2_000);
    assert.equal(h.machine.portfolio(id)!.status, 'WORKING');
    assert.deepEqual(reasons(h, id), ['algorithm', null], 'the roll-over was the algorithm’s');
    const cancelled = eventReasons(h, () =>
      h.algo({ type: 'cancel_portfolio', portfolioId: id, accountId: TRADER } as never),
    );
    assert.equal(h.machine.portfolio(id)!.status, 'CANCELLED');
    assert.deepEqual(cancelled, ['user_request']);
    assert.deepEqual(reasons(h, id), ['algorithm', 'user_request']);
  });

  test('a user cancel-all of portfolios cancels their children with `user_request`', () => {
    const h = AlgoHarness.withMarket();
    const a = h.submit(twap());
    const b = h.submit(twap(50));
    h.algo({ type: 'cancel_all_portfolios', accountId: TRADER, portfolioType: null } as never);
    assert.deepEqual(reasons(h, a), ['user_request']);
    assert.deepEqual(reasons(h, b), ['user_request']);
  });
});
