/**
 * The whole service end to end: real SQLite storage, engine, market and simulator, gateway on a
 * free port, driven through the typed sdk on a virtual clock; then a graceful restart on the same
 * data directory must give back the same state (hash) and every acknowledged order.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import { METHOD_NAMES } from '../../sdk/types.ts';
import type { WsClient } from '../../sdk/ws-client.ts';
import { loadConfig } from '../../src/app/config.ts';
import { PortInUseError, startService } from '../../src/app/service.ts';
import { lockDataDir } from '../../src/store/data-dir-lock.ts';
import { portfolioHistory } from '../../src/store/read/portfolio-queries.ts';
import { flipSqliteSnapshotByte } from '../store/sqlite-raw-snapshot.ts';
import { callSpread } from '../support/combo-picks.ts';
import { freezePostgres } from '../support/pg-freeze.ts';
import { startPostgres } from '../support/postgres.ts';
import { restingBuy, startTestService, type TestService } from '../support/service-harness.ts';

const PERPETUAL = 'BTC-PERPETUAL';

describe('the assembled service', () => {
  let running: TestService;
  let socket: WsClient | null = null;
  before(async () => {
    running = await startTestService();
    // One market step: the simulator quotes every listed instrument.
    running.clock.advance(1_000);
    await running.service.market.stop().then(() => running.service.core.drain());
  });
  after(async () => {
    socket?.close();
    await running.close();
  });

  test('starts listed, priced and with two-sided books from the simulator', async () => {
    const client = running.http(0);
    const instruments = await client.call('public/get_instruments', { currency: 'BTC' });
    const names = instruments.map((instrument) => instrument.instrumentName);
    assert.ok(names.includes(PERPETUAL));
    assert.ok(
      names.some((name) => /^BTC-\d{1,2}[A-Z]{3}\d{2}-\d+-[CP]$/.test(name)),
      'has BTC options',
    );
    const book = await client.call('public/get_order_book', { instrumentName: PERPETUAL, depth: 5 });
    assert.ok(book.bids.length > 0 && book.asks.length > 0, 'two-sided book');
    const ticker = await client.call('public/ticker', { instrumentName: PERPETUAL });
    assert.ok(Number(ticker.markPrice) > 0 && Number(ticker.indexPrice) > 0);
    const option = names.find((name) => name.endsWith('-C'))!;
    const optionTicker = await client.call('public/ticker', { instrumentName: option });
    assert.ok(Number(optionTicker.markIv) > 1 && Number(optionTicker.markIv) < 500, 'mark IV in percent');
    const delta = Number(optionTicker.greeks?.delta);
    assert.ok(delta > -1 && delta < 1 && Number(optionTicker.greeks?.vega) > 0, 'call greeks');
  });

  test('a combo id lists the combo on first use: its book and ticker, and orders on it', async () => {
    const client = running.http(0);
    const { combo, long, short } = await callSpread(client);
    const expiry = combo.split('-')[2]!;
    const listedBefore = await client.call('public/get_instruments', {
      currency: 'BTC',
      kind: 'option_combo',
    });
    assert.ok(!listedBefore.some((instrument) => instrument.instrumentName === combo));

    const book = await client.call('public/get_order_book', { instrumentName: combo, depth: 5 });
    assert.equal(book.instrumentName, combo);
    const listed = await client.call('public/get_instruments', { currency: 'BTC', kind: 'option_combo' });
    const info = listed.find((instrument) => instrument.instrumentName === combo);
    assert.deepEqual(info?.legs, [
      { instrumentName: long, ratio: 1 },
      { instrumentName: short, ratio: -1 },
    ]);
    const perpetual = await client.call('public/get_instruments', { currency: 'BTC', kind: 'future' });
    assert.ok(
      perpetual.every((instrument) => instrument.legs === undefined),
      'legs only on combos',
    );
    const ticker = await client.call('public/ticker', { instrumentName: combo });
    assert.equal(ticker.instrumentName, combo);
    const placed = await client.call('private/buy', {
      instrumentName: combo,
      quantity: '1',
      type: 'limit',
      price: '0.0005',
      label: 'combo',
    });
    assert.equal(placed.order.instrumentName, combo);
    await client.call('private/cancel', { orderId: placed.order.orderId });

    await assert.rejects(
      client.call('private/buy', { instrumentName: `BTC-CS-${expiry}-1_2`, quantity: '1', type: 'market' }),
      (error: unknown) => error instanceof Error && /leg BTC-\w+-1-C is not listed/.test(error.message),
    );
  });

  test('the sdk knows every method the whole service registers', () => {
    const served = running.service.gateway.methods.list().map((method) => method.name);
    assert.deepEqual([...METHOD_NAMES].sort(), served.sort());
  });

  test('serves the Block RFQ methods and the portfolio routes on the same port', async () => {
    // Without a kind, every kind (spec 4.10) an RFQ takes as a leg: not a call spread, although
    // listed once its ticker was asked for (create_rfq refuses combo legs).
    const calls = (await running.http(0).call('public/get_instruments', { currency: 'BTC', kind: 'option' }))
      .filter((i) => i.optionType === 'call' && i.instrumentName.startsWith('BTC-'))
      .sort((a, b) => a.expiration! - b.expiration! || Number(a.strike) - Number(b.strike));
    const [low, high] = calls.filter((i) => i.expiration === calls[0]!.expiration);
    const spread = `BTC-CS-${low!.instrumentName.split('-')[1]}-${low!.strike}_${high!.strike}`;
    await running.http(0).call('public/ticker', { instrumentName: spread });
    const instruments = await running.http(0).call('block/rfqs/get_instruments', { currency: 'BTC' });
    assert.ok(instruments.results.some((instrument) => instrument.instrumentName === PERPETUAL));
    assert.ok(!instruments.results.some((i) => i.instrumentName === spread));
    assert.deepEqual([...new Set(instruments.results.map((i) => i.kind))].sort(), [
      'future',
      'option',
      'spot',
    ]);
    // A combo kind, which spec 4.10 lists, gives an empty list.
    const combos = await running
      .http(0)
      .call('block/rfqs/get_instruments', { currency: 'BTC', kind: 'option_combo' });
    assert.deepEqual(combos.results, []);
    // The public list still has it.
    const listed = await running
      .http(0)
      .call('public/get_instruments', { currency: 'BTC', kind: 'option_combo' });
    assert.ok(listed.some((i) => i.instrumentName === spread));
    const info = await running
      .http(0)
      .flat('GET', '/tt/core-broker/openapi/portfolios/info?portfolioId=999999')
      .catch((error: unknown) => error);
    assert.ok(info instanceof Error && /portfolio/i.test(info.message), String(info));
  });

  test('orders trade against the simulated liquidity, rest, edit, cancel and push over WebSocket', async () => {
    const client = running.http(0);
    socket = running.ws(0);
    await socket.connect();
    await socket.auth();
    const pushed: unknown[] = [];
    await socket.subscribe(['user.orders.future.BTC'], (push) => pushed.push(push));

    const book = await client.call('public/get_order_book', { instrumentName: PERPETUAL, depth: 1 });
    const bestAsk = Number(book.asks[0]![0]);
    const taken = await client.call('private/buy', {
      instrumentName: PERPETUAL,
      quantity: '100',
      type: 'market',
    });
    assert.equal(taken.order.orderState, 'filled');
    assert.ok(taken.trades.length > 0);
    assert.equal(taken.trades[0]!.liquidity, 'T');
    assert.ok(Number(taken.trades[0]!.price) >= bestAsk);

    const positions = await client.call('private/get_positions', { currency: 'BTC' });
    assert.equal(positions.find((p) => p.instrumentName === PERPETUAL)?.size, '100');

    const restingPrice = String(Math.floor(bestAsk * 0.99));
    const placed = await client.call('private/sell', {
      instrumentName: PERPETUAL,
      quantity: '50',
      price: String(Math.ceil(bestAsk * 1.01)),
      label: 'e2e',
    });
    assert.equal(placed.order.orderState, 'open');
    const edited = await client.call('private/edit', {
      orderId: placed.order.orderId,
      quantity: '40',
      price: placed.order.price,
    });
    assert.equal(edited.order.replaced, true);
    assert.equal(edited.order.quantity, '40');
    const cancelled = await client.call('private/cancel', { orderId: placed.order.orderId });
    assert.equal(cancelled.orderState, 'cancelled');
    assert.equal(cancelled.cancelReason, 'user_request');

    const resting = await client.call('private/buy', {
      instrumentName: PERPETUAL,
      quantity: '20',
      price: restingPrice,
    });
    assert.equal(resting.order.orderState, 'open');
    await waitFor(() => pushed.length >= 4, 'order pushes');
  });

  test('advanced orders through the API: a stop waits untriggered, an iceberg shows only its display', async () => {
    const client = running.http(3);
    const ticker = await client.call('public/ticker', { instrumentName: PERPETUAL });
    const mark = Number(ticker.markPrice);
    const stop = await client.call('private/sell', {
      instrumentName: PERPETUAL,
      quantity: '100',
      type: 'stop_market',
      trigger: 'mark_price',
      triggerPrice: String(Math.floor(mark * 0.9)),
    });
    assert.equal(stop.order.orderState, 'untriggered');
    assert.equal(stop.order.trigger, 'mark_price');
    await client.call('private/cancel', { orderId: stop.order.orderId });

    // A stop whose trigger is already crossed fires at once, and its trades are those of the
    // market order it became: a trade's orderType is limit, market or liquidation (spec 2.7).
    const fired = await client.call('private/sell', {
      instrumentName: PERPETUAL,
      quantity: '10',
      type: 'stop_market',
      trigger: 'mark_price',
      triggerPrice: String(Math.ceil(mark * 1.05)),
    });
    assert.equal(fired.order.orderType, 'stop_market');
    assert.ok(fired.trades.length > 0, 'the stop fired');
    assert.deepEqual([...new Set(fired.trades.map((trade) => trade.orderType))], ['market']);
    const flat = await client.call('private/buy', {
      instrumentName: PERPETUAL,
      quantity: '10',
      type: 'market',
    });
    assert.equal(flat.order.filledQuantity, '10');

    const price = String(Math.floor(mark * 0.97));
    const iceberg = await client.call('private/buy', {
      instrumentName: PERPETUAL,
      quantity: '20000',
      price,
      displayAmount: '1000',
    });
    assert.equal(iceberg.order.displayAmount, '1000');
    const book = await client.call('public/get_order_book', { instrumentName: PERPETUAL, depth: 100 });
    const level = book.bids.find((entry) => entry[0] === price);
    assert.ok(level !== undefined && Number(level[1]) <= 1000 + 1000, 'only the display is public');
    await client.call('private/cancel', { orderId: iceberg.order.orderId });

    // OTOCO secondaries waiting for their primary are open orders (filterable by type).
    const entry = await client.call('private/buy', {
      instrumentName: PERPETUAL,
      quantity: '100',
      price: String(Math.floor(mark * 0.9)),
      linkedOrderType: 'one_triggers_one_cancels_other',
      otocoConfig: [
        { side: 'sell', quantity: '100', price: String(Math.floor(mark * 1.1)) },
        {
          side: 'sell',
          quantity: '100',
          type: 'stop_market',
          trigger: 'mark_price',
          triggerPrice: String(Math.floor(mark * 0.8)),
        },
      ],
    });
    const [tpId, slId] = entry.order.otoOrderIds!;
    const open = await client.call('private/get_open_orders_by_instrument', { instrumentName: PERPETUAL });
    assert.deepEqual(
      open.map((o) => [o.orderId, o.orderState, o.primaryOrderId ?? null]),
      [
        [entry.order.orderId, 'open', null],
        [tpId, 'untriggered', entry.order.orderId],
        [slId, 'untriggered', entry.order.orderId],
      ],
    );
    const triggers = await client.call('private/get_open_orders', { type: 'trigger_all' });
    assert.deepEqual(
      triggers.map((o) => o.orderId),
      [slId],
    );
    const cancelled = await client.call('private/cancel', { orderId: tpId! });
    assert.equal(cancelled.orderState, 'cancelled');
    await client.call('private/cancel', { orderId: entry.order.orderId });
    assert.deepEqual(await client.call('private/get_open_orders_by_currency', { currency: 'BTC' }), []);
  });

  test('market maker protection: configure, read back, reset', async () => {
    const client = running.http(1);
    const set = await client.call('private/set_mmp_config', {
      indexName: 'btc_usd',
      interval: 60,
      frozenTime: 5,
      quantityLimit: '100',
    });
    assert.equal(set[0]?.indexName, 'btc_usd');
    const read = await client.call('private/get_mmp_config', { indexName: 'btc_usd' });
    assert.equal(read[0]?.quantityLimit, '100');
    assert.equal(await client.call('private/reset_mmp', { indexName: 'btc_usd' }), 'ok');
  });

  test('a COMMON portfolio submitted over the flat route fills and is projected into the read store', async () => {
    const client = running.http(0);
    const accountId = running.credentials[0]!.accountIds[0]!;
    const submitted = await client.flat<{ portfolioId: number }>(
      'POST',
      '/tt/core-broker/openapi/portfolios/submit',
      {
        accountId,
        portfolioType: 'COMMON',
        legs: [
          {
            instrument: PERPETUAL,
            instrumentType: 'PERPETUAL',
            side: 1,
            quantity: '50',
            priceOptions: { priceType: 'MARKET' },
          },
        ],
      },
    );
    assert.ok(submitted.portfolioId > 0);
    const info = await client.flat<{ portfolioStatus: string; legs: { filledQuantity: string }[] }>(
      'GET',
      `/tt/core-broker/openapi/portfolios/info?portfolioId=${submitted.portfolioId}`,
    );
    assert.equal(info.portfolioStatus, 'COMPLETED');
    assert.equal(info.legs[0]?.filledQuantity, '50');
    await running.service.readStore.flush();
    const history = await portfolioHistory(running.service.readStore, { accountId });
    const row = history.portfolios.find((portfolio) => portfolio.portfolioId === submitted.portfolioId);
    assert.equal(row?.status, 'COMPLETED');
    assert.equal(row?.portfolioType, 'COMMON');
  });

  test('GET /metrics: requests by method, journal batches, the sequence and the process', async () => {
    await running.http(0).call('public/test', {});
    const unknown = await fetch(`${running.baseUrl}/api/public/no_such_method`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rid: 1, method: 'public/no_such_method', params: {} }),
    });
    assert.equal(((await unknown.json()) as { error: { code: number } }).error.code, -32601);
    const response = await fetch(`${running.baseUrl}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const body = await response.text();
    const sample = (name: string) => {
      const line = body.split('\n').find((candidate) => candidate.startsWith(`${name} `));
      assert.ok(line !== undefined, `no ${name}`);
      return Number(line.slice(name.length + 1));
    };
    assert.ok(sample('venue_requests_total{method="public/test"}') >= 1);
    assert.ok(
      sample('venue_requests_total{method="unknown"}') >= 1,
      'unregistered names never become labels',
    );
    assert.ok(!body.includes('no_such_method'));
    // The portfolio routes (earlier tests submitted and read one) are counted by path, and a
    // refused envelope (HTTP 200 or not) is timed as an error.
    assert.ok(sample('venue_requests_total{method="/tt/core-broker/openapi/portfolios/submit"}') >= 1);
    assert.ok(sample('venue_requests_total{method="/tt/core-broker/openapi/portfolios/info"}') >= 1);
    assert.ok(sample('venue_request_seconds_count{transport="http",outcome="error"}') >= 1);
    assert.ok(sample('venue_journal_entries_total') > 0);
    assert.equal(sample('venue_sequence'), running.service.core.sequence);
    assert.ok(sample('venue_market_turn_seconds_count') > 0);
    assert.match(body, /^nodejs_gc_duration_seconds_count\{kind="minor"\} /m);
  });

  test('the served API documents are the ones npm run docs:api writes under docs/api', async () => {
    for (const name of ['openapi', 'asyncapi']) {
      const served = (await (await fetch(`${running.baseUrl}/docs/${name}.json`)).json()) as unknown;
      assert.deepEqual(served, JSON.parse(readFileSync(`docs/api/${name}.json`, 'utf8')), name);
    }
  });

  test('a graceful restart rebuilds the same state and keeps every acknowledged order', async () => {
    const client = running.http(0);
    const open = await client.call('private/get_open_orders', {});
    assert.equal(open.length, 1);
    const hashBefore = running.service.core.machine.stateHash();
    socket?.close();
    socket = null;
    running = await running.restart();
    // Compared right after recovery: the market then moves on with fresh price updates.
    assert.equal(running.service.recovery.finalStateHash, hashBefore);
    assert.equal(running.service.recovery.ok, true);
    assert.ok(running.service.recovery.snapshotSeq !== null, 'the graceful stop took a snapshot');

    const again = running.http(0);
    const state = await again.call('private/get_order_state', { orderId: open[0]!.orderId });
    assert.equal(state.orderState, 'open');
    const history = await again.call('private/get_order_history_by_currency', {
      currency: 'BTC',
      includeUnfilled: true,
    });
    const list = Array.isArray(history) ? history : history.orders;
    assert.ok(list.some((order) => order.label === 'e2e' && order.orderState === 'cancelled'));
  });
});

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('a port another process holds is refused before anything is journaled', async () => {
  const holder = createServer();
  const port = await new Promise<number>((resolve) =>
    holder.listen(0, '127.0.0.1', () => resolve((holder.address() as AddressInfo).port)),
  );
  const dataDir = mkdtempSync(join(tmpdir(), 'service-port-'));
  try {
    await assert.rejects(
      startTestService({ dataDir, config: { port } }),
      (error: unknown) =>
        error instanceof PortInUseError &&
        error.message === `PORT ${port} on 127.0.0.1 is in use by another process; stop it or set PORT`,
    );
    assert.deepEqual(readdirSync(dataDir), [], 'no store opened, nothing journaled');
  } finally {
    holder.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** What keeps the process alive, by kind (timers aside: the test runner has its own). */
function liveResources(): string[] {
  return process
    .getActiveResourcesInfo()
    .filter((kind) => kind !== 'Timeout' && kind !== 'Immediate')
    .sort();
}

/** No thread, connection or server left running: as `before`, once handles closing are closed. */
async function nothingLeftRunning(before: string[]): Promise<void> {
  const same = () => JSON.stringify(liveResources()) === JSON.stringify(before);
  for (let turn = 0; turn < 10 && !same(); turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(liveResources(), before, 'no thread, connection or server left running');
}

test('a start that fails after recovery stops what it started and releases the data directory', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-failed-start-'));
  try {
    const first = await startTestService({ dataDir });
    const { clock } = first;
    await first.close();
    // A demo bootstrap cut short is resumed after recovery, with the snapshot replica's thread
    // and the market running, and writes the credentials last: a directory in their place fails it.
    writeFileSync(join(dataDir, 'bootstrap.pending'), '');
    rmSync(join(dataDir, 'credentials.json'));
    mkdirSync(join(dataDir, 'credentials.json'));
    const before = liveResources();
    await assert.rejects(startTestService({ dataDir, clock }), /EISDIR/);
    await nothingLeftRunning(before);
    lockDataDir(dataDir).release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** A service's log lines at `level` and above, parsed. */
function capturedLog(level: pino.Level, onLine?: (line: Record<string, unknown>) => void) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const line = JSON.parse(chunk.toString()) as Record<string, unknown>;
      lines.push(line);
      onLine?.(line);
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}

test('an encryption key that opens none of the stored API secrets is refused at start, named, before recovery', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-wrong-key-'));
  try {
    const first = await startTestService({ dataDir, config: { secretEncryptionKey: '11'.repeat(32) } });
    const { clock } = first;
    await first.close();
    const before = liveResources();
    const { logger, lines } = capturedLog('info');
    await assert.rejects(
      startTestService({ dataDir, clock, logger, config: { secretEncryptionKey: '22'.repeat(32) } }),
      /SECRET_ENCRYPTION_KEY/,
    );
    // Before recovery, so before anything (a cancel_cod_sessions) could be journaled.
    assert.deepEqual(
      lines.map((line) => line.msg),
      [],
      'refused before the stores were opened',
    );
    await nothingLeftRunning(before);
    lockDataDir(dataDir).release();
    const again = await startTestService({
      dataDir,
      clock,
      config: { secretEncryptionKey: '11'.repeat(32) },
    });
    await again.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('an unreadable secret key is refused before any store is opened', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-bad-key-'));
  try {
    writeFileSync(join(dataDir, 'secret.key'), 'too short');
    await assert.rejects(startTestService({ dataDir }), /secret encryption key must be 32 bytes/);
    // The data directory's lock files aside.
    assert.deepEqual(
      readdirSync(dataDir).sort(),
      ['secret.key', 'service.lock', 'service.pid'],
      'no store opened, nothing journaled',
    );
    lockDataDir(dataDir).release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a damaged keys.db is refused naming it, with or without a configured key', async () => {
  for (const key of [null, 'ab'.repeat(32)]) {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-bad-keys-db-'));
    try {
      writeFileSync(join(dataDir, 'keys.db'), 'not a database '.repeat(40));
      await assert.rejects(
        startTestService({ dataDir, config: key === null ? {} : { secretEncryptionKey: key } }),
        (error: Error) => error.message.startsWith(`DATA_DIR/keys.db (${join(dataDir, 'keys.db')}): `),
      );
      assert.ok(!readdirSync(dataDir).includes('secret.key'), 'no key file made beside it');
      lockDataDir(dataDir).release();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
});

test('an admin token too short is refused before recovery, naming the file', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-short-token-'));
  try {
    const first = await startTestService({ dataDir });
    const { clock } = first;
    await first.close();
    writeFileSync(join(dataDir, 'admin.token'), 'abcde');
    const { logger, lines } = capturedLog('info');
    await assert.rejects(
      startTestService({ dataDir, clock, logger }),
      new RegExp(`the admin token in ${join(dataDir, 'admin.token')} is shorter than 16 characters`),
    );
    assert.deepEqual(
      lines.map((line) => line.msg),
      [],
      'refused before the stores were opened',
    );
    lockDataDir(dataDir).release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a journal record that fails its checksum refuses the start, naming the journal file', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-corrupt-record-'));
  try {
    const first = await startTestService({ dataDir });
    const { clock } = first;
    await first.close();
    // No snapshot: recovery replays the journal from its first record, which is damaged.
    for (const file of readdirSync(dataDir).filter((name) => name.startsWith('snapshots.sqlite'))) {
      rmSync(join(dataDir, file));
    }
    const journal = new Database(join(dataDir, 'journal.sqlite'));
    const row = journal.prepare('SELECT payload FROM journal WHERE first_seq = 1').get() as {
      payload: Buffer;
    };
    const payload = Buffer.from(row.payload);
    payload[0] = payload[0]! ^ 0xff;
    journal.prepare('UPDATE journal SET payload = ? WHERE first_seq = 1').run(payload);
    journal.close();
    await assert.rejects(startTestService({ dataDir, clock }), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.equal(
        error.message,
        `DATA_DIR/journal.sqlite (${join(dataDir, 'journal.sqlite')}): journal record at seq 1 fails its checksum`,
      );
      return true;
    });
    lockDataDir(dataDir).release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a snapshot that fails its checksum is skipped with a warning naming its seq', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-corrupt-snapshot-'));
  try {
    const first = await startTestService({ dataDir });
    const { clock } = first;
    const hash = first.service.core.machine.stateHash();
    await first.close();
    const snapshots = new Database(join(dataDir, 'snapshots.sqlite'), { readonly: true });
    const { seq } = snapshots.prepare('SELECT MAX(seq) AS seq FROM snapshots').get() as { seq: number };
    snapshots.close();
    flipSqliteSnapshotByte(join(dataDir, 'snapshots.sqlite'), seq);
    const { logger, lines } = capturedLog('warn');
    const again = await startTestService({ dataDir, clock, logger });
    try {
      assert.equal(again.service.recovery.finalStateHash, hash, 'recovered from the journal instead');
      const skipped = lines.filter((line) => line.level === 40 && line.snapshotSeq === seq);
      assert.ok(skipped.length > 0, JSON.stringify(lines));
      assert.match(String(skipped[0]!.msg), /snapshot .* fails its checksum/);
    } finally {
      await again.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a start aborted through its signal stops what it started and releases the data directory', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-aborted-start-'));
  try {
    const first = await startTestService({ dataDir });
    const { clock } = first;
    await first.close();
    const controller = new AbortController();
    // Aborted once recovery is logged: the stores are open, the core not yet started.
    const { logger } = capturedLog('info', (line) => {
      if (line.msg === 'recovered') controller.abort();
    });
    const config = loadConfig({
      env: {},
      overrides: { port: 0, host: '127.0.0.1', logLevel: 'info', dataDir, rateLimits: { enabled: false } },
    });
    const before = liveResources();
    const outcome = await startService({ config, clock, logger, signal: controller.signal }).then(
      async (service) => {
        await service.close();
        return 'started';
      },
      (error: unknown) => error,
    );
    assert.ok(outcome instanceof Error && outcome.name === 'StartAbortedError', String(outcome));
    await nothingLeftRunning(before);
    lockDataDir(dataDir).release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('/health: 200 while the core runs, 503 with the reason once it failed', async () => {
  const running = await startTestService({ config: { simulator: false } });
  try {
    const healthy = await fetch(`${running.baseUrl}/health`);
    assert.equal(healthy.status, 200);
    assert.equal(((await healthy.json()) as { status: string }).status, 'ok');
    // The core fails (as on a bug): a command no part of it handles.
    await assert.rejects(running.service.core.submitMachine({ type: 'no_such_command' } as never));
    const failed = await fetch(`${running.baseUrl}/health`);
    assert.equal(failed.status, 503);
    const body = (await failed.json()) as { status: string; reason: string };
    assert.equal(body.status, 'unavailable');
    assert.match(body.reason, /the core stopped taking commands/);
  } finally {
    await running.close();
  }
});

const postgres = await startPostgres();
after(() => postgres?.stop());

test('/health: 503 while the journal makes nothing durable (PostgreSQL stopped), 200 once it is back', {
  skip: postgres === null && 'PostgreSQL is not installed',
}, async () => {
  const databaseUrl = await postgres!.createDatabase(`health_stall_${process.pid}`);
  const running = await startTestService({ config: { databaseUrl, simulator: false } });
  let frozen: { resume(): void } | null = null;
  const health = async () => {
    const response = await fetch(`${running.baseUrl}/health`);
    return { status: response.status, body: (await response.json()) as { status: string; reason?: string } };
  };
  try {
    assert.equal((await health()).status, 200);
    await running.service.core.drain();
    frozen = await freezePostgres(databaseUrl);
    const sequence = running.service.core.sequence;
    const order = restingBuy(running, '1000', 'stalled');
    await waitFor(
      () => running.service.core.sequence > sequence,
      'the order applied, waiting on the journal',
    );
    running.clock.advance(4_000);
    assert.equal((await health()).status, 200, 'a few seconds are allowed');
    running.clock.advance(2_000);
    const stalled = await health();
    assert.equal(stalled.status, 503);
    assert.match(stalled.body.reason ?? '', /no command has been made durable for 6 s/);
    frozen.resume();
    await order;
    await running.service.core.drain();
    assert.equal((await health()).status, 200);
  } finally {
    frozen?.resume();
    await running.close();
  }
});

test('a core that failed is never snapshotted at stop (SNAPSHOT_REPLICA off): the next start replays the journal', async () => {
  const noPeriodic = { everyCommands: 0, everyMs: 0, checkpointEveryCommands: 0 };
  let running = await startTestService({
    config: { simulator: false, snapshotReplica: false },
    snapshotPolicy: noPeriodic,
  });
  try {
    assert.ok(running.service.core.sequence > 0, 'the demo bootstrap journaled commands');
    await assert.rejects(running.service.core.submitMachine({ type: 'no_such_command' } as never));
    assert.ok(running.service.core.failed !== null);
    running = await running.restart();
    assert.equal(running.service.recovery.snapshotSeq, null, 'no snapshot of the failed core');
  } finally {
    await running.close();
    rmSync(running.dataDir, { recursive: true, force: true });
  }
});

test('close() twice is one close: both resolve, and the stop runs once', async () => {
  const running = await startTestService({ config: { simulator: false } });
  try {
    const first = running.service.close();
    const second = running.service.close();
    assert.equal(first, second, 'the same promise');
    await Promise.all([first, second]);
  } finally {
    rmSync(running.dataDir, { recursive: true, force: true });
  }
});
