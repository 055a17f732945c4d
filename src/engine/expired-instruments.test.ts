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
import type { VenueSnapshot } from './snapshot.ts';
import type { VenueState } from './state.ts';
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

/** Test-only access to the venue's state. */
function stateOf(venue: Venue): VenueState {
  return (venue as unknown as { state: VenueState }).state;
}

/**
 * Accounts 1 and 2 hold opposite positions on the future; account 2 rests a reduce-only sell on
 * it and account 1 a combo order on the future spread (claim queues and combo lots on the future
 * leg); account 3's orders at 70 prices grow the future's bid ladder, and the ones it cancels
 * leave spare levels.
 */
function holdersOfFuture(h: Harness): void {
  withMarkets(h, [FUTURE_SPREAD]);
  assert.ok(h.order(1, 'sell', 10, 24_200, { instrumentName: FUTURE }).ok);
  assert.ok(h.order(2, 'buy', 10, 24_200, { instrumentName: FUTURE }).ok);
  assert.ok(h.order(2, 'sell', 5, 24_400, { instrumentName: FUTURE, reduceOnly: true }).ok);
  assert.ok(h.order(1, 'sell', 10, 198, { instrumentName: FUTURE_SPREAD }).ok);
  const bids: string[] = [];
  for (let i = 0; i < 70; i++) {
    const placed = h.order(3, 'buy', 1, 24_000 - i, { instrumentName: FUTURE });
    assert.ok(placed.ok);
    bids.push(placed.order!.orderId);
  }
  for (const orderId of bids.slice(0, 5)) h.ok({ type: 'cancel_order', accountId: 3, orderId });
}

function settleFuture(h: Harness): void {
  h.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
}

/** What the venue still holds of the future per account, and its book's spare room. */
function leftOf(venue: Venue) {
  const state = stateOf(venue);
  const future = state.instruments.get(FUTURE)!;
  const id = future.id;
  const accounts = [...state.accounts.values()];
  return {
    positions: accounts.filter((a) => a.positions.has(id)).map((a) => a.id),
    claimQueues: accounts.filter((a) => a.claimQueues.has(id)).map((a) => a.id),
    comboOpen: accounts.filter((a) => a.comboOpen.has(id)).map((a) => a.id),
    instrumentPositions: future.positions.size,
    spareLevels: future.book.bids.spareLevels + future.book.asks.spareLevels,
    capacity: [future.book.bids.capacity, future.book.asks.capacity],
  };
}

const NOTHING_LEFT = {
  positions: [],
  claimQueues: [],
  comboOpen: [],
  instrumentPositions: 0,
  spareLevels: 0,
  capacity: [64, 64],
};

describe('what a settlement drops', () => {
  test("the holders' positions, claim queues, combo lots and the book's spare room go", () => {
    const h = new Harness();
    holdersOfFuture(h);
    const before = leftOf(h.venue);
    assert.deepEqual(before.positions, [1, 2, 3]);
    assert.ok(before.spareLevels >= 5 && before.capacity[0]! > 64);
    const settled = h.ok({ type: 'settle_instrument', instrumentName: FUTURE, settlementPrice: 24_200 });
    // The settlement still reports each holder's closed position, with its realised PnL.
    const closed = settled.events.flatMap((e) => (e.type === 'position' ? [e.position] : []));
    assert.deepEqual(
      closed.map((p) => [p.accountId, p.instrumentName, p.size]),
      [
        [1, FUTURE, 0],
        [2, FUTURE, 0],
      ],
    );
    assert.deepEqual(leftOf(h.venue), NOTHING_LEFT);
    for (const account of [1, 2, 3]) {
      assert.equal(h.venue.position(account, FUTURE), null);
      assert.deepEqual(
        h.venue.positions(account).filter((p) => p.instrumentName === FUTURE),
        [],
      );
    }
    h.venue.validate();
    // Nothing brings them back: the future spread's orders are refused, its leg having expired.
    assert.equal(h.order(1, 'sell', 10, 198, { instrumentName: FUTURE_SPREAD }).ok, false);
    assert.deepEqual(leftOf(h.venue), NOTHING_LEFT);
    // The venue goes on: the perpetual trades, the other legs settle.
    assert.ok(h.order(1, 'buy', 10, 120_000, { instrumentName: 'BTC-PERPETUAL' }).ok);
    assert.ok(h.order(2, 'sell', 10, 120_000, { instrumentName: 'BTC-PERPETUAL' }).ok);
    h.ok({ type: 'settle_instrument', instrumentName: LOW_CALL, settlementPrice: 0 });
    h.venue.validate();
  });

  test('the greeks published with its marks go too', () => {
    const h = withMarkets(new Harness(), []);
    h.ok({
      type: 'update_prices',
      markPrices: [
        { instrumentName: LOW_CALL, markPrice: 500, delta: 0.4, vega: 12 },
        { instrumentName: PUT, markPrice: 900, delta: -0.6, vega: 12 },
      ],
    });
    const greeks = stateOf(h.venue).advanced.greeks;
    assert.deepEqual([...greeks.keys()].sort(), [LOW_CALL, PUT].sort());
    h.ok({ type: 'settle_instrument', instrumentName: LOW_CALL, settlementPrice: 0 });
    assert.deepEqual([...greeks.keys()], [PUT]);
    const restored = Venue.restore(h.venue.snapshot());
    assert.equal(restored.stateHash(), h.venue.stateHash());
  });

  test('the state after it is the same live, replayed, and restored before or after it', () => {
    const live = new Harness();
    holdersOfFuture(live);
    const beforeSettle = live.venue.snapshot();
    settleFuture(live);
    const restoredAfter = Venue.restore(live.venue.snapshot());
    assert.equal(restoredAfter.stateHash(), live.venue.stateHash());
    assert.deepEqual(leftOf(restoredAfter), NOTHING_LEFT);
    restoredAfter.validate();
    const restoredBefore = new Harness({}, Venue.restore(beforeSettle));
    restoredBefore.seq = live.seq - 1;
    restoredBefore.ts = live.ts;
    settleFuture(restoredBefore);
    assert.equal(restoredBefore.venue.stateHash(), live.venue.stateHash());
    assert.deepEqual(leftOf(restoredBefore.venue), NOTHING_LEFT);
    restoredBefore.venue.validate();
    const replayed = new Harness();
    holdersOfFuture(replayed);
    settleFuture(replayed);
    assert.equal(replayed.venue.stateHash(), live.venue.stateHash());
    assert.deepEqual(leftOf(replayed.venue), NOTHING_LEFT);
  });

  test("an older build's snapshot, with the settled flat positions, restores as it was written", () => {
    const h = new Harness();
    holdersOfFuture(h);
    settleFuture(h);
    // Older builds kept each holder's flat position after the settlement, and saved it.
    const written = structuredClone(h.venue.snapshot()) as VenueSnapshot & {
      accounts: { id: number; positions: unknown[] }[];
    };
    for (const account of written.accounts)
      if (account.id !== 3)
        account.positions.push({
          instrumentName: FUTURE,
          size: 0,
          openCost: 0,
          entryValue: 0,
          realisedPnl: account.id === 1 ? 7 : -7,
        });
    const restored = Venue.restore(written as VenueSnapshot);
    assert.deepEqual(restored.snapshot(), written);
    assert.notEqual(restored.stateHash(), h.venue.stateHash());
    restored.validate();
    assert.deepEqual(
      restored.positions(1).filter((p) => p.instrumentName === FUTURE),
      [],
    );
    // It goes on as the older build would have, and settles the rest by this build's rules.
    const next = new Harness({}, restored);
    next.seq = h.seq;
    next.ts = h.ts;
    next.ok({ type: 'settle_instrument', instrumentName: LOW_CALL, settlementPrice: 0 });
    restored.validate();
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
