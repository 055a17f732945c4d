/**
 * Journal benchmark: group-commit append throughput with fsync, append-to-ack latency, replay
 * speed (read + verify + decode) for 1M and 10M entries, restart time (open + snapshot + replay),
 * snapshot size and time, and append latency while the journal is trimmed as retention does it.
 *
 *   npm run bench:journal                 # SQLite, 1M + 10M entries (a few minutes)
 *   npm run bench:journal -- --quick      # SQLite, 200k entries only
 *   npm run bench:journal -- --pg         # also PostgreSQL (a throwaway server, fsync on)
 *   npm run bench:journal -- --nats       # also NATS JetStream (a throwaway nats-server; its
 *                                         # acks are not fsyncs: docs/decisions.md)
 *   npm run bench:journal -- --nats-cluster  # also a 3-replica stream on a throwaway 3-server
 *                                         # cluster on loopback (all on this machine's cores)
 *
 * Figures are printed, never asserted. Commands are realistic place_order objects (~330 bytes
 * of JSON each). "Replay" here is the journal side of a restart; applying to the engine is
 * measured by bench:engine.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Journal, JournalEntry, SnapshotStore } from '../src/store/journal.ts';
import { TRIM_STEP_PAUSE_MS, TRIM_STEP_RECORDS } from '../src/store/journal-trimmer.ts';
import { NatsJournal } from '../src/store/nats/nats-journal.ts';
import { PgJournal } from '../src/store/postgres/pg-journal.ts';
import { PgSnapshotStore } from '../src/store/postgres/pg-snapshots.ts';
import { recover } from '../src/store/recovery.ts';
import { SqliteJournal } from '../src/store/sqlite/sqlite-journal.ts';
import { SqliteSnapshotStore } from '../src/store/sqlite/sqlite-snapshots.ts';
import { startNats, startNatsCluster } from '../test/support/nats.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { percentile } from './measure.ts';

const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');
const withPg = args.has('--pg');
const withNats = args.has('--nats');
const withNatsCluster = args.has('--nats-cluster');

function command(seq: number): Record<string, unknown> {
  return {
    type: 'place_order',
    accountId: 1000 + (seq % 97),
    instrumentName: 'BTC-27DEC24-60000-C',
    side: seq % 2 === 0 ? 'buy' : 'sell',
    orderType: 'limit',
    amount: 1 + (seq % 50),
    price: 1000 + (seq % 400),
    timeInForce: 'good_til_cancelled',
    postOnly: false,
    rejectPostOnly: false,
    reduceOnly: false,
    label: `bench-${seq % 1000}`,
    validUntil: null,
    source: { api: true },
    seq,
    ts: 1_700_000_000_000 + seq,
  };
}

function entry(seq: number): JournalEntry {
  return { seq, ts: 1_700_000_000_000 + seq, command: command(seq) };
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Appends `count` entries like a busy sequencer: new commands arrive every event-loop turn. */
async function groupCommit(journal: Journal, from: number, count: number, measureLatency: boolean) {
  const latencies = measureLatency ? new Float64Array(count) : null;
  const perTurn = 2000;
  const window = 100_000;
  let outstanding = 0;
  let done = 0;
  let waiter: (() => void) | null = null;
  const started = performance.now();
  for (let i = 0; i < count; ) {
    const end = Math.min(count, i + perTurn);
    for (; i < end; i++) {
      const t0 = performance.now();
      const index = i;
      outstanding++;
      journal.append(entry(from + i)).then(() => {
        if (latencies !== null) latencies[index] = performance.now() - t0;
        outstanding--;
        done++;
        if (waiter !== null && outstanding < window / 2) {
          const w = waiter;
          waiter = null;
          w();
        }
      });
    }
    if (outstanding >= window) await new Promise<void>((r) => (waiter = r));
    else await new Promise((r) => setImmediate(r));
  }
  await journal.flush();
  while (done < count) await new Promise((r) => setImmediate(r));
  const seconds = (performance.now() - started) / 1000;
  const result: Record<string, string> = { 'appends/s': fmt(count / seconds) };
  if (latencies !== null) {
    latencies.sort();
    result['ack p50 ms'] = percentile(latencies, 50).toFixed(2);
    result['ack p99 ms'] = percentile(latencies, 99).toFixed(2);
  }
  return result;
}

/** Append-to-ack latency at a steady offered rate below capacity (commands spread over turns). */
async function pacedLatency(journal: Journal, from: number, rate: number, seconds: number) {
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  let sent = 0;
  let acked = 0;
  const started = performance.now();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    for (; sent < due; sent++) {
      const t0 = performance.now();
      const index = sent;
      journal.append(entry(from + sent)).then(() => {
        latencies[index] = performance.now() - t0;
        acked++;
      });
    }
    await new Promise((r) => setImmediate(r));
  }
  await journal.flush();
  while (acked < total) await new Promise((r) => setImmediate(r));
  latencies.sort();
  return {
    'offered/s': fmt(rate),
    'ack p50 ms': percentile(latencies, 50).toFixed(2),
    'ack p99 ms': percentile(latencies, 99).toFixed(2),
    'ack max ms': latencies[latencies.length - 1]!.toFixed(2),
  };
}

/**
 * `pacedLatency` while the journal is trimmed through `throughSeq` in the steps the retention
 * trimmer takes (JOURNAL_RETENTION_DAYS), from the oldest record on.
 */
async function trimUnderLoad(
  journal: Journal,
  from: number,
  rate: number,
  seconds: number,
  throughSeq: number,
) {
  const steps: number[] = [];
  let records = 0;
  let loaded = false;
  const trimming = (async () => {
    while (!loaded) {
      const started = performance.now();
      const result = await journal.trimThrough(throughSeq, TRIM_STEP_RECORDS);
      steps.push(performance.now() - started);
      records += result.records;
      if (result.done) break;
      await new Promise((resolve) => setTimeout(resolve, TRIM_STEP_PAUSE_MS));
    }
  })();
  const load = await pacedLatency(journal, from, rate, seconds);
  loaded = true;
  await trimming;
  steps.sort((a, b) => a - b);
  return {
    ...load,
    'records trimmed': fmt(records),
    'trim step p50 ms': percentile(steps, 50).toFixed(2),
    'trim step p99 ms': percentile(steps, 99).toFixed(2),
  };
}

async function replay(journal: Journal, from: number) {
  const started = performance.now();
  let n = 0;
  let check = 0;
  for await (const batch of journal.readBatches(from)) {
    n += batch.length;
    check += (batch[batch.length - 1]!.command as { amount: number }).amount;
  }
  const seconds = (performance.now() - started) / 1000;
  return { entries: n, seconds, perSecond: n / seconds, check };
}

/** A synthetic core state of `orders` resting orders (roughly what an engine snapshot holds). */
function syntheticState(orders: number): unknown {
  const list = [];
  for (let i = 0; i < orders; i++) {
    list.push({
      orderId: `ETH-${i}`,
      accountId: 1000 + (i % 97),
      instrumentName: 'ETH-27DEC24-3000-C',
      side: i % 2 === 0 ? 'buy' : 'sell',
      price: 100 + (i % 300),
      amount: 10,
      filledAmount: i % 3,
      createdAt: 1_700_000_000_000 + i,
      label: '',
      arrival: i,
    });
  }
  return { version: 1, orders: list, counters: { nextOrderId: orders + 1, nextTradeId: 77 } };
}

interface Backend {
  readonly name: string;
  openJournal(): Promise<Journal>;
  openSnapshots(): Promise<SnapshotStore>;
  size(): string;
  dispose(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'journal-bench-'));
  return {
    name: 'sqlite (WAL, synchronous=FULL)',
    openJournal: async () => SqliteJournal.open({ path: join(dir, 'journal.sqlite') }),
    openSnapshots: async () => new SqliteSnapshotStore({ path: join(dir, 'snapshots.sqlite') }),
    size: () => {
      const bytes = ['journal.sqlite', 'journal.sqlite-wal']
        .map((f) => statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0)
        .reduce((a, b) => a + b, 0);
      return `${(bytes / 1e6).toFixed(0)} MB`;
    },
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The journal on a JetStream stream of a throwaway nats-server; snapshots in SQLite, as the service keeps them. */
async function natsBackend(): Promise<Backend | null> {
  const server = await startNats({ jetstream: true });
  return server && natsStreamBackend('nats jetstream (1 replica, file storage)', server.url, 1, server);
}

/** As natsBackend, on a stream with 3 replicas of a throwaway 3-server cluster. */
async function natsClusterBackend(): Promise<Backend | null> {
  const cluster = await startNatsCluster(3);
  const name = 'nats jetstream cluster (3 servers on loopback, 3 replicas, file storage)';
  return cluster && natsStreamBackend(name, cluster.url, 3, cluster);
}

function natsStreamBackend(
  name: string,
  servers: string,
  replicas: number,
  nats: { stop(): Promise<void> },
): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'journal-bench-nats-'));
  return {
    name,
    openJournal: () => NatsJournal.open({ servers, stream: 'BENCH_JOURNAL', replicas }),
    openSnapshots: async () => new SqliteSnapshotStore({ path: join(dir, 'snapshots.sqlite') }),
    size: () => 'n/a',
    dispose: async () => {
      await nats.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function pgBackend(): Promise<Backend | null> {
  const server = await startPostgres({ fsync: true });
  if (server === null) return null;
  const url = await server.createDatabase('bench');
  return {
    name: 'postgres (fsync on, synchronous_commit on)',
    openJournal: () => PgJournal.open({ connectionString: url }),
    openSnapshots: () => PgSnapshotStore.open({ connectionString: url }),
    size: () => 'n/a',
    dispose: () => server.stop(),
  };
}

async function benchBackend(backend: Backend): Promise<void> {
  console.log(`\n== ${backend.name}`);
  const sizes = quick ? [200_000] : [1_000_000, 10_000_000];
  let journal = await backend.openJournal();
  let written = 0;
  for (const size of sizes) {
    const toWrite = size - written;
    const commit = await groupCommit(journal, written + 1, toWrite, written === 0);
    written = size;
    console.log(
      `group commit of ${fmt(toWrite)} entries (journal now ${fmt(size)}, ${backend.size()}):`,
      commit,
    );
    await journal.close();
    const openStart = performance.now();
    journal = await backend.openJournal();
    const openMs = performance.now() - openStart;
    const r = await replay(journal, 1);
    console.log(
      `replay ${fmt(r.entries)} entries: ${r.seconds.toFixed(2)} s, ${fmt(r.perSecond)} entries/s (open ${openMs.toFixed(0)} ms)`,
    );
  }

  for (const rate of [10_000, 50_000]) {
    console.log('steady load:', await pacedLatency(journal, written + 1, rate, quick ? 2 : 4));
    written = await journal.lastSeq();
  }
  // What the steady load wrote is trimmed at the end (small records, as live traffic makes).
  const steadyEnd = written;
  const snapshots = await backend.openSnapshots();
  const state = syntheticState(quick ? 100_000 : 500_000);
  const saveStart = performance.now();
  const info = await snapshots.saveSnapshot({ seq: written, ts: 0, stateHash: 'bench', state });
  const saveMs = performance.now() - saveStart;
  const loadStart = performance.now();
  await snapshots.latestSnapshot();
  const loadMs = performance.now() - loadStart;
  console.log(
    `snapshot of ${quick ? '100k' : '500k'} orders: ${(info.bytes / 1e6).toFixed(1)} MB, save ${saveMs.toFixed(0)} ms, load ${loadMs.toFixed(0)} ms`,
  );
  await snapshots.close();
  await journal.close();

  // Restart: open + latest snapshot + replay of the journal after it (here: none after it), and
  // restart from no snapshot at all (full replay into a trivial core).
  for (const useSnapshot of [true, false]) {
    const restartStart = performance.now();
    const j = await backend.openJournal();
    const s = await backend.openSnapshots();
    let applied = 0;
    const { report } = await recover({
      journal: j,
      snapshots: useSnapshot ? s : { ...emptySnapshots },
      createCore: () => ({
        apply: () => {
          applied++;
        },
        stateHash: () => 'bench',
      }),
    });
    console.log(
      `restart ${useSnapshot ? 'from snapshot' : 'without snapshot'}: ${((performance.now() - restartStart) / 1000).toFixed(2)} s (replayed ${fmt(report.replayed)}, applied ${fmt(applied)})`,
    );
    await j.close();
    await s.close();
  }

  journal = await backend.openJournal();
  // A warm-up first: right after the restarts above the first second's tail is the disk's.
  await pacedLatency(journal, (await journal.lastSeq()) + 1, 10_000, 1);
  written = await journal.lastSeq();
  console.log('steady load, no trim:', await pacedLatency(journal, written + 1, 10_000, quick ? 2 : 4));
  written = await journal.lastSeq();
  console.log(
    'steady load while trimming:',
    await trimUnderLoad(journal, written + 1, 10_000, quick ? 2 : 4, steadyEnd),
  );
  await journal.close();
  await backend.dispose();
}

const emptySnapshots: SnapshotStore = {
  saveSnapshot: async () => ({ seq: 0, ts: 0, stateHash: '', bytes: 0, pinned: false }),
  latestSnapshot: async () => null,
  listSnapshots: async () => [],
  discardAfter: async () => 0,
  pin: async () => false,
  unpinBefore: async () => 0,
  close: async () => undefined,
};

console.log(`journal benchmark${quick ? ' (quick)' : ''}: node ${process.version}`);
await benchBackend(await sqliteBackend());
if (withPg) {
  const pg = await pgBackend();
  if (pg === null) console.log('\nPostgreSQL not installed: skipped');
  else await benchBackend(pg);
}
if (withNats) {
  const nats = await natsBackend();
  if (nats === null) console.log('\nnats-server not installed: skipped');
  else await benchBackend(nats);
}
if (withNatsCluster) {
  const cluster = await natsClusterBackend();
  if (cluster === null) console.log('\nnats-server not installed: skipped');
  else await benchBackend(cluster);
}
