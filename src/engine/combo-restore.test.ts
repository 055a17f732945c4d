/**
 * Combo trades across snapshots: a venue trading a call spread, a straddle and a future spread on
 * the perpetual (with orders on the legs, moving marks, cancels, reduce-only leg orders and a leg
 * that expires) is snapshotted at several points, each snapshot stored and read back as the
 * snapshot store does (src/store/record-format.ts) and restored; the restored venue must hash as
 * the straight run at that point and give exactly its results for every later command, so its
 * combo trades split into the same leg prices. The straight run must also equal a replay of its
 * command log.
 *
 * The engine resolves a combo's legs once per instrument state (combo-legs.ts, a WeakMap keyed
 * by the instrument state): a restored venue has states of its own, so its combo trades split at
 * its own legs' marks, never at those of the venue it was restored from.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreCommand, UnstampedCommand } from '../core/commands.ts';
import type { CommandResult, CoreEvent, TradeView } from '../core/events.ts';
import {
  FUTURE,
  FUTURE_SPREAD,
  HIGH_CALL,
  LOW_CALL,
  listCombos,
  PERP,
  PUT,
  SPREAD,
  STRADDLE,
} from './combo-testkit.ts';
import { Harness, orderCommand, restoreStored } from './testkit.ts';
import { Venue } from './venue.ts';

const LEGS = [PERP, FUTURE, LOW_CALL, HIGH_CALL, PUT] as const;
const COMBOS = [SPREAD, STRADDLE, FUTURE_SPREAD] as const;
const ACCOUNTS = [1, 2, 3];

/** Legs (dated future on 2.5 USD, perpetual 0.5 USD, options 0.0001 BTC), the combos, accounts, marks. */
function setup(h: Harness): void {
  listCombos(h, COMBOS);
  for (const a of ACCOUNTS) h.account(a);
  h.ok({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 60_000 }] });
}

/** Marks in each leg's ticks (options above 0.005 BTC move by 0.0005, 5 ticks). */
const START_MARKS: Record<(typeof LEGS)[number], number> = {
  [PERP]: 120_010,
  [FUTURE]: 24_200,
  [LOW_CALL]: 500,
  [HIGH_CALL]: 300,
  [PUT]: 900,
};
const STEP: Record<string, number> = { [PERP]: 1, [FUTURE]: 1, [LOW_CALL]: 5, [HIGH_CALL]: 5, [PUT]: 5 };

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Run {
  /** Every command as executed, stamped, setup included. */
  readonly log: CoreCommand[];
  readonly results: CommandResult[];
  /** The state hash after the first i commands, at the restore points and the end (by i). */
  readonly hashes: ReadonlyMap<number, string>;
  /** The index of the first command after the setup. */
  readonly setupEnd: number;
}

/** Restore points: right after the setup, then every this many commands. */
const EVERY = 70;

/**
 * The straight run: `count` random commands after the setup. Combo orders are placed around the
 * combo's net of the current marks, so they cross often; marks move, the put expires at 80%.
 */
function straightRun(seed: number, count: number): Run {
  const h = new Harness();
  const log: CoreCommand[] = [];
  const results: CommandResult[] = [];
  const hashes = new Map<number, string>();
  let setupEnd: number | null = null;
  const execute = h.venue.execute.bind(h.venue);
  h.venue.execute = (command) => {
    if (setupEnd !== null && (log.length - setupEnd) % EVERY === 0)
      hashes.set(log.length, h.venue.stateHash());
    const result = execute(command);
    log.push(structuredClone(command));
    results.push(result);
    return result;
  };
  setup(h);
  setupEnd = log.length;
  const random = lcg(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const marks = { ...START_MARKS };
  const open: { accountId: number; orderId: string }[] = [];
  let putExpired = false;
  const net = (combo: string): number => {
    if (combo === SPREAD) return marks[LOW_CALL] - marks[HIGH_CALL];
    if (combo === STRADDLE) return marks[LOW_CALL] + marks[PUT];
    // The future spread ticks by 2.5 USD: the future's mark (2.5) less the perpetual's (0.5).
    return Math.round((marks[FUTURE] * 5 - marks[PERP]) / 5);
  };
  h.ok({
    type: 'update_prices',
    markPrices: LEGS.map((instrumentName) => ({ instrumentName, markPrice: marks[instrumentName] })),
  });
  for (let i = 0; i < count; i++) {
    h.ts += 250;
    const roll = random();
    if (!putExpired && i >= count * 0.8) {
      putExpired = true;
      h.ok({ type: 'settle_instrument', instrumentName: PUT, settlementPrice: 0 });
    } else if (roll < 0.1) {
      for (const leg of LEGS) {
        if (random() < 0.5) continue;
        const move = Math.round((random() - 0.5) * 6) * STEP[leg]!;
        marks[leg] = Math.max(STEP[leg]! * 11, marks[leg] + move);
      }
      // Sometimes one leg is left out: its mark stays, the others move.
      h.ok({
        type: 'update_prices',
        markPrices: LEGS.filter((leg) => !(putExpired && leg === PUT)).map((instrumentName) => ({
          instrumentName,
          markPrice: marks[instrumentName],
        })),
      });
    } else if (roll < 0.2 && open.length > 0) {
      const { accountId, orderId } = open.splice(Math.floor(random() * open.length), 1)[0]!;
      h.run({ type: 'cancel_order', accountId, orderId });
    } else {
      const accountId = pick(ACCOUNTS);
      const side = random() < 0.5 ? 'buy' : 'sell';
      const onCombo = roll < 0.75;
      const instrumentName = onCombo ? pick(COMBOS) : pick(LEGS);
      const price = onCombo
        ? net(instrumentName) + Math.round((random() - 0.5) * 6)
        : marks[instrumentName as (typeof LEGS)[number]] +
          Math.round((random() - 0.5) * 6) * STEP[instrumentName]!;
      const reduceOnly = !onCombo && random() < 0.2;
      const ioc = random() < 0.3;
      const result = h.order(accountId, side, 1 + Math.floor(random() * 8), price, {
        instrumentName,
        reduceOnly,
        timeInForce: ioc ? 'immediate_or_cancel' : 'good_til_cancelled',
      });
      if (result.ok && result.order?.orderState === 'open')
        open.push({ accountId, orderId: result.order.orderId });
    }
  }
  hashes.set(log.length, h.venue.stateHash());
  return { log, results, hashes, setupEnd };
}

function comboTrades(results: readonly CommandResult[]): TradeView[] {
  return results
    .flatMap((result) => result.events)
    .flatMap((event: CoreEvent) =>
      event.type === 'trade' && event.trade.legs !== undefined ? [event.trade] : [],
    );
}

describe('combo trades across snapshots and replays', () => {
  for (const seed of [1, 2, 3]) {
    test(`seed ${seed}: restored at several points, the venue hashes and trades as the straight run`, () => {
      const run = straightRun(seed, 400);
      const { log, results, hashes, setupEnd } = run;
      const points: number[] = [];
      for (let at = setupEnd; at < log.length; at += EVERY) points.push(at);
      let venue = Venue.create();
      let next = 0;
      for (const point of points) {
        for (; next < point; next++)
          assert.deepEqual(venue.execute(log[next]!), results[next], `command ${next}`);
        venue = restoreStored(venue, point);
        venue.validate();
        assert.equal(venue.stateHash(), hashes.get(point), `restored at ${point}: the straight run's hash`);
        // The segment after this restore makes combo trades, so the split after it is compared.
        const end = points[points.indexOf(point) + 1] ?? log.length;
        assert.ok(
          comboTrades(results.slice(point, end)).length > 0,
          `combo trades after the restore at ${point}`,
        );
      }
      for (; next < log.length; next++)
        assert.deepEqual(venue.execute(log[next]!), results[next], `command ${next}`);
      venue.validate();
      assert.equal(venue.stateHash(), hashes.get(log.length));

      // The straight run equals a replay of its log; every kind of combo traded.
      const replay = Venue.create();
      for (const command of log) replay.execute(command);
      assert.equal(replay.stateHash(), hashes.get(log.length));
      const traded = comboTrades(results);
      assert.deepEqual(new Set(traded.map((trade) => trade.instrumentName)), new Set(COMBOS));
      // The marks moved between the combo trades, so the legs were not split at one set of prices.
      assert.ok(new Set(traded.map((trade) => trade.legs!.map((leg) => leg.price).join('/'))).size > 10);
    });
  }

  test('a restored venue splits at its own legs’ marks, not at those of the venue it came from', () => {
    const h = new Harness();
    setup(h);
    h.ok({
      type: 'update_prices',
      markPrices: LEGS.map((instrumentName) => ({ instrumentName, markPrice: START_MARKS[instrumentName] })),
    });
    // A first trade resolves (and caches) the spread's legs in the original venue.
    h.order(1, 'sell', 10, 250, { instrumentName: SPREAD });
    const first = h.order(2, 'buy', 10, 250, { instrumentName: SPREAD });
    assert.ok(first.ok);
    assert.deepEqual(
      comboTrades([first])[0]!.legs!.map((leg) => leg.price),
      [550, 300],
    );
    h.order(1, 'sell', 10, 250, { instrumentName: SPREAD }); // rests across the snapshot
    const restored = restoreStored(h.venue, h.seq);
    restored.validate();
    const copy = new Harness({}, restored);
    copy.seq = h.seq;
    copy.ts = h.ts;

    // The original's marks move; the restored venue's move elsewhere.
    const marks = (harness: Harness, low: number, high: number) =>
      harness.ok({
        type: 'update_prices',
        markPrices: [
          { instrumentName: LOW_CALL, markPrice: low },
          { instrumentName: HIGH_CALL, markPrice: high },
        ],
      });
    marks(h, 700, 400);
    marks(copy, 500, 150);
    const legsOf = (result: CommandResult) =>
      comboTrades([result])[0]!.legs!.map((leg) => [leg.instrumentName, leg.price]);
    // The dearest leg (the 70000 call) absorbs the difference to 0.025; the other stays at its mark.
    assert.deepEqual(legsOf(h.order(2, 'buy', 10, 250, { instrumentName: SPREAD })), [
      [LOW_CALL, 650],
      [HIGH_CALL, 400],
    ]);
    assert.deepEqual(legsOf(copy.order(2, 'buy', 10, 250, { instrumentName: SPREAD })), [
      [LOW_CALL, 400],
      [HIGH_CALL, 150],
    ]);
    // Positions went to each venue's own legs.
    for (const venue of [h.venue, restored]) {
      assert.equal(venue.position(2, LOW_CALL)!.size, 20);
      assert.equal(venue.position(2, HIGH_CALL)!.size, -20);
      assert.equal(venue.position(2, SPREAD)?.size ?? 0, 0);
      venue.validate();
    }
    // A second restore of the restored venue goes on the same way as it does.
    const again = restoreStored(restored, copy.seq);
    const command = (venue: Venue, seq: number) =>
      venue.execute({ ...placeOn(SPREAD, 1, 'sell', 10, 260), seq, ts: copy.ts } as CoreCommand);
    command(restored, copy.seq + 1);
    command(again, copy.seq + 1);
    const take = (venue: Venue) =>
      venue.execute({ ...placeOn(SPREAD, 2, 'buy', 10, 260), seq: copy.seq + 2, ts: copy.ts } as CoreCommand);
    const taken = take(again);
    assert.equal(comboTrades([taken]).length, 1, 'a combo trade');
    assert.deepEqual(taken, take(restored));
    assert.equal(again.stateHash(), restored.stateHash());
  });
});

function placeOn(
  instrumentName: string,
  accountId: number,
  side: 'buy' | 'sell',
  amount: number,
  price: number,
): UnstampedCommand {
  return orderCommand(accountId, side, amount, price, { instrumentName });
}
