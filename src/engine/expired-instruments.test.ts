/**
 * What the venue keeps of expired instruments: open ones are listed apart from expired ones,
 * only recently expired ones are listed as expired, an expired instrument keeps its last few
 * trades, and a settlement cancels the combos of its leg through a leg→combos index that a
 * restored venue rebuilds. The state after a settlement is the same live, replayed or restored.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CommandResult } from '../core/events.ts';
import { FUTURE, FUTURE_SPREAD, LOW_CALL, listCombos, PUT, SPREAD, STRADDLE } from './combo-testkit.ts';
import { EXPIRED_TRADES_KEPT } from './lifecycle.ts';
import { Harness, perpetualSpec } from './testkit.ts';
import { RECENTLY_EXPIRED_MS, Venue } from './venue.ts';

const DAY = 24 * 3_600_000;

function withMarkets(h: Harness, combos: readonly string[]): Harness {
  listCombos(h, combos);
  for (const a of [1, 2, 3]) h.account(a);
  h.ok({
    type: 'update_prices',
    indexPrices: [{ currency: 'BTC', price: 60_000 }],
    markPrices: [
      { instrumentName: 'BTC-PERPETUAL', markPrice: 120_010 },
      { instrumentName: FUTURE, markPrice: 24_200 },
      { instrumentName: LOW_CALL, markPrice: 500 },
      { instrumentName: 'BTC-27DEC26-75000-C', markPrice: 300 },
      { instrumentName: PUT, markPrice: 900 },
    ],
  });
  return h;
}

function names(list: readonly { readonly name: string }[]): string[] {
  return list.map((i) => i.name);
}

function cancelledBySettlement(result: CommandResult): string[] {
  return result.events.flatMap((e) =>
    e.type === 'order' && e.order.cancelReason === 'settlement' ? [e.order.orderId] : [],
  );
}

describe('expired instruments', () => {
  test('open instruments are listed apart; expired ones only within the recent horizon', () => {
    const h = withMarkets(new Harness(), []);
    const all = names(h.venue.instruments().map((i) => i.instrument));
    assert.deepEqual(names(h.venue.listedInstruments(false)), all);
    assert.deepEqual(h.venue.listedInstruments(true), []);
    const expiry = h.venue.listedInstruments(false).find((i) => i.name === FUTURE)!.spec.expiration!;
    h.ts = expiry;
    h.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    assert.deepEqual(
      names(h.venue.listedInstruments(false)),
      all.filter((n) => n !== FUTURE),
    );
    assert.deepEqual(
      names(h.venue.instruments({ expired: false }).map((i) => i.instrument)),
      all.filter((n) => n !== FUTURE),
    );
    assert.deepEqual(names(h.venue.listedInstruments(true)), [FUTURE]);
    assert.equal(h.venue.instruments({ expired: true })[0]!.status, 'expired');
    // A restored venue lists the same.
    const restored = Venue.restore(h.venue.snapshot());
    assert.deepEqual(names(restored.listedInstruments(true)), [FUTURE]);
    assert.deepEqual(names(restored.listedInstruments(false)), names(h.venue.listedInstruments(false)));
    // Still recent at the horizon, gone after it; every instrument ever listed stays known.
    h.ts = expiry + RECENTLY_EXPIRED_MS;
    h.ok({ type: 'timer' });
    assert.deepEqual(names(h.venue.listedInstruments(true)), [FUTURE]);
    h.ts = expiry + RECENTLY_EXPIRED_MS + 1;
    h.ok({ type: 'timer' });
    assert.deepEqual(h.venue.listedInstruments(true), []);
    assert.deepEqual(names(h.venue.instruments().map((i) => i.instrument)), all);
    assert.equal(h.venue.instrument(FUTURE)!.status, 'expired');
    assert.deepEqual(h.venue.currencies(), ['BTC']);
  });

  test('an instrument without an expiration that an operator settles stays listed as expired', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.ok({ type: 'settle_instrument', instrumentName: 'BTC-PERPETUAL', settlementPrice: 100_000 });
    h.ts += 30 * DAY;
    h.ok({ type: 'timer' });
    assert.deepEqual(names(h.venue.listedInstruments(true)), ['BTC-PERPETUAL']);
    assert.deepEqual(h.venue.listedInstruments(false), []);
  });

  test('a settled instrument keeps only its last trades, the same live, restored and replayed', () => {
    const steps = (h: Harness, settle: boolean) => {
      withMarkets(h, []);
      for (let i = 0; i < 15; i++) {
        h.ts += 1_000;
        assert.ok(h.order(1, 'sell', 10, 24_200, { instrumentName: FUTURE }).ok);
        assert.ok(h.order(2, 'buy', 10, 24_200, { instrumentName: FUTURE }).ok);
      }
      if (settle) h.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    };
    const live = new Harness();
    steps(live, false);
    assert.equal(live.venue.recentTrades(FUTURE, 100).length, 15);
    const beforeSettle = live.venue.snapshot();
    live.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    const kept = live.venue.recentTrades(FUTURE, 100);
    assert.equal(kept.length, EXPIRED_TRADES_KEPT);
    assert.deepEqual(
      kept.map((t) => t.tradeSeq),
      [6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    // Restored after the settlement: the same state.
    const restoredAfter = Venue.restore(live.venue.snapshot());
    assert.equal(restoredAfter.stateHash(), live.venue.stateHash());
    assert.deepEqual(restoredAfter.recentTrades(FUTURE, 100), kept);
    // Restored before it, then settled: the same state.
    const restoredBefore = new Harness({}, Venue.restore(beforeSettle));
    restoredBefore.seq = live.seq - 1;
    restoredBefore.ts = live.ts;
    restoredBefore.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    assert.equal(restoredBefore.venue.stateHash(), live.venue.stateHash());
    // Replayed from the start: the same state.
    const replayed = new Harness();
    steps(replayed, true);
    assert.equal(replayed.venue.stateHash(), live.venue.stateHash());
    replayed.venue.validate();
    // Its 24 h trade stats stay for the ticker of the day it expired, then leave with the window.
    assert.equal(live.venue.tradeStats(FUTURE)!.volume, 150);
    live.ts += DAY;
    live.ok({ type: 'timer' });
    assert.deepEqual(live.venue.tradeStats(FUTURE), { volume: 0, high: null, low: null, openInterest: 0 });
  });

  test('a leg settlement cancels its open combos, also combos listed later and on a restored venue', () => {
    const build = () => {
      const h = withMarkets(new Harness(), [STRADDLE, SPREAD, FUTURE_SPREAD]);
      return h;
    };
    const live = build();
    const straddle = live.order(1, 'sell', 10, 1_500, { instrumentName: STRADDLE });
    const spread = live.order(1, 'sell', 10, 250, { instrumentName: SPREAD });
    const futureSpread = live.order(1, 'sell', 100, 198, { instrumentName: FUTURE_SPREAD });
    assert.ok(straddle.ok && spread.ok && futureSpread.ok);
    const snapshot = live.venue.snapshot();
    // The future's settlement builds the index and takes the future spread's order only.
    const first = live.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    assert.deepEqual(cancelledBySettlement(first), [futureSpread.order!.orderId]);
    // The low call's settlement takes the straddle's and the spread's orders, in listing order.
    const second = live.ok({ type: 'settle_instrument', instrumentName: LOW_CALL, settlementPrice: 0 });
    assert.deepEqual(cancelledBySettlement(second), [straddle.order!.orderId, spread.order!.orderId]);
    // A restored venue (no index yet) does the same.
    const restored = new Harness({}, Venue.restore(snapshot));
    restored.seq = live.seq - 2;
    restored.ts = live.ts;
    const again1 = restored.ok({
      type: 'settle_instrument',
      instrumentName: FUTURE,
      settlementPrice: 24_200,
    });
    const again2 = restored.ok({ type: 'settle_instrument', instrumentName: LOW_CALL, settlementPrice: 0 });
    assert.deepEqual(again1.events, first.events);
    assert.deepEqual(again2.events, second.events);
    assert.equal(restored.venue.stateHash(), live.venue.stateHash());
    live.venue.validate();
  });

  test('a combo listed after the index was built is cancelled with its leg', () => {
    const h = withMarkets(new Harness(), [FUTURE_SPREAD]);
    h.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    listLater(h, STRADDLE);
    const straddle = h.order(1, 'sell', 10, 1_500, { instrumentName: STRADDLE });
    assert.ok(straddle.ok);
    const settled = h.ok({ type: 'settle_instrument', instrumentName: PUT, settlementPrice: 0 });
    assert.deepEqual(cancelledBySettlement(settled), [straddle.order!.orderId]);
    h.venue.validate();
  });
});

/** Lists one more combo of the combo testkit on a venue whose legs are listed. */
function listLater(h: Harness, combo: string): void {
  const other = new Harness();
  other.ts = h.ts;
  listCombos(other, [combo]);
  const spec = other.venue.instrument(combo)!.instrument.spec;
  h.list(spec);
}
