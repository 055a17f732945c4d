/**
 * Service metrics in the Prometheus text format (served at `GET /metrics` unless `METRICS=false`):
 * the process (event-loop lag, GC pauses, heap: prom-client's default collectors), dispatched
 * requests, the journal's group commits, the market loop's turns, and how far the read store
 * trails the sequencer.
 *
 * Hot path: every observation goes to a label child made once, so a request costs two array
 * updates, never a label lookup by hashing.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: 100 µs to 1 s, dense around the 1–20 ms where fsync tails and GC pauses fall. */
const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.008, 0.013, 0.02, 0.05, 0.1, 0.25, 1,
];

/** Read at each scrape. */
export interface MetricsSources {
  /** The last command seq the sequencer stamped. */
  readonly sequence: () => number;
  /** The last seq the read store has written. */
  readonly readStoreApplied: () => number;
  readonly wsConnections: () => number;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requestSeconds: Histogram<'transport' | 'outcome'>;
  private readonly requestTimers = new Map<
    string,
    ReturnType<Histogram<'transport' | 'outcome'>['labels']>
  >();
  private readonly requestsByMethod: Counter<'method'>;
  private readonly methodCounters = new Map<string, ReturnType<Counter<'method'>['labels']>>();
  private readonly journalBatchSeconds: Histogram;
  private readonly journalEntries: Counter;
  private readonly marketTurnSeconds: Histogram;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requestSeconds = new Histogram({
      name: 'venue_request_seconds',
      help: 'Time from dispatch to answer (validation, rate limit, the method, the journal acknowledgement)',
      labelNames: ['transport', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.requestsByMethod = new Counter({
      name: 'venue_requests_total',
      help: 'Dispatched requests by method (unknown methods counted as "unknown")',
      labelNames: ['method'],
      registers,
    });
    this.journalBatchSeconds = new Histogram({
      name: 'venue_journal_batch_seconds',
      help: 'Group-commit write time per batch (one transaction and one fsync)',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.journalEntries = new Counter({
      name: 'venue_journal_entries_total',
      help: 'Commands made durable',
      registers,
    });
    this.marketTurnSeconds = new Histogram({
      name: 'venue_market_turn_seconds',
      help: 'Synchronous market work per event-loop turn (pricing, simulator, its submissions)',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'venue_sequence',
      help: 'The last command seq stamped',
      registers,
      collect() {
        this.set(sources.sequence());
      },
    });
    new Gauge({
      name: 'venue_read_store_lag_commands',
      help: 'Commands stamped but not yet written to the read store',
      registers,
      collect() {
        this.set(Math.max(0, sources.sequence() - sources.readStoreApplied()));
      },
    });
    new Gauge({
      name: 'venue_ws_connections',
      help: 'Open WebSocket connections',
      registers,
      collect() {
        this.set(sources.wsConnections());
      },
    });
  }

  /** One dispatched request; `method` must come from the method registry (bounded labels). */
  request(method: string, transport: string, ok: boolean, ms: number): void {
    const key = ok ? transport : `${transport}!`;
    let timer = this.requestTimers.get(key);
    if (timer === undefined) {
      timer = this.requestSeconds.labels(transport, ok ? 'ok' : 'error');
      this.requestTimers.set(key, timer);
    }
    timer.observe(ms / 1000);
    let counter = this.methodCounters.get(method);
    if (counter === undefined) {
      counter = this.requestsByMethod.labels(method);
      this.methodCounters.set(method, counter);
    }
    counter.inc();
  }

  journalBatch(entries: number, ms: number): void {
    this.journalBatchSeconds.observe(ms / 1000);
    this.journalEntries.inc(entries);
  }

  marketTurn(ms: number): void {
    this.marketTurnSeconds.observe(ms / 1000);
  }

  /** The text exposition and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
