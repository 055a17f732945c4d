/**
 * A leg's instrument expiring under a working portfolio (docs/decisions.md, "A leg's instrument
 * expires"): settlement cancels the leg's child, and every active portfolio with lots still to
 * fill on that instrument ends FAILED (`instrument_expired`) at once, its other children
 * cancelled. A leg already filled needs nothing more: its portfolio goes on. A submit on an
 * expired instrument is refused with `instrument_expired` on the leg's instrument field. Expired
 * means from the expiry instant on, as the engine judges it, not only once settled.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AlgoCommand, PortfolioEvent, PortfolioSpec } from '../../src/algo/types.ts';
import { optionSpec } from '../../src/engine/testkit.ts';
import { createCombo, parseComboName } from '../../src/market/combos.ts';
import {
  AlgoHarness,
  balanceSpec,
  callLeg,
  leg,
  MIRROR,
  OPTION,
  PUT,
  portfolio,
  putLeg,
  T0,
} from './harness.ts';

const iceberg = (): PortfolioSpec =>
  portfolio({
    portfolioType: 'ICEBERG',
    legs: [callLeg({ amount: 30 })],
    iceberg: { displayAmount: 10, refreshAmount: null },
  });

/** The expiry instant of OPTION and PUT (src/engine/testkit.ts `optionSpec`). */
const OPTION_EXPIRY = optionSpec().expiration!;

function settle(h: AlgoHarness, instrumentName: string): void {
  const result = h.core({ type: 'settle_instrument', instrumentName, settlementPrice: 0 });
  assert.ok(result.ok, 'settled');
}

function failedNews(h: AlgoHarness, id: number): PortfolioEvent | undefined {
  return h.news.find((e) => e.portfolioId === id && e.messageType === 'PORTFOLIO_FAILED');
}

function assertExpiredFailure(h: AlgoHarness, id: number, legIndex: number, instrumentName: string): void {
  const p = h.machine.portfolio(id)!;
  assert.equal(p.status, 'FAILED');
  assert.equal(p.endReason, 'instrument_expired');
  assert.match(p.endMessage!, new RegExp(`legs\\[${legIndex}\\]`));
  assert.ok(p.endMessage!.includes(instrumentName), p.endMessage!);
  assert.equal(p.endedAt, h.ts, 'ended by the settlement command itself');
  assert.equal(h.openChildren(id).length, 0, 'no child left on the book');
  assert.ok(
    p.children.every((c) => !c.open),
    'every child closed in the record',
  );
  const news = failedNews(h, id);
  assert.ok(news !== undefined, 'PORTFOLIO_FAILED pushed');
  assert.equal(news.endReason, 'instrument_expired');
  assert.equal(news.endMessage, p.endMessage);
  assert.equal(news.status, 'FAILED');
}

describe('a leg instrument expiring', () => {
  test('ICEBERG: ends FAILED at once, and no timer keeps polling afterwards', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 5, 500, OPTION);
    const id = h.submit(iceberg());
    assert.equal(h.machine.portfolio(id)!.legs[0]!.filled, 5);
    assert.equal(h.openChildren(id).length, 1);
    h.ts += 1000;
    settle(h, OPTION);
    assertExpiredFailure(h, id, 0, OPTION);
    assert.equal(h.machine.nextWakeup(), null, 'nothing left to wake for');
    const journaled = h.journal.length;
    h.runUntil(h.ts + 3_600_000);
    assert.equal(h.journal.length, journaled, 'no timer commands in the hour after');
    assert.equal(h.machine.portfolio(id)!.status, 'FAILED');
  });

  test('BALANCE: one of several legs expiring ends the portfolio and cancels the other legs’ children', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 5, 500, OPTION);
    const id = h.submit(
      portfolio({ portfolioType: 'BALANCE', legs: [callLeg(), putLeg()], balance: balanceSpec() }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING');
    assert.equal(h.openChildren(id).length, 2, 'a child on each leg');
    h.ts += 500;
    settle(h, PUT);
    assertExpiredFailure(h, id, 1, PUT);
    assert.equal(p.legs[0]!.filled, 5, 'fills so far are kept');
  });

  test('BALANCE: a leg already filled expiring changes nothing; the other legs go on', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 30, 500, OPTION);
    const id = h.submit(
      portfolio({
        portfolioType: 'BALANCE',
        legs: [callLeg({ amount: 10 }), putLeg({ amount: 60 })],
        balance: balanceSpec({ parts: 1 }),
      }),
    );
    const p = h.machine.portfolio(id)!;
    assert.equal(p.legs[0]!.filled, 10, 'the call leg is full');
    assert.equal(p.status, 'WORKING');
    const before = h.openChildren(id).map((o) => o.orderId);
    assert.equal(before.length, 1, 'the put child works');
    h.ts += 500;
    settle(h, OPTION);
    assert.equal(p.status, 'WORKING');
    assert.equal(failedNews(h, id), undefined);
    assert.deepEqual(
      h.openChildren(id).map((o) => o.orderId),
      before,
      'the put child is untouched',
    );
    h.maker('sell', 60, 1000, PUT);
    assert.equal(p.status, 'COMPLETED');
  });

  test('TWAP: a leg with nothing open between slices, and a portfolio not yet started, end at once', () => {
    const h = AlgoHarness.withMarket();
    const twap = (startTimestamp: number | null): PortfolioSpec =>
      portfolio({
        portfolioType: 'TWAP',
        legs: [leg({ amount: 100 }), callLeg({ amount: 10 })],
        twap: { startTimestamp, durationMs: 60_000, frequencyMs: 10_000 },
      });
    const working = h.submit(twap(null));
    const pending = h.submit(twap(T0 + 30_000));
    assert.equal(h.machine.portfolio(working)!.status, 'WORKING');
    assert.equal(h.machine.portfolio(pending)!.status, 'PENDING');
    // Fill the option's first slice, so that leg has nothing open when it expires.
    h.maker('sell', 5, 500, OPTION);
    const w = h.machine.portfolio(working)!;
    assert.ok(w.legs[1]!.working === null, 'the call leg rests nothing');
    assert.equal(h.openChildren(working).length, 1, 'the perpetual leg’s child works');
    h.ts += 1000;
    settle(h, OPTION);
    assertExpiredFailure(h, working, 1, OPTION);
    assertExpiredFailure(h, pending, 1, OPTION);
    assert.equal(h.machine.portfolio(pending)!.startedAt, null, 'never started');
    assert.equal(h.machine.nextWakeup(), null);
  });

  test('COMMON: the other leg’s order is cancelled; mirrors end alike', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(
      portfolio({
        portfolioType: 'COMMON',
        legs: [leg({ amount: 10 }), callLeg({ amount: 10 })],
        mirrorAccountIds: [MIRROR],
      }),
    );
    const mirror = h.machine.portfolio(id)!.mirrorIds[0]!;
    assert.equal(h.openChildren(id).length, 2);
    assert.equal(h.openChildren(mirror).length, 2);
    h.ts += 1000;
    settle(h, OPTION);
    assertExpiredFailure(h, id, 1, OPTION);
    assertExpiredFailure(h, mirror, 1, OPTION);
  });

  test('COMMON on a combo: the settlement cancels the combo child and the portfolio ends', () => {
    const h = AlgoHarness.withMarket();
    const CALL_75 = 'BTC-27DEC26-75000-C';
    const SPREAD = 'BTC-CS-27DEC26-70000_75000';
    h.core({ type: 'list_instrument', spec: optionSpec({ name: CALL_75, strike: '75000' }) });
    h.core({
      type: 'update_prices',
      indexPrices: [{ currency: 'BTC', price: 60_000 }],
      markPrices: [
        { instrumentName: OPTION, markPrice: 520 },
        { instrumentName: CALL_75, markPrice: 310 },
      ],
    });
    const built = createCombo(parseComboName(SPREAD)!, (n) => h.venue.instrument(n)?.instrument.spec, h.ts);
    assert.ok(built.ok);
    assert.ok(h.core({ type: 'list_instrument', spec: built.spec }).ok);
    const id = h.submit(
      portfolio({
        legs: [
          callLeg({ amount: 10 }),
          callLeg({
            instrumentName: CALL_75,
            side: 'sell',
            amount: 10,
            pricing: { ...callLeg().pricing, price: 0.03 },
          }),
        ],
      }),
    );
    assert.equal(h.openChildren(id)[0]!.instrumentName, SPREAD, 'one child on the combo');
    h.ts += 1000;
    settle(h, CALL_75);
    assertExpiredFailure(h, id, 1, CALL_75);
  });

  test('portfolios on other instruments are not touched', () => {
    const h = AlgoHarness.withMarket();
    const other = h.submit(portfolio({ portfolioType: 'COMMON', legs: [leg({ amount: 10 })] }));
    const id = h.submit(iceberg());
    settle(h, OPTION);
    assert.equal(h.machine.portfolio(id)!.status, 'FAILED');
    assert.equal(h.machine.portfolio(other)!.status, 'WORKING');
    assert.equal(h.openChildren(other).length, 1);
  });

  test('TWAP: a slice at the expiry instant, before the settlement, ends the portfolio instrument_expired', () => {
    const h = AlgoHarness.withMarket();
    // The engine refuses orders from the expiry instant on; the settlement comes at the market's
    // next tick. A slice in between must not end child_rejected.
    h.ts = OPTION_EXPIRY - 20_000;
    const id = h.submit(
      portfolio({
        portfolioType: 'TWAP',
        legs: [callLeg({ amount: 30 })],
        twap: { startTimestamp: null, durationMs: 60_000, frequencyMs: 10_000 },
      }),
    );
    h.runUntil(OPTION_EXPIRY - 1);
    const p = h.machine.portfolio(id)!;
    assert.equal(p.status, 'WORKING');
    assert.equal(h.openChildren(id).length, 1, 'the second slice rests');
    h.runUntil(OPTION_EXPIRY);
    assert.equal(h.venue.instrument(OPTION)!.status, 'open', 'not settled yet');
    assertExpiredFailure(h, id, 0, OPTION);
    assert.equal(p.children.length, 2, 'no child tried for the slice at expiry');
  });

  test('a restart and a replay reach the same state', () => {
    const h = AlgoHarness.withMarket();
    h.maker('sell', 5, 500, OPTION);
    const ice = h.submit(iceberg());
    const bal = h.submit(
      portfolio({ portfolioType: 'BALANCE', legs: [callLeg(), putLeg()], balance: balanceSpec() }),
    );
    const restartedBefore = h.restarted();
    h.ts += 1000;
    settle(h, OPTION);
    restartedBefore.ts = h.ts;
    settle(restartedBefore, OPTION);
    h.runUntil(h.ts + 60_000);
    restartedBefore.runUntil(h.ts);
    const replayed = h.replayed();
    for (const other of [restartedBefore, replayed, h.restarted()]) {
      assert.equal(other.machine.stateHash(), h.machine.stateHash());
      assert.equal(other.machine.portfolio(ice)!.status, 'FAILED');
      assert.equal(other.machine.portfolio(bal)!.endReason, 'instrument_expired');
    }
  });

  test('a portfolio restored WORKING over an already expired leg (an older snapshot) ends at its next wakeup', () => {
    const h = AlgoHarness.withMarket();
    const id = h.submit(iceberg());
    assert.equal(h.openChildren(id).length, 1);
    // The state an older release saved after the settlement: the child closed, the leg waiting
    // for a price that never comes (retryAt one second on), the portfolio WORKING.
    h.venue.execute({
      type: 'settle_instrument',
      instrumentName: OPTION,
      settlementPrice: 0,
      seq: ++h.seq,
      ts: h.ts,
    });
    const snapshot = h.machine.snapshot() as unknown as {
      portfolios: {
        children: { open: boolean }[];
        legs: { working: string | null }[];
        retryAt: number | null;
      }[];
    };
    const saved = snapshot.portfolios[0]!;
    saved.children[0]!.open = false;
    saved.legs[0]!.working = null;
    saved.retryAt = h.ts + 1000;
    h.machine.restore(snapshot);
    assert.equal(h.machine.portfolio(id)!.status, 'WORKING');
    h.runUntil(h.ts + 5_000);
    assert.equal(h.machine.portfolio(id)!.status, 'FAILED');
    assert.equal(h.machine.portfolio(id)!.endReason, 'instrument_expired');
    assert.equal(h.machine.nextWakeup(), null);
  });
});

/** A submit whose refusal the test looks at (AlgoHarness.submit throws on one). */
function submit(h: AlgoHarness, spec: PortfolioSpec) {
  return h.algo({ type: 'submit_portfolio', portfolio: spec } as Omit<AlgoCommand, 'seq' | 'ts'>);
}

describe('submitting on an expired instrument', () => {
  test('is refused with instrument_expired on the leg’s instrument field', () => {
    const h = AlgoHarness.withMarket();
    settle(h, PUT);
    const result = submit(h, portfolio({ legs: [leg({ amount: 10 }), putLeg()] }));
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.error.name, 'instrument_expired');
    assert.deepEqual(result.error.data, { field: 'legs[1].instrument' });
    assert.match(result.error.message, new RegExp(PUT));
  });

  test('is refused from the expiry instant on, before the settlement too', () => {
    const h = AlgoHarness.withMarket();
    h.ts = OPTION_EXPIRY - 1;
    assert.ok(submit(h, portfolio({ legs: [callLeg({ amount: 10 })] })).ok, 'a millisecond before');
    h.ts = OPTION_EXPIRY;
    const mirrors = h.machine.portfoliosOf(MIRROR).length;
    const result = submit(
      h,
      portfolio({ legs: [leg({ amount: 10 }), callLeg()], mirrorAccountIds: [MIRROR] }),
    );
    assert.equal(h.venue.instrument(OPTION)!.status, 'open', 'not settled yet');
    assert.ok(!result.ok, 'refused');
    assert.equal(result.error.name, 'instrument_expired');
    assert.deepEqual(result.error.data, { field: 'legs[1].instrument' });
    assert.match(result.error.message, new RegExp(OPTION));
    assert.equal(h.machine.portfoliosOf(MIRROR).length, mirrors, 'no portfolio created');
  });

  test('an unknown instrument stays invalid_instrument', () => {
    const h = AlgoHarness.withMarket();
    const result = submit(h, portfolio({ legs: [leg({ instrumentName: 'BTC-NOPE' })] }));
    assert.ok(!result.ok);
    assert.equal(result.error.name, 'invalid_instrument');
  });
});
