/**
 * Service metrics in the Prometheus text format (served at `GET /metrics` unless `METRICS=false`):
 * the process (event-loop lag, GC pauses, heap: prom-client's default collectors), dispatched
 * requests, the journal's group commits, the market loop's turns, how far the read store
 * trails the sequencer, and the gateway's refused connections and dropped slow consumers.
 *
 * Hot path: every observation goes to a series resolved once per label set (`metric-series.ts`),
 * so a request costs a bucket search and a few increments, and allocates nothing.
 */
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { type CounterSeries, type HistogramSeries, SeriesCounter, SeriesHistogram } from './metric-series.ts';

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
  /** The seq of the journal's first stored entry (past 1 once trimmed). */
  readonly journalFirstSeq: () => number;
  readonly wsConnections: () => number;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requestSeconds: SeriesHistogram;
  private readonly requestTimers = new Map<string, HistogramSeries>();
  private readonly requestsByMethod: SeriesCounter;
  private readonly methodCounters = new Map<string, CounterSeries>();
  private readonly journalBatchSeconds: HistogramSeries;
  private readonly journalStorageSeconds: HistogramSeries;
  private readonly journalEntries: CounterSeries;
  private readonly marketTurnSeconds: HistogramSeries;
  private readonly connectionsRefused: SeriesCounter;
  private readonly slowConsumerDisconnects: SeriesCounter;

  constructor(sources: MetricsSources) {
    const registry = this.registry;
    const registers = [registry];
    collectDefaultMetrics({ register: registry });
    this.requestSeconds = new SeriesHistogram(
      'venue_request_seconds',
      'Time from dispatch to answer (validation, rate limit, the method, the journal acknowledgement)',
      LATENCY_BUCKETS,
      registry,
    );
    this.requestsByMethod = new SeriesCounter(
      'venue_requests_total',
      'Dispatched requests by method (unknown methods counted as "unknown")',
      registry,
    );
    this.journalBatchSeconds = new SeriesHistogram(
      'venue_journal_batch_seconds',
      'Group-commit write time per batch (one transaction and one fsync)',
      LATENCY_BUCKETS,
      registry,
    ).labels();
    this.journalStorageSeconds = new SeriesHistogram(
      'venue_journal_storage_seconds',
      "The storage's own part of a batch's write time (SQLite: the transaction and its fsync, timed on the writer thread)",
      LATENCY_BUCKETS,
      registry,
    ).labels();
    this.journalEntries = new SeriesCounter(
      'venue_journal_entries_total',
      'Commands made durable',
      registry,
    ).labels();
    this.marketTurnSeconds = new SeriesHistogram(
      'venue_market_turn_seconds',
      'Synchronous market work per event-loop turn (pricing, simulator, its submissions)',
      LATENCY_BUCKETS,
      registry,
    ).labels();
    this.connectionsRefused = new SeriesCounter(
      'venue_connections_refused_total',
      'TCP connections refused over the caps: MAX_CONNECTIONS_PER_ADDRESS (reason "address") or MAX_CONNECTIONS ("total")',
      registry,
    );
    this.slowConsumerDisconnects = new SeriesCounter(
      'venue_ws_slow_consumer_disconnects_total',
      'WebSocket connections dropped as slow consumers: past WS_MAX_BUFFERED_BYTES (reason "connection") or for WS_MAX_BUFFERED_BYTES_TOTAL ("budget")',
      registry,
    );
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
      name: 'venue_journal_first_seq',
      help: "The seq of the journal's first stored entry (past 1 once JOURNAL_RETENTION_DAYS trimmed it)",
      registers,
      collect() {
        this.set(sources.journalFirstSeq());
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
      timer = this.requestSeconds.labels({ transport, outcome: ok ? 'ok' : 'error' });
      this.requestTimers.set(key, timer);
    }
    timer.observe(ms / 1000);
    let counter = this.methodCounters.get(method);
    if (counter === undefined) {
      counter = this.requestsByMethod.labels({ method });
      this.methodCounters.set(method, counter);
    }
    counter.inc();
  }

  journalBatch(entries: number, ms: number, storageMs: number | null = null): void {
    this.journalBatchSeconds.observe(ms / 1000);
    if (storageMs !== null) this.journalStorageSeconds.observe(storageMs / 1000);
    this.journalEntries.inc(entries);
  }

  marketTurn(ms: number): void {
    this.marketTurnSeconds.observe(ms / 1000);
  }

  /** A TCP connection refused over the gateway's caps (rare: the label set is resolved each time). */
  connectionRefused(reason: 'address' | 'total'): void {
    this.connectionsRefused.labels({ reason }).inc();
  }

  /** A WebSocket connection dropped as a slow consumer. */
  slowConsumerDisconnect(reason: 'connection' | 'budget'): void {
    this.slowConsumerDisconnects.labels({ reason }).inc();
  }

  /** The text exposition and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
