import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreCommand } from '../core/commands.ts';
import type { VenueSnapshot } from './snapshot.ts';
import { Harness, optionSpec, perpetualSpec, spotSpec, T0 } from './testkit.ts';
import { Venue } from './venue.ts';

const PERP = 'BTC-PERPETUAL';
const OPTION = 'BTC-27DEC26-70000-C';
const DAY = 86_400_000;

/** A perpetual with a mark and three funded accounts, every command logged for replays. */
function market(): { h: Harness; log: CoreCommand[] } {
  const h = new Harness();
  const log: CoreCommand[] = [];
  const execute = h.venue.execute.bind(h.venue);
  h.venue.execute = (command) => {
    log.push(structuredClone(command));
    return execute(command);
  };
  h.list(perpetualSpec());
  for (const a of [1, 2, 3]) h.account(a);
  h.ok({ type: 'update_prices', markPrices: [{ instrumentName: PERP, markPrice: 100_000 }] });
  return { h, log };
}

/** `maker` rests, `taker` crosses it completely: one trade of `lots` at `price`. */
function trade(h: Harness, maker: number, taker: number, side: 'buy' | 'sell', lots: number, price: number) {
  assert.ok(h.order(maker, side === 'buy' ? 'sell' : 'buy', lots, price).ok, 'the maker rests');
  const result = h.order(taker, side, lots, price, { timeInForce: 'immediate_or_cancel' });
  assert.ok(result.ok && result.trades?.length === 1, 'one trade');
}

describe('ticker 24 h stats and open interest', () => {
  test('volume, high and low follow the fills; open interest is the sum of the longs', () => {
    const { h } = market();
    assert.deepEqual(h.venue.tradeStats(PERP), { volume: 0, high: null, low: null, openInterest: 0 });
    trade(h, 1, 2, 'buy', 10, 100_002); // 2 long 10, 1 short 10
    h.ts += 1_000;
    trade(h, 3, 2, 'sell', 4, 99_998); // 2 long 6, 3 long 4
    assert.deepEqual(h.venue.tradeStats(PERP), { volume: 14, high: 100_002, low: 99_998, openInterest: 10 });
    h.ts += 60_000;
    trade(h, 1, 3, 'sell', 4, 100_000); // 1 buys 4 back (short 6), 3 sells its 4 (flat)
    assert.deepEqual(h.venue.tradeStats(PERP), { volume: 18, high: 100_002, low: 99_998, openInterest: 6 });
    h.venue.validate();
    assert.equal(h.venue.tradeStats('NOPE'), null);
  });

  test('a trade leaves the window at the minute boundary 1,440 minutes after its own, by command time', () => {
    const { h } = market();
    h.ts = T0 + 30_000;
    trade(h, 1, 2, 'buy', 10, 100_001);
    h.ts = T0 + 90_000;
    trade(h, 1, 2, 'buy', 5, 99_999);
    assert.equal(h.venue.nextWakeup(), T0 + DAY, 'the edge is asked to wake when the first minute leaves');
    h.ts = T0 + DAY - 1;
    h.ok({ type: 'timer' });
    assert.deepEqual(h.venue.tradeStats(PERP), { volume: 15, high: 100_001, low: 99_999, openInterest: 15 });
    h.ts = T0 + DAY;
    h.ok({ type: 'timer' });
    assert.deepEqual(h.venue.tradeStats(PERP), { volume: 5, high: 99_999, low: 99_999, openInterest: 15 });
    assert.equal(h.venue.nextWakeup(), T0 + DAY + 60_000);
    h.ts = T0 + DAY + 60_000;
    h.ok({ type: 'timer' });
    assert.deepEqual(h.venue.tradeStats(PERP), { volume: 0, high: null, low: null, openInterest: 15 });
    assert.equal(h.venue.nextWakeup(), null, 'nothing left to expire');
    assert.equal(h.venue.snapshot().instruments[0]!.tradeStats, undefined, 'an empty window is not saved');
  });

  test('a restored snapshot and a journal replay show the same figures, and expire them alike', () => {
    const { h, log } = market();
    const untraded = h.venue.snapshot();
    assert.ok(!('tradeStats' in untraded.instruments[0]!), 'absent while unused');
    for (let i = 0; i < 30; i++) {
      h.ts = T0 + i * 50_000;
      trade(h, 1 + (i % 3), 1 + ((i + 1) % 3), i % 2 === 0 ? 'buy' : 'sell', 1 + (i % 4), 99_995 + (i % 9));
    }
    const saved = JSON.parse(JSON.stringify(h.venue.snapshot())) as VenueSnapshot;
    assert.ok((saved.instruments[0]!.tradeStats?.length ?? 0) > 1);
    const restored = Venue.restore(saved);
    const replayed = Venue.create();
    for (const command of log) replayed.execute(command);
    for (const other of [restored, replayed]) {
      assert.equal(other.stateHash(), h.venue.stateHash());
      assert.deepEqual(other.tradeStats(PERP), h.venue.tradeStats(PERP));
      assert.equal(other.nextWakeup(), h.venue.nextWakeup());
      other.validate();
    }
    // Half the minutes leave the window: the three still agree.
    const ts = T0 + DAY + 12 * 50_000;
    for (const venue of [h.venue, restored, replayed]) venue.execute({ type: 'timer', seq: 10_000, ts });
    const after = h.venue.tradeStats(PERP)!;
    assert.ok(after.volume > 0 && after.volume < 75);
    assert.deepEqual(restored.tradeStats(PERP), after);
    assert.deepEqual(replayed.tradeStats(PERP), after);
    assert.equal(restored.stateHash(), h.venue.stateHash());
    assert.equal(replayed.stateHash(), h.venue.stateHash());
  });

  test('block trades count in volume and open interest; settlement closes the interest', () => {
    const h = new Harness();
    h.list(perpetualSpec());
    h.list(optionSpec());
    h.account(1);
    h.account(2);
    h.ok({
      type: 'block_trade',
      takerAccountId: 1,
      makerAccountId: 2,
      legs: [
        { instrumentName: OPTION, side: 'buy', amount: 10, price: 100 },
        { instrumentName: PERP, side: 'sell', amount: 5, price: 100_000 },
      ],
    });
    assert.deepEqual(h.venue.tradeStats(OPTION), { volume: 10, high: 100, low: 100, openInterest: 10 });
    assert.deepEqual(h.venue.tradeStats(PERP), { volume: 5, high: 100_000, low: 100_000, openInterest: 5 });
    h.ok({ type: 'settle_instrument', instrumentName: OPTION, settlementPrice: 300 });
    assert.deepEqual(h.venue.tradeStats(OPTION), { volume: 10, high: 100, low: 100, openInterest: 0 });
    h.venue.validate();
  });

  test('spot has volume but no open interest', () => {
    const h = new Harness();
    h.list(spotSpec());
    h.account(1, { BTC: 100_000_000_000, USDC: 100_000_000_000 });
    h.account(2, { BTC: 100_000_000_000, USDC: 100_000_000_000 });
    const spot = { instrumentName: 'BTC_USDC' };
    assert.ok(h.order(1, 'sell', 3, 60_000, spot).ok);
    assert.ok(h.order(2, 'buy', 3, 60_000, { ...spot, timeInForce: 'immediate_or_cancel' }).ok);
    assert.deepEqual(h.venue.tradeStats('BTC_USDC'), {
      volume: 3,
      high: 60_000,
      low: 60_000,
      openInterest: null,
    });
  });
});
