import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UnstampedCommand } from '../core/commands.ts';
import { Instrument, type InstrumentSpec } from '../domain/instrument.ts';
import { Harness } from '../engine/testkit.ts';
import { Venue, type VenueSnapshot } from '../engine/venue.ts';
import { decodeSnapshotState, encodeSnapshot } from '../store/record-format.ts';
import { defaultMarketDriverConfig, MarketDriver } from './driver.ts';
import { parseIndexCsv, ReplayIndex } from './index-source.ts';
import { toTicks } from './price-updates.ts';

const START = Date.UTC(2026, 10, 22, 7, 0);
const EXPIRY = Date.UTC(2026, 10, 22, 8);

function byType(commands: readonly UnstampedCommand[], type: UnstampedCommand['type']) {
  return commands.filter((command) => command.type === type);
}

describe('MarketDriver', () => {
  test('start lists the catalogue, funds the simulator and prices everything', () => {
    const driver = new MarketDriver(defaultMarketDriverConfig(START));
    const commands = driver.start(START);
    assert.equal(byType(commands, 'list_instrument').length, driver.instruments().length);
    assert.ok(byType(commands, 'create_account').length >= 3);
    // Every instrument's first mark, split as a tick splits them: no command carries over 256.
    const updates = byType(commands, 'update_prices').map((c) =>
      c.type === 'update_prices' ? c.markPrices! : [],
    );
    assert.equal(
      updates.reduce((sum, marks) => sum + marks.length, 0),
      driver.instruments().length,
    );
    assert.ok(driver.instruments().length > 256, `${driver.instruments().length} instruments`);
    assert.ok(
      updates.every((marks) => marks.length <= 256),
      updates.map((marks) => marks.length).join(' '),
    );
    const names = new Set(updates.flat().map((mark) => mark.instrumentName));
    assert.equal(names.size, driver.instruments().length, 'each instrument marked once');
  });

  test('at 08:00 expiring instruments settle at the 30-min TWAP and the next expiry lists', () => {
    const rows = `timestamp,price\n${START},60000\n${EXPIRY - 20 * 60_000},61000\n${EXPIRY - 10 * 60_000},62000\n`;
    const parsed = parseIndexCsv(rows);
    assert.ok(parsed.ok);
    const config = defaultMarketDriverConfig(START);
    const driver = new MarketDriver({
      ...config,
      sources: [new ReplayIndex('BTC', parsed.rows), config.sources[1]!],
    });
    driver.start(START);
    let settled: UnstampedCommand[] = [];
    let listed: UnstampedCommand[] = [];
    for (let now = START + 60_000; now <= EXPIRY; now += 60_000) {
      const commands = driver.tick(now);
      settled = settled.concat(byType(commands, 'settle_instrument'));
      listed = listed.concat(byType(commands, 'list_instrument'));
    }
    // TWAP over 07:30–08:00: 10 min at 60000, 10 at 61000, 10 at 62000.
    const future = settled.find(
      (command) => command.type === 'settle_instrument' && command.instrumentName === 'BTC-22NOV26',
    );
    assert.ok(future?.type === 'settle_instrument');
    assert.equal(future.settlementPrice, 61_000 / 2.5);
    const call = settled.find(
      (command) => command.type === 'settle_instrument' && command.instrumentName === 'BTC-22NOV26-60500-C',
    );
    assert.ok(call?.type === 'settle_instrument');
    assert.equal(call.settlementPrice, Math.round(500 / 61_000 / 0.0001));
    assert.ok(
      listed.some((command) => command.type === 'list_instrument' && command.spec.name === 'BTC-25NOV26'),
    );
    assert.ok(!driver.instruments().some((instrument) => instrument.name === 'BTC-22NOV26'));
    // Settled once: the driver forgets it (the engine keeps expired instruments).
    assert.equal(
      settled.filter(
        (command) => command.type === 'settle_instrument' && command.instrumentName === 'BTC-22NOV26',
      ).length,
      1,
    );
    assert.ok(
      !byType(driver.tick(EXPIRY + 60_000), 'settle_instrument').some(
        (command) => command.type === 'settle_instrument' && command.instrumentName === 'BTC-22NOV26',
      ),
    );
  });

  test('through a drifting settlement window the expiring marks converge to the settlement', () => {
    // The index climbs 1% across 07:30-08:00 (in 10 s steps); the settlement averages the climb.
    const windowStart = EXPIRY - 30 * 60_000;
    const rows = [{ timestamp: START, price: 60_000 }];
    for (let t = windowStart; t <= EXPIRY; t += 10_000)
      rows.push({ timestamp: t, price: 60_000 * (1 + (0.01 * (t - windowStart)) / (30 * 60_000)) });
    const config = defaultMarketDriverConfig(START);
    const driver = new MarketDriver({
      ...config,
      sources: [new ReplayIndex('BTC', rows), config.sources[1]!],
    });
    driver.start(START);
    const at = EXPIRY - 60_000;
    let settled: UnstampedCommand[] = [];
    let marks = new Map<string, { spec: InstrumentSpec; mark: number }>();
    let index = 0;
    for (let now = START + 10_000; now <= EXPIRY; now += 10_000) {
      settled = settled.concat(byType(driver.tick(now), 'settle_instrument'));
      if (now === at) {
        const market = driver.market();
        index = market.index('BTC');
        marks = new Map(
          driver
            .instruments()
            .filter(
              (i) => i.spec.baseCurrency === 'BTC' && i.spec.expiration === EXPIRY && i.spec.legs === null,
            )
            .map((i) => [i.name, { spec: i.spec, mark: market.mark(i.name)!.markPrice }]),
        );
      }
    }
    const future = settled.find((c) => c.type === 'settle_instrument' && c.instrumentName === 'BTC-22NOV26');
    assert.ok(future?.type === 'settle_instrument');
    const settlement = Number(future.settlementIndex);
    // About the middle of the climb, well below the index at 07:59.
    assert.ok(Math.abs(settlement - 60_300) < 5 && index - settlement > 250);
    // The future: the fixed average blended with the index for the minute left.
    assert.ok(Math.abs(marks.get('BTC-22NOV26')!.mark - settlement) < settlement * 1e-4);
    // The options: their payoff at the settlement index (coin for inverse, USDC for linear).
    let options = 0;
    let between = 0;
    for (const [name, { spec, mark }] of marks) {
      if (spec.kind !== 'option') continue;
      options++;
      const strike = Number(spec.strike);
      if (strike > settlement && strike < index) between++;
      const usd = Math.max(spec.optionType === 'call' ? settlement - strike : strike - settlement, 0);
      if (spec.marginKind === 'inverse')
        assert.ok(Math.abs(mark - usd / settlement) < 1e-4, `${name} ${mark} vs ${usd / settlement}`);
      else assert.ok(Math.abs(mark - usd) < 5, `${name} ${mark} vs ${usd}`);
    }
    assert.ok(options > 10 && between > 0);
  });

  test('new strikes list at the once-a-minute listing check, not between checks', () => {
    // The BTC index jumps 15% at 07:00:20: the strike grid moves, but only the next check lists it.
    const config = defaultMarketDriverConfig(START);
    const rows = [
      { timestamp: START, price: 60_000 },
      { timestamp: START + 20_000, price: 69_000 },
    ];
    const driver = new MarketDriver({
      ...config,
      sources: [new ReplayIndex('BTC', rows), config.sources[1]!],
    });
    driver.start(START);
    const listed = (now: number) => byType(driver.tick(now), 'list_instrument').length;
    assert.equal(listed(START + 1_000), 0, 'the first check finds the start catalogue');
    assert.equal(listed(START + 30_000), 0, '29 s after the last check');
    assert.equal(listed(START + 60_999), 0, 'a millisecond before the next check');
    assert.ok(listed(START + 61_000) > 0, 'exactly a minute after the last check');
  });

  test('a tick that moves every mark sends them in update_prices of at most 256, the index in the first', () => {
    const driver = new MarketDriver(defaultMarketDriverConfig(START));
    driver.start(START);
    const updates = byType(driver.tick(START + 1_800_000), 'update_prices').flatMap((command) =>
      command.type === 'update_prices' ? [command] : [],
    );
    const sizes = updates.map((command) => command.markPrices?.length ?? 0);
    assert.ok(updates.length > 1, sizes.join(' '));
    assert.ok(
      sizes.every((size) => size <= 256),
      sizes.join(' '),
    );
    assert.ok(
      sizes.slice(0, -1).every((size) => size === 256),
      sizes.join(' '),
    );
    assert.ok((updates[0]!.indexPrices ?? []).length > 0, 'the first carries the index');
    assert.ok(
      updates.slice(1).every((command) => (command.indexPrices ?? []).length === 0),
      'only the first carries the index',
    );
  });

  test("a future spread settles its expiring leg at the settlement and its perpetual leg at the last tick's mark", () => {
    const driver = new MarketDriver(defaultMarketDriverConfig(START));
    driver.start(START);
    const front = driver
      .instruments()
      .filter((instrument) => instrument.spec.kind === 'future' && instrument.spec.baseCurrency === 'BTC')
      .map((instrument) => instrument.spec)
      .filter((spec) => spec.expiration !== null)
      .sort((a, b) => a.expiration! - b.expiration!)[0]!;
    const name = `BTC-FS-${front.name.slice(4)}_PERP`;
    const listed = driver.combo(name, START);
    assert.ok(listed.ok, name);
    const expiry = front.expiration!;
    driver.tick(START + 1_000);
    driver.tick(expiry - 1_000);
    const perpetualMark = driver.market().mark('BTC-PERPETUAL')!.markPrice;
    const settled = byType(driver.tick(expiry), 'settle_instrument');
    const settle = (instrumentName: string) => {
      const command = settled.find(
        (c) => c.type === 'settle_instrument' && c.instrumentName === instrumentName,
      );
      assert.ok(command?.type === 'settle_instrument', `${instrumentName} settles`);
      return command;
    };
    const frontSettle = settle(front.name);
    const index = Number(frontSettle.settlementIndex);
    const spread = new Instrument(0, listed.spec);
    const expected = toTicks(spread, index - perpetualMark);
    assert.notEqual(expected, toTicks(spread, 0), 'the perpetual is not marked at the index');
    assert.equal(settle(name).settlementPrice, expected);
  });

  test('combos list on demand once', () => {
    const driver = new MarketDriver(defaultMarketDriverConfig(START));
    driver.start(START);
    const first = driver.combo('BTC-FS-25DEC26_PERP', START);
    assert.ok(first.ok && first.command?.type === 'list_instrument');
    const again = driver.combo('BTC-FS-25DEC26_PERP', START);
    assert.ok(again.ok && again.command === null);
    assert.ok(!driver.combo('BTC-XX-1', START).ok);
    const tick = driver.tick(START + 1000);
    // A tick's marks may be split over several update_prices (at most 256 each).
    const marks = byType(tick, 'update_prices').flatMap((c) =>
      c.type === 'update_prices' ? (c.markPrices ?? []) : [],
    );
    assert.ok(marks.some((m) => m.instrumentName === 'BTC-FS-25DEC26_PERP'));
    // Unchanged marks are not sent again.
    const next = byType(driver.tick(START + 1000), 'update_prices')[0];
    assert.ok(
      next?.type === 'update_prices' && next.markPrices!.length === 0 && next.indexPrices!.length === 2,
    );
  });

  test("after a restart: adopts the venue's instruments, continues the index, settles what expired", () => {
    const before = new MarketDriver(defaultMarketDriverConfig(START));
    before.start(START);
    const recovered = before.instruments().map((instrument) => instrument.spec);
    const restart = EXPIRY + 60_000;
    const driver = new MarketDriver(defaultMarketDriverConfig(restart, 1, { BTC: 70_000 }));
    const commands = driver.start(restart, recovered);
    const relisted = byType(commands, 'list_instrument').map((c) =>
      c.type === 'list_instrument' ? c.spec.name : '',
    );
    assert.ok(!relisted.includes('BTC-PERPETUAL'));
    assert.ok(relisted.some((name) => name.startsWith('BTC-25NOV26')));
    assert.equal(driver.market().index('BTC'), 70_000);
    const settled = byType(driver.tick(restart + 1000), 'settle_instrument');
    assert.ok(settled.some((c) => c.type === 'settle_instrument' && c.instrumentName === 'BTC-22NOV26'));
  });

  test('a restart inside a settlement window averages the whole window from the samples the venue kept', () => {
    const rows = `timestamp,price\n${START},60000\n${EXPIRY - 20 * 60_000},61000\n${EXPIRY - 10 * 60_000},62000\n`;
    const parsed = parseIndexCsv(rows);
    assert.ok(parsed.ok);
    const config = defaultMarketDriverConfig(START);
    const replayConfig = { ...config, sources: [new ReplayIndex('BTC', parsed.rows), config.sources[1]!] };
    const before = new MarketDriver(replayConfig);
    // The venue sees the driver's price updates at their times, as the journal delivers them.
    const venue = new Harness();
    const feed = (now: number, commands: readonly UnstampedCommand[]) => {
      venue.ts = now;
      for (const command of byType(commands, 'update_prices')) venue.ok(command);
    };
    feed(START, before.start(START));
    const restart = EXPIRY - 5 * 60_000;
    for (let now = START + 60_000; now < restart; now += 60_000) feed(now, before.tick(now));
    const stored = encodeSnapshot(venue.seq, venue.ts, venue.venue.stateHash(), venue.venue.snapshot());
    const recovered = Venue.restore(decodeSnapshotState<VenueSnapshot>(stored));

    const settleAfterRestart = (seeded: boolean) => {
      const driver = new MarketDriver({
        ...replayConfig,
        sources: [new ReplayIndex('BTC', parsed.rows), config.sources[1]!],
      });
      if (seeded) driver.seedIndexHistory(recovered.indexSamples());
      driver.start(
        restart,
        before.instruments().map((instrument) => instrument.spec),
      );
      let settled: UnstampedCommand[] = [];
      for (let now = restart + 60_000; now <= EXPIRY; now += 60_000)
        settled = settled.concat(byType(driver.tick(now), 'settle_instrument'));
      const future = settled.find(
        (c) => c.type === 'settle_instrument' && c.instrumentName === 'BTC-22NOV26',
      );
      assert.ok(future?.type === 'settle_instrument');
      return future.settlementPrice;
    };
    // As the uninterrupted run: 10 min at 60000, 10 at 61000, 10 at 62000.
    assert.equal(settleAfterRestart(true), 61_000 / 2.5);
    // Without the samples, the first one after the restart stood for the whole window.
    assert.notEqual(settleAfterRestart(false), 61_000 / 2.5);
    // The samples are no part of the state hash.
    const { indexSamples, ...rest } = venue.venue.snapshot();
    assert.ok((indexSamples ?? []).length > 0);
    assert.equal(Venue.restore(rest as VenueSnapshot).stateHash(), venue.venue.stateHash());
  });

  test('deterministic for a seed', () => {
    const run = () => {
      const driver = new MarketDriver(defaultMarketDriverConfig(START, 4));
      const out = [driver.start(START)];
      for (let i = 1; i <= 5; i++) out.push(driver.tick(START + i * 1000));
      return out;
    };
    assert.deepEqual(run(), run());
  });
});
