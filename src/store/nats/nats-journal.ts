/**
 * The NATS JetStream journal, selected by JOURNAL_URL (snapshots and the read store stay on
 * PostgreSQL or SQLite).
 *
 * Storage: one stream (file storage, limits retention with no limits, `replicas` copies) with two
 * subjects: `<stream>.frames` holds one message per group-commit batch, the stored frame of
 * ../record-format.ts (payload as the message data; first seq, count, version and checksum as
 * headers), and `<stream>.checkpoints` one message per hash checkpoint (its seq as a header, the
 * state hash as data). Frames are in the stream in seq order.
 *
 * Durability: `append` resolves after the JetStream publish ack. What the ack guarantees depends on
 * the server, not on this code: see docs/decisions.md ("NATS JetStream journal"). On nats-server
 * 2.9 with one replica the message is written to the file store but fsynced only every 2 minutes,
 * so it survives a crash of the server process, not an OS crash or power loss; with 3 replicas it
 * is on a majority of the servers when acknowledged.
 *
 * Invariants (beyond ../journal.ts):
 * - One writer per stream. Every publish carries the stream's expected last sequence
 *   (`Nats-Expected-Last-Sequence`), so once another writer appended (even a checkpoint), this
 *   one's next publish is refused and the journal is poisoned. Opening also asks the stream's
 *   running writer (a responder on `<stream>.writer`) and is refused with `StoreOpenError` when one
 *   answers, as PostgreSQL's advisory lock does; two writers opening at the same moment both pass
 *   that check and the sequence fence stops the second to publish.
 * - A checkpoint is published only after the frame holding its seq was acknowledged (it waits in
 *   memory until then, and is lost with the process: checkpoints are best effort), so every
 *   checkpoint message comes after the frame holding its seq, and none describes a seq that is not
 *   durable. A checkpoint whose publish fails after its frame was acknowledged fails the next
 *   write, not the acknowledged one.
 * - Opening drops a last frame whose checksum fails (and the checkpoints published after it for
 *   its seqs); a bad frame anywhere else, or a gap, is `JournalCorruptError` when read.
 * - A frame larger than the server's max payload is sent as several frames of consecutive entries
 *   (re-encoded), each naming the batch's last seq (`Journal-Batch-Last`); a single entry that does
 *   not fit fails the write. A batch counts only once all its parts are stored: readers hold the
 *   parts back until the last arrives, and opening deletes the parts of a batch whose later parts
 *   never were (a publish that failed part way, whose appends were all refused), so they are not
 *   replayed. A frame without the header is a whole batch.
 * - A server lost once connected is dialled again for as long as the journal is open; publishes
 *   meanwhile are tried again up to their deadline (`ackTimeoutMs`, 30 s), which is what fails
 *   the journal when the server stays away. A server without JetStream is refused at open.
 * - Reads run on ephemeral ordered consumers from the frame holding `fromSeq`, found by binary
 *   search over stream sequences; they end at the last frame pending when they get there.
 * - Trimmed by deleting messages one by one from the stream's start (see `trimRecords`). The
 *   stream denies purges on purpose, so no one empties the journal at a stroke by accident.
 */
import { randomUUID } from 'node:crypto';
import {
  connect,
  DeliverPolicy,
  DiscardPolicy,
  Empty,
  headers,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type MsgHdrs,
  type NatsConnection,
  RetentionPolicy,
  StorageType,
  type StoredMsg,
  type StreamConfig,
  type Subscription,
} from 'nats';
import { CommittedJournal } from '../committed-journal.ts';
import { StoreOpenError } from '../data-dir-lock.ts';
import { GroupCommitter } from '../group-commit.ts';
import {
  type BatchLimits,
  DEFAULT_BATCH_LIMITS,
  type HashCheckpoint,
  JOURNAL_WRITE_DEADLINE_MS,
  JournalCorruptError,
  type JournalEntry,
  type OpenReport,
  type TrimResult,
} from '../journal.ts';
import { readVerifiedFrames } from '../read-frames.ts';
import { buildFrame, decodeFrame, frameChecksumValid, type StoredFrame } from '../record-format.ts';

/** Where the journal lives: what JOURNAL_URL, JOURNAL_STREAM and JOURNAL_REPLICAS say. */
export interface NatsJournalTarget {
  /** Server URL(s), comma-separated: `nats://host:4222[,nats://host2:4222]`. */
  readonly servers: string;
  /** The stream's name (letters, digits, `_` and `-`). */
  readonly stream: string;
  /** Copies of the stream: 1 on a single server, 3 in a cluster. Checked against an existing stream. */
  readonly replicas: number;
}

export interface NatsJournalOptions extends NatsJournalTarget {
  readonly limits?: BatchLimits;
  /**
   * Refuse to open while another writer of the stream answers (default true). False leaves only
   * the sequence fence (tests model two writers that opened at the same moment with it).
   */
  readonly exclusive?: boolean;
  /**
   * How long a publish may wait for its ack, tries included, before the journal fails, and an
   * open for the cluster to answer (default 30 s: long enough for a cluster to elect leaders).
   */
  readonly ackTimeoutMs?: number;
  /** How often a lost server is dialled again (default 500 ms; tests shorten it). */
  readonly reconnectWaitMs?: number;
}

export const DEFAULT_JOURNAL_STREAM = 'VENUE_JOURNAL';

const HEADER = {
  firstSeq: 'Journal-First-Seq',
  count: 'Journal-Count',
  version: 'Journal-Version',
  checksum: 'Journal-Checksum',
  seq: 'Journal-Seq',
  batchLast: 'Journal-Batch-Last',
} as const;

/** Room left in a message for its headers and protocol framing. */
const HEADER_ROOM = 4096;
const NOT_FOUND = 10037;
/** "JetStream system temporarily unavailable": the cluster has no leader for the moment. */
const CLUSTER_NOT_AVAILABLE = 10008;
/** "no suitable peers for placement": too few servers up for the stream's replicas, for now. */
const NO_SUITABLE_PEERS = 10005;
/** Each try of a publish waits this long for its ack before it is sent again. */
const PUBLISH_TRY_MS = 2_000;
const PUBLISH_RETRY_PAUSE_MS = 250;
const OPEN_RETRY_PAUSE_MS = 500;
const DEFAULT_ACK_TIMEOUT_MS = JOURNAL_WRITE_DEADLINE_MS;
/** A lost server is dialled again this often (nats.js adds up to 100 ms of jitter). */
const DEFAULT_RECONNECT_WAIT_MS = 500;
const WRONG_LAST_SEQUENCE = 10071;
const STREAM_NOT_FOUND = 10059;

export function journalSubjects(stream: string) {
  return {
    frames: `${stream}.frames`,
    checkpoints: `${stream}.checkpoints`,
    /** The running writer answers here; not a subject of the stream. */
    writer: `${stream}.writer`,
  };
}

/** The stream as this journal creates it. */
export function journalStreamConfig(target: NatsJournalTarget): Partial<StreamConfig> {
  const subjects = journalSubjects(target.stream);
  return {
    name: target.stream,
    subjects: [subjects.frames, subjects.checkpoints],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msgs_per_subject: -1,
    num_replicas: target.replicas,
    deny_delete: false,
    deny_purge: true,
  };
}

export function natsServers(servers: string): string[] {
  return servers
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * JOURNAL_URL to print: each server's password masked, and a user name given alone too (NATS
 * takes `nats://TOKEN@host` as a token).
 */
export function redactedServers(servers: string): string {
  return natsServers(servers)
    .map((server) => {
      if (!server.includes('@')) return server;
      try {
        const url = new URL(server);
        if (url.password !== '') url.password = '***';
        else url.username = '***';
        return url.toString();
      } catch {
        return '(not a URL)';
      }
    })
    .join(',');
}

function apiErrorCode(error: unknown): number | undefined {
  return (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;
}

/** No ack in time, no stream leader to take the message, or no JetStream leader for the moment. */
function isPassingUnavailability(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'TIMEOUT' || code === '503' || apiErrorCode(error) === CLUSTER_NOT_AVAILABLE;
}

/** A connection to the journal's stream: what the writer and every reader share. */
export class NatsJournalStream {
  readonly subjects: ReturnType<typeof journalSubjects>;

  private constructor(
    readonly nc: NatsConnection,
    readonly jsm: JetStreamManager,
    readonly js: JetStreamClient,
    readonly stream: string,
  ) {
    this.subjects = journalSubjects(stream);
  }

  /**
   * Connects for good: once connected, a lost server is dialled again every `reconnectWaitMs`
   * (default 500 ms) for as long as the connection is open, never given up after a number of
   * tries, so what fails a journal whose server went away is its publish deadline (`ackTimeoutMs`,
   * 30 s), not the client closing before it. `close` ends the redialling.
   */
  static async connect(
    target: Pick<NatsJournalTarget, 'servers' | 'stream'>,
    name: string,
    reconnectWaitMs = DEFAULT_RECONNECT_WAIT_MS,
  ) {
    const nc = await connect({
      servers: natsServers(target.servers),
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: reconnectWaitMs,
    });
    try {
      const jsm = await nc.jetstreamManager().catch((error: unknown) => {
        // No JetStream API answers, and the server says it has none: not a cluster electing a
        // leader, which answers (10008), but a server started without JetStream.
        if ((error as { code?: string } | null)?.code === '503' && nc.info?.jetstream !== true) {
          throw new StoreOpenError(
            `JetStream is not enabled on JOURNAL_URL (${redactedServers(target.servers)}): the NATS server answers but runs without JetStream; start it with -js (or a jetstream block in its configuration)`,
          );
        }
        throw error;
      });
      return new NatsJournalStream(nc, jsm, nc.jetstream(), target.stream);
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  /** The message at stream sequence ≥ `seq` on `subject`, or null. */
  async nextOn(subject: string, seq: number): Promise<StoredMsg | null> {
    try {
      // next_by_subj: STREAM.MSG.GET has taken it since nats-server 2.9; the client types lag.
      return await this.jsm.streams.getMessage(this.stream, { seq, next_by_subj: subject } as never);
    } catch (error) {
      if (apiErrorCode(error) === NOT_FOUND) return null;
      throw error;
    }
  }

  /**
   * The last frame message, or null. (Not `last_by_subj`: nats-server 2.9 answers "no message
   * found" for it once the subject's last message was deleted, as opening does with a torn tail.)
   */
  async lastFrame(): Promise<StoredMsg | null> {
    const { firstSeq, lastSeq } = await this.state();
    return this.frameBefore(lastSeq + 1, firstSeq);
  }

  /** The last frame message before stream sequence `end`, or null. */
  async previousFrame(end: number): Promise<StoredMsg | null> {
    return this.frameBefore(end, (await this.state()).firstSeq);
  }

  private async frameBefore(end: number, firstSeq: number): Promise<StoredMsg | null> {
    const last = end - 1;
    if (last < firstSeq) return null;
    // Back from the end in growing steps to a point with a frame after it, then forward.
    let found: StoredMsg | null = null;
    for (let probe = last, step = 1; found === null || found.seq > last; probe -= step, step *= 2) {
      found = await this.nextOn(this.subjects.frames, Math.max(probe, firstSeq));
      if ((found === null || found.seq > last) && probe <= firstSeq) return null;
    }
    for (;;) {
      const next = await this.nextOn(this.subjects.frames, found.seq + 1);
      if (next === null || next.seq > last) return found;
      found = next;
    }
  }

  async state(): Promise<{ firstSeq: number; lastSeq: number; messages: number }> {
    const info = await this.jsm.streams.info(this.stream);
    return { firstSeq: info.state.first_seq, lastSeq: info.state.last_seq, messages: info.state.messages };
  }

  /**
   * The stream sequence of the frame holding journal seq `seq` (the last frame starting at or
   * before it), or of the first frame when all start after it; null when there are no frames.
   */
  async frameHolding(seq: number): Promise<number | null> {
    const last = await this.lastFrame();
    if (last === null) return null;
    if (frameOf(last.header, last.data, last.seq).firstSeq <= seq) return last.seq;
    const { firstSeq } = await this.state();
    let best: number | null = null;
    let lo = firstSeq;
    let hi = last.seq - 1;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const message = await this.nextOn(this.subjects.frames, mid);
      if (message === null || message.seq > hi) {
        hi = mid - 1;
      } else if (frameOf(message.header, message.data, message.seq).firstSeq <= seq) {
        best = message.seq;
        lo = message.seq + 1;
      } else {
        hi = mid - 1;
      }
    }
    return best ?? firstSeq;
  }

  /**
   * The messages on `subject` from stream sequence `start`, in order, up to the last one pending
   * when the read gets there (an ordered consumer; none is left behind).
   */
  async *scan(subject: string, start: number): AsyncIterable<JsMsg> {
    // With nothing to deliver, a consumer would wait for new messages instead of ending.
    if ((await this.nextOn(subject, start)) === null) return;
    yield* this.consume(start, { filterSubjects: subject });
  }

  /**
   * The headers of every message of the stream (frames and checkpoints) from its first one, in
   * order, up to the last one pending when the read gets there.
   */
  async *scanHeaders(): AsyncIterable<JsMsg> {
    const { firstSeq, messages } = await this.state();
    // With nothing to deliver, a consumer would wait for new messages instead of ending.
    if (messages === 0) return;
    yield* this.consume(firstSeq, { headers_only: true });
  }

  /**
   * Messages from stream sequence `start` to the last one there when the read gets there. The
   * end is confirmed by the stream leader, not taken from the pending count a clustered stream
   * reports, which can fall short (seen on a 3-replica stream after its leader was killed: a read
   * ended halfway); a consumer that stops early is followed by a new one after the last message.
   */
  private async *consume(
    start: number,
    options: { filterSubjects?: string; headers_only?: boolean },
  ): AsyncIterable<JsMsg> {
    const subject = options.filterSubjects ?? `${this.stream}.*`;
    let from = start;
    for (;;) {
      const consumer = await this.js.consumers.get(this.stream, {
        ...options,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: from,
      });
      const messages = await consumer.consume({ max_messages: 64 });
      try {
        for await (const message of messages) {
          yield message;
          from = message.seq + 1;
          if (message.info.pending === 0 && (await this.nextOn(subject, from)) === null) return;
        }
      } finally {
        await messages.close();
      }
      if ((await this.nextOn(subject, from)) === null) return;
    }
  }

  close(): Promise<void> {
    return this.nc.close();
  }
}

/** A stored frame from a message's headers and data; `JournalCorruptError` when they are not one. */
export function frameOf(header: MsgHdrs | undefined, data: Uint8Array, streamSeq: number): StoredFrame {
  const number = (name: string) => headerNumber(header, name, streamSeq);
  return {
    ...frameSpan(header, streamSeq),
    version: number(HEADER.version),
    checksum: number(HEADER.checksum),
    payload: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
  };
}

/** The seqs a frame message holds, from its headers alone. */
function frameSpan(header: MsgHdrs | undefined, streamSeq: number): { firstSeq: number; count: number } {
  return {
    firstSeq: headerNumber(header, HEADER.firstSeq, streamSeq),
    count: headerNumber(header, HEADER.count, streamSeq),
  };
}

/**
 * The last seq of the batch a frame message is part of: its own last seq unless it is a part of a
 * split batch (`Journal-Batch-Last`), whose later parts hold the seqs after its own.
 */
function batchLastOf(header: MsgHdrs | undefined, streamSeq: number): number {
  const span = frameSpan(header, streamSeq);
  const own = span.firstSeq + span.count - 1;
  if (header?.get(HEADER.batchLast) === undefined || header.get(HEADER.batchLast) === '') return own;
  const batchLast = headerNumber(header, HEADER.batchLast, streamSeq);
  if (batchLast < own) {
    throw new JournalCorruptError(
      `journal message ${streamSeq} ends at seq ${own}, after its batch's last seq ${batchLast}`,
      span.firstSeq,
    );
  }
  return batchLast;
}

function headerNumber(header: MsgHdrs | undefined, name: string, streamSeq: number): number {
  const text = header?.get(name) ?? '';
  const value = Number(text);
  if (text === '' || !Number.isSafeInteger(value)) {
    throw new JournalCorruptError(
      `journal message ${streamSeq} has no valid ${name} header`,
      Number(header?.get(HEADER.firstSeq)) || 0,
    );
  }
  return value;
}

/** A frame message's headers; `batchLast` for a part of a split batch (`fitFrame`). */
export function frameHeaders(frame: StoredFrame, batchLast: number | null = null): MsgHdrs {
  const h = headers();
  h.set(HEADER.firstSeq, String(frame.firstSeq));
  h.set(HEADER.count, String(frame.count));
  h.set(HEADER.version, String(frame.version));
  h.set(HEADER.checksum, String(frame.checksum));
  if (batchLast !== null) h.set(HEADER.batchLast, String(batchLast));
  return h;
}

function checkpointOf(message: JsMsg): HashCheckpoint | null {
  const seq = Number(message.headers?.get(HEADER.seq) ?? '');
  if (!Number.isSafeInteger(seq) || seq <= 0) return null;
  return { seq, stateHash: Buffer.from(message.data).toString('utf8') };
}

/** Frames no larger than `maxBytes` of payload holding the entries of `frame`. */
function fitFrame(frame: StoredFrame, maxBytes: number): StoredFrame[] {
  if (frame.payload.byteLength <= maxBytes) return [frame];
  const split = (entries: readonly JournalEntry<unknown>[]): StoredFrame[] => {
    const built = buildFrame(entries);
    if (built.payload.byteLength <= maxBytes) return [built];
    if (entries.length === 1) {
      throw new Error(
        `journal entry ${entries[0]!.seq} takes ${built.payload.byteLength} bytes, more than the NATS server's max payload allows`,
      );
    }
    const half = Math.ceil(entries.length / 2);
    return [...split(entries.slice(0, half)), ...split(entries.slice(half))];
  };
  return split(decodeFrame(frame));
}

export class NatsJournal<C = unknown> extends CommittedJournal<C> {
  /**
   * Opens the journal; while the cluster has no JetStream or stream leader, or too few servers up
   * to place the stream (it is still forming, or electing after a loss), tries again for up to
   * `ackTimeoutMs`.
   */
  static async open<C = unknown>(options: NatsJournalOptions): Promise<NatsJournal<C>> {
    const deadline = performance.now() + (options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS);
    for (;;) {
      try {
        return await NatsJournal.openOnce<C>(options);
      } catch (error) {
        const passing = isPassingUnavailability(error) || apiErrorCode(error) === NO_SUITABLE_PEERS;
        if (!passing || performance.now() + OPEN_RETRY_PAUSE_MS >= deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_PAUSE_MS));
    }
  }

  private static async openOnce<C>(options: NatsJournalOptions): Promise<NatsJournal<C>> {
    const conn = await NatsJournalStream.connect(
      options,
      `journal writer ${options.stream}`,
      options.reconnectWaitMs,
    );
    let responder: Subscription | null = null;
    try {
      if (options.exclusive !== false) await refuseWhileWriterRuns(conn);
      await ensureStream(conn, options);
      // Answer later writers from now on, before anything is read.
      responder = conn.nc.subscribe(conn.subjects.writer, {
        callback: (_error, message) => {
          message.respond(Empty);
        },
      });
      const torn = await dropTornTail(conn);
      const unfinished = await dropUnfinishedBatch(conn);
      const openReport = {
        droppedTailRecords: torn.droppedTailRecords + unfinished.droppedTailRecords,
        droppedTailEntries: torn.droppedTailEntries + unfinished.droppedTailEntries,
      };
      const lastFrame = await conn.lastFrame();
      const { lastSeq } = await conn.state();
      return new NatsJournal<C>(conn, responder, openReport, lastFrame, lastSeq, options);
    } catch (error) {
      responder?.unsubscribe();
      await conn.close();
      throw error;
    }
  }

  protected readonly committer: GroupCommitter;
  private readonly maxPayloadBytes: number;
  private readonly ackTimeoutMs: number;
  /** The stream's last sequence as this writer left it: every publish expects it. */
  private streamSeq: number;
  /** Message ids are `<writerId>.<count>`: unique to this writer, the same for each try. */
  private readonly writerId = randomUUID();
  private published = 0;
  /** The stream sequence of the newest frame message (0: none), which trims never delete. */
  private newestFrameStreamSeq: number;
  private durableSeq: number;
  /** Checkpoints waiting for the frame holding their seq to be acknowledged. */
  private waitingCheckpoints: HashCheckpoint[] = [];
  /** A checkpoint publish that failed after its batch was acknowledged: fails the next write. */
  private deferredFailure: unknown = null;

  private constructor(
    private readonly conn: NatsJournalStream,
    private readonly responder: Subscription,
    readonly openReport: OpenReport,
    lastFrame: StoredMsg | null,
    streamSeq: number,
    options: NatsJournalOptions,
  ) {
    super();
    const last = lastDurable(lastFrame);
    this.streamSeq = streamSeq;
    this.newestFrameStreamSeq = lastFrame?.seq ?? 0;
    this.durableSeq = last.seq;
    this.ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
    this.maxPayloadBytes = Math.max((conn.nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM, 1024);
    this.committer = new GroupCommitter(
      { write: (frame, checkpoints) => this.writeBatch(frame, checkpoints) },
      options.limits ?? DEFAULT_BATCH_LIMITS,
      last,
    );
  }

  /**
   * Publishes one message after the stream's last; resolves with its stream sequence. A try that
   * times out or finds the stream without a leader (a server of the cluster went down and another
   * is being elected) is sent again, with the same message id, until `ackTimeoutMs` has passed.
   * JetStream stores a message id once and answers a repeat as a duplicate with the first copy's
   * sequence, so the message is stored once whether or not the lost try reached the stream.
   */
  private async publish(subject: string, data: Uint8Array, h: MsgHdrs): Promise<number> {
    const msgID = `${this.writerId}.${++this.published}`;
    const deadline = performance.now() + this.ackTimeoutMs;
    for (;;) {
      let retryable: unknown;
      try {
        const ack = await this.conn.js.publish(subject, data, {
          headers: h,
          msgID,
          expect: { lastSequence: this.streamSeq },
          timeout: Math.max(1, Math.min(PUBLISH_TRY_MS, deadline - performance.now())),
        });
        // A duplicate of a try the stream has not stored yet: its sequence is still to come.
        if (!(ack.duplicate && ack.seq === 0)) {
          this.streamSeq = ack.seq;
          return ack.seq;
        }
        retryable = new Error(`the journal stream ${this.conn.stream} has not stored message ${msgID} yet`);
      } catch (error) {
        if (apiErrorCode(error) === WRONG_LAST_SEQUENCE) {
          throw new Error(
            `another writer appended to the journal stream ${this.conn.stream} (expected last sequence ${this.streamSeq}); this writer stops`,
            { cause: error },
          );
        }
        if (!isPassingUnavailability(error)) throw error;
        retryable = error;
      }
      if (performance.now() + PUBLISH_RETRY_PAUSE_MS >= deadline) throw retryable;
      await new Promise((resolve) => setTimeout(resolve, PUBLISH_RETRY_PAUSE_MS));
    }
  }

  private async writeBatch(frame: StoredFrame | null, checkpoints: readonly HashCheckpoint[]): Promise<void> {
    if (this.deferredFailure !== null) throw this.deferredFailure;
    for (const c of checkpoints) this.waitingCheckpoints.push(c);
    if (frame !== null) {
      const last = frame.firstSeq + frame.count - 1;
      const parts = fitFrame(frame, this.maxPayloadBytes);
      for (const part of parts) {
        this.newestFrameStreamSeq = await this.publish(
          this.conn.subjects.frames,
          part.payload,
          frameHeaders(part, parts.length > 1 ? last : null),
        );
      }
      this.durableSeq = last;
    }
    const ready = this.waitingCheckpoints.filter((c) => c.seq <= this.durableSeq);
    if (ready.length === 0) return;
    this.waitingCheckpoints = this.waitingCheckpoints.filter((c) => c.seq > this.durableSeq);
    try {
      for (const c of ready) {
        const h = headers();
        h.set(HEADER.seq, String(c.seq));
        await this.publish(this.conn.subjects.checkpoints, Buffer.from(c.stateHash, 'utf8'), h);
      }
    } catch (error) {
      // The frame is durable: its appends resolve; the next write fails instead.
      this.deferredFailure = error;
    }
  }

  readBatches(fromSeq: number): AsyncIterable<readonly JournalEntry<C>[]> {
    return readNatsJournal<C>(this.conn, fromSeq);
  }

  async checkpoints(fromSeq: number, toSeq: number): Promise<readonly HashCheckpoint[]> {
    // Every checkpoint message comes after the frame holding its seq.
    const start = await this.conn.frameHolding(Math.max(fromSeq, 1));
    if (start === null) return [];
    const found = new Map<number, string>();
    for await (const message of this.conn.scan(this.conn.subjects.checkpoints, start)) {
      const c = checkpointOf(message);
      // A later one for the same seq wins, as an upsert would.
      if (c !== null && c.seq >= fromSeq && c.seq <= toSeq) found.set(c.seq, c.stateHash);
    }
    return [...found].sort((a, b) => a[0] - b[0]).map(([seq, stateHash]) => ({ seq, stateHash }));
  }

  async firstSeq(): Promise<number> {
    // Read before the query: were there no frame then, nothing was durable before it either.
    const last = this.committer.lastDurable.seq;
    const { firstSeq } = await this.conn.state();
    const first = await this.conn.nextOn(this.conn.subjects.frames, Math.max(firstSeq, 1));
    return first === null ? last + 1 : frameOf(first.header, first.data, first.seq).firstSeq;
  }

  /**
   * Deletes the stream's messages from its first one up to the first frame to keep, one by one
   * and oldest first, so a trim cut short (by a crash, say) leaves a contiguous journal. The
   * checkpoints among them were published before that frame, so all are for deleted seqs. One
   * published after it for a deleted seq (its frame was acknowledged before the checkpoint was
   * recorded) stays until a later trim passes it: it still describes that seq's state. Publishes
   * go on meanwhile: a delete does not move the stream's last sequence, which they expect.
   */
  protected async trimRecords(seq: number, maxRecords: number): Promise<TrimResult> {
    const newestFrame = this.newestFrameStreamSeq;
    if (newestFrame === 0) return { records: 0, entries: 0, done: true };
    const doomed: number[] = [];
    let records = 0;
    let entries = 0;
    let done = true;
    for await (const message of this.conn.scanHeaders()) {
      if (message.seq >= newestFrame) break;
      if (message.subject === this.conn.subjects.frames) {
        const frame = frameSpan(message.headers, message.seq);
        if (frame.firstSeq + frame.count - 1 > seq) break;
        if (records === maxRecords) {
          done = false;
          break;
        }
        records += 1;
        entries += frame.count;
      }
      doomed.push(message.seq);
    }
    for (const streamSeq of doomed)
      await this.conn.jsm.streams.deleteMessage(this.conn.stream, streamSeq, false);
    return { records, entries, done };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.committer.close();
    } finally {
      await this.trimsSettled();
      this.responder.unsubscribe();
      await this.conn.close();
    }
  }
}

/** A running writer of the stream answers on its writer subject: refuse, as the PG lock does. */
async function refuseWhileWriterRuns(conn: NatsJournalStream): Promise<void> {
  try {
    await conn.nc.request(conn.subjects.writer, Empty, { timeout: 2_000 });
  } catch (error) {
    // 503: no one subscribes, so no writer runs. A timeout means one subscribes but is stuck.
    if ((error as { code?: string }).code === '503') return;
    if ((error as { code?: string }).code !== 'TIMEOUT') throw error;
  }
  throw new StoreOpenError(
    `the journal stream ${conn.stream} is in use by another running service; stop it first or use another JOURNAL_STREAM`,
  );
}

/** Creates the stream, or checks that the existing one keeps every message, on disk. */
async function ensureStream(conn: NatsJournalStream, target: NatsJournalTarget): Promise<void> {
  const wanted = journalStreamConfig(target);
  let config: StreamConfig;
  try {
    config = (await conn.jsm.streams.info(target.stream)).config;
  } catch (error) {
    if (apiErrorCode(error) !== STREAM_NOT_FOUND) throw error;
    await conn.jsm.streams.add(wanted);
    return;
  }
  const problems: string[] = [];
  if (config.storage !== StorageType.File) problems.push(`storage is ${config.storage}, not file`);
  if (config.retention !== RetentionPolicy.Limits) problems.push(`retention is ${config.retention}`);
  if (config.max_age > 0) problems.push('messages expire (max_age)');
  if (config.max_msgs > 0 || config.max_bytes > 0 || (config.max_msgs_per_subject ?? 0) > 0) {
    problems.push('old messages are discarded at a limit (max_msgs, max_bytes or max_msgs_per_subject)');
  }
  for (const subject of wanted.subjects ?? []) {
    if (!config.subjects.includes(subject)) problems.push(`subject ${subject} is not in the stream`);
  }
  if (config.num_replicas !== target.replicas) {
    problems.push(`it has ${config.num_replicas} replicas, JOURNAL_REPLICAS says ${target.replicas}`);
  }
  if (problems.length > 0) {
    throw new StoreOpenError(`the journal stream ${target.stream} does not fit: ${problems.join('; ')}`);
  }
}

async function dropTornTail(conn: NatsJournalStream): Promise<OpenReport> {
  const last = await conn.lastFrame();
  if (last === null) return { droppedTailRecords: 0, droppedTailEntries: 0 };
  const frame = frameOf(last.header, last.data, last.seq);
  if (frameChecksumValid(frame)) return { droppedTailRecords: 0, droppedTailEntries: 0 };
  await conn.jsm.streams.deleteMessage(conn.stream, last.seq, false);
  // Checkpoints for its seqs were published after it.
  const stale: number[] = [];
  for await (const message of conn.scan(conn.subjects.checkpoints, last.seq)) {
    const c = checkpointOf(message);
    if (c === null || c.seq >= frame.firstSeq) stale.push(message.seq);
  }
  for (const seq of stale) await conn.jsm.streams.deleteMessage(conn.stream, seq, false);
  return { droppedTailRecords: 1, droppedTailEntries: frame.count };
}

/**
 * Deletes the stored parts of a split batch at the tail whose later parts never were: its publish
 * failed part way, so every append of it was refused, and none may be replayed. Checkpoints come
 * only after a whole batch, so none is for its seqs.
 */
async function dropUnfinishedBatch(conn: NatsJournalStream): Promise<OpenReport> {
  const doomed: number[] = [];
  let entries = 0;
  let batchLast: number | null = null;
  for (let message = await conn.lastFrame(); message !== null; ) {
    const span = frameSpan(message.header, message.seq);
    const last = batchLastOf(message.header, message.seq);
    if (batchLast === null) {
      // The newest frame ends its batch: nothing is unfinished.
      if (last === span.firstSeq + span.count - 1) break;
      batchLast = last;
    } else if (last !== batchLast) break;
    doomed.push(message.seq);
    entries += span.count;
    message = await conn.previousFrame(message.seq);
  }
  for (const seq of doomed) await conn.jsm.streams.deleteMessage(conn.stream, seq, false);
  return { droppedTailRecords: doomed.length, droppedTailEntries: entries };
}

function lastDurable(last: StoredMsg | null): { seq: number; ts: number } {
  if (last === null) return { seq: 0, ts: 0 };
  const frame = frameOf(last.header, last.data, last.seq);
  const entries = readVerifiedFrames([frame], frame.firstSeq, null);
  const entry = entries[entries.length - 1]!;
  return { seq: entry.seq, ts: entry.ts };
}

/**
 * The durable entries with seq ≥ fromSeq of a JetStream journal, in batches: also used by readers
 * with their own connection, such as the snapshot replica.
 */
export async function* readNatsJournal<C>(
  conn: NatsJournalStream,
  fromSeq: number,
): AsyncIterable<readonly JournalEntry<C>[]> {
  const wanted = Math.max(fromSeq, 1);
  const start = await conn.frameHolding(wanted);
  if (start === null) return;
  let expected: number | null = null;
  // The parts of a split batch read so far: yielded once its last part is (`batchLastOf`).
  let parts: JournalEntry<C>[] = [];
  for await (const message of conn.scan(conn.subjects.frames, start)) {
    const frame = frameOf(message.headers, message.data, message.seq);
    const entries = readVerifiedFrames<C>([frame], wanted, expected);
    expected = frame.firstSeq + frame.count;
    if (batchLastOf(message.headers, message.seq) !== expected - 1) {
      for (const entry of entries) parts.push(entry);
      continue;
    }
    if (parts.length > 0) {
      for (const entry of entries) parts.push(entry);
      yield parts;
      parts = [];
    } else if (entries.length > 0) yield entries;
  }
}
