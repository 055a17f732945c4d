/**
 * The market against the real engine: the driver lists and prices the catalogue, the
 * simulator's commands go through `Venue.execute` like any user's, and expiry settles.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { venueSimulatorView } from '../../src/app/market-loop.ts';
import type { CoreCommand, UnstampedCommand } from '../../src/core/commands.ts';
import { Venue } from '../../src/engine/venue.ts';
import { defaultMarketDriverConfig, MarketDriver } from '../../src/market/driver.ts';

const START = Date.UTC(2026, 10, 22, 7, 50);
const EXPIRY = Date.UTC(2026, 10, 22, 8);

class Run {
  readonly venue = Venue.create();
  readonly view = venueSimulatorView(this.venue);
  readonly driver = new MarketDriver(defaultMarketDriverConfig(START, 3));
  private seq = 1;
  readonly refusals: string[] = [];

  execute(now: number, commands: readonly UnstampedCommand[]): void {
    for (const command of commands) {
      const result = this.venue.execute({ ...command, seq: this.seq++, ts: now } as CoreCommand);
      if (!result.ok) this.refusals.push(`${command.type}: ${result.error.name} ${result.error.message}`);
    }
  }
}

describe('market on the engine', () => {
  test('two-sided books everywhere, takers trade, nothing refused, expiry settles', () => {
    const run = new Run();
    run.execute(START, run.driver.start(START));
    assert.deepEqual(run.refusals, []);
    run.execute(START, run.driver.tick(START, run.view));
    const names = run.driver.instruments().map((instrument) => instrument.name);
    for (const name of names) {
      const book = run.venue.book(name, 1);
      assert.ok(book?.bestAsk != null, `${name} has no ask`);
      if (book.bestBid == null) {
        // No bid below one tick (docs/decisions.md): only for an option worth a few ticks at most.
        const info = run.venue.instrument(name)!;
        assert.ok(info.instrument.isOption && (info.markPrice ?? 0) < 5, `${name} is not two-sided`);
        continue;
      }
      assert.ok(book.bestBid < book.bestAsk, `${name} is crossed`);
    }
    for (let now = START + 1000; now <= START + 30_000; now += 1000) {
      run.execute(now, run.driver.tick(now, run.view));
    }
    const trades = names.reduce((sum, name) => sum + run.venue.recentTrades(name, 100).length, 0);
    assert.ok(trades > 10, `only ${trades} trades`);
    // Through expiry: settle_instrument for today's instruments is accepted.
    for (let now = START + 60_000; now <= EXPIRY + 2000; now += 60_000) {
      run.execute(now, run.driver.tick(now, run.view));
    }
    run.execute(EXPIRY + 2000, run.driver.tick(EXPIRY + 2000, run.view));
    const expired = run.venue.instrument('BTC-22NOV26');
    assert.ok(expired !== null && expired.status !== 'open', `status ${expired?.status}`);
    assert.deepEqual(run.refusals.slice(0, 10), []);
  });
});
