/**
 * Read-store benchmark: what writing the history tables costs per command, on SQLite as the
 * snapshot replica writes them (on its own thread, no writer thread of its own: here on this one).
 *
 * The engine's events are made first, then replayed into a fresh ReadStore in batches of
 * `BATCH` commands (at 20k orders/s the replica's 10 ms write delay gathers about 200); only the
 * replay is timed. Per command: CPU µs (projection, statements and SQLite together), and the bytes
 * the database file and its WAL grew by.
 *
 * Workloads:
 * - misses: immediate-or-cancel orders far from the book, as `bench:api` sends (one order row each);
 * - trades: a resting order and an immediate-or-cancel order that fills it (two order rows, two
 *   trade rows and two position rows per pair).
 *
 * Run: `npm run bench:read-store` (COMMANDS=…, BATCH=…, RUNS=…, RETENTION_MS=…).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreCommand } from '../src/core/commands.ts';
import type { CoreEvent } from '../src/core/events.ts';
import { orderCommand, perpetualSpec, T0 } from '../src/engine/testkit.ts';
import { Venue } from '../src/engine/venue.ts';
import type { CommittedEvents } from '../src/store/read/projection.ts';
import { SqliteReadDb } from '../src/store/read/read-db.ts';
import { ReadStore } from '../src/store/read/read-store.ts';

const COMMANDS = Number(process.env.COMMANDS ?? 100_000);
const BATCH = Number(process.env.BATCH ?? 200);
const RUNS = Number(process.env.RUNS ?? 3);
/**
 * History retention in command time (commands are 1 ms apart): with it, the store's writes also
 * sweep, and past the first RETENTION_MS each row written is, in time, also deleted.
 */
const RETENTION_MS = process.env.RETENTION_MS === undefined ? null : Number(process.env.RETENTION_MS);
const MID = 200_000;
const ACCOUNTS = 64;

type Tape = CommittedEvents<CoreEvent>[];

function venueWithAccounts(): { run: (c: object) => CommittedEvents<CoreEvent> } {
  const venue = Venue.create({ maxOpenOrdersPerAccount: 10_000_000, recentClosedOrders: 1000 });
  let seq = 0;
  const run = (c: object): CommittedEvents<CoreEvent> => {
    const command = { seq: ++seq, ts: T0 + seq, ...c } as CoreCommand;
    const result = venue.execute(command);
    // A refused command would measure refusals, not history rows.
    if (!result.ok) throw new Error(`${command.type} refused: ${result.error.message}`);
    return { seq: command.seq, ts: command.ts, events: [...result.events] };
  };
  run({ type: 'list_instrument', spec: perpetualSpec({ takerCommission: '0.0005', makerCommission: '0' }) });
  for (let a = 1; a <= ACCOUNTS; a++) {
    run({ type: 'create_account', accountId: a });
    run({ type: 'deposit', accountId: a, currency: 'BTC', amount: 1e15 });
  }
  return { run };
}

const IOC = { timeInForce: 'immediate_or_cancel' } as const;

function missesTape(): Tape {
  const { run } = venueWithAccounts();
  const tape: Tape = [];
  for (let i = 0; i < COMMANDS; i++) {
    const buy = i % 2 === 0;
    const price = buy ? MID - 40_000 : MID + 40_000;
    tape.push(run(orderCommand(1 + (i % ACCOUNTS), buy ? 'buy' : 'sell', 10, price, IOC)));
  }
  return tape;
}

function tradesTape(): Tape {
  const { run } = venueWithAccounts();
  const tape: Tape = [];
  for (let i = 0; i < COMMANDS; i += 2) {
    const maker = 1 + (i % ACCOUNTS);
    const taker = 1 + ((i + 1) % ACCOUNTS);
    const buy = i % 4 === 0;
    tape.push(run(orderCommand(maker, buy ? 'buy' : 'sell', 10, MID)));
    tape.push(run(orderCommand(taker, buy ? 'sell' : 'buy', 10, MID, IOC)));
  }
  return tape;
}

/** Bytes this process has passed to write(2) and friends (`wchar` of /proc/self/io). */
function writtenChars(): number {
  const io = readFileSync('/proc/self/io', 'utf8');
  return Number(/wchar: (\d+)/.exec(io)![1]);
}

async function replay(tape: Tape): Promise<{ cpuUs: number; bytes: number; rows: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'read-store-bench-'));
  try {
    const path = join(dir, 'read.db');
    const store = await ReadStore.open({
      db: new SqliteReadDb(path, { writerThread: false }),
      maxBatchCommands: BATCH,
      writeDelayMs: 60_000,
      ...(RETENTION_MS === null
        ? {}
        : { retention: { closedOrdersMs: RETENTION_MS, tradesMs: RETENTION_MS } }),
    });
    const before = writtenChars();
    const cpu = process.cpuUsage();
    for (let i = 0; i < tape.length; i += BATCH) {
      for (const committed of tape.slice(i, i + BATCH)) store.push(committed);
      await store.flush();
    }
    const used = process.cpuUsage(cpu);
    const bytes = writtenChars() - before;
    const rows = (
      await store.query<{ n: number }>(
        'SELECT (SELECT COUNT(*) FROM orders) + (SELECT COUNT(*) FROM trades) + (SELECT COUNT(*) FROM positions) AS n',
        [],
      )
    )[0]!.n;
    await store.close();
    return { cpuUs: used.user + used.system, bytes, rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fastest = (values: number[]) => Math.min(...values);

console.log(
  `read store on SQLite: ${COMMANDS} commands, batches of ${BATCH}, fastest of ${RUNS} runs` +
    (RETENTION_MS === null ? '' : `, history kept ${RETENTION_MS} ms of command time`),
);
for (const [name, makeTape] of [
  ['misses', missesTape],
  ['trades', tradesTape],
] as const) {
  const tape = makeTape();
  const runs = [];
  for (let r = 0; r < RUNS; r++) runs.push(await replay(tape));
  const cpuUs = fastest(runs.map((r) => r.cpuUs)) / tape.length;
  const bytes = fastest(runs.map((r) => r.bytes)) / tape.length;
  console.log(
    `  ${name.padEnd(7)} ${cpuUs.toFixed(1).padStart(6)} µs CPU per command (${(1e6 / cpuUs / 1000).toFixed(1)}k commands per CPU-second), ` +
      `${(runs[0]!.rows / tape.length).toFixed(2)} rows and ${bytes.toFixed(0)} bytes written per command`,
  );
}
