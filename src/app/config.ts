/**
 * The service configuration: one typed, validated, deep-frozen object built once at start-up.
 *
 * Invariants:
 * - Every setting has a default in `DEFAULT_CONFIG` that serves on one machine; a test pins them.
 * - Sources, later wins: defaults < JSON config file (`CONFIG_FILE` or an explicit path) < env vars.
 * - Unknown keys (in the file) and ill-typed values (anywhere) are rejected with the path named,
 *   and the environment variable too when one set the value; nothing deep in the code reads
 *   `process.env`: constructors receive slices of this object.
 */
import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { DEFAULT_SNAPSHOT_POLICY } from '../store/snapshotter.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const RateBucket = Type.Object(
  {
    /** Sustained requests per second (credits refill at this rate). */
    perSecond: Type.Number({ exclusiveMinimum: 0 }),
    /** Bucket capacity in requests (the burst). */
    burst: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object(
  {
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    host: Type.String({ minLength: 1 }),
    dataDir: Type.String({ minLength: 1 }),
    /** PostgreSQL for the journal, snapshots and read store; null: SQLite files under `dataDir`. */
    databaseUrl: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    /**
     * NATS server URL(s) (`nats://host:4222`, comma-separated for a cluster): the journal on a
     * JetStream stream; snapshots and the read store stay on `databaseUrl` or SQLite. Null: the
     * journal is with them.
     */
    journalUrl: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
    /** The journal's JetStream stream (created when missing). */
    journalStream: Type.String({ pattern: '^[A-Za-z0-9_-]+$' }),
    /** Replicas of the stream: 1 on a single server, 3 in a cluster. */
    journalReplicas: Type.Integer({ minimum: 1, maximum: 5 }),
    /** 32-byte key (64 hex chars or base64) encrypting API secrets; null: a key file under dataDir. */
    secretEncryptionKey: Type.Union([
      Type.String({
        pattern: '^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=?)$',
        description: '32 bytes: 64 hex characters, or base64',
      }),
      Type.Null(),
    ]),
    /** One string enum, so a refusal lists the levels (a union of literals refused once per level). */
    logLevel: Type.Unsafe<(typeof LOG_LEVELS)[number]>({ type: 'string', enum: [...LOG_LEVELS] }),
    simulator: Type.Boolean(),
    /** Prometheus metrics at GET /metrics on the service port (unauthenticated, like /health). */
    metrics: Type.Boolean(),
    /**
     * Hash checkpoints and snapshots taken by a replica of the core on a worker thread, so the
     * live core never stops for them (memory: a second copy of the state); off: taken inline.
     */
    snapshotReplica: Type.Boolean(),
    /**
     * With the replica: it also writes the read store (the live core builds no rows; a history
     * query first waits for it); off: the live core writes it. Ignored without the replica.
     */
    readStoreOnReplica: Type.Boolean(),
    /**
     * How long a history query (order history, user trades, an old order's state) waits, in ms,
     * for the read store to write the commands it must show (the account's last acknowledged
     * one) while the store is behind (a write being tried again, the replica restarting or
     * catching up). Past it the query is refused with `unavailable` (safe to retry), never
     * answered without them. Queries whose rows are written answer at once.
     */
    historyWaitMs: Type.Integer({ minimum: 1, maximum: 600_000 }),
    /**
     * How long a stop waits, in ms, for each of its steps on the stores (the snapshot replica's
     * stop and final snapshot, snapshot saves, the read store's flush, closing the stores) before
     * it logs the step and leaves it behind, so a store that stopped answering (a hung
     * PostgreSQL) cannot hold the stop for ever. Nothing acknowledged is lost: it is in the
     * journal, and the next start recovers as after a crash. After a core failure each step gets
     * at most 5 s.
     */
    shutdownStepMs: Type.Integer({ minimum: 1, maximum: 3_600_000 }),
    /**
     * Days of history the read store keeps: closed orders, trades, RFQ history and finished
     * portfolios older than this are deleted as the store writes (open orders, open RFQs and
     * working portfolios never). Null: kept forever. At least 2, the history methods' `includeOld`
     * horizon.
     */
    historyRetentionDays: Type.Union([Type.Number({ minimum: 2 }), Type.Null()]),
    /**
     * Days of commands the journal keeps at least: older records are deleted down to a kept
     * snapshot, which recovery and a rebuilt read store then start from. Null: kept forever. At
     * least 1 and no less than `historyRetentionDays`; needs periodic snapshots.
     */
    journalRetentionDays: Type.Union([Type.Number({ minimum: 1 }), Type.Null()]),
    /**
     * When snapshots and hash checkpoints are taken (by the replica, or inline without it): a
     * restart replays at most about `everyCommands` commands (or `everyMs` of command time) after
     * the latest snapshot. 0 disables that trigger (a clean stop still snapshots).
     */
    snapshots: Type.Object(
      {
        everyCommands: Type.Integer({ minimum: 0 }),
        everyMs: Type.Integer({ minimum: 0 }),
        checkpointEveryCommands: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    http: Type.Object(
      {
        /** At most 64 MiB: a body is held whole in memory (and may be kept for a retry). */
        bodyLimitBytes: Type.Integer({ minimum: 1024, maximum: 67_108_864 }),
        /** At most 64 MiB: a message is held whole in memory before it is parsed. */
        wsMaxMessageBytes: Type.Integer({ minimum: 1024, maximum: 67_108_864 }),
        /** WebSocket connections open at once, in all and from one client address. */
        wsMaxConnections: Type.Integer({ minimum: 1 }),
        wsMaxConnectionsPerAddress: Type.Integer({ minimum: 1 }),
        /**
         * Subscriptions one WebSocket connection holds at once (a subscribe past it is refused and
         * subscribes nothing); the gateway's default, `DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION`.
         */
        wsMaxSubscriptionsPerConnection: Type.Integer({ minimum: 1 }),
        /**
         * Bytes queued for one WebSocket connection (written, not yet taken by its peer) past which
         * it is a slow consumer: it is sent nothing more, closed with 1008 and cut after a short
         * grace. The gateway's default, `DEFAULT_MAX_BUFFERED_BYTES`.
         */
        wsMaxBufferedBytes: Type.Integer({ minimum: 1024 }),
        /** Bytes queued for all WebSocket connections together; past it the biggest queues are cut first. */
        wsMaxBufferedBytesTotal: Type.Integer({ minimum: 1024 }),
        /**
         * TCP connections open at once (HTTP, WebSocket, upgrading), in all and from one client
         * address; one over either is answered 503 or 429 and closed at once.
         */
        maxConnections: Type.Integer({ minimum: 1 }),
        maxConnectionsPerAddress: Type.Integer({ minimum: 1 }),
        /**
         * How long, in ms, a client has to send a whole HTTP request (headers and body); one that
         * has not is answered 408 and its connection closed. Also the limit for the headers.
         */
        requestTimeoutMs: Type.Integer({ minimum: 1, maximum: 3_600_000 }),
        /** At most an hour: a timer past 2^31 − 1 ms would fire at once and cut every connection. */
        shutdownGraceMs: Type.Integer({ minimum: 0, maximum: 3_600_000 }),
        /**
         * How long a stop keeps idle HTTP keep-alive connections open, so that a request already on
         * its way is refused (503, unavailable, Connection: close) rather than cut with a reset.
         */
        shutdownIdleLingerMs: Type.Integer({ minimum: 0, maximum: 10_000 }),
      },
      { additionalProperties: false },
    ),
    auth: Type.Object(
      {
        /**
         * SEMANTICS: a timestamp more than 15 s from server time is refused. At most 5 minutes: the
         * replay memory keeps a time bucket per 100 ms of twice the window (a day's window ran the
         * start out of memory) and remembers every nonce for as long.
         */
        clockSkewMs: Type.Integer({ minimum: 1000, maximum: 300_000 }),
        /** Nonces remembered inside the window (all keys); past it signed requests get 429. */
        replayMaxEntries: Type.Integer({ minimum: 1 }),
        /** Size of answers kept for byte-identical retries (bytes; characters for text answers); past it signed requests get 429. */
        replayMaxAnswerBytes: Type.Integer({ minimum: 1 }),
        /**
         * One key's share of `replayMaxEntries` and `replayMaxAnswerBytes`: once the memory is half
         * full, a key holding more gets 429 while the other keys still get in. Null (auto): a
         * sixteenth of the cap (62,500 nonces and 16 MiB with the default caps).
         */
        replayMaxEntriesPerKey: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
        replayMaxAnswerBytesPerKey: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    rateLimits: Type.Object(
      {
        enabled: Type.Boolean(),
        /** Methods that reach the matching engine (buy, sell, edit, cancel*). */
        matching: RateBucket,
        /** Every other method. */
        nonMatching: RateBucket,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;

export const DEFAULT_CONFIG: Config = {
  port: 8080,
  host: '0.0.0.0',
  dataDir: './data',
  databaseUrl: null,
  journalUrl: null,
  journalStream: 'VENUE_JOURNAL',
  journalReplicas: 1,
  secretEncryptionKey: null,
  logLevel: 'info',
  simulator: true,
  metrics: true,
  snapshotReplica: true,
  readStoreOnReplica: true,
  historyWaitMs: 2_000,
  shutdownStepMs: 30_000,
  historyRetentionDays: null,
  journalRetentionDays: null,
  snapshots: { ...DEFAULT_SNAPSHOT_POLICY },
  http: {
    bodyLimitBytes: 262_144,
    wsMaxMessageBytes: 65_536,
    wsMaxConnections: 10_000,
    wsMaxConnectionsPerAddress: 1_000,
    wsMaxSubscriptionsPerConnection: 1_000,
    wsMaxBufferedBytes: 1_048_576,
    wsMaxBufferedBytesTotal: 268_435_456,
    maxConnections: 10_000,
    maxConnectionsPerAddress: 1_000,
    requestTimeoutMs: 30_000,
    shutdownGraceMs: 5_000,
    shutdownIdleLingerMs: 200,
  },
  auth: {
    clockSkewMs: 15_000,
    replayMaxEntries: 1_000_000,
    replayMaxAnswerBytes: 268_435_456,
    replayMaxEntriesPerKey: null,
    replayMaxAnswerBytesPerKey: null,
  },
  rateLimits: {
    enabled: true,
    matching: { perSecond: 200, burst: 500 },
    nonMatching: { perSecond: 50, burst: 200 },
  },
};

type EnvParser = (raw: string, name: string) => unknown;
const asString: EnvParser = (raw) => raw;
const asInteger: EnvParser = (raw, name) => {
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got '${raw}'`);
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) {
    throw new ConfigError(`${name} must be an integer of at most ${Number.MAX_SAFE_INTEGER}, got '${raw}'`);
  }
  return value;
};
/** A decimal number (not hex, binary or Infinity, which Number() would also take). */
const DECIMAL_NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const asNumber: EnvParser = (raw, name) => {
  const value = Number(raw);
  if (!DECIMAL_NUMBER.test(raw.trim()) || !Number.isFinite(value)) {
    throw new ConfigError(`${name} must be a number`);
  }
  return value;
};
const asBoolean: EnvParser = (raw, name) => {
  const text = raw.trim().toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(text)) return true;
  if (['0', 'false', 'off', 'no'].includes(text)) return false;
  throw new ConfigError(`${name} must be on/off, got '${raw}'`);
};
const asNullableString: EnvParser = (raw) => (raw === '' ? null : raw);
const asNumberOrOff: EnvParser = (raw, name) =>
  raw.trim() === '' || raw.trim().toLowerCase() === 'off' ? null : asNumber(raw, name);
const asIntegerOrAuto: EnvParser = (raw, name) =>
  raw.trim() === '' || raw.trim().toLowerCase() === 'auto' ? null : asInteger(raw, name);

/** Environment variable → config path and parser. */
export const ENV_BINDINGS: ReadonlyArray<readonly [string, readonly string[], EnvParser]> = [
  ['PORT', ['port'], asInteger],
  ['HOST', ['host'], asString],
  ['DATA_DIR', ['dataDir'], asString],
  ['DATABASE_URL', ['databaseUrl'], asNullableString],
  ['JOURNAL_URL', ['journalUrl'], asNullableString],
  ['JOURNAL_STREAM', ['journalStream'], asString],
  ['JOURNAL_REPLICAS', ['journalReplicas'], asInteger],
  ['SECRET_ENCRYPTION_KEY', ['secretEncryptionKey'], asNullableString],
  ['LOG_LEVEL', ['logLevel'], asString],
  ['SIMULATOR', ['simulator'], asBoolean],
  ['METRICS', ['metrics'], asBoolean],
  ['SNAPSHOT_REPLICA', ['snapshotReplica'], asBoolean],
  ['READ_STORE_ON_REPLICA', ['readStoreOnReplica'], asBoolean],
  ['HISTORY_WAIT_MS', ['historyWaitMs'], asInteger],
  ['SHUTDOWN_STEP_MS', ['shutdownStepMs'], asInteger],
  ['HISTORY_RETENTION_DAYS', ['historyRetentionDays'], asNumberOrOff],
  ['JOURNAL_RETENTION_DAYS', ['journalRetentionDays'], asNumberOrOff],
  ['SNAPSHOT_EVERY_COMMANDS', ['snapshots', 'everyCommands'], asInteger],
  ['SNAPSHOT_EVERY_MS', ['snapshots', 'everyMs'], asInteger],
  ['CHECKPOINT_EVERY_COMMANDS', ['snapshots', 'checkpointEveryCommands'], asInteger],
  ['BODY_LIMIT_BYTES', ['http', 'bodyLimitBytes'], asInteger],
  ['WS_MAX_MESSAGE_BYTES', ['http', 'wsMaxMessageBytes'], asInteger],
  ['WS_MAX_CONNECTIONS', ['http', 'wsMaxConnections'], asInteger],
  ['WS_MAX_CONNECTIONS_PER_ADDRESS', ['http', 'wsMaxConnectionsPerAddress'], asInteger],
  ['WS_MAX_SUBSCRIPTIONS_PER_CONNECTION', ['http', 'wsMaxSubscriptionsPerConnection'], asInteger],
  ['WS_MAX_BUFFERED_BYTES', ['http', 'wsMaxBufferedBytes'], asInteger],
  ['WS_MAX_BUFFERED_BYTES_TOTAL', ['http', 'wsMaxBufferedBytesTotal'], asInteger],
  ['MAX_CONNECTIONS', ['http', 'maxConnections'], asInteger],
  ['MAX_CONNECTIONS_PER_ADDRESS', ['http', 'maxConnectionsPerAddress'], asInteger],
  ['REQUEST_TIMEOUT_MS', ['http', 'requestTimeoutMs'], asInteger],
  ['SHUTDOWN_GRACE_MS', ['http', 'shutdownGraceMs'], asInteger],
  ['SHUTDOWN_IDLE_LINGER_MS', ['http', 'shutdownIdleLingerMs'], asInteger],
  ['REPLAY_MAX_ENTRIES', ['auth', 'replayMaxEntries'], asInteger],
  ['REPLAY_MAX_ANSWER_BYTES', ['auth', 'replayMaxAnswerBytes'], asInteger],
  ['REPLAY_MAX_ENTRIES_PER_KEY', ['auth', 'replayMaxEntriesPerKey'], asIntegerOrAuto],
  ['REPLAY_MAX_ANSWER_BYTES_PER_KEY', ['auth', 'replayMaxAnswerBytesPerKey'], asIntegerOrAuto],
  ['RATE_LIMITS', ['rateLimits', 'enabled'], asBoolean],
  ['RATE_MATCHING_PER_SEC', ['rateLimits', 'matching', 'perSecond'], asNumber],
  ['RATE_MATCHING_BURST', ['rateLimits', 'matching', 'burst'], asInteger],
  ['RATE_NON_MATCHING_PER_SEC', ['rateLimits', 'nonMatching', 'perSecond'], asNumber],
  ['RATE_NON_MATCHING_BURST', ['rateLimits', 'nonMatching', 'burst'], asInteger],
];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const validate = new Ajv({ allErrors: true, strict: false }).compile(ConfigSchema);

export interface LoadConfigOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** JSON file path; defaults to env CONFIG_FILE; absent means no file. */
  readonly file?: string;
  /** Programmatic overrides (tests), applied last. */
  readonly overrides?: DeepPartial<Config>;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

/** Builds the configuration from defaults, the optional file and the environment. */
export function loadConfig(options: LoadConfigOptions = {}): Readonly<Config> {
  const env = options.env ?? process.env;
  let merged: Record<string, unknown> = structuredClone(DEFAULT_CONFIG) as unknown as Record<string, unknown>;
  const file = options.file ?? env.CONFIG_FILE;
  if (file) merged = mergeDeep(merged, readConfigFile(file), file);
  /** JSON pointer → the variable that set it and its value, to name it when the value is refused. */
  const fromEnv = new Map<string, { readonly name: string; readonly value: unknown }>();
  for (const [name, path, parse] of ENV_BINDINGS) {
    const raw = env[name];
    if (raw === undefined) continue;
    const value = parse(raw, name);
    setPath(merged, path, value);
    fromEnv.set(`/${path.join('/')}`, { name, value });
  }
  if (options.overrides)
    merged = mergeDeep(merged, options.overrides as Record<string, unknown>, 'overrides');
  if (!validate(merged)) {
    const problems = plainErrors(validate.errors ?? []).map((error) => {
      const source = fromEnv.get(error.instancePath);
      const named = source !== undefined && getPath(merged, error.instancePath) === source.value;
      const allowed =
        error.keyword === 'enum' ? `: ${(error.params.allowedValues as unknown[]).join(', ')}` : '';
      return `${error.instancePath || '/'} ${error.message}${allowed}${named ? ` (${source.name})` : ''}`;
    });
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const config = merged as unknown as Config;
  const conflicts = [...storeUrlProblems(config), ...settingConflicts(config)];
  if (conflicts.length > 0) throw new ConfigError(`invalid configuration: ${conflicts.join('; ')}`);
  return deepFreeze(config);
}

/** A setting by its config path and the environment variable that sets it. */
function setting(path: string): string {
  const binding = ENV_BINDINGS.find(([, at]) => `/${at.join('/')}` === path);
  return binding === undefined ? path : `${path} (${binding[0]})`;
}

/** A URL's scheme (lower case, without `://`), or null when it has none. */
function schemeOf(url: string): string | null {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url.trim());
  return match === null ? null : match[1]!.toLowerCase();
}

/** How a refused URL is shown: its scheme only, since the rest may hold a password. */
function refusedUrl(url: string): string {
  const scheme = schemeOf(url);
  return scheme === null ? 'a value that is not a URL' : `a ${scheme}:// URL`;
}

/** A NATS server as nats.js dials it without a scheme: `host`, `host:port`, `[v6]:port`. */
const BARE_NATS_SERVER = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The stores' URLs, checked for what they dial before anything does: a value that is not a
 * PostgreSQL URL (a MySQL one, a typo) would otherwise be tried as a host name or as PostgreSQL.
 */
function storeUrlProblems(config: Config): string[] {
  const problems: string[] = [];
  const database = config.databaseUrl;
  if (database !== null && !['postgres', 'postgresql'].includes(schemeOf(database) ?? '')) {
    problems.push(
      `${setting('/databaseUrl')} must be a postgres:// or postgresql:// URL, got ${refusedUrl(database)}`,
    );
  }
  const journal = config.journalUrl;
  if (journal !== null) {
    const servers = journal
      .split(',')
      .map((server) => server.trim())
      .filter((server) => server !== '');
    const bad = (servers.length === 0 ? [journal] : servers).find((server) => {
      const scheme = schemeOf(server);
      return scheme === null ? !BARE_NATS_SERVER.test(server) : scheme !== 'nats' && scheme !== 'tls';
    });
    if (bad !== undefined) {
      problems.push(
        `${setting('/journalUrl')} must be NATS server URLs (nats://host:4222 or tls://host:4222, comma-separated), got ${refusedUrl(bad)}`,
      );
    }
  }
  return problems;
}

/** Settings valid one by one that do not go together. */
function settingConflicts(config: Config): string[] {
  const problems: string[] = [];
  // A key's share larger than the memory it is a share of is a mistake (of units, or of which
  // setting), not a share: refused rather than silently capped by the whole memory.
  for (const [share, whole] of [
    ['replayMaxEntriesPerKey', 'replayMaxEntries'],
    ['replayMaxAnswerBytesPerKey', 'replayMaxAnswerBytes'],
  ] as const) {
    const value = config.auth[share];
    if (value !== null && value > config.auth[whole]) {
      problems.push(
        `${setting(`/auth/${share}`)} must be <= ${setting(`/auth/${whole}`)} (${config.auth[whole]}), a key's share of it`,
      );
    }
  }
  const journalDays = config.journalRetentionDays;
  if (journalDays === null) return problems;
  const journal = setting('/journalRetentionDays');
  const historyDays = config.historyRetentionDays;
  if (historyDays !== null && journalDays < historyDays) {
    problems.push(
      `${journal} must be >= ${setting('/historyRetentionDays')} (${historyDays}), so a read store rebuilt from the journal holds all the history it keeps`,
    );
  }
  if (config.snapshots.everyCommands === 0 && config.snapshots.everyMs === 0) {
    problems.push(
      `${journal} needs periodic snapshots: ${setting('/snapshots/everyCommands')} and ${setting('/snapshots/everyMs')} are both 0`,
    );
  }
  return problems;
}

/**
 * The errors worth reading: a refused `X | null` value also fails the null branch and the union
 * itself ("must be null", "must match a schema in anyOf"); only the branch's own reason is kept.
 */
function plainErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const unionNoise = (e: ErrorObject) =>
    e.keyword === 'anyOf' || (e.keyword === 'type' && e.params.type === 'null');
  const explained = new Set(errors.filter((e) => !unionNoise(e)).map((e) => e.instancePath));
  return errors.filter((e) => !(unionNoise(e) && explained.has(e.instancePath)));
}

function readConfigFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw new ConfigError(`config file ${path} must hold a JSON object`);
  return parsed;
}

/** Merges `source` into `target`, refusing keys the target (the schema's shape) does not have. */
function mergeDeep(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  origin: string,
  prefix = '',
): Record<string, unknown> {
  for (const [key, value] of Object.entries(source)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (!Object.hasOwn(target, key)) throw new ConfigError(`unknown config key '${path}' in ${origin}`);
    const current = target[key];
    if (isPlainObject(current) && isPlainObject(value)) mergeDeep(current, value, origin, path);
    else target[key] = value;
  }
  return target;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[path[path.length - 1]!] = value;
}

function getPath(target: Record<string, unknown>, pointer: string): unknown {
  let node: unknown = target;
  for (const key of pointer.split('/').slice(1)) node = isPlainObject(node) ? node[key] : undefined;
  return node;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
