/**
 * A DYNAMIC reference (BID, ASK, MID) leaves out every visible resting order of the accounts the
 * portfolio trades in: its own account and its group's (the original's and the mirrors'). A
 * mirror, another portfolio of the account or a hand order is never a peg's reference, so two
 * pegs of one desk never outbid each other at every reprice (the walk an audit found: a mirror
 * pegged BID + 0.5 climbed 100 USD in 10 s while the real best bid stayed put).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LegPricing, PortfolioSpec } from '../../src/algo/types.ts';
import { AlgoHarness, leg, MIRROR, PERP_60K, portfolio, TRADER } from './harness.ts';

/** The maker's quotes: 59,990 / 60,010 USD (perpetual ticks of 0.5 USD). */
const BID = PERP_60K - 20;
const ASK = PERP_60K + 20;

function marketAround(): AlgoHarness {
  const h = AlgoHarness.withMarket();
  h.maker('buy', 100, BID);
  h.maker('sell', 100_000, ASK);
  return h;
}

const pegged = (strategy: 'BID' | 'ASK' | 'MID', offsetUsd: number): LegPricing => ({
  priceType: 'DYNAMIC',
  price: 61_000,
  priceIn: 'USD',
  dynamicStrategy: strategy,
  dynamicOffset: offsetUsd,
  dynamicMs: 100,
});

function balanceBuy(pricing: LegPricing, mirrors: number[] = []): PortfolioSpec {
  return portfolio({
    portfolioType: 'BALANCE',
    legs: [leg({ amount: 1000, pricing })],
    balance: { parts: 1, eachLimitMs: 600_000, totalLimitMs: 0, totalEndAction: 'CANCEL_REMAINING' },
    mirrorAccountIds: mirrors,
  });
}

function twapBuy(pricing: LegPricing): PortfolioSpec {
  return portfolio({
    portfolioType: 'TWAP',
    legs: [leg({ amount: 1000, pricing })],
    twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 60_000 },
  });
}

/** The price of each portfolio's one open child, in portfolio order. */
function childPrices(h: AlgoHarness, ids: readonly number[]): number[] {
  return ids.map((id) => {
    const open = h.openChildren(id);
    assert.equal(open.length, 1, `portfolio ${id} rests one child`);
    return open[0]!.price!;
  });
}

/** Runs `ms` of reprices, checking the children's prices after every 100 ms. */
function holds(h: AlgoHarness, ids: readonly number[], expected: number, ms: number): void {
  const until = h.ts + ms;
  while (h.ts < until) {
    h.runUntil(h.ts + 100);
    assert.deepEqual(
      childPrices(h, ids),
      ids.map(() => expected),
      `at +${ms - (until - h.ts)} ms`,
    );
  }
}

describe('a DYNAMIC reference leaves out the group’s own accounts', () => {
  test('a mirror pegged to BID + 0.5 holds its price at the real bid, as does its original', () => {
    const h = marketAround();
    const id = h.submit(balanceBuy(pegged('BID', 0.5), [MIRROR]));
    const mirror = h.machine.portfolio(id)!.mirrorIds[0]!;
    assert.equal(h.machine.portfolio(mirror)!.spec.accountId, MIRROR);
    const ids = [id, mirror];
    assert.deepEqual(childPrices(h, ids), [BID + 1, BID + 1]);
    holds(h, ids, BID + 1, 10_000);
    assert.equal(h.venue.book('BTC-PERPETUAL')!.bids[0]!.amount, 2000, 'both rest side by side');
    // The real market moves: both follow it, and only it.
    h.maker('buy', 10, BID + 10);
    h.runUntil(h.ts + 100);
    assert.deepEqual(childPrices(h, ids), [BID + 11, BID + 11]);
    holds(h, ids, BID + 11, 2_000);
  });

  test('a mirror pegged to MID: both rest at the real mid, not a tick under the ask', () => {
    const h = marketAround();
    const id = h.submit(balanceBuy(pegged('MID', 0), [MIRROR]));
    const ids = [id, h.machine.portfolio(id)!.mirrorIds[0]!];
    assert.deepEqual(childPrices(h, ids), [PERP_60K, PERP_60K]);
    holds(h, ids, PERP_60K, 10_000);
  });

  test('two portfolios of one account pegged to BID + 10 hold at the real bid + 10', () => {
    const h = marketAround();
    const first = h.submit(twapBuy(pegged('BID', 10)));
    h.runUntil(h.ts + 1_000);
    const second = h.submit(twapBuy(pegged('BID', 10)));
    const ids = [first, second];
    assert.deepEqual(childPrices(h, ids), [BID + 20, BID + 20]);
    holds(h, ids, BID + 20, 5_000);
  });

  test('two sell portfolios of one account pegged to ASK − 10 hold at the real ask − 10', () => {
    const h = marketAround();
    const askPeg: LegPricing = { ...pegged('ASK', -10), price: 59_000 };
    const sell = () =>
      portfolio({
        portfolioType: 'TWAP',
        legs: [leg({ amount: 1000, side: 'sell', pricing: askPeg })],
        twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 60_000 },
      });
    const first = h.submit(sell());
    h.runUntil(h.ts + 1_000);
    const second = h.submit(sell());
    const ids = [first, second];
    assert.deepEqual(childPrices(h, ids), [ASK - 20, ASK - 20]);
    holds(h, ids, ASK - 20, 5_000);
  });

  test('a hand order of the account is no reference either; another account’s order is', () => {
    const h = marketAround();
    h.limit(TRADER, 'buy', 5, BID + 10, 'by hand');
    const id = h.submit(twapBuy(pegged('BID', 0)));
    assert.deepEqual(childPrices(h, [id]), [BID], 'the maker’s bid, not the own hand bid above it');
    holds(h, [id], BID, 1_000);
    h.maker('buy', 5, BID + 10);
    h.runUntil(h.ts + 100);
    assert.deepEqual(childPrices(h, [id]), [BID + 10], 'the maker joined the hand order’s level');
    holds(h, [id], BID + 10, 1_000);
  });

  test('a replay and a restart reach the same state', () => {
    const h = marketAround();
    const id = h.submit(balanceBuy(pegged('BID', 0.5), [MIRROR]));
    const second = h.submit(twapBuy(pegged('MID', 0)));
    h.runUntil(h.ts + 3_000);
    const restarted = h.restarted();
    h.runUntil(h.ts + 3_000);
    restarted.runUntil(h.ts);
    for (const other of [h.replayed(), restarted]) {
      assert.equal(other.machine.stateHash(), h.machine.stateHash());
    }
    assert.deepEqual(childPrices(h, [id, second]), [BID + 1, PERP_60K]);
  });
});
