/**
 * The real engine through the durability layer: commands journaled as the sequencer does,
 * events fed to the read store, a snapshot midway; recovery (snapshot + replay) must rebuild the
 * live state hash exactly, and history queries must see the orders and trades.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CoreCommand, UnstampedCommand } from '../../src/core/commands.ts';
import { perpetualSpec, T0 } from '../../src/engine/testkit.ts';
import { Venue, type VenueSnapshot } from '../../src/engine/venue.ts';
import { openStores } from '../../src/store/open-stores.ts';
import { recover } from '../../src/store/recovery.ts';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function commands(count: number): UnstampedCommand[] {
  const out: UnstampedCommand[] = [{ type: 'list_instrument', spec: perpetualSpec() }];
  for (const accountId of [1, 2, 3]) {
    out.push({ type: 'create_account', accountId });
    out.push({ type: 'deposit', accountId, currency: 'BTC', amount: 100_000_000_000 });
  }
  const random = lcg(42);
  for (let i = 0; i < count; i++) {
    out.push({
      type: 'place_order',
      accountId: 1 + Math.floor(random() * 3),
      instrumentName: 'BTC-PERPETUAL',
      side: random() < 0.5 ? 'buy' : 'sell',
      orderType: 'limit',
      amount: 1 + Math.floor(random() * 5),
      price: 100_000 + Math.floor(random() * 8),
      timeInForce: 'good_til_cancelled',
      postOnly: false,
      rejectPostOnly: false,
      reduceOnly: false,
      label: `l${i}`,
      validUntil: null,
      source: { api: true },
    });
  }
  return out;
}

test('snapshot + journal replay rebuilds the live engine exactly; the read store sees history', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'engine-durability-'));
  try {
    const stores = await openStores<CoreCommand>({ dataDir: dir, databaseUrl: null });
    const live = Venue.create();
    const pending: Promise<void>[] = [];
    const all = commands(400);
    let seq = 0;
    let trades = 0;
    for (const unstamped of all) {
      seq++;
      const ts = T0 + seq * 1000;
      const command = { ...unstamped, seq, ts } as CoreCommand;
      const result = live.execute(command);
      trades += result.events.filter((e) => e.type === 'trade').length;
      pending.push(stores.journal.append({ seq, ts, command }));
      stores.readStore.push({ seq, ts, events: result.events });
      if (seq === 200) {
        await stores.snapshots.saveSnapshot({ seq, ts, stateHash: live.stateHash(), state: live.snapshot() });
      }
    }
    await Promise.all(pending);
    await stores.readStore.flush();
    assert.ok(trades > 10, `the scenario trades (${trades})`);
    const liveHash = live.stateHash();
    const now = T0 + seq * 1000;
    const history = await stores.readStore.orderHistory({
      accountId: 1,
      currency: 'BTC',
      now,
      count: 1000,
      historical: true,
      includeOld: true,
    });
    assert.ok(history.orders.length > 0);
    const userTrades = await stores.readStore.userTrades({
      accountId: 1,
      now,
      count: 1000,
      historical: true,
      includeOld: true,
    });
    assert.ok(userTrades.trades.length > 0);
    await stores.close();

    const reopened = await openStores<CoreCommand>({ dataDir: dir, databaseUrl: null });
    try {
      const { core, report } = await recover({
        journal: reopened.journal,
        snapshots: reopened.snapshots,
        createCore: (state) => {
          const venue = state === null ? Venue.create() : Venue.restore(state as VenueSnapshot);
          return {
            venue,
            apply: (entry: { command: CoreCommand }) => void venue.execute(entry.command),
            stateHash: () => venue.stateHash(),
          };
        },
        strict: true,
      });
      assert.equal(report.snapshotSeq, 200);
      assert.equal(report.replayed, all.length - 200);
      assert.equal(report.finalStateHash, liveHash);
      assert.equal(core.venue.stateHash(), liveHash);
    } finally {
      await reopened.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
