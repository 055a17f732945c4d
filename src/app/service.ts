/**
 * The composition root: opens storage, recovers the core (snapshot + journal replay, state hash
 * checked), and wires the sequencer, read store, snapshots, gateway, market and demo bootstrap.
 *
 * Start order: the port (and HOST) checked → the data directory's lock → the encryption key, key
 * store (its secrets must open) and admin token → storage → a read store ahead of the journal emptied
 * (to be rebuilt) → recovery (from the latest snapshot; without the snapshot replica, from no
 * later than the read store's last write, re-feeding it) → core service → the replica (which then
 * writes the read store and re-feeds it) → the orders of cancel-on-disconnect sessions a crash
 * ended are cancelled (`cancel_cod_sessions`) → gateway methods and routes, with the replay
 * memory restored (or recent signatures refused after a crash) → market listing and prices → demo
 * credentials (first start) → listen. An aborted `signal` stops the start at the next step, undoing
 * what it started (StartAbortedError).
 * Stop order (graceful): stop the market and timers → close the gateway (stop accepting, drain
 * requests, close sockets: cancel-on-disconnect runs) → cancel any session order left → drain the
 * sequencer → save the replay memory → snapshot → flush and close storage → release the lock
 * (once the stores have closed, even past their step's deadline).
 * Each step that waits on the stores gets at most `shutdownStepMs` (5 s after a core failure) on
 * the service clock, then is logged and left behind: a hung store cannot hold the stop, and the
 * next start recovers from the journal as after a crash.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import type { PortfolioMachine } from '../algo/machine.ts';
import { loadAdminToken, provisionMissingAccounts, registerAdminRoutes } from '../api/admin.ts';
import type { SqliteKeyStore } from '../api/auth/sqlite-key-store.ts';
import { bootstrapDemo, type DemoCredential } from '../api/bootstrap.ts';
import { createGateway, type Gateway } from '../api/gateway.ts';
import { archiveAnsweringOutages } from '../api/history-outages.ts';
import { registerMmpChannels, registerMmpMethods } from '../api/methods/mmp.ts';
import { registerRfqChannels, registerRfqMethods } from '../api/methods/rfq.ts';
import { registerPortfolioChannels } from '../api/portfolios/channels.ts';
import { registerPortfolioRoutes } from '../api/portfolios/routes.ts';
import type { ComboPort } from '../api/ports.ts';
import type { MachineCommand, MachineSnapshot } from '../core/machine.ts';
import { isRulesVersion, RULES_VERSION } from '../core/rules-version.ts';
import type { SubResult } from '../core/submachine.ts';
import { VenueError } from '../domain/errors.ts';
import { defaultMarketDriverConfig, MarketDriver } from '../market/driver.ts';
import type { RfqDesk } from '../rfq/desk.ts';
import { type DataDirLock, lockDataDir } from '../store/data-dir-lock.ts';
import { type Journal, JournalCorruptError, type JournalEntry, type SnapshotInfo } from '../store/journal.ts';
import { JournalTrimmer } from '../store/journal-trimmer.ts';
import { redactedServers } from '../store/nats/nats-journal.ts';
import { openStores, redactedUrl, SQLITE_FILES } from '../store/open-stores.ts';
import type { FenceWatch } from '../store/postgres/pg-fence.ts';
import type { PgWriterWatch } from '../store/postgres/pg-journal.ts';
import { recordAccountSeqs } from '../store/read/core-projections.ts';
import { portfolioArchive } from '../store/read/portfolio-queries.ts';
import type { ReadStore, RetentionSettings } from '../store/read/read-store.ts';
import { subMachineProjections } from '../store/read/sub-projections.ts';
import { RecoveryMismatchError, type RecoveryReport, recover } from '../store/recovery.ts';
import { type SnapshotPolicy, Snapshotter } from '../store/snapshotter.ts';
import { CLOCK_TOLERANCE_MS, type Clock, SystemClock } from './clock.ts';
import { closeStepBound } from './close-steps.ts';
import type { Config } from './config.ts';
import { createCoreMachine, PORTFOLIOS, RFQ_DESK } from './core-factory.ts';
import { CoreService } from './core-service.ts';
import { JOURNAL_STALL_MS, JournalWaits } from './journal-waits.ts';
import { assertSecretsOpen, openServiceKeyStore } from './key-store-open.ts';
import { MarketLoop } from './market-loop.ts';
import { ServiceMetrics } from './metrics.ts';
import { reconcileReadStore } from './read-store-reconcile.ts';
import { replayGuard, saveReplayState, takeReplayState } from './replay-state.ts';
import { DEFAULT_RESTART_POLICY, ReplicaSupervisor, type RestartPolicy } from './replica-supervisor.ts';
import { stampInPlace } from './sequencer.ts';
import type { ReplicaSettings } from './snapshot-replica.ts';

export interface ServiceOptions {
  readonly config: Readonly<Config>;
  readonly clock?: Clock;
  /** Market seed (index paths, surfaces, simulator). */
  readonly seed?: number;
  /** Market step interval, ms. */
  readonly marketTickMs?: number;
  /** Overrides `config.snapshots` (tests). */
  readonly snapshotPolicy?: SnapshotPolicy;
  /** When a failed snapshot replica is started again (default: 1 s, doubling up to 60 s). */
  readonly replicaRestart?: RestartPolicy;
  readonly logger?: Logger;
  /**
   * The core stopped taking commands (its journal failed, or it threw on a command): the process
   * should close the service and exit, so that a restart rebuilds the state from the journal.
   */
  readonly onFatal?: (error: Error) => void;
  /**
   * Aborted (a signal during start-up): the start stops at its next step, stops what it started
   * and rejects with StartAbortedError.
   */
  readonly signal?: AbortSignal;
}

/** The start was aborted through `ServiceOptions.signal`; everything it started is stopped. */
export class StartAbortedError extends Error {
  override name = 'StartAbortedError';
}

export interface RunningService {
  readonly core: CoreService;
  readonly gateway: Gateway;
  readonly market: MarketLoop;
  readonly recovery: RecoveryReport;
  /** History and projections (orders, trades, positions, portfolios, RFQs). */
  readonly readStore: ReadStore;
  /** Prometheus metrics (null when `metrics` is off). */
  readonly metrics: ServiceMetrics | null;
  /**
   * Takes the checkpoints and snapshots and writes the read store on a worker thread, started
   * again if it fails (null when `snapshotReplica` is off).
   */
  readonly snapshotReplica: ReplicaSupervisor | null;
  /** Trims the journal to `journalRetentionDays` (null when it is kept forever). */
  readonly journalTrimmer: JournalTrimmer | null;
  /** The seq of the journal's first stored entry, as of the last trim. */
  journalFirstSeq(): number;
  /** Demo credentials written on this (first) start, else null. */
  readonly demoCredentials: DemoCredential[] | null;
  readonly address: { readonly host: string; readonly port: number };
  close(): Promise<void>;
}

function daysToMs(days: number): number {
  return Math.round(days * 86_400_000);
}

/** One horizon for every kind of history (config `historyRetentionDays`); undefined: forever. */
export function historyRetention(days: number | null): RetentionSettings | undefined {
  if (days === null) return undefined;
  const ms = daysToMs(days);
  return { closedOrdersMs: ms, tradesMs: ms, rfqsMs: ms, finishedPortfoliosMs: ms };
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config } = options;
  const clock = options.clock ?? new SystemClock();
  const log = options.logger ?? pino({ level: config.logLevel });
  if (clock instanceof SystemClock) {
    clock.onAdjust((adjustment) =>
      log.warn(
        { clockAdjustment: adjustment },
        adjustment.kind === 'jump'
          ? 'the wall clock was ahead of the service clock for over a minute: the service clock jumped forward to it'
          : 'the wall clock was behind the service clock for over a minute: the service clock runs at half speed until it meets it',
      ),
    );
  }
  // Before anything is read or written: a port another process holds, or a second service on
  // this directory, is refused here (listening comes last, after the start is journaled).
  await checkPortFree(config.host, config.port);
  const aborted = () => {
    if (options.signal?.aborted) {
      throw new StartAbortedError(`the start was aborted (${String(options.signal.reason ?? 'signal')})`);
    }
  };
  aborted();
  const dataDirLock = lockDataDir(config.dataDir);
  const natsJournal =
    config.journalUrl === null
      ? null
      : { servers: config.journalUrl, stream: config.journalStream, replicas: config.journalReplicas };
  const retention = historyRetention(config.historyRetentionDays);
  // With the replica, it writes the read store (projecting the commands it applies anyway) and
  // re-feeds what the store lost; the live core then only queries it.
  const replicaWritesReads = config.snapshotReplica && config.readStoreOnReplica;
  // Whatever is started from here on is stopped again, newest first, when a later step fails.
  const undo = new StartUndo(log);
  undo.push('data directory lock', () => dataDirLock.release());
  try {
    // Refused before any store is opened, so before anything is journaled: a key that cannot be
    // read, one that opens none of the stored API secrets, an admin token too short.
    const keyStore = openServiceKeyStore(config);
    undo.push('key store', () => keyStore.close());
    assertSecretsOpen(keyStore);
    const adminToken = loadAdminToken(config.dataDir);
    const settings = { natsJournal, retention, replicaWritesReads };
    // With the journal on NATS, the database's lock is on a connection of its own: taken again
    // (on the service clock) when that connection drops, and the service stops when it cannot be.
    const lockLost: { error: Error | null } = { error: null };
    // What runs when the lock is held again: the database answers again, so a snapshot replica
    // waiting out its restart delay (it failed on that database) starts now (set by launch).
    const lockRetaken: { listener: (() => void) | null } = { listener: null };
    const fenceWatch: FenceWatch = {
      schedule: (ms, run) => clock.schedule(clock.now() + ms, run),
      onDropped: (error) =>
        log.warn(
          { err: error },
          'the connection holding the PostgreSQL database lock dropped: taking the lock again',
        ),
      onRetaken: (tries) => {
        log.info({ tries }, 'the PostgreSQL database lock is held again');
        lockRetaken.listener?.();
      },
      onLost: (error) => {
        lockLost.error = error;
        log.fatal(
          { err: error },
          'the PostgreSQL database lock is lost: the service stops, so that no two services use the database (DATABASE_URL); restart it once no other service runs on it',
        );
        options.onFatal?.(error);
      },
    };
    // With the journal in PostgreSQL, its writer connection (which holds the lock) is connected
    // again when lost, on the service clock, within the journal's deadline; commands wait.
    const journalWatch: PgWriterWatch = {
      clock: { now: () => clock.now(), schedule: (ms, run) => clock.schedule(clock.now() + ms, run) },
      onDropped: (error) =>
        log.warn(
          { err: error },
          "the PostgreSQL journal's connection was lost: connecting again and taking the database lock again; commands wait meanwhile (up to the journal's deadline)",
        ),
      onReconnected: ({ tries, batchCommitted }) => {
        log.info(
          { tries, batchCommitted },
          'the PostgreSQL journal is connected again and holds the database lock',
        );
        // The database answers again: a replica waiting out its restart delay starts now.
        lockRetaken.listener?.();
      },
    };
    const recoveredStores = await openAndRecover(
      config,
      { ...settings, fenceWatch, journalWatch },
      log,
      undo,
      aborted,
    );
    aborted();
    return await launch(
      options,
      { ...settings, clock, log, keyStore, adminToken, dataDirLock, lockLost, lockRetaken, aborted },
      recoveredStores,
      undo,
    );
  } catch (error) {
    await undo.run();
    throw error;
  }
}

interface LaunchContext extends OpenSettings {
  /** Set when the database's lock was lost for good (the service is then stopping). */
  readonly lockLost: { readonly error: Error | null };
  /** Called when the database's lock is held again after its connection dropped. */
  readonly lockRetaken: { listener: (() => void) | null };
  readonly clock: Clock;
  readonly log: Logger;
  readonly keyStore: SqliteKeyStore;
  readonly adminToken: string;
  readonly dataDirLock: DataDirLock;
  /** Throws StartAbortedError once the start's signal is aborted. */
  readonly aborted: () => void;
}

/** Starts the service on recovered stores; each part started is pushed on `undo`. */
async function launch(
  options: ServiceOptions,
  {
    clock,
    log,
    natsJournal,
    retention,
    replicaWritesReads,
    keyStore,
    adminToken,
    dataDirLock,
    lockLost,
    lockRetaken,
    aborted,
  }: LaunchContext,
  { storage, report, recovered, readAppliedAtOpen }: RecoveredStores,
  undo: StartUndo,
): Promise<RunningService> {
  const { config } = options;
  const readStore = storage.readStore;

  let driver: MarketDriver | null = null;
  const journalWaits = new JournalWaits(storage.journal, clock, report.lastSeq);
  if (report.lastTs - clock.now() > CLOCK_TOLERANCE_MS) {
    log.warn(
      { lastTs: report.lastTs, clock: clock.now() },
      "the journal's last command time is ahead of this machine's clock: command time stays at it until the clock catches up (check NTP)",
    );
  }
  const core = new CoreService({
    machine: recovered.machine,
    journal: journalWaits,
    clock,
    start: { seq: report.lastSeq, ts: report.lastTs },
    market: () => driver?.market() ?? null,
    onError: (error) => log.error({ err: error }, 'core service'),
    onFatal: (error) => {
      log.fatal({ err: error }, 'the core stopped taking commands; restart the service to recover');
      options.onFatal?.(error);
    },
  });
  undo.push('core', () => {
    core.stop();
    return core.drain();
  });
  let journalFirstSeq = await storage.journal.firstSeq();
  aborted();
  const trimmer =
    config.journalRetentionDays === null
      ? null
      : new JournalTrimmer({
          journal: storage.journal,
          snapshots: storage.snapshots,
          keepMs: daysToMs(config.journalRetentionDays),
          readStoreSeq: () => readStore.lastAppliedSeq,
          onTrimmed: (trim) => {
            journalFirstSeq = trim.firstSeq;
            log.info({ ...trim, ms: Math.round(trim.ms) }, 'journal trimmed');
          },
          onError: (error) => log.error({ err: error }, 'journal trim'),
        });
  if (trimmer !== null) undo.push('journal trimmer', () => trimmer.stop());
  const snapshotSaved = (info: SnapshotInfo) => trimmer?.onSnapshotSaved(info);
  // The same cadence for the replica and, without it (or while it is down), inline.
  const snapshotPolicy = options.snapshotPolicy ?? config.snapshots;
  const inlineSnapshotter = (policy: SnapshotPolicy) =>
    new Snapshotter(policy, {
      journal: storage.journal,
      snapshots: storage.snapshots,
      capture: () => ({
        seq: core.sequence,
        ts: core.machine.venue.now,
        stateHash: core.machine.stateHash(),
        state: core.machine.snapshot(),
      }),
      currentHash: () => ({ seq: core.sequence, stateHash: core.machine.stateHash() }),
      onSaved: (info, ms) => {
        log.info({ seq: info.seq, bytes: info.bytes, ms: Math.round(ms) }, 'snapshot saved');
        snapshotSaved(info);
      },
      onError: (error) => log.error({ err: error }, 'snapshot failed'),
    });
  // With the replica, the inline snapshotter only serves a shutdown after the replica failed.
  let snapshotter = inlineSnapshotter(config.snapshotReplica ? NO_PERIODIC_SNAPSHOTS : snapshotPolicy);
  let retiredSaves: Promise<void> = Promise.resolve();
  const replica = config.snapshotReplica
    ? superviseReplica(storage.journal, {
        settings: {
          dataDir: config.dataDir,
          databaseUrl: config.databaseUrl,
          natsJournal,
          startSeq: report.lastSeq,
          policy: snapshotPolicy,
          writesReadStore: replicaWritesReads,
          ...(retention === undefined ? {} : { retention }),
        },
        readAppliedSeq: readAppliedAtOpen,
        restartPolicy: options.replicaRestart ?? DEFAULT_RESTART_POLICY,
        log,
        onSaved: snapshotSaved,
        onFailed: () => {
          snapshotter = inlineSnapshotter(snapshotPolicy);
        },
        onRestarted: () => {
          // A save the inline snapshotter has under way still finishes before storage closes.
          const retired = snapshotter;
          retiredSaves = Promise.all([retiredSaves, retired.idle()]).then(() => undefined);
          snapshotter = inlineSnapshotter(NO_PERIODIC_SNAPSHOTS);
        },
      })
    : null;
  if (replica !== null) lockRetaken.listener = () => replica.restartNow();
  undo.push('snapshots', async () => {
    await replica?.stop(false);
    await snapshotter.idle();
    await retiredSaves;
  });
  // Per account, the last committed command that changed its rows: a query for an account waits
  // for that one only (whoever writes the store), so an account whose rows are written answers at
  // once even while the store is behind. Accounts not seen since start may have rows the store
  // lost in a crash, so they wait for everything recovered. A query waits for the store at most
  // `historyWaitMs` (on the service's clock, which also times the retries of a failed inline
  // write); past it, it is refused as behind, never answered without the caller's commands.
  const accountSeqs = new Map<number, number>();
  readStore.boundWaits(config.historyWaitMs, (ms, callback) => clock.schedule(clock.now() + ms, callback));
  readStore.waitPerAccount((accountId) => accountSeqs.get(accountId) ?? report.lastSeq);
  if (replica !== null && replicaWritesReads) readStore.writeElsewhere(replica);
  core.onCommitted((batch) => {
    journalWaits.committed(batch.seq);
    if (!replicaWritesReads) {
      readStore.push({ seq: batch.seq, ts: batch.ts, events: batch.events, subEvents: batch.subEvents });
    }
    recordAccountSeqs(batch.events, batch.seq, accountSeqs);
    snapshotter.onCommitted(batch.ts);
  });
  // The commands from here on are journaled under this build's rules: the first one says so.
  if (core.machine.rulesVersion !== RULES_VERSION) {
    await core.submitMachine({ type: 'rules_version', version: RULES_VERSION });
  }
  // A crash ends every connection without its cancel-on-disconnect: the orders of those sessions
  // are cancelled now, journaled, before the market moves and before any request is taken.
  await cancelEndedCodSessions(core, log, 'start');
  aborted();

  const metrics = config.metrics
    ? new ServiceMetrics({
        sequence: () => core.sequence,
        readStoreApplied: () => readStore.lastAppliedSeq,
        journalFirstSeq: () => journalFirstSeq,
        wsConnections: () => gateway.wsConnections(),
      })
    : null;
  if (metrics !== null)
    storage.journal.observeBatches((entries, ms, _frame, storageMs) =>
      metrics.journalBatch(entries, ms, storageMs),
    );

  let market: MarketLoop | null = null;
  // The market starts after the gateway is built (it needs the recovered core): bound late.
  const combos: ComboPort = {
    list: (name) =>
      market === null ? Promise.reject(new VenueError('unavailable')) : market.listCombo(name),
  };
  const gateway = createGateway({
    config,
    commands: core,
    reads: core,
    history: readStore,
    events: core,
    keyStore,
    clock,
    // Session ids unique across runs: the journal outlives this run's connections.
    codSessionPrefix: String(report.lastSeq),
    combos,
    // Cheap: what the service already knows, no store asked.
    health: () => {
      if (core.failed !== null)
        return 'the core stopped taking commands (see the log): the service must restart';
      if (lockLost.error !== null) return 'the PostgreSQL database lock is lost: the service is stopping';
      const waitedMs = journalWaits.waitedMs();
      if (waitedMs <= JOURNAL_STALL_MS) return null;
      return `no command has been made durable for ${Math.floor(waitedMs / 1000)} s: the journal's storage does not answer`;
    },
    ...(metrics === null
      ? {}
      : {
          metrics: {
            request: metrics.request.bind(metrics),
            render: () => metrics.render(),
            connectionRefused: (reason) => metrics.connectionRefused(reason),
            slowConsumerDisconnect: (reason) => metrics.slowConsumerDisconnect(reason),
          },
        }),
  });
  undo.push('gateway', () => gateway.close());
  // Nonces across the restart: restored after a clean stop; after a crash, requests signed while
  // the crashed run could have admitted them are refused (their retries must not run twice).
  const guard = replayGuard(
    takeReplayState(config.dataDir, (error) => log.error({ err: error }, 'saved replay memory unreadable')),
    report,
    config.auth.clockSkewMs,
  );
  if (guard.kind === 'restore') gateway.authenticator.restoreReplayMemory(guard.nonces);
  if (guard.kind === 'refuse') {
    gateway.authenticator.refuseSignedUntil(guard.signedUntil);
    log.warn(
      { signedUntil: guard.signedUntil },
      'not stopped cleanly: signed requests timestamped up to signedUntil are refused, as they may repeat executed ones',
    );
  }
  registerDesks(gateway, core, keyStore, combos, readStore);
  registerAdminRoutes(gateway, {
    commands: core,
    reads: core,
    keyStore,
    adminToken,
  });

  // A recovered venue continues from its last index levels and keeps its listed instruments.
  const venue = core.machine.venue;
  const listed = venue
    .instruments()
    .filter((info) => info.status === 'open')
    .map((info) => info.instrument.spec);
  const lastIndex: Record<string, number> = {};
  for (const currency of core.currencies()) {
    const price = venue.indexPrice(currency);
    if (price !== null) lastIndex[currency] = price;
  }
  driver = new MarketDriver(defaultMarketDriverConfig(core.now(), options.seed ?? 1, lastIndex));
  driver.seedIndexHistory(venue.indexSamples());
  market = new MarketLoop({
    driver,
    core,
    clock,
    tickMs: options.marketTickMs ?? 1_000,
    simulator: config.simulator,
    onError: (error) => log.error({ err: error }, 'market step'),
  });
  if (metrics !== null) market.observeSlices((ms) => metrics.marketTurn(ms));
  undo.push('market', () => market?.stop());
  await market.start(listed);
  aborted();
  const demoCredentials = await bootstrapDemo({
    keyStore,
    commands: core,
    reads: core,
    dataDir: config.dataDir,
  });
  // Accounts the CLI created while the service was down are opened now (unfunded).
  const opened = await provisionMissingAccounts(keyStore, core, core);
  if (opened.length > 0) log.info({ accounts: opened }, 'opened accounts created while stopped');
  if (demoCredentials !== null) {
    log.info({ path: join(config.dataDir, 'credentials.json') }, 'demo credentials written');
  }
  aborted();
  const address = await gateway.listen();
  log.info(
    { ...address, storage: storage.backend, journal: storage.journalBackend, simulator: config.simulator },
    'listening',
  );

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await market.stop();
      // A trim under way ends at its next step; the next start carries on.
      await trimmer?.stop();
      core.stop();
      await gateway.close();
      // Every connection ran its cancel-on-disconnect; one cut short leaves nothing behind either.
      if (core.failed === null) await cancelEndedCodSessions(core, log, 'stop');
      await core.drain();
      // Every request is answered and every command durable: the replay memory is complete.
      try {
        saveReplayState(config.dataDir, {
          lastSeq: core.sequence,
          nonces: gateway.authenticator.saveReplayMemory(),
        });
      } catch (error) {
        log.error({ err: error }, 'replay memory not saved: the next start refuses recently signed requests');
      }
      // A store that stopped answering (a hung PostgreSQL, the journal elsewhere) must not hold
      // the stop for ever: each step that waits on the stores gets `shutdownStepMs` on the
      // service clock (at most a few seconds after a core failure, which may have failed on such
      // a store), and what has not finished by then is left behind. Nothing acknowledged is lost:
      // the journal holds it, and the next start recovers as after a crash.
      const stepMs =
        core.failed === null ? config.shutdownStepMs : Math.min(config.shutdownStepMs, FAILED_CLOSE_STEP_MS);
      const within = closeStepBound(
        clock,
        stepMs,
        log,
        core.failed === null ? 'stopping' : 'closing after a core failure',
      );
      // Every frame is durable and handed over: the replica's last snapshot is the live state.
      // None when the database's lock was lost: the database may be another service's by now.
      const finalSnapshot = lockLost.error === null;
      let inTime = await within('snapshot replica stop', replica?.stop(finalSnapshot));
      // Its thread is not left running on: it holds connections to the store.
      if (!inTime) await within('snapshot replica terminate', replica?.terminate());
      inTime = (await within('snapshot saves', Promise.all([snapshotter.idle(), retiredSaves]))) && inTime;
      // Never snapshot a core that failed: its memory may hold part of a command not journaled.
      // Nor after a late step: the store is taken as hung, and the snapshot is only a shortcut
      // for the next start (which replays the journal instead).
      const inline = replica === null || replica.failed;
      if (inline && finalSnapshot && core.sequence > 0 && core.failed === null && inTime) {
        await within('final snapshot', snapshotter.snapshotNow(core.machine.venue.now));
      }
      await within(
        'read store flush',
        readStore.flush().catch((error: unknown) => log.error({ err: error }, 'read store flush')),
      );
      // The lock is held until the stores have closed, however late: a second service must not
      // open them while a close left behind may still write (one that never ends holds it until
      // the process exits). A close that fails releases it too.
      const storesClosed = storage.close();
      const releaseLock = () => dataDirLock.release();
      storesClosed.then(releaseLock, releaseLock);
      try {
        await within('stores close', storesClosed);
      } finally {
        keyStore.close();
      }
    })();
    return closing;
  };
  return {
    core,
    gateway,
    market,
    recovery: report,
    readStore,
    metrics,
    snapshotReplica: replica,
    journalTrimmer: trimmer,
    journalFirstSeq: () => journalFirstSeq,
    demoCredentials,
    address,
    close,
  };
}

/** How long a close after the core failed waits for each step on the stores (service clock). */
const FAILED_CLOSE_STEP_MS = 5_000;
interface OpenSettings {
  readonly natsJournal: { servers: string; stream: string; replicas: number } | null;
  /** The database lock's connection (journal on NATS): taken again, or reported lost. */
  readonly fenceWatch?: FenceWatch;
  /** The journal's writer connection (journal in PostgreSQL): connected again when lost. */
  readonly journalWatch?: PgWriterWatch;
  readonly retention: RetentionSettings | undefined;
  /** The snapshot replica writes the read store: recovery does not feed it. */
  readonly replicaWritesReads: boolean;
}

interface RecoveredStores {
  readonly storage: Awaited<ReturnType<typeof openStores<MachineCommand>>>;
  readonly report: RecoveryReport;
  readonly recovered: RecoveredCore;
  /** The read store's last written seq once reconciled with the journal, before recovery. */
  readonly readAppliedAtOpen: number;
}

/** Opens the stores (closed again by `undo` when the start fails) and recovers the core from them. */
async function openAndRecover(
  config: Readonly<Config>,
  { natsJournal, retention, replicaWritesReads, fenceWatch, journalWatch }: OpenSettings,
  log: Logger,
  undo: StartUndo,
  aborted: () => void,
): Promise<RecoveredStores> {
  const storage = await openStores<MachineCommand>({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    natsJournal,
    ...(fenceWatch === undefined ? {} : { fenceWatch }),
    ...(journalWatch === undefined ? {} : { journalWatch }),
    projections: subMachineProjections(),
    ...(retention === undefined ? {} : { retention }),
    onReadStoreError: (error) =>
      log.error(
        { err: error },
        'read store write failed: it is tried again shortly; meanwhile history that needs the unwritten commands is refused as unavailable',
      ),
    onSnapshotSkipped: (seq) =>
      log.warn(
        { snapshotSeq: seq },
        `the snapshot at seq ${seq} fails its checksum: skipped (recovery starts from an older one, or replays more of the journal)`,
      ),
  });
  undo.push('stores', async () => {
    try {
      await storage.readStore.flush();
    } finally {
      await storage.close();
    }
  });
  const readStore = storage.readStore;
  if (natsJournal !== null && natsJournal.replicas === 1) {
    // decisions.md, "What a JetStream ack guarantees": on one server an ack is not an fsync.
    log.warn(
      { journalStream: natsJournal.stream, journalReplicas: 1 },
      'the journal is on one NATS server: an OS crash or power loss there can lose acknowledged commands (it fsyncs every 2 minutes); use JOURNAL_REPLICAS=3 on a cluster',
    );
  }
  aborted();
  await reconcileReadStore(readStore, storage.journal, storage.snapshots, log);
  const readAppliedAtOpen = readStore.lastAppliedSeq;

  const { core: recovered, report } = await recover<MachineCommand, RecoveredCore>({
    journal: storage.journal,
    snapshots: storage.snapshots,
    // Replay from no later than what the read store has written, so it is re-fed what it lost.
    ...(replicaWritesReads ? {} : { maxSnapshotSeq: readAppliedAtOpen }),
    createCore: (state) =>
      new RecoveredCore(state as MachineSnapshot | null, replicaWritesReads ? null : readStore),
    strict: true,
  }).catch((error: unknown) => {
    if (error instanceof RecoveryMismatchError) {
      throw new Error(`${journalWhere(config, natsJournal)}: ${error.message}. ${OTHER_RULES_REMEDY}`, {
        cause: error,
      });
    }
    // Which journal: the record's own message does not say.
    if (!(error instanceof JournalCorruptError)) throw error;
    throw new JournalCorruptError(`${journalWhere(config, natsJournal)}: ${error.message}`, error.atSeq);
  });
  const foreign = recovered.foreign;
  if (foreign !== null) {
    throw new Error(
      `${journalWhere(config, natsJournal)}: ${foreign.count} commands after the last snapshot (from seq ${foreign.fromSeq}) were journaled under other rules (version ${foreign.version}, this build ${RULES_VERSION}), which would replay them to other results than were acknowledged. ${OTHER_RULES_REMEDY}`,
    );
  }
  log.info(
    {
      snapshotSeq: report.snapshotSeq,
      replayed: report.replayed,
      lastSeq: report.lastSeq,
      droppedTailRecords: report.droppedTailRecords,
      checkpointsVerified: report.checkpointsVerified,
      stateHash: report.finalStateHash,
      replayMs: Math.round(report.replayMs),
    },
    'recovered',
  );
  return { storage, report, recovered, readAppliedAtOpen };
}

/**
 * What a start has started so far, to stop again, newest first, when a later step fails: a start
 * that fails leaves no thread, connection or lock behind. A step that fails is logged and the
 * others still run.
 */
class StartUndo {
  private readonly steps: Array<{ what: string; run: () => unknown }> = [];

  constructor(private readonly log: Logger) {}

  push(what: string, run: () => unknown): void {
    this.steps.push({ what, run });
  }

  async run(): Promise<void> {
    for (const step of this.steps.reverse()) {
      try {
        await step.run();
      } catch (error) {
        this.log.error({ err: error }, `after a failed start, stopping the ${step.what} failed`);
      }
    }
  }
}

/** The port is taken by another process: refused before anything is journaled. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

/**
 * Binds the port for a moment (port 0: any free one, which still checks HOST): a HOST that is no
 * address of this machine is refused here too, not after the start is journaled.
 */
async function checkPortFree(host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new PortInUseError(`PORT ${port} on ${host} is in use by another process; stop it or set PORT`)
          : new Error(`cannot listen on HOST ${host} (PORT ${port}): ${error.message}`, { cause: error }),
      ),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Cancels the orders that still belong to a WebSocket cancel-on-disconnect session (one journaled
 * `cancel_cod_sessions`, cancelReason `cancel_on_disconnect`), when there are any: at start-up
 * every such session is of a connection of an earlier run, which is gone.
 */
async function cancelEndedCodSessions(core: CoreService, log: Logger, when: 'start' | 'stop'): Promise<void> {
  const sessions = core.machine.venue.codSessionOrders();
  if (sessions.size === 0) return;
  try {
    const result = await core.submit({ type: 'cancel_cod_sessions' });
    log.info(
      { when, sessions: sessions.size, cancelled: result.orders?.length ?? 0 },
      'cancelled the orders of cancel-on-disconnect sessions whose connections are gone',
    );
  } catch (error) {
    // At start-up the service does not serve without it (the core failed: it must restart).
    if (when === 'start') throw error;
    log.error({ err: error }, 'cancel-on-disconnect at stop');
  }
}

const NO_PERIODIC_SNAPSHOTS: SnapshotPolicy = { everyCommands: 0, everyMs: 0, checkpointEveryCommands: 0 };

/**
 * Starts the snapshot replica, which from now on is handed every frame the journal makes durable
 * (before the first new command, so it misses none) and is started again when it fails; its
 * checkpoints go back to the journal.
 */
function superviseReplica(
  journal: Journal<MachineCommand>,
  options: {
    settings: ReplicaSettings;
    readAppliedSeq: number;
    restartPolicy: RestartPolicy;
    log: Logger;
    onSaved: (info: SnapshotInfo) => void;
    onFailed: () => void;
    onRestarted: () => void;
  },
): ReplicaSupervisor {
  const { log } = options;
  return new ReplicaSupervisor(
    journal,
    options.settings,
    options.readAppliedSeq,
    {
      onCheckpoint: (checkpoint) => journal.recordCheckpoint(checkpoint),
      onSaved: (info, ms) => {
        log.info({ seq: info.seq, bytes: info.bytes, ms: Math.round(ms) }, 'snapshot saved by the replica');
        options.onSaved(info);
      },
      onFailed: (error, restartInMs) => {
        log.error(
          { err: error, ...(Number.isFinite(restartInMs) ? { restartInMs } : {}) },
          options.settings.writesReadStore
            ? 'snapshot replica stopped: snapshots and checkpoints are taken inline and history waits for its restart'
            : 'snapshot replica stopped: snapshots and checkpoints are taken inline until its restart',
        );
        options.onFailed();
      },
      onRestarted: () => {
        log.info('snapshot replica restarted');
        options.onRestarted();
      },
      onSnapshotSkipped: (seq) =>
        log.warn(
          { snapshotSeq: seq },
          `the snapshot replica found the snapshot at seq ${seq} failing its checksum: skipped (it starts from an older one)`,
        ),
    },
    options.restartPolicy,
  );
}

/** Block RFQ methods and channels, portfolio routes and channels, over the live sub-machines. */
function registerDesks(
  gateway: Gateway,
  core: CoreService,
  keyStore: SqliteKeyStore,
  combos: ComboPort,
  readStore: ReadStore,
): void {
  const desk = core.machine.sub<RfqDesk>(RFQ_DESK);
  const portfolios = core.machine.sub<PortfolioMachine>(PORTFOLIOS);
  registerRfqMethods(gateway.methods, {
    submit: async (command) => (await core.submitMachine(command)).result as SubResult<never, never>,
    desk,
    reads: core,
    makerDesks: () => {
      const desks = new Set<string>();
      for (const key of keyStore.listKeys()) {
        if (!key.disabled && key.roles.includes('maker') && key.deskName !== null) desks.add(key.deskName);
      }
      return [...desks].sort();
    },
    now: () => core.now(),
  });
  registerRfqChannels(gateway.channels, core);
  registerPortfolioRoutes(gateway, {
    submitMachine: (command) => core.submitMachine(command),
    now: () => core.now(),
    instrument: (name) => core.instrument(name),
    portfolios: () => portfolios,
    combos,
    // A finished portfolio pruned from the core answers `info` from its final record.
    archive: archiveAnsweringOutages(portfolioArchive(readStore)),
  });
  registerPortfolioChannels(gateway.channels, core);
  registerMmpMethods(gateway.methods, {
    commands: core,
    mmpConfig: (accountId, indexName) => core.machine.venue.mmpConfig(accountId, indexName ?? undefined),
  });
  registerMmpChannels(gateway.channels, core);
}

/** What to do when the journal's tail was written by a build with other rules. */
const OTHER_RULES_REMEDY =
  'If another build wrote them, start that build once and stop it with SIGTERM (a clean stop snapshots the end of the journal), then start this one (docs/decisions.md, "Rule changes and the journal")';

/**
 * The machine during recovery: replays journaled commands and re-feeds the read store (inline).
 * Notes the commands journaled under another rules version than this build's (`foreign`).
 */
class RecoveredCore {
  readonly machine;
  foreign: { fromSeq: number; count: number; version: number } | null = null;

  /** `readStore`: the store to re-feed, or null when the snapshot replica does. */
  constructor(
    snapshot: MachineSnapshot | null,
    private readonly readStore: ReadStore | null,
  ) {
    this.machine = createCoreMachine(snapshot);
  }

  apply(entry: JournalEntry<MachineCommand>): void {
    const version = this.machine.rulesVersion;
    if (version !== RULES_VERSION && !isRulesVersion(entry.command)) {
      if (this.foreign === null) this.foreign = { fromSeq: entry.seq, count: 0, version };
      this.foreign.count++;
    }
    const result = this.machine.execute(stampInPlace(entry.command, entry));
    this.readStore?.push({
      seq: entry.seq,
      ts: entry.ts,
      events: result.engineEvents,
      subEvents: result.subEvents,
    });
  }

  stateHash(): string {
    return this.machine.stateHash();
  }
}

/** Where the journal is, as its setting names it (a password masked). */
function journalWhere(config: Readonly<Config>, natsJournal: OpenSettings['natsJournal']): string {
  if (natsJournal !== null) {
    return `JOURNAL_URL (${redactedServers(natsJournal.servers)}, stream ${natsJournal.stream})`;
  }
  if (config.databaseUrl !== null) return `DATABASE_URL (${redactedUrl(config.databaseUrl)})`;
  return `DATA_DIR/${SQLITE_FILES.journal} (${join(config.dataDir, SQLITE_FILES.journal)})`;
}
