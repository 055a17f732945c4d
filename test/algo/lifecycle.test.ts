import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { PortfolioMachine } from '../../src/algo/machine.ts';
import { transition } from '../../src/algo/status.ts';
import { MAX_PLACEMENTS_PER_COMMAND, PRICE_RETRY_MS } from '../../src/algo/steps.ts';
import { venueMarketView } from '../../src/algo/venue-market-view.ts';
import { Venue } from '../../src/engine/venue.ts';
import {
  AlgoHarness,
  leg,
  MARKET_PRICING,
  MIRROR,
  OPTION,
  PERP_60K,
  portfolio,
  T0,
  TRADER,
} from './harness.ts';

const twap = () =>
  portfolio({
    portfolioType: 'TWAP',
    legs: [leg({ amount: 100 })],
    twap: { startTimestamp: null, durationMs: 10_000, frequencyMs: 1_000 },
  });

describe('portfolio lifecycle', () => {
  test('status table: only the listed transitions exist', () => {
    assert.equal(transition('PENDING', 'start'), 'WORKING');
    assert.equal(transition('WORKING', 'cancel'), 'CANCELLING');
    assert.equal(transition('CANCELLING', 'children_gone'), 'CANCELLED');
    assert.equal(transition('WORKING', 'children_gone'), null);
    assert.equal(transition('COMPLETED', 'cancel'), null);
    assert.equal(transition('PENDING', 'complete'), null);
  });

  test('cancel: CANCELLING at once, every child cancelled, then CANCELLED', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      portfolio({
        legs: [leg({ amount: 30, pricing: { ...leg().pricing, price: 59_000 } }), leg({ amount: 20 })],
      }),
    );
    assert.equal(h.openChildren(id).length, 2);
    const result = h.algo({ type: 'cancel_portfolio', portfolioId: id, accountId: TRADER } as never);
    assert.equal(result.ok, true);
    assert.equal(h.openChildren(id).length, 0);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'CANCELLED');
    assert.equal(p.endReason, 'user_cancel');
    const messages = h.messages(id);
    assert.deepEqual(messages.slice(-2), ['PORTFOLIO_CANCELLING', 'PORTFOLIO_CANCELLED']);
    const again = h.algo({ type: 'cancel_portfolio', portfolioId: id, accountId: null } as never);
    assert.equal(!again.ok && again.error.name, 'portfolio_not_active');
    const other = h.algo({ type: 'cancel_portfolio', portfolioId: id, accountId: 99 } as never);
    assert.equal(!other.ok && other.error.name, 'portfolio_not_found');
  });

  test('cancel-all cancels the account’s active portfolios of a type', () => {
    const h = AlgoHarness.withMarket();
    const a = h.submit(twap());
    const b = h.submit(twap());
    const c = h.submit(portfolio({ legs: [leg({ pricing: { ...leg().pricing, price: 59_000 } })] }));
    const result = h.algo({
      type: 'cancel_all_portfolios',
      accountId: TRADER,
      portfolioType: 'TWAP',
    } as never);
    assert.deepEqual(result.ok && result.value, { kind: 'cancelled', portfolioIds: [a, b] });
    assert.equal(h.machine.portfolio(c)!.status, 'WORKING');
  });

  test('COMMON: one order per leg at once; COMPLETED when all fill', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      portfolio({
        legs: [
          leg({ amount: 10, timeInForce: 'good_til_cancelled' }),
          leg({
            instrumentName: OPTION,
            instrumentType: 'OPTION',
            amount: 5,
            pricing: { ...leg().pricing, price: 3000, priceIn: 'USD' },
          }),
        ],
      }),
    );
    const children = h.childOrders(id);
    assert.equal(children.length, 2);
    assert.equal(children[1]!.price, 500, '3,000 USD at index 60,000 = 0.05 BTC = 500 ticks');
    h.maker('sell', 10, PERP_60K);
    h.maker('sell', 5, 500, OPTION);
    assert.equal(h.machine.portfolio(id)!.status, 'COMPLETED');
    assert.equal(h.childOrders(id).length, 2, 'never re-placed');
  });

  test('COMMON: IOC legs that close unfilled end the portfolio EXPIRED', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(portfolio({ legs: [leg({ amount: 10, timeInForce: 'immediate_or_cancel' })] }));
    assert.equal(h.machine.portfolio(id)!.status, 'EXPIRED');
    assert.equal(h.machine.portfolio(id)!.endReason, 'orders_closed');
  });

  test('ICEBERG: one visible slice of displayQuantity, refilled with refreshQuantity', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      portfolio({
        portfolioType: 'ICEBERG',
        legs: [leg({ amount: 50 })],
        iceberg: { displayAmount: 20, refreshAmount: 10 },
      }),
    );
    assert.equal(h.openChildren(id)[0]!.amount, 20);
    h.maker('sell', 20, PERP_60K);
    assert.equal(h.openChildren(id)[0]!.amount, 10);
    h.maker('sell', 25, PERP_60K);
    assert.equal(
      h.machine.portfolio(id)!.legs[0]!.filled,
      45,
      'refills take the resting rest, slice by slice',
    );
    assert.deepEqual(
      h.childOrders(id).map((c) => c.amount),
      [20, 10, 10, 10],
    );
    const last = h.openChildren(id)[0]!;
    assert.equal(last.amount - last.filledAmount, 5, 'the last slice rests with what remains');
    h.maker('sell', 5, PERP_60K);
    assert.equal(h.machine.portfolio(id)!.status, 'COMPLETED');
  });

  test('ICEBERG: refills against a deep level spread over commands instead of stopping the core', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 10_000, PERP_60K);
    const id = h.submit(
      portfolio({
        portfolioType: 'ICEBERG',
        legs: [leg({ amount: 5_000 })],
        iceberg: { displayAmount: 1, refreshAmount: null },
      }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, MAX_PLACEMENTS_PER_COMMAND, 'one command places its budget');
    assert.equal(h.machine.nextWakeup(), T0, 'and asks to go on at once');
    h.runUntil(T0);
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.legs[0]!.filled, 5_000);
    assert.equal(h.childOrders(id).length, 5_000);
  });

  test('ICEBERG with MARKET pricing: a leg that finds no liquidity looks again every second', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 30, PERP_60K);
    const id = h.submit(
      portfolio({
        portfolioType: 'ICEBERG',
        legs: [
          leg({
            amount: 500,
            pricing: MARKET_PRICING,
          }),
        ],
        iceberg: { displayAmount: 100, refreshAmount: 50 },
      }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 30);
    assert.equal(h.machine.nextWakeup(), T0 + PRICE_RETRY_MS, 'not idle with 470 lots to go');
    h.runUntil(T0 + 10_000);
    assert.equal(h.childOrders(id).length, 1, 'no child order sent into an empty book');
    h.maker('sell', 300, PERP_60K);
    h.runUntil(h.ts + PRICE_RETRY_MS);
    assert.deepEqual(
      h.childOrders(id).map((c) => [c.amount, c.filled]),
      [
        [100, 30],
        [70, 70],
        [50, 50],
        [50, 50],
        [50, 50],
        [50, 50],
        [50, 30],
      ],
      'the first slice’s unfilled 70 lots, then refreshes',
    );
    h.maker('sell', 1000, PERP_60K);
    h.runUntil(h.ts + PRICE_RETRY_MS);
    assert.deepEqual(
      h
        .childOrders(id)
        .slice(7)
        .map((c) => c.amount),
      [20, 50, 50, 50],
      'the unfilled 20 of the last slice first',
    );
    assert.equal(p.status, 'COMPLETED');
    assert.equal(p.legs[0]!.filled, 500, 'exactly the total, with 1,330 lots offered');
  });

  test('a fill caused by another portfolio’s child is acted on in the same command', () => {
    const h = AlgoHarness.withMarket();
    const a = h.submit(
      portfolio({
        portfolioType: 'ICEBERG',
        legs: [leg({ amount: 30 })],
        iceberg: { displayAmount: 10, refreshAmount: null },
      }),
    );
    const b = h.submit(portfolio({ accountId: MIRROR, legs: [leg({ side: 'sell', amount: 30 })] }));
    assert.equal(
      h.machine.portfolio(a)!.status,
      'COMPLETED',
      'the iceberg refilled against the resting sell',
    );
    assert.equal(h.machine.portfolio(b)!.status, 'COMPLETED');
  });

  test('a refused child fails the portfolio and cancels what it placed', () => {
    const h = AlgoHarness.withMarket();
    h.core({ type: 'create_account', accountId: 9 });
    const id = h.submit(portfolio({ accountId: 9, legs: [leg({ amount: 100_000_000 })] }));
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'FAILED');
    assert.equal(p.endReason, 'child_rejected');
    assert.match(p.endMessage ?? '', /not_enough_funds/);
  });

  test('sendToDummyAccountIds mirrors the portfolio into each account with its own linked id', () => {
    const h = AlgoHarness.withMarket();
    const result = h.algo({
      type: 'submit_portfolio',
      portfolio: { ...twap(), mirrorAccountIds: [MIRROR] },
    } as never);
    assert.ok(result.ok && result.value.kind === 'submitted');
    const { portfolioId, mirrorPortfolioIds } = result.value as unknown as {
      portfolioId: number;
      mirrorPortfolioIds: number[];
    };
    assert.equal(mirrorPortfolioIds.length, 1);
    const mirror = h.machine.portfolio(mirrorPortfolioIds[0]!)!;
    assert.equal(mirror.linkedTo, portfolioId);
    assert.equal(mirror.spec.accountId, MIRROR);
    assert.equal(h.openChildren(mirror.id).length, 1);
    h.algo({ type: 'cancel_portfolio', portfolioId, accountId: null } as never);
    assert.equal(mirror.status, 'CANCELLED', 'cancelling the original cancels its mirrors');
  });

  test('cancel-all cancels the mirrors of the originals it cancels, as cancel does', () => {
    const h = AlgoHarness.withMarket();
    const result = h.algo({
      type: 'submit_portfolio',
      portfolio: { ...twap(), mirrorAccountIds: [MIRROR] },
    } as never);
    assert.ok(result.ok && result.value.kind === 'submitted');
    const { portfolioId, mirrorPortfolioIds } = result.value as {
      portfolioId: number;
      mirrorPortfolioIds: readonly number[];
    };
    const mirror = h.machine.portfolio(mirrorPortfolioIds[0]!)!;
    const all = h.algo({ type: 'cancel_all_portfolios', accountId: TRADER, portfolioType: null } as never);
    assert.deepEqual(all.ok && all.value, { kind: 'cancelled', portfolioIds: [portfolioId, mirror.id] });
    assert.equal(mirror.status, 'CANCELLED');
    assert.equal(h.openChildren(mirror.id).length, 0);
  });

  test('a finished original still reaches its working mirror: cancel and cancel-all cancel it', () => {
    for (const how of ['cancel', 'cancel-all'] as const) {
      const h = AlgoHarness.withMarket();
      // The original takes the only liquidity and completes; its mirror rests.
      h.maker('sell', 13, PERP_60K);
      const id = h.submit(portfolio({ legs: [leg({ amount: 13 })], mirrorAccountIds: [MIRROR] }));
      const original = h.machine.portfolio(id)!;
      const mirror = h.machine.portfolio(original.mirrorIds[0]!)!;
      assert.equal(original.status, 'COMPLETED');
      assert.equal(mirror.status, 'WORKING');
      const result =
        how === 'cancel'
          ? h.algo({ type: 'cancel_portfolio', portfolioId: id, accountId: null } as never)
          : h.algo({ type: 'cancel_all_portfolios', accountId: TRADER, portfolioType: null } as never);
      assert.deepEqual(result.ok && result.value, { kind: 'cancelled', portfolioIds: [mirror.id] }, how);
      assert.equal(mirror.status, 'CANCELLED', how);
      assert.equal(h.openChildren(mirror.id).length, 0, how);
      assert.equal(original.status, 'COMPLETED', how);
    }
  });

  test('restart mid-portfolio: snapshot/restore and journal replay reach the same state, no duplicate child', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 30, PERP_60K);
    h.submit(twap());
    h.submit(
      portfolio({
        portfolioType: 'BALANCE',
        legs: [
          leg({ amount: 60, priority: true }),
          leg({
            instrumentName: OPTION,
            instrumentType: 'OPTION',
            amount: 30,
            pricing: { ...leg().pricing, price: 0.05, priceIn: 'BTC' },
          }),
        ],
        balance: { parts: 3, eachLimitMs: 3_000, totalLimitMs: 0, totalEndAction: 'FILL_BY_MARKET' },
      }),
    );
    h.runUntil(T0 + 3_500);
    h.maker('sell', 40, PERP_60K);

    // Restart from a snapshot of both the engine and the algorithm layer.
    const restored = h.restarted();
    assert.equal(restored.machine.stateHash(), h.machine.stateHash());

    // Replay of the whole journal into a fresh pair.
    const replayed = h.replayed();
    assert.equal(replayed.machine.stateHash(), h.machine.stateHash());
    assert.equal(replayed.venue.stateHash(), h.venue.stateHash());

    const placedBefore = h.placed.length;
    for (const copy of [h, restored, replayed]) {
      copy.maker('sell', 25, PERP_60K);
      copy.runUntil(T0 + 12_000);
    }
    assert.equal(restored.machine.stateHash(), h.machine.stateHash());
    assert.equal(replayed.machine.stateHash(), h.machine.stateHash());
    assert.deepEqual(
      restored.placed,
      h.placed.slice(placedBefore),
      'the restored layer places exactly what the original did',
    );
    assert.equal(h.machine.portfolioOfOrder(h.machine.portfolio(1)!.children[0]!.orderId)?.id, 1);
    const allChildren = [1, 2].flatMap((id) => h.machine.portfolio(id)!.children.map((c) => c.orderId));
    assert.equal(new Set(allChildren).size, allChildren.length);
  });

  test('a snapshot written before a leg field existed restores to the hash it was written with', () => {
    const h = AlgoHarness.withMarket();
    h.submit(twap());
    // The record as an older version wrote it: no selfTradeHoldUntil, no repricedAt on its legs.
    const old = h.machine.snapshot() as unknown as { portfolios: { legs: Record<string, unknown>[] }[] };
    for (const p of old.portfolios) {
      for (const legState of p.legs) {
        delete legState.selfTradeHoldUntil;
        delete legState.repricedAt;
      }
    }
    const machine = new PortfolioMachine(venueMarketView(Venue.restore(h.venue.snapshot())));
    machine.restore(old);
    const written = createHash('sha256').update(JSON.stringify(old)).digest('hex');
    assert.equal(machine.stateHash(), written, 'recovery compares this hash with the snapshot’s');
    assert.equal(machine.nextWakeup(), h.machine.nextWakeup());
  });
  test('postOnly on an IOC leg is dropped from the child: it takes and completes', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 1000, PERP_60K);
    const id = h.submit(
      portfolio({ legs: [leg({ amount: 10, postOnly: true, timeInForce: 'immediate_or_cancel' })] }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'COMPLETED', `${p.endReason}: ${p.endMessage}`);
    assert.equal(p.endReason, 'filled');
    assert.equal(p.legs[0]!.filled, 10);
  });

  test('a COMMON child cancelled from outside is not placed again: EXPIRED orders_closed', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(portfolio({ legs: [leg({ amount: 10 })] }));
    const p = h.machine.portfolio(id)!;
    h.core({ type: 'cancel_order', accountId: TRADER, orderId: p.children[0]!.orderId });
    h.runUntil(h.ts + 5_000);
    assert.equal(p.status, 'EXPIRED');
    assert.equal(p.endReason, 'orders_closed');
    assert.equal(p.children.length, 1);
    assert.equal(h.openChildren(id).length, 0);
  });

  test('a child filled in several pieces books each piece once into the leg notional (average price)', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(portfolio({ legs: [leg({ amount: 100 })] })); // COMMON buy 100 at 60,000
    const p = h.machine.portfolio(id)!;
    assert.equal(p.children.length, 1);
    h.maker('sell', 30, PERP_60K);
    h.maker('sell', 20, PERP_60K);
    h.maker('sell', 50, PERP_60K);
    assert.equal(p.legs[0]!.filled, 100);
    assert.equal(p.children.length, 1, 'one child, filled in three pieces');
    assert.equal(p.legs[0]!.notional, 100 * PERP_60K, 'Σ lots × price of the three fills');
    assert.equal(p.legs[0]!.notional / p.legs[0]!.filled, PERP_60K, 'average price = the limit');
    const fills = h.news.filter((e) => e.portfolioId === id && e.messageType === 'ORDER_FILLED');
    assert.deepEqual(
      fills.map((e) => [e.amount, e.price]),
      [
        [30, PERP_60K],
        [20, PERP_60K],
        [50, PERP_60K],
      ],
    );
    assert.equal(p.status, 'COMPLETED');
  });

  test('arrival price falls back to the mark when the book has no two sides and no priceSnapshot was sent', () => {
    const h = AlgoHarness.withMarket(); // empty books; the perpetual's mark is 60,000 USD
    const id = h.submit(
      portfolio({ legs: [leg({ amount: 10, pricing: { ...leg().pricing, price: 50_000 } })] }),
    );
    assert.equal(h.machine.portfolio(id)!.legs[0]!.arrivalPrice, PERP_60K);
  });
});
