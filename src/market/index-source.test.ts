import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseIndexCsv, ReplayIndex, SimulatedIndex } from './index-source.ts';
import { IndexHistory, SETTLEMENT_WINDOW_MS, settlementWindowFraction } from './settlement.ts';

const T0 = Date.UTC(2026, 10, 22, 8);

describe('SimulatedIndex', () => {
  const config = {
    currency: 'BTC',
    initialPrice: 60_000,
    startTime: T0,
    volatility: 0.6,
    jumpIntensity: 50,
    jumpStdev: 0.03,
    seed: 9,
  };

  test('the path depends on seed and time, not on how often it is polled', () => {
    const coarse = new SimulatedIndex(config);
    const fine = new SimulatedIndex(config);
    for (let t = T0; t <= T0 + 3_600_000; t += 250) fine.priceAt(t);
    assert.equal(coarse.priceAt(T0 + 3_600_000), fine.priceAt(T0 + 3_600_000));
    assert.notEqual(
      new SimulatedIndex({ ...config, seed: 10 }).priceAt(T0 + 3_600_000),
      coarse.priceAt(T0 + 3_600_000),
    );
  });

  test('resumes exactly from a snapshot', () => {
    const a = new SimulatedIndex(config);
    a.priceAt(T0 + 60_000);
    const b = new SimulatedIndex(config, a.snapshot());
    assert.equal(a.priceAt(T0 + 600_000), b.priceAt(T0 + 600_000));
  });

  test('realised volatility is near the configured diffusion', () => {
    const index = new SimulatedIndex({ ...config, jumpIntensity: 0, volatility: 0.5 });
    let previous = index.priceAt(T0);
    let squares = 0;
    const steps = 20_000;
    for (let i = 1; i <= steps; i++) {
      const price = index.priceAt(T0 + i * 60_000);
      squares += Math.log(price / previous) ** 2;
      previous = price;
    }
    const annualised = Math.sqrt((squares / steps) * 365 * 24 * 60);
    assert.ok(Math.abs(annualised - 0.5) < 0.03, String(annualised));
  });

  test('with no drift the price is a martingale: log returns carry the -σ²/2 correction', () => {
    const sigma = 0.5;
    const index = new SimulatedIndex({ ...config, jumpIntensity: 0, volatility: sigma, stepMs: 86_400_000 });
    const steps = 100_000;
    const logReturn = Math.log(index.priceAt(T0 + steps * 86_400_000) / config.initialPrice) / steps;
    const expected = -(sigma * sigma) / 2 / 365;
    const standardError = sigma / Math.sqrt(365) / Math.sqrt(steps);
    // Without the correction the mean would be 0, four standard errors away.
    assert.ok(Math.abs(logReturn - expected) < 2 * standardError, `mean daily log return ${logReturn}`);
  });
});

describe('CSV replay', () => {
  test('parses ms and ISO timestamps with a header and replays piecewise-constant', () => {
    const parsed = parseIndexCsv('timestamp,price\n1000,100.5\n# comment\n\n2026-11-22T08:00:00Z,101\n');
    assert.ok(parsed.ok);
    const replay = new ReplayIndex('BTC', parsed.rows);
    assert.equal(replay.priceAt(0), 100.5);
    assert.equal(replay.priceAt(5000), 100.5);
    assert.equal(replay.priceAt(T0), 101);
    assert.equal(replay.priceAt(T0 + 1e9), 101);
  });

  test('loops when asked', () => {
    const parsed = parseIndexCsv('0,1\n10,2\n20,3');
    assert.ok(parsed.ok);
    const replay = new ReplayIndex('BTC', parsed.rows, true);
    assert.equal(replay.priceAt(25), 1);
    assert.equal(replay.priceAt(35), 2);
  });

  test('a looping replay at exactly its last timestamp shows the last row, and wraps only past it', () => {
    const rows = [
      { timestamp: 0, price: 100 },
      { timestamp: 1000, price: 200 },
    ];
    const replay = new ReplayIndex('BTC', rows);
    const looping = new ReplayIndex('BTC', rows, true);
    assert.equal(looping.priceAt(1000), 200);
    assert.equal(looping.priceAt(1001), 100);
    assert.equal(replay.priceAt(1001), 200, 'without the loop the last row holds');
  });

  test('clear errors with line numbers', () => {
    assert.deepEqual(parseIndexCsv('1000,100\n900,101'), {
      ok: false,
      line: 2,
      message: 'timestamp 900 does not increase',
    });
    assert.deepEqual(parseIndexCsv('0,100\n0,200'), {
      ok: false,
      line: 2,
      message: 'timestamp 0 does not increase',
    });
    const badPrice = parseIndexCsv('1000,-5');
    assert.ok(!badPrice.ok && badPrice.line === 1 && badPrice.message.includes('invalid price'));
    const badTime = parseIndexCsv('1000,5\nyesterday,6');
    assert.ok(!badTime.ok && badTime.line === 2 && badTime.message.includes('invalid timestamp'));
    const fields = parseIndexCsv('1000,5,6');
    assert.ok(!fields.ok && fields.message.includes('2 fields'));
    assert.ok(!parseIndexCsv('timestamp,price\n').ok);
  });
});

describe('settlement index', () => {
  test('TWAP over the last 30 minutes weights each price by how long it held', () => {
    const history = new IndexHistory();
    const expiry = T0;
    history.record('BTC', expiry - 40 * 60_000, 100);
    history.record('BTC', expiry - 15 * 60_000, 130);
    history.record('BTC', expiry - 5 * 60_000, 160);
    // 15 min at 100, 10 min at 130, 5 min at 160.
    const expected = (15 * 100 + 10 * 130 + 5 * 160) / 30;
    assert.ok(Math.abs(history.settlementIndex('BTC', expiry)! - expected) < 1e-9);
    assert.equal(history.settlementIndex('ETH', expiry), null);
  });

  test('before the first sample inside the window its price is assumed from the window start', () => {
    const history = new IndexHistory();
    const expiry = T0;
    const start = expiry - 30 * 60_000;
    history.record('BTC', start + 10 * 60_000, 100);
    history.record('BTC', start + 20 * 60_000, 200);
    // 10 min back-filled at 100, 10 min at 100, 10 min at 200.
    const settlement = history.settlementIndex('BTC', expiry)!;
    assert.ok(Math.abs(settlement - (20 * 100 + 10 * 200) / 30) < 1e-9, `settlement ${settlement}`);
  });

  test('retention keeps the last sample older than the horizon (the price at the horizon), not earlier ones', () => {
    const hour = 60 * 60_000;
    const history = new IndexHistory(hour);
    history.record('BTC', T0, 100);
    history.record('BTC', T0 + 30 * 60_000, 150);
    history.record('BTC', T0 + 100 * 60_000, 200);
    // Horizon at T0 + 40 min: 150 held from T0 + 30 min until T0 + 100 min.
    assert.deepEqual(history.samples(), [
      [
        'BTC',
        [
          [T0 + 30 * 60_000, 150],
          [T0 + 100 * 60_000, 200],
        ],
      ],
    ]);
    assert.equal(history.twap('BTC', T0 + 40 * 60_000, T0 + 100 * 60_000), 150);
  });
});

describe('index history edge cases (mutation audit)', () => {
  test('with samples only after the window, the earliest of them settles it', () => {
    const history = new IndexHistory();
    history.record('BTC', T0 + 60_000, 100);
    history.record('BTC', T0 + 120_000, 200);
    assert.equal(history.settlementIndex('BTC', T0), 100);
  });

  test('samples after the expiry do not enter its settlement average', () => {
    const history = new IndexHistory();
    history.record('BTC', T0 - 20 * 60_000, 100);
    history.record('BTC', T0 - 10 * 60_000, 200);
    history.record('BTC', T0 + 10 * 60_000, 300);
    // 20 min at 100 (10 back-filled), 10 min at 200; the 300 came after the window closed.
    const settlement = history.settlementIndex('BTC', T0)!;
    assert.ok(Math.abs(settlement - (20 * 100 + 10 * 200) / 30) < 1e-9, `${settlement}`);
  });

  test('a sample older than the latest is ignored: the latest price and the averages stay', () => {
    const history = new IndexHistory();
    history.record('BTC', T0 + 2_000, 100);
    history.record('BTC', T0 + 1_000, 200);
    assert.equal(history.latest('BTC'), 100);
    assert.equal(history.twap('BTC', T0, T0 + 3_000), 100);
  });

  test('a sample exactly at the retention horizon is the price there: the one before it goes', () => {
    const history = new IndexHistory(1_000);
    history.record('BTC', T0, 100);
    history.record('BTC', T0 + 500, 150);
    history.record('BTC', T0 + 1_500, 200);
    assert.deepEqual(history.samples(), [
      [
        'BTC',
        [
          [T0 + 500, 150],
          [T0 + 1_500, 200],
        ],
      ],
    ]);
  });

  test('the settlement window fraction is 0 before the window, 1 from the expiry on', () => {
    const expiry = T0;
    assert.equal(settlementWindowFraction(expiry, expiry - SETTLEMENT_WINDOW_MS - 1), 0);
    assert.equal(settlementWindowFraction(expiry, expiry - SETTLEMENT_WINDOW_MS / 2), 0.5);
    assert.equal(settlementWindowFraction(expiry, expiry), 1);
    assert.equal(settlementWindowFraction(expiry, expiry + 1), 1);
  });

  test('recording twice at one timestamp keeps the later price', () => {
    const history = new IndexHistory();
    const at = T0 - 20 * 60_000;
    history.record('BTC', at, 100);
    history.record('BTC', at, 120);
    assert.deepEqual(history.samples(), [['BTC', [[at, 120]]]], 'one sample, the later price');
    assert.equal(history.settlementIndex('BTC', T0), 120, 'the settlement uses the later price');
  });

  test('an empty window [t, t] takes the price recorded at t', () => {
    const history = new IndexHistory();
    history.record('BTC', T0 - 10 * 60_000, 100);
    history.record('BTC', T0, 130);
    assert.equal(history.twap('BTC', T0, T0), 130, 'the sample at t holds from t on');
    assert.equal(history.twap('BTC', T0 - 1, T0 - 1), 100, 'before it the earlier sample holds');
  });
});
