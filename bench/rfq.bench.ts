/**
 * Block RFQ desk benchmark on the real core machine (engine + desk), virtual time:
 * RFQS call-spread RFQs of 100 BTC, each quoted by MAKERS makers (half all_or_none, each 25 BTC,
 * the block minimum), then accepted fill-or-kill for the whole quantity (the four best quotes
 * combine). Any refusal stops the run: a benchmark of refusals measures nothing. Prints per-command latency percentiles (create, quote, accept) and
 * the whole cycle's throughput.
 *
 * Run: npm run bench:rfq   (env RFQS, MAKERS to change the load)
 */
import { CoreMachine, type MachineCommand } from '../src/core/machine.ts';
import { optionSpec, T0 } from '../src/engine/testkit.ts';
import { Venue } from '../src/engine/venue.ts';
import { RfqDesk } from '../src/rfq/desk.ts';
import { marketOf } from '../src/rfq/market.ts';
import type { RfqRecord } from '../src/rfq/types.ts';

const RFQS = Number(process.env.RFQS ?? 2000);
const MAKERS = Number(process.env.MAKERS ?? 10);
const TAKER = 1;
const C70 = 'BTC-27DEC26-70000-C';
const C75 = 'BTC-27DEC26-75000-C';

const venue = Venue.create();
const desk = new RfqDesk(marketOf(venue));
const machine = new CoreMachine(venue, new Map([['rfq', desk]]));
let seq = 0;
let ts = T0;
function run(command: object) {
  return machine.execute({ ...command, seq: ++seq, ts } as MachineCommand);
}
run({ type: 'list_instrument', spec: optionSpec() });
run({ type: 'list_instrument', spec: optionSpec({ name: C75, strike: '75000' }) });
for (let account = 1; account <= MAKERS + 1; account++) {
  run({ type: 'create_account', accountId: account });
  run({ type: 'deposit', accountId: account, currency: 'BTC', amount: 1e15 });
}
const desks = Array.from({ length: MAKERS }, (_, i) => `desk-${i + 1}`);

const timings: Record<'create' | 'quote' | 'accept', number[]> = { create: [], quote: [], accept: [] };
function timed<T>(kind: keyof typeof timings, f: () => T): T {
  const start = process.hrtime.bigint();
  const value = f();
  timings[kind].push(Number(process.hrtime.bigint() - start) / 1000);
  return value;
}

let traded = 0;
const started = process.hrtime.bigint();
for (let n = 0; n < RFQS; n++) {
  const created = timed('create', () =>
    run({
      type: 'rfq_create',
      accountId: TAKER,
      userId: TAKER,
      takerAlias: null,
      makers: [],
      targetDesks: desks,
      disclosed: true,
      label: '',
      legs: [
        { instrumentName: C70, side: 'buy', amount: 1000 },
        { instrumentName: C75, side: 'sell', amount: 1000 },
      ],
      hedge: null,
      tradeAllocations: [],
    }),
  );
  if (!created.result.ok) throw new Error(`rfq_create refused: ${JSON.stringify(created.result)}`);
  const rfq = (created.result as { value: { rfq: RfqRecord } }).value.rfq;
  ts += 5_000;
  for (const [i, name] of desks.entries()) {
    const quoted = timed('quote', () =>
      run({
        type: 'rfq_quote_create',
        accountId: i + 2,
        userId: i + 2,
        desk: name,
        blockRfqId: rfq.makerRecords.find((r) => r.desk === name)!.blockRfqId,
        side: 'sell',
        // Each at the 25 BTC block minimum (250 lots), so the four best fill the 100 BTC: every
        // maker's fill must reach the minimum, and a larger ladder leaves a remainder below it.
        quantity: 250,
        price: null,
        legs: [
          { instrumentName: C70, side: 'buy', ratio: 1, price: 500 + 5 * (i % 5) },
          { instrumentName: C75, side: 'sell', ratio: 1, price: 300 },
        ],
        hedge: null,
        executionInstruction: i % 2 === 0 ? 'all_or_none' : 'any_part_of',
        expiresAt: null,
        label: '',
      }),
    );
    if (!quoted.result.ok) throw new Error(`rfq_quote_create refused: ${JSON.stringify(quoted.result)}`);
  }
  const accepted = timed('accept', () =>
    run({
      type: 'rfq_accept',
      accountId: TAKER,
      blockRfqId: rfq.blockRfqId,
      side: 'buy',
      price: 300,
      quantity: null,
      timeInForce: 'fill_or_kill',
    }),
  );
  if (!accepted.result.ok) throw new Error(`rfq_accept refused: ${JSON.stringify(accepted.result)}`);
  traded++;
  ts += 1_000;
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;

function pct(values: number[], p: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(1);
}
console.log(`RFQ desk on the core machine: ${RFQS} RFQs × ${MAKERS} makers, ${traded} traded`);
for (const kind of ['create', 'quote', 'accept'] as const) {
  const values = timings[kind];
  console.log(
    `  ${kind.padEnd(6)} p50 ${pct(values, 50)} µs  p99 ${pct(values, 99)} µs  max ${pct(values, 100)} µs`,
  );
}
console.log(
  `  cycles: ${(RFQS / seconds).toFixed(0)} RFQ cycles/s (create + ${MAKERS} quotes + accept), ${seconds.toFixed(2)} s`,
);
