/**
 * Advanced-order costs on the real engine (prints figures; not a test):
 * - price updates with N untriggered stop orders waiting (trigger-book evaluation per update);
 * - a trailing-stop book following an index random walk;
 * - takers sweeping icebergs (refresh at the tail on every display);
 * - plain limit orders with and without something advanced present (the hot-path check).
 * Run: npx tsx bench/advanced.bench.ts
 */
import type { CoreCommand, UnstampedCommand } from '../src/core/commands.ts';
import { orderCommand as order, perpetualSpec, T0 } from '../src/engine/testkit.ts';
import { Venue } from '../src/engine/venue.ts';

function setup(): { venue: Venue; run: (c: UnstampedCommand) => void } {
  const venue = Venue.create({ maxOpenOrdersPerAccount: 1_000_000 });
  let seq = 0;
  let ts = T0;
  const run = (c: UnstampedCommand) => {
    ts += 1;
    const r = venue.execute({ ...c, seq: ++seq, ts } as CoreCommand);
    if (!r.ok) throw new Error(`${c.type}: ${r.error.name} ${r.error.message}`);
  };
  run({ type: 'list_instrument', spec: perpetualSpec() });
  for (let a = 1; a <= 400; a++) {
    run({ type: 'create_account', accountId: a, maxOpenOrders: 1_000_000 });
    run({ type: 'deposit', accountId: a, currency: 'BTC', amount: 1e15 });
  }
  return { venue, run };
}

function time(label: string, n: number, body: (i: number) => void): void {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) body(i);
  const ns = Number(process.hrtime.bigint() - start);
  console.log(`${label.padEnd(58)} ${(ns / n / 1000).toFixed(2).padStart(8)} µs/op  (${n} ops)`);
}

for (const waiting of [0, 1_000, 10_000]) {
  const { run } = setup();
  for (let i = 0; i < waiting; i++) {
    run(
      order((i % 400) + 1, 'sell', 1, null, {
        orderType: 'stop_market',
        trigger: 'mark_price',
        triggerPrice: 50_000 + (i % 1000),
      }),
    );
  }
  time(`update_prices (mark) with ${waiting} untriggered stops`, 2_000, (i) =>
    run({
      type: 'update_prices',
      markPrices: [{ instrumentName: 'BTC-PERPETUAL', markPrice: 100_000 + (i % 50) }],
    }),
  );
}

{
  const { run } = setup();
  run({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: 50_000 }] });
  for (let i = 0; i < 1_000; i++) {
    run(
      order((i % 400) + 1, 'sell', 1, null, {
        orderType: 'trailing_stop',
        trigger: 'index_price',
        triggerOffset: 1_000, // 2% of the index: far enough that the walk never triggers one
      }),
    );
  }
  let index = 50_000;
  time('index random walk, 1,000 trailing stops following', 2_000, (i) => {
    index += ((i * 7919) % 21) - 10;
    run({ type: 'update_prices', indexPrices: [{ currency: 'BTC', price: index }] });
  });
}

{
  const { run } = setup();
  for (let i = 0; i < 200; i++)
    run(order((i % 200) + 1, 'sell', 10_000, 100_000 + (i % 20), { displayAmount: 200 }));
  time('taker of 500 lots sweeping iceberg displays (200 each)', 2_000, (i) =>
    run(order(201 + (i % 200), 'buy', 500, 100_020, { timeInForce: 'immediate_or_cancel' })),
  );
}

for (const advanced of [false, true]) {
  const { run } = setup();
  if (advanced)
    run(order(400, 'sell', 1, null, { orderType: 'stop_market', trigger: 'last_price', triggerPrice: 1 }));
  time(`plain limit place+cancel-free flow, advanced present: ${advanced}`, 50_000, (i) =>
    run(order((i % 300) + 1, i % 2 === 0 ? 'buy' : 'sell', 1 + (i % 3), 100_000 + (i % 7) - 3)),
  );
}
